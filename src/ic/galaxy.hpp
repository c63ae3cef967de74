// Disk galaxies and mergers. Units: G = 1 (any consistent units; docs/models.md gives the
// defaults in galaxy terms).
//
// Disk galaxy = exponential disk (scale length R_d, sech^2 scale height z0, mass M_d, Toomre Q
// at a reference radius) + spherical halo (Hernquist or NFW with an exponential cutoff) +
// optional Hernquist bulge.
//  * Disk potential: the midplane radial force of the thick disk is computed exactly from its
//    Hankel transform (Binney & Tremaine eq. 2.185 with the sech^2 layer's vertical transform),
//    less that of its rings beyond the truncation radius (disk_mass is the mass inside it);
//    the spherical components feel only the disk's monopole (a thin exponential disk's
//    spherically enclosed mass), the documented approximation.
//  * Halo and bulge: isotropic DFs by Eddington inversion in the total (spherically averaged)
//    potential (SphericalModel with an external potential).
//  * Disk velocities: moment method of Hernquist (1993): sigma_z^2 = pi G Sigma z0 (isothermal
//    sheet), sigma_R^2 proportional to Sigma normalised to Q at R_Q, sigma_phi^2 from the
//    epicyclic ratio kappa^2 / (4 Omega^2), mean v_phi from the asymmetric-drift equation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/particle_set.hpp"
#include "ic/spherical.hpp"

namespace hoshi {

struct DiskGalaxyParams {
  double G = 1.0;
  // halo
  std::string halo = "hernquist";  // "hernquist" or "nfw"
  double halo_mass = 1.0;
  double halo_a = 1.0;       // scale radius
  double halo_r_cut = 10.0;  // NFW exponential cutoff radius (ignored for Hernquist)
  // disk
  double disk_mass = 0.05;
  double disk_Rd = 0.1;    // exponential scale length
  double disk_z0 = 0.01;   // sech^2(z / z0) scale height
  double disk_Q = 1.5;     // Toomre Q at R_Q
  double disk_RQ = 0.0;    // reference radius; 0: 2.43 R_d (Hernquist 1993)
  double disk_Rmax = 0.0;  // truncation radius; 0: 10 R_d
  // bulge (Hernquist; none when bulge_mass == 0)
  double bulge_mass = 0.0;
  double bulge_a = 0.02;
  // particle numbers: n_disk = disk_fraction n, n_bulge = bulge_fraction n, halo the rest
  double disk_fraction = 0.25;
  double bulge_fraction = 0.0;
  double mass_cut = 0.999;  // halo and bulge radii below this fraction of their mass
};

// Midplane radial acceleration a_R(R, z = 0) (negative: inwards) of an exponential disk of
// mass M_d, scale length R_d and sech^2 scale height z0 (z0 = 0: razor thin), from
// a_R = -G M_d int_0^inf k J1(kR) (1 + k^2 R_d^2)^(-3/2) Z(k z0) dk, with
// Z(s) = int_0^inf sech^2(u) exp(-s u) du.
double exponential_disk_radial_accel(double R, double M_d, double R_d, double z0, double G = 1.0);

// Razor-thin exponential disk, Freeman (1970): v_c^2 = 4 pi G Sigma_0 R_d y^2 (I0 K0 - I1 K1),
// y = R / (2 R_d). The reference for the z0 -> 0 limit.
double freeman_vc2(double R, double M_d, double R_d, double G = 1.0);

// The fraction of an exponential disk's mass inside R_max: 1 - (1 + x) e^-x, x = R_max / R_d.
double exponential_disk_mass_fraction(double R_max, double R_d);

// Midplane radial acceleration at R (positive: outwards) of the part R' > R_max of an
// exponential disk of (untruncated) mass M_d and scale length R_d, summed over its rings, each
// softened by b (the field at height b of a thin ring; b = the scale height stands in for the
// thickness; b > 0, else std::invalid_argument): a truncated disk's force is
// exponential_disk_radial_accel's minus this.
double exponential_disk_outer_radial_accel(double R, double M_d, double R_d, double R_max, double b,
                                           double G = 1.0);
// The same part's midplane radial acceleration for rings spread in z as the disk is, sech^2(z /
// z0) (the midplane force the Hankel transform of exponential_disk_radial_accel gives for the
// whole layer): exponential_disk_outer_radial_accel at heights b = z0 atanh(t), averaged over t
// uniform in (0, 1) (midpoint rule, `n` points: sech^2 is uniform in t = tanh(z / z0)). One
// ring at b = z0 stood in for the layer until 2026-12-03: within ~z0 of R_max its force turned
// too slowly, and kappa at R_Q = 2.43 R_d of a disk cut at 2.5 R_d came out 13% low (Q 1.72
// for 1.5; an audit's Hankel transform of the truncated Sigma). z0 = 0: one ring at
// b = R_d / 1000.
double exponential_disk_outer_radial_accel_layer(double R, double M_d, double R_d, double R_max,
                                                 double z0, double G = 1.0, int n = 16);

// Potential of the disk's monopole: the spherically enclosed mass of a thin exponential disk,
// Phi(r) = -G M_d [(1 - (1 + x) e^-x) / r + e^-x / R_d], x = r / R_d; with R_max, of the disk
// truncated there (M_d the untruncated mass): -G [M(<r) / r + (M_d / R_d) (e^-x - e^-x_max)]
// inside R_max, -G M(<R_max) / r beyond.
double exponential_disk_monopole_potential(double r, double M_d, double R_d, double G = 1.0,
                                           double R_max = 0.0);

class DiskGalaxyModel {
 public:
  explicit DiskGalaxyModel(const DiskGalaxyParams& params);

