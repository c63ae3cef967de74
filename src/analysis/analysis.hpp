// Analysis of particle snapshots: centres, Lagrangian radii, spherical profiles (density,
// velocity dispersion, circular velocity), disk profiles (surface density, thickness), bound
// mass. Pure functions of a ParticleSet; G is a parameter (default 1).
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "core/particle_set.hpp"
#include "solver/solver.hpp"

namespace hoshi {

using Vec3 = std::array<double, 3>;

// Mass-weighted mean position and velocity (zero for an empty set or zero mass).
Vec3 centre_of_mass(const ParticleSet& p);
Vec3 centre_of_mass_velocity(const ParticleSet& p);

// Shrinking-sphere density centre (Power et al. 2003): start from the centre of mass with the
// sphere holding every particle, shrink its radius by `shrink` each step and recentre on the
// particles inside, stopping when fewer than max(n_min, 1% of N) remain.
Vec3 shrinking_sphere_centre(const ParticleSet& p, double shrink = 0.975, std::size_t n_min = 100);

// Radii about `centre` enclosing the given mass fractions (each in (0, 1]) of the total mass.
// Exact order statistic: the radius of the first particle at which the enclosed mass reaches
// fraction f of the total. Throws std::invalid_argument for a fraction outside (0, 1] or an
// empty set.
std::vector<double> lagrangian_radii(const ParticleSet& p, const std::vector<double>& fractions,
                                     const Vec3& centre);

// The shortest dynamical time sqrt(r^3 / (G M(<r))) at the radii about the density centre
// (shrinking_sphere_centre) that
// enclose 1%, 10% and 50% of the particles by number (the 1% radius at least the 32nd
// particle's, every radius at least the second's), r no smaller than eps (the softening caps the
// forces within it): the time scale of the densest component (a disk inside its halo), which a
// dominant mass (a star with planets, the 1% being the star itself) does not shrink to zero. From
// every k-th particle, k = ceil(N / 100000): a scale, not a measurement; 0 for an empty or massless
// set.
struct DynamicalTime {
  double t = 0;         // the shortest
  double fraction = 0;  // of the particles inside its radius
  double radius = 0;    // that radius (at least eps), about `centre`, the density centre
  Vec3 centre{};
};
DynamicalTime shortest_dynamical_time(const ParticleSet& p, double G, double eps);
// Each radius's (1%, 10%, 50%, those with mass inside), in that order: block steps check each
// against the steps its particles take.
std::vector<DynamicalTime> dynamical_times(const ParticleSet& p, double G, double eps);

// Spherical shells, log-spaced between r_min and r_max (n_bins of them; each [r_lo, r_hi), the
// last [r_lo, r_max], since r_max is often a particle's own radius), about `centre`, with
// velocities relative to `velocity`.
struct RadialProfile {
  std::vector<double> r_lo, r_hi, r_mid;  // r_mid: geometric mean of the edges
  std::vector<std::size_t> count;
  std::vector<double> density;        // shell mass / shell volume
  std::vector<double> enclosed_mass;  // mass inside r_hi
  // Dispersions are NaN in shells of fewer than two particles.
  std::vector<double> sigma_r;  // radial velocity dispersion
  std::vector<double> sigma_t;  // one-dimensional tangential dispersion, sqrt(<v_t^2>/2)
  std::vector<double> vcirc;    // sqrt(G M(< r_hi) / r_hi)
};
RadialProfile radial_profile(const ParticleSet& p, const Vec3& centre, const Vec3& velocity,
                             double r_min, double r_max, std::size_t n_bins, double G = 1.0);

// Cylindrical annuli (linear in R up to R_max, the last one closed, as the shells) about
// `centre` in the plane normal to `axis` (need not be unit).
struct DiskProfile {
  std::vector<double> R_lo, R_hi, R_mid;
  std::vector<std::size_t> count;
  std::vector<double> surface_density;   // annulus mass / annulus area
  std::vector<double> z_rms;             // sqrt(<z^2>) (vertical thickness); NaN if empty
  std::vector<double> mean_vphi;         // mean rotation speed; NaN if empty
  std::vector<double> sigma_R, sigma_z;  // NaN in annuli of fewer than two particles
};
DiskProfile disk_profile(const ParticleSet& p, const Vec3& centre, const Vec3& velocity,
                         const Vec3& axis, double R_max, std::size_t n_bins);

// Unit vector along the total angular momentum about `centre` (in the frame of `velocity`);
// +z when it vanishes (`vanished`, where given, says so).
Vec3 angular_momentum_axis(const ParticleSet& p, const Vec3& centre, const Vec3& velocity,
                           bool* vanished = nullptr);

// Bound mass by iterative unbinding: potentials from the currently bound particles only,
// energies in the frame of their mass-weighted velocity, particles with E >= 0 removed, until
// the bound set no longer changes (converged) or for max_iter iterations. Potentials come from
// `solver` (its G and softening); the particles are not modified. The first frame is the velocity
// of all particles, so a heavy unbound component moving fast through the system can unbind
// everything at once; analyse such a snapshot per component.
struct BoundResult {
  double mass = 0;
  std::size_t count = 0;
  int iterations = 0;
  bool converged = false;    // the last iteration changed nothing, or nothing is bound
  bool oscillating = false;  // stopped because the set alternated between two (not converged)
  std::vector<char> bound;   // per particle, input order
};
// 50 iterations ended a hot Plummer sphere's unbinding at 0.368 where it converges to 0 after
// 74 (an audit, 2026-12-01): the cap is for sets that keep changing, and the caller says so.
BoundResult bound_mass(const ParticleSet& p, const SolverConfig& solver, int max_iter = 500);

}  // namespace hoshi
