#include "analysis/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace hoshi {

namespace {

constexpr double kPi = std::numbers::pi;

Vec3 weighted_mean(const ParticleSet& p, const std::vector<double>& a, const std::vector<double>& b,
                   const std::vector<double>& c) {
  double m = 0;
  Vec3 s{0, 0, 0};
  for (std::size_t i = 0; i < p.size(); ++i) {
    m += p.m[i];
    s[0] += p.m[i] * a[i];
    s[1] += p.m[i] * b[i];
    s[2] += p.m[i] * c[i];
  }
  if (!(m > 0)) return {0, 0, 0};
  return {s[0] / m, s[1] / m, s[2] / m};
}

double dist2(const ParticleSet& p, std::size_t i, const Vec3& c) {
  const double dx = p.x[i] - c[0], dy = p.y[i] - c[1], dz = p.z[i] - c[2];
  return dx * dx + dy * dy + dz * dz;
}

}  // namespace

Vec3 centre_of_mass(const ParticleSet& p) {
  return weighted_mean(p, p.x, p.y, p.z);
}

Vec3 centre_of_mass_velocity(const ParticleSet& p) {
  return weighted_mean(p, p.vx, p.vy, p.vz);
}

Vec3 shrinking_sphere_centre(const ParticleSet& p, double shrink, std::size_t n_min) {
  if (!(shrink > 0 && shrink < 1))
    throw std::invalid_argument("invalid shrink factor (need 0 < shrink < 1)");
  Vec3 c = centre_of_mass(p);
  std::vector<std::size_t> in(p.size());
  std::iota(in.begin(), in.end(), 0);
  double r2 = 0;
  for (std::size_t i : in) r2 = std::max(r2, dist2(p, i, c));
  const std::size_t stop = std::max<std::size_t>(n_min, p.size() / 100);
  while (in.size() > stop) {
    r2 *= shrink * shrink;
    std::vector<std::size_t> next;
    for (std::size_t i : in)
      if (dist2(p, i, c) < r2) next.push_back(i);
    if (next.size() < stop) break;
    double m = 0;
    Vec3 s{0, 0, 0};
    for (std::size_t i : next) {
      m += p.m[i];
      s[0] += p.m[i] * p.x[i];
      s[1] += p.m[i] * p.y[i];
      s[2] += p.m[i] * p.z[i];
    }
    if (!(m > 0)) break;
    c = {s[0] / m, s[1] / m, s[2] / m};
    in.swap(next);
  }
  return c;
}

DynamicalTime shortest_dynamical_time(const ParticleSet& p, double G, double eps) {
  DynamicalTime best;
  for (const DynamicalTime& d : dynamical_times(p, G, eps))
    if (best.t == 0 || d.t < best.t) best = d;
  return best;
}

std::vector<DynamicalTime> dynamical_times(const ParticleSet& p, double G, double eps) {
  const std::size_t n = p.size(), k = (n + 99999) / 100000;
  std::vector<DynamicalTime> all;
  if (n == 0 || !(G > 0)) return all;
  double total = 0, sampled = 0;
  for (double mi : p.m) total += mi;
  ParticleSet sample;
  for (std::size_t i = 0; i < n; i += k) {
    sample.push_back(p.x[i], p.y[i], p.z[i], 0, 0, 0, p.m[i], i);
    sampled += p.m[i];
  }
  if (!(total > 0) || !(sampled > 0)) return all;
  // About the density centre: a merger's centre of mass lies between its galaxies, where the
  // radii that hold 1% of the particles are wide and their dynamical time long.
  const Vec3 c = shrinking_sphere_centre(sample);
  std::vector<std::pair<double, double>> rm;  // (r^2, m) of the sample
  for (std::size_t i = 0; i < sample.size(); ++i) {
    const double dx = sample.x[i] - c[0], dy = sample.y[i] - c[1], dz = sample.z[i] - c[2];
    rm.emplace_back(dx * dx + dy * dy + dz * dz, sample.m[i]);
  }
  std::sort(rm.begin(), rm.end());
  const std::size_t ns = rm.size();
  const double scale = total / sampled;  // sample mass -> total mass
  std::vector<double> enclosed(ns);      // mass within rm[j], inclusive
  double sum = 0;
  for (std::size_t j = 0; j < ns; ++j) enclosed[j] = (sum += rm[j].second * scale);
  for (const double fraction : {0.01, 0.1, 0.5}) {
    std::size_t rank = static_cast<std::size_t>(std::ceil(fraction * double(ns)));
    if (fraction == 0.01) rank = std::max<std::size_t>(rank, 32);
    // At least two particles: one alone (a star at the centre of mass) has no orbit.
    const std::size_t j = std::min(std::max<std::size_t>(rank, 2), ns) - 1;
    const double r = std::max(std::sqrt(rm[j].first), eps);
    if (!(enclosed[j] > 0) || !(r > 0)) continue;
    const double t = std::sqrt(r * r * r / (G * enclosed[j]));
    all.push_back({t, double(j + 1) / double(ns), r, c});
  }
  return all;
}

