// ParticleSet: the host state of a simulation, structure of arrays.
//
// Units are whatever the run uses (Henon units by default: G = M = 1, E = -1/4). Positions,
// velocities and masses are double; accelerations and potentials (per unit mass, G included)
// are stored beside them in double although the fast kernels compute them in float32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hoshi {

struct ParticleSet {
  std::vector<double> x, y, z;
  std::vector<double> vx, vy, vz;
  std::vector<double> m;
  std::vector<std::uint64_t> id;
  std::vector<double> ax, ay, az;
  std::vector<double> pot;

  std::size_t size() const { return x.size(); }
  bool empty() const { return x.empty(); }

  // Resizes every array; new particles are zero with id equal to their index.
  void resize(std::size_t n);
  // Reserves capacity for n particles in every array (a reader that knows its count: push_back's
  // doubling otherwise leaves up to twice the memory allocated for the whole run).
  void reserve(std::size_t n);
  // Appends one particle (accelerations and potential zero).
  void push_back(double px, double py, double pz, double pvx, double pvy, double pvz, double pm,
                 std::uint64_t pid);
  // Appends all particles of `other`.
  void append(const ParticleSet& other);
  // Releases the capacity beyond size() (after a series of appends).
  void shrink_to_fit();
  // Reorders every array so that new[i] = old[perm[i]].
  void permute(const std::vector<std::size_t>& perm);
};

}  // namespace hoshi
