#include "ic/galaxy.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/number_text.hpp"

namespace hoshi {

namespace {

constexpr double kPi = std::numbers::pi;

void require(bool ok, const char* key, double v, const char* rule) {
  if (!ok)
    throw std::invalid_argument(std::string("invalid ") + key + " " + number_text(v) + " (" + rule +
                                ")");
}

// Bessel J1 (rational approximations, Numerical Recipes 6.5; absolute error < 1e-8).
double bessel_j1(double x) {
  const double ax = std::fabs(x);
  if (ax < 8.0) {
    const double y = x * x;
    const double a1 =
        x * (72362614232.0 +
             y * (-7895059235.0 +
                  y * (242396853.1 + y * (-2972611.439 + y * (15704.48260 + y * -30.16036606)))));
    const double a2 =
        144725228442.0 +
        y * (2300535178.0 + y * (18583304.74 + y * (99447.43394 + y * (376.9991397 + y))));
    return a1 / a2;
  }
  const double z = 8.0 / ax, y = z * z, xx = ax - 2.356194491;
  const double a1 =
      1.0 +
      y * (0.183105e-2 + y * (-0.3516396496e-4 + y * (0.2457520174e-5 + y * -0.240337019e-6)));
  const double a2 =
      0.04687499995 +
      y * (-0.2002690873e-3 + y * (0.8449199096e-5 + y * (-0.88228987e-6 + y * 0.105787412e-6)));
  const double r = std::sqrt(0.636619772 / ax) * (std::cos(xx) * a1 - z * std::sin(xx) * a2);
  return x < 0 ? -r : r;
}

// Z(s) = int_0^inf sech^2(u) e^{-s u} du, tabulated once on a log grid in s (Simpson).
class SechTransform {
 public:
  SechTransform() {
    for (int i = 0; i < kN; ++i) {
      const double s = std::exp(kL0 + i * kDl);
      const double U = std::min(40.0, 60.0 / s);
      const int m = 4000;
      const double h = U / m;
      double sum = 0;
      for (int k = 0; k <= m; ++k) {
        const double u = k * h, c = 1.0 / std::cosh(u);
        const double w = (k == 0 || k == m) ? 1 : (k % 2 ? 4 : 2);
        sum += w * c * c * std::exp(-s * u);
      }
      z_[i] = sum * h / 3;
    }
  }
  double operator()(double s) const {
    if (s <= 0) return 1.0;
    const double t = (std::log(s) - kL0) / kDl;
    if (t <= 0) return 1.0 - s * std::log(2.0);  // int u sech^2 u du = ln 2
    if (t >= kN - 1) return 1.0 / s;             // sech^2 ~ 1 where e^{-s u} lives
    const int i = static_cast<int>(t);
    const double f = t - i;
    return std::exp((1 - f) * std::log(z_[i]) + f * std::log(z_[i + 1]));
  }