std::vector<double> lagrangian_radii(const ParticleSet& p, const std::vector<double>& fractions,
                                     const Vec3& centre) {
  if (p.empty()) throw std::invalid_argument("Lagrangian radii of an empty particle set");
  for (double f : fractions)
    if (!(f > 0 && f <= 1)) {
      std::ostringstream s;
      s << "invalid mass fraction " << f << " (need 0 < f <= 1)";
      throw std::invalid_argument(s.str());
    }
  const std::size_t n = p.size();
  std::vector<double> r2(n);
  std::vector<std::size_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) {
    r2[i] = dist2(p, i, centre);
    idx[i] = i;
  }
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return r2[a] < r2[b]; });
  // Compensated (Neumaier) sums: a plain running sum of 1e6 equal masses drifts by ~1e-11
  // relative, beyond the 1e-12 slack below, and the 10% radius came out one particle too far.
  struct Sum {
    double s = 0, c = 0;
    void add(double x) {
      const double t = s + x;
      c += std::abs(s) >= std::abs(x) ? (s - t) + x : (x - t) + s;
      s = t;
    }
    double value() const { return s + c; }
  };
  Sum all;
  for (double m : p.m) all.add(m);
  const double total = all.value();
  std::vector<double> cum(n);
  Sum run;
  for (std::size_t k = 0; k < n; ++k) {
    run.add(p.m[idx[k]]);
    cum[k] = run.value();
  }
  std::vector<double> out;
  for (double f : fractions) {
    // First k with cum[k] >= f total (relative round-off slack for f = 1).
    const double target = f * total * (1 - 1e-12);
    const auto it = std::lower_bound(cum.begin(), cum.end(), target);
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(it - cum.begin()), n - 1);
    out.push_back(std::sqrt(r2[idx[k]]));
  }
  return out;
}

RadialProfile radial_profile(const ParticleSet& p, const Vec3& c, const Vec3& v, double r_min,
                             double r_max, std::size_t n_bins, double G) {
  if (!(r_min > 0 && r_max > r_min) || n_bins < 1)
    throw std::invalid_argument("invalid radial profile range (need 0 < r_min < r_max, bins >= 1)");
  RadialProfile out;
  const double l0 = std::log(r_min), dl = (std::log(r_max) - l0) / static_cast<double>(n_bins);
  std::vector<double> mass(n_bins, 0), vr2(n_bins, 0), vr(n_bins, 0), vt2(n_bins, 0);
  out.count.assign(n_bins, 0);
  double inside = 0;  // mass inside r_min
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double dx = p.x[i] - c[0], dy = p.y[i] - c[1], dz = p.z[i] - c[2];
    const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
    if (r < r_min) {
      inside += p.m[i];
      continue;
    }
    if (!(r <= r_max)) continue;  // the last shell includes r_max (a particle's radius)
    const auto b = std::min(static_cast<std::size_t>((std::log(r) - l0) / dl), n_bins - 1);
    const double ux = p.vx[i] - v[0], uy = p.vy[i] - v[1], uz = p.vz[i] - v[2];
    const double v_r = (ux * dx + uy * dy + uz * dz) / r;
    const double u2 = ux * ux + uy * uy + uz * uz;
    mass[b] += p.m[i];
    vr[b] += p.m[i] * v_r;
    vr2[b] += p.m[i] * v_r * v_r;
    vt2[b] += p.m[i] * (u2 - v_r * v_r);
    ++out.count[b];
  }
  double enclosed = inside;
  for (std::size_t b = 0; b < n_bins; ++b) {
    const double lo = std::exp(l0 + dl * static_cast<double>(b)),
                 hi = std::exp(l0 + dl * static_cast<double>(b + 1));
    out.r_lo.push_back(lo);
    out.r_hi.push_back(hi);
    out.r_mid.push_back(std::sqrt(lo * hi));
    out.density.push_back(mass[b] / (4.0 / 3.0 * kPi * (hi * hi * hi - lo * lo * lo)));
    enclosed += mass[b];
    out.enclosed_mass.push_back(enclosed);
    // Dispersions need two particles: an empty bin's were 0, a one-particle bin's sigma_r 0
    // (its own mean); both are NaN ("nan" in the profile files), not a cold shell.
    const double m = mass[b];
    const double mean_vr = vr[b] / m;
    const bool spread = out.count[b] >= 2 && m > 0;
    out.sigma_r.push_back(spread ? std::sqrt(std::max(vr2[b] / m - mean_vr * mean_vr, 0.0))
                                 : std::nan(""));
    out.sigma_t.push_back(spread ? std::sqrt(vt2[b] / m / 2) : std::nan(""));
    out.vcirc.push_back(std::sqrt(G * enclosed / hi));
  }
  return out;
}

