#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "core/number_text.hpp"
#include "ic/ic.hpp"

namespace hoshi {

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

void require_n(std::size_t n) {
  if (n < 1) throw std::invalid_argument("invalid -n 0 (need at least 1 particle)");
}

// A point uniformly distributed on the sphere of radius r.
void random_direction(Random& rng, double r, double& x, double& y, double& z) {
  const double cos_t = rng.uniform(-1.0, 1.0);
  const double sin_t = std::sqrt(std::max(0.0, 1.0 - cos_t * cos_t));
  const double phi = 2.0 * std::numbers::pi * rng.uniform();
  x = r * sin_t * std::cos(phi);
  y = r * sin_t * std::sin(phi);
  z = r * cos_t;
}
}  // namespace

Random::Random(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

std::uint64_t Random::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Random::uniform() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double Random::normal() {
  double u1 = uniform();
  while (u1 <= 0) u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

void to_com_frame(ParticleSet& p) {
  double m = 0, c[6] = {0, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < p.size(); ++i) {
    m += p.m[i];
    c[0] += p.m[i] * p.x[i];
    c[1] += p.m[i] * p.y[i];
    c[2] += p.m[i] * p.z[i];
    c[3] += p.m[i] * p.vx[i];
    c[4] += p.m[i] * p.vy[i];
    c[5] += p.m[i] * p.vz[i];
  }
  if (!(m > 0)) return;
  for (auto& v : c) v /= m;
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.x[i] -= c[0];
    p.y[i] -= c[1];
    p.z[i] -= c[2];
    p.vx[i] -= c[3];
    p.vy[i] -= c[4];
    p.vz[i] -= c[5];
  }
}

ParticleSet make_plummer(std::size_t n, std::uint64_t seed) {
  require_n(n);
  // Aarseth, Henon & Wielen (1974) in Henon units: a = 3 pi / 16 (Heggie & Mathieu 1986).
  const double a = 3.0 * std::numbers::pi / 16.0;
  Random rng(seed);
  ParticleSet p;
  p.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Radius from the cumulative mass M(r) = r^3 / (r^2 + 1)^(3/2) (a = 1), drawn below 0.999:
    // the 0.1% tail beyond r = 38.7 a (22.8 Henon lengths, AHW's and starlab's cut) is left
    // out, as the other models' mass_cut does. (Until 2026-11-30 the cut was r < 22.8 a,
    // 13.4 Henon lengths, which left out 0.29%: E = -0.2521 instead of -0.2507.)
    const double x = 0.999 * rng.uniform();
    const double r = 1.0 / std::sqrt(std::pow(x, -2.0 / 3.0) - 1.0);
    // Speed from the isotropic distribution function f(E) ~ (-E)^(7/2) by von Neumann
    // rejection on q = v / v_esc with density q^2 (1 - q^2)^(7/2) < 0.1.
    double q, g;
    do {
      q = rng.uniform();
      g = 0.1 * rng.uniform();
    } while (g > q * q * std::pow(1.0 - q * q, 3.5));
    const double v = q * std::sqrt(2.0) * std::pow(1.0 + r * r, -0.25);
    random_direction(rng, r * a, p.x[i], p.y[i], p.z[i]);
    // Velocities scale as 1/sqrt(a) when lengths scale by a at fixed G and M.
    random_direction(rng, v / std::sqrt(a), p.vx[i], p.vy[i], p.vz[i]);
    p.m[i] = 1.0 / static_cast<double>(n);
  }
  to_com_frame(p);
  return p;
}

ParticleSet make_uniform_sphere(std::size_t n, std::uint64_t seed, double radius) {
  require_n(n);
  if (!(radius > 0))
    throw std::invalid_argument("invalid radius " + number_text(radius) + " (must be > 0)");
  Random rng(seed);
  ParticleSet p;
  p.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = radius * std::cbrt(rng.uniform());
    random_direction(rng, r, p.x[i], p.y[i], p.z[i]);
    p.m[i] = 1.0 / static_cast<double>(n);
  }
  to_com_frame(p);
  return p;
}

ParticleSet make_kepler(double e) {
  if (!(e >= 0 && e < 1))
    throw std::invalid_argument("invalid eccentricity " + number_text(e) + " (need 0 <= e < 1)");
  // Relative orbit with a = 1, G M = 1: apocentre distance 1 + e, speed there
  // sqrt((1 - e) / (1 + e)) (vis-viva).
  const double r = 1.0 + e;
  const double v = std::sqrt((1.0 - e) / (1.0 + e));
  ParticleSet p;
  p.push_back(0.5 * r, 0, 0, 0, 0.5 * v, 0, 0.5, 0);
  p.push_back(-0.5 * r, 0, 0, 0, -0.5 * v, 0, 0.5, 1);
  return p;
}

}  // namespace hoshi