 private:
  static constexpr int kN = 401;
  static constexpr double kL0 = -9.210340371976184;   // ln 1e-4
  static constexpr double kDl = 0.04605170185988091;  // 8 decades / 400
  double z_[kN];
};

const SechTransform& sech_transform() {
  static const SechTransform z;
  return z;
}

}  // namespace

double exponential_disk_radial_accel(double R, double M_d, double R_d, double z0, double G) {
  if (!(R > 0)) return 0.0;
  const SechTransform& Z = sech_transform();
  // Integrand k J1(kR) (1 + k^2 R_d^2)^(-3/2) Z(k z0): smooth on scales 1/R_d and 1/z0,
  // oscillating with period 2 pi / R, decaying as k^-2.5 (thin) or faster: beyond
  // k = 1000 / R_d the oscillating tail is < 1e-7 of the force. Composite Simpson.
  const double K = 1000.0 / R_d;
  double dk = std::min(0.25 / R, 0.05 / R_d);
  if (z0 > 0) dk = std::min(dk, 0.25 / z0);
  int m = static_cast<int>(std::ceil(K / dk));
  m += m % 2;
  const double h = K / m;
  double sum = 0;
  for (int i = 1; i <= m; ++i) {
    const double k = i * h;
    const double q = 1.0 + k * k * R_d * R_d;
    const double f = k * bessel_j1(k * R) / (q * std::sqrt(q)) * (z0 > 0 ? Z(k * z0) : 1.0);
    sum += (i == m ? 1 : (i % 2 ? 4 : 2)) * f;
  }
  return -G * M_d * sum * h / 3;
}

double freeman_vc2(double R, double M_d, double R_d, double G) {
  const double y = R / (2 * R_d);
  const double sigma0 = M_d / (2 * kPi * R_d * R_d);
  return 4 * kPi * G * sigma0 * R_d * y * y *
         (std::cyl_bessel_i(0, y) * std::cyl_bessel_k(0, y) -
          std::cyl_bessel_i(1, y) * std::cyl_bessel_k(1, y));
}

double exponential_disk_mass_fraction(double R_max, double R_d) {
  const double x = R_max / R_d;
  return -std::expm1(-x) - x * std::exp(-x);
}

double exponential_disk_outer_radial_accel(double R, double M_d, double R_d, double R_max, double b,
                                           double G) {
  // Rings R' in [R_max, R_max + 40 R_d] (beyond: e^-40 of the mass), trapezoid rule on steps
  // of 2% of |R' - R|, between b / 20 (resolving the softened ring's peak at R' = R) and
  // R_d / 50. A ring of radius a and mass m at distance b from the plane (Gauss; elliptic
  // integrals of modulus k, k^2 = 4 a R / s, s = (R + a)^2 + b^2):
  //   a_R = G m / (pi R sqrt(s)) [(a^2 - R^2 + b^2) / ((R - a)^2 + b^2) E(k) - K(k)].
  if (!(b > 0))  // an unsoftened ring's force diverges at the ring
    throw std::invalid_argument("exponential_disk_outer_radial_accel: b = " + number_text(b) +
                                " (must be > 0)");
  if (!(R > 0)) return 0.0;
  const double sigma0 = M_d / (2 * std::numbers::pi * R_d * R_d);
  const auto ring = [&](double a) {  // a_R per unit R', times dm / dR' = 2 pi a Sigma(a)
    const double s = (R + a) * (R + a) + b * b;
    const double k = std::sqrt(std::min(4 * a * R / s, 1.0 - 1e-16));
    const double term =
        (a * a - R * R + b * b) / ((R - a) * (R - a) + b * b) * std::comp_ellint_2(k) -
        std::comp_ellint_1(k);
    return term / (std::numbers::pi * R * std::sqrt(s)) * 2 * std::numbers::pi * a * sigma0 *
           std::exp(-a / R_d);
  };
  const double end = R_max + 40 * R_d;
  // Steps of at least 1e-6 R_d (b = 0 at R = R_max: no step of 0, no endless loop) and at most
  // R_d / 50, or b / 20 where that is larger (a thick disk: b up to R_d).
  const double h_min = std::max(b / 20, 1e-6 * R_d), h_max = std::max(R_d / 50, h_min);
  double sum = 0, a = R_max, f = ring(a);
  while (a < end) {
    const double h = std::clamp(0.02 * std::fabs(a - R), h_min, h_max);
    const double next = std::min(a + h, end);
    const double fn = ring(next);
    sum += 0.5 * (f + fn) * (next - a);
    a = next;
    f = fn;
  }
  return G * sum;
}

double exponential_disk_outer_radial_accel_layer(double R, double M_d, double R_d, double R_max,
                                                 double z0, double G, int n) {
  if (!(z0 > 0)) return exponential_disk_outer_radial_accel(R, M_d, R_d, R_max, 1e-3 * R_d, G);
  // Far from the edge (|R - R_max| >= 8 z0) one ring at the layer's rms height, pi z0 /
  // sqrt(12), is the average to second order in z0 / |R - R_max| (the next term ~1e-4 of this
  // part there), at 1/n of the cost; between 6 and 8 z0 the two are blended smoothly, so that
  // v_c^2 and its slope (kappa) stay continuous.
  const double d = std::fabs(R - R_max) / z0;
  const double one = d > 6 ? exponential_disk_outer_radial_accel(
                                 R, M_d, R_d, R_max, z0 * std::numbers::pi / std::sqrt(12.0), G)
                           : 0.0;
  if (d >= 8) return one;
  double sum = 0;
  for (int k = 0; k < n; ++k)
    sum +=
        exponential_disk_outer_radial_accel(R, M_d, R_d, R_max, z0 * std::atanh((k + 0.5) / n), G);
  const double layer = sum / n;
  if (d <= 6) return layer;
  const double x = (d - 6) / 2, s = x * x * (3 - 2 * x);
  return (1 - s) * layer + s * one;
}

double exponential_disk_monopole_potential(double r, double M_d, double R_d, double G,
                                           double R_max) {
  const double x = r / R_d;
  if (R_max > 0 && r >= R_max) return -G * M_d * exponential_disk_mass_fraction(R_max, R_d) / r;
  const double outer = R_max > 0 ? std::exp(-R_max / R_d) / R_d : 0.0;  // mass beyond R_max
  if (x < 1e-6) return -G * M_d * ((1 - x / 2) / R_d - outer);          // small-x expansion
  const double e = std::exp(-x);
  return -G * M_d * ((1 - (1 + x) * e) / r + e / R_d - outer);
}

// ---- DiskGalaxyModel ---------------------------------------------------------------------------

DiskGalaxyModel::DiskGalaxyModel(const DiskGalaxyParams& p) : p_(p) {
  require(p.G > 0, "G", p.G, "must be > 0");
  require(p.halo == "hernquist" || p.halo == "nfw", "halo", 0, "halo must be hernquist or nfw");
  require(p.halo_mass > 0, "halo_mass", p.halo_mass, "must be > 0");
  require(p.halo_a > 0, "halo_a", p.halo_a, "must be > 0");
  require(p.halo_r_cut > 0, "halo_r_cut", p.halo_r_cut, "must be > 0 (used by the NFW halo)");
  require(p.disk_mass >= 0, "disk_mass", p.disk_mass, "must be >= 0");
  require(p.disk_Rd > 0, "disk_Rd", p.disk_Rd, "must be > 0");
  require(p.disk_z0 >= 0, "disk_z0", p.disk_z0, "must be >= 0");
  require(p.disk_Q > 0, "disk_Q", p.disk_Q, "must be > 0");
  require(p.disk_RQ >= 0, "disk_RQ", p.disk_RQ, "must be >= 0");
  require(p.disk_Rmax >= 0, "disk_Rmax", p.disk_Rmax, "must be >= 0");
  require(p.bulge_mass >= 0, "bulge_mass", p.bulge_mass, "must be >= 0");
  require(p.bulge_a > 0, "bulge_a", p.bulge_a, "must be > 0");
  require(p.disk_fraction >= 0 && p.disk_fraction < 1, "disk_fraction", p.disk_fraction,
          "need 0 <= disk_fraction < 1");
  require(p.bulge_fraction >= 0 && p.disk_fraction + p.bulge_fraction < 1, "bulge_fraction",
          p.bulge_fraction, "need 0 <= bulge_fraction and disk_fraction + bulge_fraction < 1");
  require(p.mass_cut > 0 && p.mass_cut <= 1, "mass_cut", p.mass_cut, "need 0 < mass_cut <= 1");
  RQ_ = p.disk_RQ > 0 ? p.disk_RQ : 2.43 * p.disk_Rd;
  Rmax_ = p.disk_Rmax > 0 ? p.disk_Rmax : 10.0 * p.disk_Rd;
  // The disk's shape, in units of its scale length: the exponential's force integral, the
  // radius sampling and Sigma(R_Q) (for Q) over- or underflow, or take minutes, outside these
  // (a disk beyond 50 R_d holds e^-50 of its mass; one thicker than R_d is no disk).
  require(p.disk_z0 <= p.disk_Rd, "disk_z0", p.disk_z0, "must be <= disk_Rd");
  // The bounds with a relative margin of 1e-12: disk_Rmax = 0.01 with disk_Rd = 0.1 is the
  // documented bound, but 0.1 * 0.1 rounds to 0.010000000000000002.
  const double rmax_rd = Rmax_ / p.disk_Rd;
  require(rmax_rd >= 0.1 * (1 - 1e-12) && rmax_rd <= 50 * (1 + 1e-12), "disk_Rmax", Rmax_,
          "need 0.1 disk_Rd <= disk_Rmax <= 50 disk_Rd");
  require(RQ_ <= Rmax_ * (1 + 1e-12), "disk_RQ", RQ_,
          p.disk_RQ > 0 ? "must be <= disk_Rmax (Q is set inside the disk)"
                        : "the default, 2.43 disk_Rd, must be <= disk_Rmax (Q is set inside the "
                          "disk): give a smaller disk_RQ");
  const double G = p.G, Rd = p.disk_Rd;
  const double Mb = p.bulge_mass, ab = p.bulge_a;
  // The particles hold disk_mass inside R_max: the exponential they sample is one of
  // untruncated mass Md = disk_mass / P, P the fraction inside R_max, and the surface density,
  // the force (that exponential's less its part beyond R_max) and the monopole are those of
  // the truncated disk. They were the untruncated exponential's of mass disk_mass: with
  // disk_Rmax = 2.5 R_d the sampled Sigma was 1.4x the one the velocities assumed.
  const double Md = p.disk_mass / exponential_disk_mass_fraction(Rmax_, Rd);
  disk_Mu_ = Md;
  const double Rmax = Rmax_;

  // Halo in (own + bulge + disk monopole); bulge in (own + halo + disk monopole).
  SphericalModelOptions o;
  o.G = G;
  o.r_min = 1e-6 * std::min(p.halo_a, Rd);
  o.r_max = p.halo == "nfw" ? 300.0 * p.halo_r_cut : 1e6 * p.halo_a;
  auto disk_mono = [G, Md, Rd, Rmax](double r) {
    return Md > 0 ? exponential_disk_monopole_potential(r, Md, Rd, G, Rmax) : 0.0;
  };
  halo_ = std::make_unique<SphericalModel>(
      density_profile(p.halo, p.halo_a, p.halo == "nfw" ? p.halo_r_cut : 0.0), p.halo_mass, o,
      [=](double r) { return disk_mono(r) + (Mb > 0 ? hernquist_potential(r, Mb, ab, G) : 0.0); });
  if (Mb > 0) {
    SphericalModelOptions ob = o;
    ob.r_min = 1e-6 * std::min(ab, Rd);
    ob.r_max = 1e6 * ab;
    const SphericalModel* h = halo_.get();
    bulge_ = std::make_unique<SphericalModel>(
        density_profile("hernquist", ab, 0.0), Mb, ob,
        [h, disk_mono](double r) { return disk_mono(r) + h->self_potential(r); });
  }

  // Rotation curve on a log grid: v_c^2 = R |a_R|, a_R = disk (Hankel) + G M_sph(<R) / R^2.
  const int nR = 160;
  const double l0 = std::log(1e-3 * Rd), l1 = std::log(2.0 * Rmax_);
  lR_.resize(nR);
  vc2_.resize(nR);
  kappa2_.resize(nR);
  const auto vc2_at = [&](double R) {
    const double m_sph = halo_->enclosed_mass(R) + (Mb > 0 ? hernquist_mass(R, Mb, ab) : 0.0);
    // The rings beyond R_max spread in z as the layer (a razor-thin disk's: at R_d / 1000,
    // as an unsoftened ring's force diverges at the ring).
    const double a_disk =
        Md > 0 ? exponential_disk_radial_accel(R, Md, Rd, p.disk_z0, G) -
                     exponential_disk_outer_radial_accel_layer(R, Md, Rd, Rmax, p.disk_z0, G)
               : 0.0;
    return R * (G * m_sph / (R * R) - a_disk);
  };
  for (int i = 0; i < nR; ++i) {
    lR_[i] = l0 + (l1 - l0) * i / (nR - 1);
    vc2_[i] = vc2_at(std::exp(lR_[i]));
  }
  // kappa^2 = (v_c^2 / R^2) (2 + d ln v_c^2 / d ln R).
  for (int i = 0; i < nR; ++i) {
    const int lo = std::max(i - 1, 0), hi = std::min(i + 1, nR - 1);
    const double slope = std::log(vc2_[hi] / vc2_[lo]) / (lR_[hi] - lR_[lo]);
    kappa2_[i] = vc2_[i] / std::exp(2 * lR_[i]) * (2 + slope);
  }
  // sigma_R(R_Q) = Q 3.36 G Sigma(R_Q) / kappa(R_Q) (Toomre 1964), with kappa at R_Q itself:
  // the table's differences span 10% in R, and within that of the disk's edge, where v_c^2
  // turns sharply, its kappa was 11% low (disk_Rmax = 0.25 = 2.5 R_d: Q 1.69 for 1.5).
  const double dl = 1e-3;
  const double slope_Q =
      std::log(vc2_at(RQ_ * std::exp(dl)) / vc2_at(RQ_ * std::exp(-dl))) / (2 * dl);
  const double kappa_Q = std::sqrt(std::max(vc2_at(RQ_) / (RQ_ * RQ_) * (2 + slope_Q), 0.0));
  const double sQ = p.disk_Q * 3.36 * G * surface_density(RQ_) / kappa_Q;
  sigR2_Q_ = sQ * sQ;
}

double DiskGalaxyModel::table(const std::vector<double>& y, double R) const {
  const double l = std::log(std::max(R, 1e-300));
  const double h = lR_[1] - lR_[0];
  double t = (l - lR_[0]) / h;
  t = std::clamp(t, 0.0, static_cast<double>(lR_.size() - 1) - 1e-9);
  const auto i = static_cast<std::size_t>(t);
  t -= static_cast<double>(i);
  return (1 - t) * y[i] + t * y[i + 1];
}

double DiskGalaxyModel::total_mass() const {
  return p_.halo_mass + p_.disk_mass + p_.bulge_mass;
}

double DiskGalaxyModel::vc(double R) const {
  return std::sqrt(std::max(table(vc2_, R), 0.0));
}

double DiskGalaxyModel::kappa(double R) const {
  return std::sqrt(std::max(table(kappa2_, R), 0.0));
}

double DiskGalaxyModel::surface_density(double R) const {
  return disk_Mu_ / (2 * kPi * p_.disk_Rd * p_.disk_Rd) * std::exp(-R / p_.disk_Rd);
}

double DiskGalaxyModel::sigma_R(double R) const {
  // sigma_R^2 proportional to Sigma (Hernquist 1993 eq. 2.23).
  return std::sqrt(sigR2_Q_ * std::exp(-(R - RQ_) / p_.disk_Rd));
}

double DiskGalaxyModel::sigma_phi(double R) const {
  const double k = kappa(R), w = omega(R);
  return sigma_R(R) * k / (2 * w);
}

double DiskGalaxyModel::sigma_z(double R) const {
  return std::sqrt(kPi * p_.G * surface_density(R) * p_.disk_z0);
}

double DiskGalaxyModel::mean_vphi(double R) const {
  // Asymmetric drift (Hernquist 1993 eq. 2.28) with rho sigma_R^2 ~ Sigma^2:
  // v_phi^2 = v_c^2 + sigma_R^2 (1 - kappa^2 / (4 Omega^2) - 2 R / R_d).
  const double k = kappa(R), w = omega(R), s2 = sigma_R(R) * sigma_R(R);
  const double v2 = vc(R) * vc(R) + s2 * (1 - k * k / (4 * w * w) - 2 * R / p_.disk_Rd);
  return std::sqrt(std::max(v2, 0.0));
}

void DiskGalaxyModel::split(std::size_t n, std::size_t& nh, std::size_t& nd,
                            std::size_t& nb) const {
  const double dn = static_cast<double>(n);
  nd = p_.disk_mass > 0 ? static_cast<std::size_t>(std::llround(p_.disk_fraction * dn)) : 0;
  nb = p_.bulge_mass > 0 ? static_cast<std::size_t>(std::llround(p_.bulge_fraction * dn)) : 0;
  if (p_.bulge_mass > 0 && nb == 0)
    throw std::invalid_argument("bulge_mass " + number_text(p_.bulge_mass) +
                                " > 0 but bulge_fraction gives no bulge particles");
  if (p_.disk_mass > 0 && nd == 0)
    throw std::invalid_argument("disk_mass > 0 but disk_fraction " + number_text(p_.disk_fraction) +
                                " gives no disk particles");
  if (nd + nb >= n)
    throw std::invalid_argument("-n " + std::to_string(n) + " too small for a galaxy");
  nh = n - nd - nb;
}

ParticleSet DiskGalaxyModel::sample(std::size_t n, std::uint64_t seed) const {
  std::size_t nh, nd, nb;
  split(n, nh, nd, nb);
  Random rng(seed);
  ParticleSet out = halo_->sample(nh, rng, p_.mass_cut);
  // Disk: R ~ Gamma(2, R_d) truncated at R_max, phi uniform, z = z0 atanh(2u - 1).
  ParticleSet disk;
  disk.resize(nd);
  // Mirror pairs (x, v), (-x, -v) as for the halo (same R, phi + pi, same sense of rotation):
  // every component's centre of mass and momentum vanish, so the disk sits at the halo's
  // density centre.
  for (std::size_t i = 0; i < nd; ++i) {
    if (i % 2 == 1) {
      disk.x[i] = -disk.x[i - 1];
      disk.y[i] = -disk.y[i - 1];
      disk.z[i] = -disk.z[i - 1];
      disk.vx[i] = -disk.vx[i - 1];
      disk.vy[i] = -disk.vy[i - 1];
      disk.vz[i] = -disk.vz[i - 1];
      disk.m[i] = p_.disk_mass / static_cast<double>(nd);
      continue;
    }
    double R;
    do {
      R = -p_.disk_Rd * std::log(std::max(rng.uniform(), 1e-300) * std::max(rng.uniform(), 1e-300));
    } while (!(R < Rmax_));
    const double phi = 2 * kPi * rng.uniform();
    const double u = std::clamp(rng.uniform(), 1e-15, 1 - 1e-15);
    const double z = p_.disk_z0 * std::atanh(2 * u - 1);
    const double vR = sigma_R(R) * rng.normal();
    const double vphi = mean_vphi(R) + sigma_phi(R) * rng.normal();
    const double vz = sigma_z(R) * rng.normal();
    const double c = std::cos(phi), s = std::sin(phi);
    disk.x[i] = R * c;
    disk.y[i] = R * s;
    disk.z[i] = z;
    disk.vx[i] = vR * c - vphi * s;
    disk.vy[i] = vR * s + vphi * c;
    disk.vz[i] = vz;
    disk.m[i] = p_.disk_mass / static_cast<double>(nd);
  }
  out.append(disk);
  if (nb > 0) out.append(bulge_->sample(nb, rng, p_.mass_cut));
  for (std::size_t i = 0; i < out.size(); ++i) out.id[i] = i;
  to_com_frame(out);
  return out;
}

ParticleSet make_disk_galaxy(std::size_t n, std::uint64_t seed, const DiskGalaxyParams& params) {
  if (n < 1) throw std::invalid_argument("invalid -n 0 (need at least 1 particle)");
  return DiskGalaxyModel(params).sample(n, seed);
}

// ---- merger ------------------------------------------------------------------------------------

namespace {

// The default secondary: the primary scaled in mass by q, in length by q^(1/2).
DiskGalaxyParams scaled_secondary(const DiskGalaxyParams& g1, double q) {
  DiskGalaxyParams g2 = g1;
  const double sl = std::sqrt(q);
  g2.halo_mass *= q;
  g2.disk_mass *= q;
  g2.bulge_mass *= q;
  g2.halo_a *= sl;
  g2.halo_r_cut *= sl;
  g2.disk_Rd *= sl;
  g2.disk_z0 *= sl;
  g2.disk_RQ *= sl;
  g2.disk_Rmax *= sl;
  g2.bulge_a *= sl;
  return g2;
}

}  // namespace

namespace {

// The interaction energy -G sum_{i in a, j in b} m_i m_j / |x_i - x_j| of two particle sets,
// from at most 4096 evenly strided particles of each (exact below that), their masses scaled to
// the set's: an unbiased estimate (its noise ~1/sqrt(4096) of W12). Neither moving the
// subsamples onto the sets' centres of mass (a halo's few far particles move a subsample's by
// ~1: 40% of the correction this serves, at 8194 particles) nor correcting for the point
// masses' change between the two centres' separations (the same error, as the overlapping
// halos' W12 hardly depends on those few particles) helps. Coincident pairs are skipped.
double interaction_energy(const ParticleSet& a, const ParticleSet& b, double G) {
  struct Sample {
    std::vector<double> x, y, z, m;
  };
  auto sample = [](const ParticleSet& p) {
    Sample s;
    const std::size_t stride = (p.size() + 4095) / 4096;
    double mass = 0, sub = 0;
    for (double m : p.m) mass += m;
    for (std::size_t i = 0; i < p.size(); i += stride) {
      sub += p.m[i];
      s.x.push_back(p.x[i]), s.y.push_back(p.y[i]), s.z.push_back(p.z[i]), s.m.push_back(p.m[i]);
    }
    if (mass > 0 && sub > 0)
      for (double& m : s.m) m *= mass / sub;
    return s;
  };
  const Sample sa = sample(a), sb = sample(b);
  double w = 0;
  for (std::size_t i = 0; i < sa.m.size(); ++i) {
    double wi = 0;
    for (std::size_t j = 0; j < sb.m.size(); ++j) {
      const double dx = sa.x[i] - sb.x[j], dy = sa.y[i] - sb.y[j], dz = sa.z[i] - sb.z[j];
      const double r2 = dx * dx + dy * dy + dz * dz;
      if (r2 > 0) wi += sb.m[j] / std::sqrt(r2);
    }
    w -= sa.m[i] * wi;
  }
  return G * w;
}

}  // namespace

ParticleSet make_merger(std::size_t n, std::uint64_t seed, const MergerParams& mp) {
  require(mp.mass_ratio > 0 && mp.mass_ratio <= 1, "mass_ratio", mp.mass_ratio,
          "need 0 < mass_ratio <= 1");
  require(mp.eccentricity >= 0, "eccentricity", mp.eccentricity, "must be >= 0");
  require(mp.r_peri > 0, "r_peri", mp.r_peri, "must be > 0");
  require(mp.r_start >= mp.r_peri, "r_start", mp.r_start,
          ("must be >= r_peri " + number_text(mp.r_peri)).c_str());
  const double e = mp.eccentricity, q = mp.mass_ratio;
  if (e < 1) {
    const double r_apo = mp.r_peri * (1 + e) / (1 - e);
    // The apocentre's value and the way to it (a circular orbit starts at r_peri): the rule
    // alone left eccentricity=0 with the default r_start a riddle.
    if (!(mp.r_start <= r_apo * (1 + 1e-12))) {
      char apo[32];
      std::snprintf(apo, sizeof apo, "%.6g", r_apo);
      throw std::invalid_argument(
          "invalid r_start " + number_text(mp.r_start) + " (must be <= the apocentre " + apo +
          " of the bound orbit of eccentricity " + number_text(e) + " and r_peri " +
          number_text(mp.r_peri) + ": r_peri (1 + e) / (1 - e)" +
          (e == 0 ? "; a circular orbit starts at r_start = r_peri)" : ")"));
    }
  }
  if (n < 2)
    throw std::invalid_argument("invalid -n " + std::to_string(n) + " (a merger needs >= 2)");
  const auto n2 = static_cast<std::size_t>(std::llround(static_cast<double>(n) * q / (1 + q)));
  const std::size_t n1 = n - n2;
  // Which galaxy an error is about: the primary or the secondary (its keys are g2.KEY), with
  // the particles each got (a merger of -n 3 gives the secondary one particle, too few for a
  // disk).
  const auto galaxy = [&](const char* which, std::size_t count, auto&& make) {
    try {
      return make();
    } catch (const std::invalid_argument& err) {
      throw std::invalid_argument(std::string("merger ") + which + " (" + std::to_string(count) +
                                  " of -n " + std::to_string(n) + " particles): " + err.what());
    }
  };
  if (n2 == 0)
    throw std::invalid_argument("invalid -n " + std::to_string(n) + " with mass_ratio " +
                                number_text(q) + ": the secondary gets no particle");
  ParticleSet a = galaxy("primary", n1, [&] { return make_disk_galaxy(n1, seed, mp.galaxy); });
  const std::uint64_t seed2 = seed ^ 0x9e3779b97f4a7c15ULL;
  const double M1 = DiskGalaxyModel(mp.galaxy).total_mass(), M2 = M1 * q, M = M1 + M2;
  ParticleSet b;
  if (mp.secondary) {
    b = galaxy("secondary", n2, [&] { return mp.secondary(n2, seed2); });
    double m_model = 0;
    for (double m : b.m) m_model += m;
    require(m_model > 0, "secondary mass", m_model, "must be > 0");
    const double mu = M2 / m_model, sv = std::sqrt(mu);
    for (std::size_t i = 0; i < b.size(); ++i) {
      b.m[i] *= mu;
      b.vx[i] *= sv;
      b.vy[i] *= sv;
      b.vz[i] *= sv;
    }
    to_com_frame(b);
  } else {
    b = galaxy("secondary", n2,
               [&] { return make_disk_galaxy(n2, seed2, scaled_secondary(mp.galaxy, q)); });
  }

  // Relative Kepler orbit of point masses M1, M2 (G M = G (M1 + M2)).
  const double G = mp.galaxy.G;
  const double pl = mp.r_peri * (1 + e);  // semi-latus rectum
  // At separation r the true anomaly has e cos f = pl / r - 1 (approaching: sin f < 0). Written
  // without the angle and without cancellations, so that r_start far beyond r_peri keeps its
  // digits: 1 + e cos f = pl / r, and e^2 sin^2 f = (e - e cos f)(e + e cos f) =
  // ((e + 1) - pl / r)((e - 1) + pl / r) (recomputing r from an acos'd angle gave 9.99967e11 for
  // r_start 1e12, NaN for 1e17).
  double r0 = pl, ecos = e, esin = 0, one_ecos = 1 + e;  // circular orbit (e = 0): f = 0
  if (e > 1e-12) {
    r0 = mp.r_start;
    const double q = pl / r0;  // 1 + e cos f
    ecos = std::clamp(q - 1, -e, e);
    one_ecos = q;
    esin = -std::sqrt(std::max(0.0, ((e + 1) - q) * ((e - 1) + q)));
  }
  const double vk = std::sqrt(G * M / pl);
  const double vr = vk * esin, vt = vk * one_ecos;
  const double cf = e > 1e-12 ? ecos / e : 1.0, sf = e > 1e-12 ? esin / e : 0.0;
  const Eigen::Vector3d rhat(cf, sf, 0), that(-sf, cf, 0);
  const Eigen::Vector3d rel = r0 * rhat, vrel = vr * rhat + vt * that;

  auto place = [](ParticleSet& p, double incl, double omega, const Eigen::Vector3d& x0,
                  const Eigen::Vector3d& v0) {
    const double d = kPi / 180;
    const Eigen::Matrix3d rot = (Eigen::AngleAxisd(omega * d, Eigen::Vector3d::UnitZ()) *
                                 Eigen::AngleAxisd(incl * d, Eigen::Vector3d::UnitX()))
                                    .toRotationMatrix();
    for (std::size_t i = 0; i < p.size(); ++i) {
      const Eigen::Vector3d x = rot * Eigen::Vector3d(p.x[i], p.y[i], p.z[i]) + x0;
      const Eigen::Vector3d v = rot * Eigen::Vector3d(p.vx[i], p.vy[i], p.vz[i]) + v0;
      p.x[i] = x[0];
      p.y[i] = x[1];
      p.z[i] = x[2];
      p.vx[i] = v[0];
      p.vy[i] = v[1];
      p.vz[i] = v[2];
    }
  };
  place(a, mp.incl1, mp.omega1, -(M2 / M) * rel, -(M2 / M) * vrel);
  place(b, mp.incl2, mp.omega2, (M1 / M) * rel, (M1 / M) * vrel);

  // The galaxies are extended: at r_start their halos overlap, and their interaction energy
  // W12 is less negative than the point masses' -G M1 M2 / r (for the default disk galaxies at
  // r = 4, by ~0.09: the "parabolic" orbit was unbound by that much and the galaxies flew
  // apart). The radial speed is set so that the orbital energy mu v^2 / 2 + W12 is the Kepler
  // orbit's, keeping its angular momentum (the tangential speed), so the orbit is bound or
  // unbound as asked; the actual pericentre differs from r_peri (the halos' own potential, and
  // dynamical friction). Where the overlap is so deep that even no radial speed leaves more
  // energy than that (a start well inside the halos), the radial speed is 0 and the orbit is
  // less bound than asked (docs/models.md: start farther apart). A circular orbit (e = 0) is
  // left as the point masses' (it has no radial speed to adjust).
  Eigen::Vector3d dv = Eigen::Vector3d::Zero();
  if (e > 1e-12) {
    const double w12 = interaction_energy(a, b, G);
    const double mu = M1 * M2 / M;
    const double v2 = vr * vr + vt * vt + 2 * (-G * M1 * M2 / r0 - w12) / mu;
    const double vr_new = -std::sqrt(std::max(v2 - vt * vt, 0.0));  // approaching
    dv = (vr_new - vr) * rhat;
    if (v2 < vt * vt && mp.warn) {
      // A parabolic orbit's is 0, not the round-off of the difference (5.8e-16 was printed).
      const double e_scale = G * M1 * M2 / r0;
      double e_kepler = 0.5 * mu * (vr * vr + vt * vt) - e_scale;
      if (std::abs(e_kepler) < 1e-12 * e_scale) e_kepler = 0;
      const double e_orbit = 0.5 * mu * vt * vt + w12;
      std::ostringstream w;
      w.precision(3);
      w << "merger: at r_start " << number_text(mp.r_start)
        << " the halos overlap so deeply that the orbit is less bound than eccentricity "
        << number_text(e) << " asks (orbital energy " << e_orbit
        << " with no radial speed, against the Kepler orbit's " << e_kepler
        << "); start farther apart (a larger r_start)";
      mp.warn(w.str());
    }
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    a.vx[i] -= (M2 / M) * dv[0];
    a.vy[i] -= (M2 / M) * dv[1];
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    b.vx[i] += (M1 / M) * dv[0];
    b.vy[i] += (M1 / M) * dv[1];
  }
  a.append(b);
  for (std::size_t i = 0; i < a.size(); ++i) a.id[i] = i;
  to_com_frame(a);
  return a;
}

}  // namespace hoshi