Vec3 angular_momentum_axis(const ParticleSet& p, const Vec3& c, const Vec3& v, bool* vanished) {
  Vec3 L{0, 0, 0};
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double x = p.x[i] - c[0], y = p.y[i] - c[1], z = p.z[i] - c[2];
    const double ux = p.vx[i] - v[0], uy = p.vy[i] - v[1], uz = p.vz[i] - v[2];
    L[0] += p.m[i] * (y * uz - z * uy);
    L[1] += p.m[i] * (z * ux - x * uz);
    L[2] += p.m[i] * (x * uy - y * ux);
  }
  const double n = std::hypot(L[0], L[1], L[2]);
  if (vanished) *vanished = !(n > 0);
  if (!(n > 0)) return {0, 0, 1};
  return {L[0] / n, L[1] / n, L[2] / n};
}

DiskProfile disk_profile(const ParticleSet& p, const Vec3& c, const Vec3& v, const Vec3& axis,
                         double R_max, std::size_t n_bins) {
  // hypot: an axis of 1e300,0,0 (or 1e-300,0,0) squared to inf (or 0).
  const double an = std::hypot(axis[0], axis[1], axis[2]);
  if (!(an > 0) || !(R_max > 0) || n_bins < 1)
    throw std::invalid_argument(
        "invalid disk profile (need a non-zero axis, R_max > 0, bins >= 1)");
  const Vec3 ez{axis[0] / an, axis[1] / an, axis[2] / an};
  DiskProfile out;
  std::vector<double> mass(n_bins, 0), z2(n_bins, 0), vphi(n_bins, 0), vphi2(n_bins, 0),
      vR(n_bins, 0), vR2(n_bins, 0), vz(n_bins, 0), vz2(n_bins, 0);
  out.count.assign(n_bins, 0);
  const double dR = R_max / static_cast<double>(n_bins);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3 d{p.x[i] - c[0], p.y[i] - c[1], p.z[i] - c[2]};
    const Vec3 u{p.vx[i] - v[0], p.vy[i] - v[1], p.vz[i] - v[2]};
    const double z = d[0] * ez[0] + d[1] * ez[1] + d[2] * ez[2];
    const Vec3 Rv{d[0] - z * ez[0], d[1] - z * ez[1], d[2] - z * ez[2]};
    const double R = std::sqrt(Rv[0] * Rv[0] + Rv[1] * Rv[1] + Rv[2] * Rv[2]);
    if (!(R <= R_max) || !(R > 0)) continue;  // the last annulus includes R_max
    const Vec3 eR{Rv[0] / R, Rv[1] / R, Rv[2] / R};
    const Vec3 ephi{ez[1] * eR[2] - ez[2] * eR[1], ez[2] * eR[0] - ez[0] * eR[2],
                    ez[0] * eR[1] - ez[1] * eR[0]};
    const double uR = u[0] * eR[0] + u[1] * eR[1] + u[2] * eR[2];
    const double uphi = u[0] * ephi[0] + u[1] * ephi[1] + u[2] * ephi[2];
    const double uz = u[0] * ez[0] + u[1] * ez[1] + u[2] * ez[2];
    const auto b = std::min(static_cast<std::size_t>(R / dR), n_bins - 1);
    const double m = p.m[i];
    mass[b] += m;
    z2[b] += m * z * z;
    vphi[b] += m * uphi;
    vphi2[b] += m * uphi * uphi;
    vR[b] += m * uR;
    vR2[b] += m * uR * uR;
    vz[b] += m * uz;
    vz2[b] += m * uz * uz;
    ++out.count[b];
  }
  auto sd = [](double s, double s2, double m) {
    const double mean = s / m;
    return std::sqrt(std::max(s2 / m - mean * mean, 0.0));
  };
  for (std::size_t b = 0; b < n_bins; ++b) {
    const double lo = dR * static_cast<double>(b), hi = dR * static_cast<double>(b + 1);
    out.R_lo.push_back(lo);
    out.R_hi.push_back(hi);
    out.R_mid.push_back(0.5 * (lo + hi));
    out.surface_density.push_back(mass[b] / (kPi * (hi * hi - lo * lo)));
    // An empty annulus has no thickness or mean rotation, and a dispersion needs two
    // particles: NaN, not 0 (as the spherical profile's).
    const double m = mass[b];
    const bool any = out.count[b] >= 1 && m > 0, spread = out.count[b] >= 2 && m > 0;
    out.z_rms.push_back(any ? std::sqrt(z2[b] / m) : std::nan(""));
    out.mean_vphi.push_back(any ? vphi[b] / m : std::nan(""));
    out.sigma_R.push_back(spread ? sd(vR[b], vR2[b], m) : std::nan(""));
    out.sigma_z.push_back(spread ? sd(vz[b], vz2[b], m) : std::nan(""));
  }
  return out;
}