  const DiskGalaxyParams& params() const { return p_; }
  double total_mass() const;
  // Midplane circular velocity, epicyclic frequency, angular frequency, disk surface density,
  // the moment-method dispersions and the mean rotation speed at radius R.
  double vc(double R) const;
  double kappa(double R) const;
  double omega(double R) const { return vc(R) / R; }
  double surface_density(double R) const;
  double sigma_R(double R) const;
  double sigma_phi(double R) const;
  double sigma_z(double R) const;
  double mean_vphi(double R) const;
  double reference_radius() const { return RQ_; }
  double disk_rmax() const { return Rmax_; }
  const SphericalModel& halo() const { return *halo_; }

  // n particles: halo, then disk, then bulge (ids 0..n-1 in that order); disk in the z = 0
  // plane rotating counter-clockwise about +z; centre-of-mass frame.
  ParticleSet sample(std::size_t n, std::uint64_t seed) const;
  // Counts per component for n particles.
  void split(std::size_t n, std::size_t& n_halo, std::size_t& n_disk, std::size_t& n_bulge) const;

 private:
  double table(const std::vector<double>& y, double R) const;
  DiskGalaxyParams p_;
  double RQ_ = 0, Rmax_ = 0, sigR2_Q_ = 0;
  double disk_Mu_ = 0;  // the untruncated exponential's mass: disk_mass inside Rmax_
  std::unique_ptr<SphericalModel> halo_, bulge_;
  std::vector<double> lR_, vc2_, kappa2_;  // rotation-curve table on a log grid in R
};

ParticleSet make_disk_galaxy(std::size_t n, std::uint64_t seed, const DiskGalaxyParams& params);

// Two galaxies on the Kepler orbit of their total masses, its radial speed corrected so that the
// orbital energy with their actual interaction energy is the Kepler orbit's (docs/models.md).
// By default the secondary is the primary's model scaled in mass by mass_ratio, in
// length by mass_ratio^(1/2) and in velocity by mass_ratio^(1/4) (fixed mean surface density,
// a Tully-Fisher-like scaling). With `secondary` set, the secondary is secondary(n2, seed2)
// (any model, e.g. a Hernquist sphere) rescaled to mass mass_ratio * M1 at fixed lengths:
// masses times mu = mass_ratio M1 / M2_model, velocities times sqrt(mu) (G M / r scales by mu,
// so an equilibrium stays one). The orbit lies in the x-y plane with eccentricity e (1:
// parabolic), pericentre r_peri and the galaxies started approaching at separation r_start.
// Each disk is tilted by Rz(omega) Rx(inclination) (angles in degrees; Toomre & Toomre).
struct MergerParams {
  DiskGalaxyParams galaxy;
  double mass_ratio = 1.0;
  double eccentricity = 1.0;
  double r_peri = 0.4;
  double r_start = 4.0;
  double incl1 = 0.0, omega1 = 0.0;
  double incl2 = 60.0, omega2 = 30.0;
  // The secondary's sampler (n particles, seed); empty: the scaled copy of the primary.
  std::function<ParticleSet(std::size_t, std::uint64_t)> secondary;
  // Told (one line) when the orbit cannot be made as bound as asked: a start so deep in the
  // halos that even no radial speed leaves more orbital energy than the Kepler orbit's.
  std::function<void(const std::string&)> warn;
};

ParticleSet make_merger(std::size_t n, std::uint64_t seed, const MergerParams& params);

}  // namespace hoshi
