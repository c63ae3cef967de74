// Isotropic spherical equilibrium models sampled from their distribution functions.
//
// Units: G = 1 unless stated, lengths in units of the model's scale radius a unless the model
// is put into Henon units (G = M = 1, E = -1/4). Docs: docs/models.md.
//
// Two routes:
//  * analytic: the Hernquist (1990) sphere with its closed-form isotropic DF (make_hernquist);
//  * numerical Eddington inversion (Binney & Tremaine 2008, eq. 4.46) for any density profile
//    given as a function, optionally in an additional external potential (SphericalModel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/particle_set.hpp"
#include "ic/ic.hpp"

namespace hoshi {

// ---- Hernquist (1990) sphere, analytic ----------------------------------------------------
// rho(r) = M a / (2 pi r (r + a)^3), M(r) = M r^2 / (r + a)^2, Phi(r) = -G M / (r + a).
double hernquist_density(double r, double M, double a);
double hernquist_mass(double r, double M, double a);
double hernquist_potential(double r, double M, double a, double G = 1.0);
// Isotropic DF f(E) of the relative energy E = Psi - v^2/2 (0 < E < G M / a), Hernquist 1990
// eq. (17); zero outside.
double hernquist_df(double E, double M, double a, double G = 1.0);
// 1-D velocity dispersion sigma_r^2(r) of the isotropic model (Hernquist 1990 eq. 10).
double hernquist_sigma2(double r, double M, double a, double G = 1.0);

// Isotropic Hernquist sphere with total mass 1 and G = 1, sampled from its DF. a = 1/3 gives
// Henon units (E = -1/4) for the untruncated model. Radii are drawn from M(r)/M below
// `mass_cut` (default 0.999, r < 1999 a), particle masses 1/n, in mirror pairs (see
// sample_isotropic), so the density centre sits at the centre of mass; then shifted to the
// centre-of-mass frame (a round-off correction).
ParticleSet make_hernquist(std::size_t n, std::uint64_t seed, double a = 1.0 / 3.0,
                           double mass_cut = 0.999);

// ---- Generic isotropic sampler ---------------------------------------------------------------
// Samples n particles of total mass `mass`: radius = radius_of_fraction(X) with X uniform in
// [0, mass_cut), velocity isotropic with speed density v^2 f(Psi(r) - v^2/2) by rejection.
// Not shifted to the centre-of-mass frame. Ids 0..n-1.
// symmetric: particles come in mirror pairs (x, v), (-x, -v) (the second of each pair is the
// first reflected through the centre; odd n leaves the last one unpaired). Each particle is
// still a draw from the DF, but the sample's centre of mass and momentum vanish exactly, so
// the rare particles far out in a cuspy model's tail (Hernquist: r up to ~2000 a) no longer
// displace the centre of mass from the density centre by ~ r_rms / sqrt(N) (0.2 a at N = 20k).
ParticleSet sample_isotropic(std::size_t n, Random& rng, double mass, double mass_cut,
                             const std::function<double(double)>& radius_of_fraction,
                             const std::function<double(double)>& psi,
                             const std::function<double(double)>& df, bool symmetric = false);

// ---- Numerical Eddington inversion ---------------------------------------------------------
struct SphericalModelOptions {
  double G = 1.0;
  double r_min = 1e-6;  // grid inner radius (absolute units)
  double r_max = 1e6;   // grid outer radius; the density is extrapolated as a power law beyond
  int n_grid = 4000;    // log-spaced grid points
};

// A spherical component with density rho(r) (any normalisation: it is rescaled so that the total
// mass is `mass`), living in its own potential plus an optional external potential phi_ext(r)
// (spherical, <= 0 and -> 0 at infinity; e.g. other components of a galaxy).
// The DF is obtained by Eddington's formula, f(E) = 1/(sqrt(8) pi^2) d/dE int_0^E drho/dPsi
// dPsi / sqrt(E - Psi), evaluated exactly for a drho/dPsi that is piecewise linear in Psi on the
// grid (so f = sum of slopes times differences of square roots; no numerical derivative of a
// quadrature). Negative values (a density that the potential cannot support isotropically) are
// set to zero and counted in negative_df_nodes().
class SphericalModel {
 public:
  SphericalModel(std::function<double(double)> rho, double mass,
                 const SphericalModelOptions& options = {},
                 std::function<double(double)> phi_ext = {});

  double density(double r) const;         // normalised to total mass `mass`
  double enclosed_mass(double r) const;   // of this component
  double potential(double r) const;       // total: self + external
  double self_potential(double r) const;  // this component only
  double psi(double r) const { return -potential(r); }
  double df(double E) const;  // f(E), E = relative energy
  double radius_of_mass_fraction(double X) const;
  double total_mass() const { return mass_; }
  // Potential energy of the component in its own field, W = 1/2 int rho Phi_self dV, and in
  // the external field, int rho Phi_ext dV.
  double self_energy() const { return w_self_; }
  double external_energy() const { return w_ext_; }
  int negative_df_nodes() const { return negative_df_; }
  double G() const { return G_; }

  // n particles of total mass `mass` (particle mass mass/n), radii below the mass fraction
  // mass_cut, in mirror pairs when symmetric (see sample_isotropic). Not shifted to the
  // centre-of-mass frame.
  ParticleSet sample(std::size_t n, Random& rng, double mass_cut = 0.999,
                     bool symmetric = true) const;

 private:
  double interp_lr(const std::vector<double>& y, double r) const;  // linear in ln r

  std::function<double(double)> rho_fn_;
  std::function<double(double)> phi_ext_;
  double norm_ = 1, mass_ = 1, G_ = 1;
  std::vector<double> lr_, rho_, m_, phi_self_, psi_;  // on the radial grid
  std::vector<double> lE_, lf_;                        // ln E and ln f (f > 0) ascending in E
  double w_self_ = 0, w_ext_ = 0, tail_slope_ = 0;
  int negative_df_ = 0;
};

// Density profiles by name (unnormalised; scale radius a; r_cut: exponential cutoff radius,
// used by nfw; 0 = none):
//   hernquist: 1 / (x (1 + x)^3)      plummer: (1 + x^2)^(-5/2)
//   jaffe:     1 / (x^2 (1 + x)^2)    nfw:     exp(-r / r_cut) / (x (1 + x)^2)
// with x = r / a. Throws std::invalid_argument for an unknown name.
std::function<double(double)> density_profile(const std::string& name, double a, double r_cut);

// An isotropic spherical model of total mass 1 (G = 1) by numerical Eddington inversion.
// a > 0: scale radius a; a == 0: Henon units, a chosen so that E = K + W = -1/4 (computed from
// the model's tabulated energy). Mirror-pair sampling; shifted to the centre-of-mass frame.
ParticleSet make_eddington_model(const std::string& profile, std::size_t n, std::uint64_t seed,
                                 double a = 0.0, double r_cut_over_a = 0.0,
                                 double mass_cut = 0.999);

}  // namespace hoshi