BoundResult bound_mass(const ParticleSet& p, const SolverConfig& config, int max_iter) {
  BoundResult res;
  const std::size_t n = p.size();
  res.bound.assign(n, 1);
  if (n == 0) return res;
  ParticleSet work = p;
  auto solver = make_solver(config, n);
  std::vector<char> before_last;  // the set two iterations back: a cycle of two ends the loop
  for (int it = 0; it < max_iter; ++it) {
    res.iterations = it + 1;
    // Unbound particles become massless test particles: they feel the bound set only.
    double m = 0;
    Vec3 pv{0, 0, 0};
    for (std::size_t i = 0; i < n; ++i) {
      work.m[i] = res.bound[i] ? p.m[i] : 0.0;
      m += work.m[i];
      pv[0] += work.m[i] * p.vx[i];
      pv[1] += work.m[i] * p.vy[i];
      pv[2] += work.m[i] * p.vz[i];
    }
    if (!(m > 0)) {
      res.converged = true;  // nothing left bound
      break;
    }
    for (auto& c : pv) c /= m;
    solver->compute(work);
    std::vector<char> last = res.bound;
    bool changed = false, any = false;
    for (std::size_t i = 0; i < n; ++i) {
      const double ux = p.vx[i] - pv[0], uy = p.vy[i] - pv[1], uz = p.vz[i] - pv[2];
      const char b = 0.5 * (ux * ux + uy * uy + uz * uz) + work.pot[i] < 0 ? 1 : 0;
      any = any || b;
      if (b != res.bound[i]) {
        changed = true;
        res.bound[i] = b;
      }
    }
    // Nothing bound is final (the next pass has no mass to bind with).
    if (!changed || !any) {
      res.converged = true;
      break;
    }
    // Particles may become bound again: a set that alternates with the one before it would
    // run to max_iter (500 force evaluations) for nothing.
    if (res.bound == before_last) {
      res.oscillating = true;
      break;
    }
    before_last = std::move(last);
  }
  for (std::size_t i = 0; i < n; ++i)
    if (res.bound[i]) {
      res.mass += p.m[i];
      ++res.count;
    }
  return res;
}

}  // namespace hoshi
