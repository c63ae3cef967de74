#include "ic/spherical.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>
#include <stdexcept>

#include "core/number_text.hpp"

namespace hoshi {

namespace {

constexpr double kPi = std::numbers::pi;

void unit_vector(Random& rng, double& x, double& y, double& z) {
  const double c = rng.uniform(-1.0, 1.0);
  const double s = std::sqrt(std::max(0.0, 1.0 - c * c));
  const double phi = 2.0 * kPi * rng.uniform();
  x = s * std::cos(phi);
  y = s * std::sin(phi);
  z = c;
}

void require_positive(const char* what, double v) {
  if (!(v > 0) || !std::isfinite(v))
    throw std::invalid_argument(std::string("invalid ") + what + " " + number_text(v) +
                                " (must be > 0)");
}

void require_mass_cut(double mass_cut) {
  if (!(mass_cut > 0 && mass_cut <= 1))
    throw std::invalid_argument("invalid mass_cut " + number_text(mass_cut) +
                                " (need 0 < mass_cut <= 1)");
}

}  // namespace

// ---- Hernquist --------------------------------------------------------------------------------

double hernquist_density(double r, double M, double a) {
  return M * a / (2.0 * kPi * r * std::pow(r + a, 3));
}

double hernquist_mass(double r, double M, double a) {
  return M * r * r / ((r + a) * (r + a));
}

double hernquist_potential(double r, double M, double a, double G) {
  return -G * M / (r + a);
}

double hernquist_df(double E, double M, double a, double G) {
  const double vg2 = G * M / a;
  const double q2 = E / vg2;
  if (!(q2 > 0)) return 0.0;
  if (q2 >= 1) return 0.0;
  const double q = std::sqrt(q2);
  const double s = std::sqrt(1.0 - q2);
  const double bracket =
      3.0 * std::asin(q) + q * s * (1.0 - 2.0 * q2) * (8.0 * q2 * q2 - 8.0 * q2 - 3.0);
  return M / (8.0 * std::sqrt(2.0) * kPi * kPi * kPi * a * a * a * vg2 * std::sqrt(vg2)) *
         std::pow(1.0 - q2, -2.5) * bracket;
}

double hernquist_sigma2(double r, double M, double a, double G) {
  const double x = r / a;
  return G * M / (12.0 * a) *
         (12.0 * x * std::pow(1.0 + x, 3) * std::log1p(1.0 / x) -
          x / (1.0 + x) * (25.0 + 52.0 * x + 42.0 * x * x + 12.0 * x * x * x));
}

// ---- generic sampler ----------------------------------------------------------------------------

ParticleSet sample_isotropic(std::size_t n, Random& rng, double mass, double mass_cut,
                             const std::function<double(double)>& radius_of_fraction,
                             const std::function<double(double)>& psi,
                             const std::function<double(double)>& df, bool symmetric) {
  require_mass_cut(mass_cut);
  ParticleSet p;
  p.resize(n);
  // Envelope scan points in q = v / v_esc: log-spaced (narrow peaks at small q near a cusp,
  // where the peak sits at q ~ sqrt(r / a)) and linear (broad peaks).
  std::vector<double> scan;
  for (int k = 0; k <= 96; ++k) scan.push_back(std::pow(10.0, -6.0 + 6.0 * k / 96.0));
  for (int k = 1; k < 32; ++k) scan.push_back(k / 32.0);
  auto draw = [&](Random& r_, std::size_t i) {
    const double r = radius_of_fraction(mass_cut * r_.uniform());
    const double ps = std::max(psi(r), 0.0);
    const double ve = std::sqrt(2.0 * ps);
    auto density = [&](double q) { return q * q * df(ps * (1.0 - q * q)); };
    double env = 0;
    for (double q : scan) env = std::max(env, density(q));
    // 1.3: the scan's largest value underestimates the true maximum of this smooth,
    // single-peaked density by far less than 30% at the scan's spacing; should it ever be
    // exceeded, the envelope is raised and this particle's speed is drawn afresh.
    env *= 1.3;
    double q = 0;
    if (env > 0) {
      for (;;) {
        q = r_.uniform();
        const double d = density(q);
        if (d > env) {
          env = 1.3 * d;
          continue;
        }
        if (r_.uniform() * env < d) break;
      }
    }
    double ux, uy, uz, wx, wy, wz;
    unit_vector(r_, ux, uy, uz);
    unit_vector(r_, wx, wy, wz);
    const double v = q * ve;
    p.x[i] = r * ux;
    p.y[i] = r * uy;
    p.z[i] = r * uz;
    p.vx[i] = v * wx;
    p.vy[i] = v * wy;
    p.vz[i] = v * wz;
    p.m[i] = mass / static_cast<double>(n);
  };
  // Blocks of kBlock particles (even, so mirror pairs never straddle two blocks), each with
  // its own generator seeded from one draw of `rng` and the block index: the sample depends
  // on the seed only, not on the number of OpenMP threads.
  constexpr std::size_t kBlock = 4096;
  const std::uint64_t base = rng.next_u64();
  const auto n_blocks = static_cast<std::int64_t>((n + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t b = 0; b < n_blocks; ++b) {
    Random rb(base + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(b + 1));
    const std::size_t end = std::min(n, static_cast<std::size_t>(b + 1) * kBlock);
    for (std::size_t i = static_cast<std::size_t>(b) * kBlock; i < end; ++i) {
      if (symmetric && i % 2 == 1) {
        p.x[i] = -p.x[i - 1];
        p.y[i] = -p.y[i - 1];
        p.z[i] = -p.z[i - 1];
        p.vx[i] = -p.vx[i - 1];
        p.vy[i] = -p.vy[i - 1];
        p.vz[i] = -p.vz[i - 1];
        p.m[i] = mass / static_cast<double>(n);
        continue;
      }
      draw(rb, i);
    }
  }
  return p;
}

ParticleSet make_hernquist(std::size_t n, std::uint64_t seed, double a, double mass_cut) {
  if (n < 1) throw std::invalid_argument("invalid -n 0 (need at least 1 particle)");
  require_positive("Hernquist scale radius a", a);
  require_mass_cut(mass_cut);
  Random rng(seed);
  // M(r) / M = X  <=>  r = a sqrt(X) / (1 - sqrt(X)).
  auto radius = [a](double X) {
    const double s = std::sqrt(X);
    return a * s / (1.0 - s);
  };
  auto psi = [a](double r) { return -hernquist_potential(r, 1.0, a); };
  auto df = [a](double E) { return hernquist_df(E, 1.0, a); };
  ParticleSet p = sample_isotropic(n, rng, 1.0, mass_cut, radius, psi, df, true);
  to_com_frame(p);
  return p;
}

// ---- Eddington inversion -----------------------------------------------------------------------

SphericalModel::SphericalModel(std::function<double(double)> rho, double mass,
                               const SphericalModelOptions& o,
                               std::function<double(double)> phi_ext)
    : rho_fn_(std::move(rho)), phi_ext_(std::move(phi_ext)), mass_(mass), G_(o.G) {
  require_positive("model mass", mass);
  require_positive("G", o.G);
  if (!(o.r_min > 0 && o.r_max > o.r_min) || o.n_grid < 16)
    throw std::invalid_argument("invalid Eddington grid r_min " + number_text(o.r_min) + " r_max " +
                                number_text(o.r_max) + " n_grid " + std::to_string(o.n_grid));
  const int n = o.n_grid;
  const double l0 = std::log(o.r_min), h = (std::log(o.r_max) - l0) / (n - 1);
  lr_.resize(n);
  rho_.resize(n);
  for (int i = 0; i < n; ++i) {
    lr_[i] = l0 + i * h;
    rho_[i] = rho_fn_(std::exp(lr_[i]));
    if (!(rho_[i] >= 0) || !std::isfinite(rho_[i]))
      throw std::invalid_argument("invalid density " + number_text(rho_[i]) + " at r = " +
                                  number_text(std::exp(lr_[i])) + " (must be finite and >= 0)");
  }
  // Drop trailing zeros (a density cut off to underflow) so the tail slope is defined.
  while (rho_.size() > 16 && rho_.back() == 0 && rho_[rho_.size() - 2] == 0) {
    lr_.pop_back();
    rho_.pop_back();
  }
  const int m = static_cast<int>(lr_.size());
  auto r_at = [&](int i) { return std::exp(lr_[i]); };
  // Inner power law rho ~ r^-g0 inside r_min: M(r_min) = 4 pi r^3 rho / (3 - g0).
  const double g0 = rho_[1] > 0 && rho_[0] > 0 ? -std::log(rho_[1] / rho_[0]) / h : 0.0;
  if (!(g0 < 3))
    throw std::invalid_argument("density diverges as r^-" + number_text(g0) +
                                " at the centre (need a slope < 3 for a finite mass)");
  m_.resize(m);
  m_[0] = 4 * kPi * std::pow(r_at(0), 3) * rho_[0] / (3 - g0);
  for (int i = 1; i < m; ++i)
    m_[i] =
        m_[i - 1] + 0.5 * h * 4 * kPi *
                        (std::pow(r_at(i - 1), 3) * rho_[i - 1] + std::pow(r_at(i), 3) * rho_[i]);
  // Outer power law rho ~ r^-gt beyond r_max.
  const double rm = r_at(m - 1), rho_m = rho_[m - 1];
  tail_slope_ = rho_m > 0 && rho_[m - 2] > 0 ? -std::log(rho_m / rho_[m - 2]) / h : 1e9;
  double tail_mass = 0, tail_pot = 0;
  if (rho_m > 0) {
    const double shell = 4 * kPi * rm * rm * rm * rho_m;
    if (tail_slope_ > 3) {
      tail_mass = shell / (tail_slope_ - 3);
      tail_pot = shell / rm / (tail_slope_ - 2);
    } else if (shell > 1e-12 * m_[m - 1]) {
      throw std::invalid_argument("density falls off as r^-" + number_text(tail_slope_) +
                                  " at r = " + number_text(rm) +
                                  ": the total mass diverges (add a cutoff)");
    }
  }
  const double raw_mass = m_[m - 1] + tail_mass;
  if (!(raw_mass > 0)) throw std::invalid_argument("density integrates to zero mass");
  norm_ = mass_ / raw_mass;
  for (int i = 0; i < m; ++i) {
    rho_[i] *= norm_;
    m_[i] *= norm_;
  }
  tail_pot *= norm_;
  // Phi_self(r) = -G (M(r) / r + int_r^inf 4 pi r' rho dr').
  phi_self_.resize(m);
  double outer = tail_pot;
  phi_self_[m - 1] = -G_ * (m_[m - 1] / rm + outer);
  for (int i = m - 2; i >= 0; --i) {
    outer +=
        0.5 * h * 4 * kPi * (r_at(i) * r_at(i) * rho_[i] + r_at(i + 1) * r_at(i + 1) * rho_[i + 1]);
    phi_self_[i] = -G_ * (m_[i] / r_at(i) + outer);
  }
  psi_.resize(m);
  for (int i = 0; i < m; ++i) {
    psi_[i] = -phi_self_[i] - (phi_ext_ ? phi_ext_(r_at(i)) : 0.0);
    if (i > 0 && !(psi_[i] < psi_[i - 1]))
      throw std::invalid_argument("total potential is not increasing outwards at r = " +
                                  number_text(r_at(i)));
  }
  if (!(psi_[m - 1] > 0))
    throw std::invalid_argument(
        "relative potential Psi <= 0 inside the grid (external potential "
        "must be <= 0 and vanish at infinity)");
  // Energies: W_self = 1/2 int rho Phi_self dV, W_ext = int rho Phi_ext dV.
  for (int i = 1; i < m; ++i) {
    auto w = [&](int j, double phi) { return 4 * kPi * std::pow(r_at(j), 3) * rho_[j] * phi; };
    w_self_ += 0.25 * h * (w(i - 1, phi_self_[i - 1]) + w(i, phi_self_[i]));
    if (phi_ext_) {
      w_ext_ +=
          0.5 * h * (w(i - 1, -psi_[i - 1] - phi_self_[i - 1]) + w(i, -psi_[i] - phi_self_[i]));
    }
  }
  // Tail self energy ~ -G M_tail M / r_max / 2 (small; only for the energy bookkeeping).
  w_self_ -= 0.5 * G_ * tail_mass * norm_ * mass_ / rm;

  // Eddington. Nodes in ascending Psi: p[k] = psi_[m-1-k]; g = drho/dPsi by centred differences
  // on the grid; plus the node (0, 0) for Psi -> 0 (drho/dPsi -> 0 there for any density
  // falling faster than r^-1 in a Keplerian outer potential).
  std::vector<double> p(m + 1), g(m + 1);
  p[0] = 0;
  g[0] = 0;
  for (int k = 1; k <= m; ++k) {
    const int i = m - k;
    const int lo = std::max(i - 1, 0), hi = std::min(i + 1, m - 1);
    p[k] = psi_[i];
    g[k] = (rho_[hi] - rho_[lo]) / (psi_[hi] - psi_[lo]);
  }
  std::vector<double> slope(m + 1, 0.0);
  for (int k = 1; k <= m; ++k) slope[k] = (g[k] - g[k - 1]) / (p[k] - p[k - 1]);
  const double c = 1.0 / (std::sqrt(8.0) * kPi * kPi);
  lE_.resize(m);
  lf_.resize(m);
  for (int j = 1; j <= m; ++j) {
    const double E = p[j];
    double s = 0;
    for (int k = 1; k <= j; ++k)
      s += slope[k] * 2.0 * (std::sqrt(E - p[k - 1]) - std::sqrt(std::max(E - p[k], 0.0)));
    double f = c * s;
    if (!(f > 0)) {
      ++negative_df_;
      f = 0;
    }
    lE_[j - 1] = std::log(E);
    lf_[j - 1] = f;  // stored linearly; df() interpolates in log where both ends are > 0
  }
}

double SphericalModel::interp_lr(const std::vector<double>& y, double r) const {
  const double l = std::log(r);
  const double h = lr_[1] - lr_[0];
  double t = (l - lr_[0]) / h;
  if (t <= 0) return y.front();
  const auto last = static_cast<double>(lr_.size() - 1);
  if (t >= last) return y.back();
  const auto i = static_cast<std::size_t>(t);
  t -= static_cast<double>(i);
  return (1 - t) * y[i] + t * y[i + 1];
}

double SphericalModel::density(double r) const {
  return norm_ * rho_fn_(r);
}

double SphericalModel::enclosed_mass(double r) const {
  if (r <= std::exp(lr_.front())) {
    const double g0 =
        rho_[1] > 0 && rho_[0] > 0 ? -std::log(rho_[1] / rho_[0]) / (lr_[1] - lr_[0]) : 0;
    return m_.front() * std::pow(r / std::exp(lr_.front()), 3 - g0);
  }
  if (r >= std::exp(lr_.back())) return mass_;
  return interp_lr(m_, r);
}

double SphericalModel::self_potential(double r) const {
  if (r >= std::exp(lr_.back())) return -G_ * mass_ / r;
  return interp_lr(phi_self_, std::max(r, std::exp(lr_.front())));
}

double SphericalModel::potential(double r) const {
  return self_potential(r) + (phi_ext_ ? phi_ext_(r) : 0.0);
}

double SphericalModel::df(double E) const {
  if (!(E > 0)) return 0.0;
  const double l = std::log(E);
  if (l >= lE_.back()) return lf_.back();
  if (l <= lE_.front()) return lf_.front() * E / std::exp(lE_.front());
  const auto it = std::upper_bound(lE_.begin(), lE_.end(), l);
  const std::size_t k = static_cast<std::size_t>(it - lE_.begin());
  const double t = (l - lE_[k - 1]) / (lE_[k] - lE_[k - 1]);
  const double f0 = lf_[k - 1], f1 = lf_[k];
  if (f0 > 0 && f1 > 0) return std::exp((1 - t) * std::log(f0) + t * std::log(f1));
  return (1 - t) * f0 + t * f1;
}

double SphericalModel::radius_of_mass_fraction(double X) const {
  const double M = X * mass_;
  if (M <= m_.front()) {
    const double g0 =
        rho_[1] > 0 && rho_[0] > 0 ? -std::log(rho_[1] / rho_[0]) / (lr_[1] - lr_[0]) : 0;
    return std::exp(lr_.front()) * std::pow(std::max(M, 1e-300) / m_.front(), 1.0 / (3 - g0));
  }
  if (M >= m_.back()) return std::exp(lr_.back());
  const auto it = std::upper_bound(m_.begin(), m_.end(), M);
  const std::size_t k = static_cast<std::size_t>(it - m_.begin());
  // Linear in (ln M, ln r): exact for power-law pieces.
  const double t = std::log(M / m_[k - 1]) / std::log(m_[k] / m_[k - 1]);
  return std::exp(lr_[k - 1] + t * (lr_[k] - lr_[k - 1]));
}

ParticleSet SphericalModel::sample(std::size_t n, Random& rng, double mass_cut,
                                   bool symmetric) const {
  return sample_isotropic(
      n, rng, mass_, mass_cut, [this](double X) { return radius_of_mass_fraction(X); },
      [this](double r) { return psi(r); }, [this](double E) { return df(E); }, symmetric);
}

std::function<double(double)> density_profile(const std::string& name, double a, double r_cut) {
  require_positive("scale radius a", a);
  if (!(r_cut >= 0))
    throw std::invalid_argument("invalid r_cut " + number_text(r_cut) + " (must be >= 0)");
  const double rc = r_cut;
  if (name == "hernquist")
    return [a, rc](double r) {
      const double x = r / a;
      return (rc > 0 ? std::exp(-r / rc) : 1.0) / (x * std::pow(1 + x, 3));
    };
  if (name == "plummer")
    return [a, rc](double r) {
      const double x = r / a;
      return (rc > 0 ? std::exp(-r / rc) : 1.0) * std::pow(1 + x * x, -2.5);
    };
  if (name == "jaffe")
    return [a, rc](double r) {
      const double x = r / a;
      return (rc > 0 ? std::exp(-r / rc) : 1.0) / (x * x * (1 + x) * (1 + x));
    };
  if (name == "nfw") {
    if (!(rc > 0))
      throw std::invalid_argument("nfw needs an exponential cutoff r_cut > 0 (its mass diverges)");
    return [a, rc](double r) {
      const double x = r / a;
      return std::exp(-r / rc) / (x * (1 + x) * (1 + x));
    };
  }
  throw std::invalid_argument("unknown density profile '" + name +
                              "' (expected hernquist|plummer|jaffe|nfw)");
}

ParticleSet make_eddington_model(const std::string& profile, std::size_t n, std::uint64_t seed,
                                 double a, double r_cut_over_a, double mass_cut) {
  if (n < 1) throw std::invalid_argument("invalid -n 0 (need at least 1 particle)");
  if (!(a >= 0))
    throw std::invalid_argument("invalid scale radius a " + number_text(a) + " (must be >= 0)");
  require_mass_cut(mass_cut);
  SphericalModelOptions o;
  if (r_cut_over_a > 0) {
    // The grid follows the cutoff: from 1e-6 of the smaller of a and r_cut to 300 r_cut, where
    // exp(-r / r_cut) has fallen below 1e-130, at no fewer points per decade than the default
    // grid. A grid that stopped at 1e6 a whatever r_cut was extrapolated an r_cut of 1e7 a as a
    // power law of slope just above 3 from there, put 41% of the particles on the grid's edge
    // and misjudged the mass 36-fold at r50; one that started at 1e-6 a took an r_cut below it
    // for a central cusp ("density diverges as r^-11").
    const double per_decade = (o.n_grid - 1) / std::log10(o.r_max / o.r_min);
    o.r_min = 1e-6 * std::min(1.0, r_cut_over_a);
    o.r_max = 300.0 * r_cut_over_a;
    o.n_grid = std::max(
        o.n_grid, static_cast<int>(std::ceil(per_decade * std::log10(o.r_max / o.r_min))) + 1);
  }
  const SphericalModel model(density_profile(profile, 1.0, r_cut_over_a), 1.0, o);
  // Lengths scale by lambda at fixed G and M: E -> E / lambda, v -> v / sqrt(lambda).
  // Equilibrium: E = W / 2 (virial theorem).
  const double lambda = a > 0 ? a : -4.0 * 0.5 * model.self_energy();
  Random rng(seed);
  ParticleSet p = model.sample(n, rng, mass_cut);
  const double sv = 1.0 / std::sqrt(lambda);
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.x[i] *= lambda;
    p.y[i] *= lambda;
    p.z[i] *= lambda;
    p.vx[i] *= sv;
    p.vy[i] *= sv;
    p.vz[i] *= sv;
  }
  to_com_frame(p);
  return p;
}

}  // namespace hoshi
