// Device-resident stepping (plain C++ header; implementation in gpu/device_stepper.cu).
//
// Positions, velocities and masses live on the device in double for the whole run; kick and
// drift run there, forces are computed there (direct kernel, or the tree walk, per particle or
// a warp per group, over a tree the host builds). Per step only what the host tree build needs
// crosses PCIe; docs/perf-gpu.md lists the transfers and phases. Particle order on the device never
// changes: download() returns the particles in the order they were given.
//
// Use in a kick-drift-kick leapfrog (what `hoshi run --backend cuda` does):
//   gpu::DeviceStepper s(config, particles);   // upload once
//   s.compute_forces();                        // a(x0)
//   for each step: s.kick(dt / 2); s.drift(dt); s.compute_forces(); s.kick(dt / 2);
//   at output times: s.energies() (device sums), s.download(particles) (snapshots)
#pragma once

#include <cstddef>
#include <memory>

#include "core/particle_set.hpp"
#include "solver/solver.hpp"

namespace hoshi::gpu {

struct DeviceEnergies {
  double kinetic = 0;    // sum 0.5 m v^2
  double potential = 0;  // sum 0.5 m pot, pot from the last compute_forces()
};

class DeviceStepper {
 public:
  // Uploads p's positions, velocities and masses, and its accelerations and potentials when it
  // holds any (a continued run: they are its state's, and the relative criterion's |a_old|, as
  // the solvers take them from p). config.solver picks direct or tree (auto: by N as
  // make_solver does); float32 kernels only. Throws std::invalid_argument when no device is
  // present or the configuration is invalid.
  DeviceStepper(const SolverConfig& config, const ParticleSet& p);
  ~DeviceStepper();
  DeviceStepper(const DeviceStepper&) = delete;
  DeviceStepper& operator=(const DeviceStepper&) = delete;

  std::size_t size() const;
  std::string solver_name() const;  // "direct" or "tree"

  // Accelerations and potentials (G included) at the current positions, kept on the device.
  // The stats carry interaction counts and this evaluation's phases.
  ForceStats compute_forces();
  void kick(double dt);   // v += a dt
  void drift(double dt);  // x += v dt
  DeviceEnergies energies();
  // max |a|^2 (G included) of the last compute_forces(), reduced on the device (8 bytes cross
  // PCIe): the host's max_acceleration2 of the downloaded set, bit for bit; for the adaptive
  // step (adaptive_dt_from).
  double max_acceleration2();
  // Copies x, v, a and pot into p (resized to size(); ids and masses are written too).
  void download(ParticleSet& p) const;
  // Seconds spent in kick and drift so far ("kick", "drift"; CUDA events).
  const PhaseTimes& integrate_seconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hoshi::gpu
