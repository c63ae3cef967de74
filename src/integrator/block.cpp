#include "integrator/block.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/timer.hpp"
#include "integrator/leapfrog.hpp"

namespace hoshi {

int block_level(double a2, double dt, int levels, double eta, double eps, bool* floor) {
  if (!(a2 > 0) || !(eps > 0)) return 0;
  const double want = eta * std::sqrt(eps / std::sqrt(a2));
  int k = 0;
  // dt / 2^k exactly (a power-of-two division), compared as the criterion says.
  while (k < levels - 1 && std::ldexp(dt, -k) > want) ++k;
  if (floor && std::ldexp(dt, -k) > want) *floor = true;
  return k;
}

BlockLeapfrog::BlockLeapfrog(GravitySolver& solver, int levels, double eta, double eps)
    : solver_(solver), levels_(levels), eta_(eta), eps_(eps) {
  if (levels < 1 || levels > kMaxLevels)
    throw std::invalid_argument("invalid --levels " + std::to_string(levels) + " (1 to " +
                                std::to_string(kMaxLevels) + ")");
  if (!(eta > 0)) throw std::invalid_argument("block steps need eta > 0");
  if (levels > 1 && !(eps > 0))
    throw std::invalid_argument(
        "block steps (--levels > 1) choose each particle's step from eta sqrt(eps/|a|): they "
        "need --softening > 0");
}

namespace {

// Every listed particle's half-kick v += a dt / 2^(level + 1).
void kick_listed(ParticleSet& p, const std::vector<std::uint8_t>& level,
                 const std::vector<std::uint8_t>& listed, const double* half) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(p.size());
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    if (!listed[i]) continue;
    const double h = half[level[i]];
    p.vx[i] += p.ax[i] * h;
    p.vy[i] += p.ay[i] * h;
    p.vz[i] += p.az[i] * h;
  }
}

}  // namespace

ForceStats BlockLeapfrog::step(ParticleSet& p, double dt) {
  Stopwatch sw;
  const std::size_t n = p.size();
  const int top = levels_ - 1;
  const std::uint64_t nsub = std::uint64_t{1} << top;
  double half[kMaxLevels];  // a level's half step, dt / 2^(k + 1), exact
  for (int k = 0; k < levels_; ++k) half[k] = std::ldexp(dt, -k - 1);
  std::vector<std::uint64_t> count(levels_, 0);
  level_.resize(n);
  active_.assign(n, 1);
  // The particles that wanted a step below the smallest level's at any of their steps' starts
  // in this base step (a close encounter's is mid-step).
  floor_.assign(n, 0);
  const auto a2 = [&p](std::size_t i) {
    return p.ax[i] * p.ax[i] + p.ay[i] * p.ay[i] + p.az[i] * p.az[i];
  };
  for (std::size_t i = 0; i < n; ++i) {
    bool f = false;
    level_[i] = static_cast<std::uint8_t>(block_level(a2(i), dt, levels_, eta_, eps_, &f));
    floor_[i] = f;
    ++count[level_[i]];
  }
  stats_.level = count;
  kick_listed(p, level_, active_, half);  // every particle's opening half-kick
  ForceStats st;
  for (std::uint64_t s = 0; s < nsub;) {
    // The next substep where a step ends: the next multiple of the deepest occupied level's
    // step, 2^(top - deepest) substeps (2^29 empty substeps were visited one by one).
    int deepest = 0;
    for (int k = top; k > 0; --k)
      if (count[k] > 0) {
        deepest = k;
        break;
      }
    const std::uint64_t stride = std::uint64_t{1} << (top - deepest);
    const std::uint64_t pending = (s / stride + 1) * stride - s;  // substeps to drift
    s += pending;
    // The levels whose steps end at substep s: k >= lowest (a level-k step is 2^(top - k)
    // substeps long).
    const int lowest = top - std::countr_zero(s);  // 0 at s = nsub = 2^top
    // Drift to substep s by pending h (h = dt / 2^top): exactly dt for a base step with no
    // substep in it, as Leapfrog::step drifts.
    drift(p, static_cast<double>(pending) * std::ldexp(dt, -top));
    std::uint64_t n_active = 0;
    for (std::size_t i = 0; i < n; ++i) {
      active_[i] = level_[i] >= lowest;
      n_active += active_[i];
    }
    integrate_seconds_ += sw.seconds();
    const ForceStats f = n_active == n ? solver_.compute(p) : solver_.compute_active(p, active_);
    sw.restart();
    st.pp += f.pp;
    st.pc += f.pc;
    st.m2l += f.m2l;
    for (const auto& [k, v] : f.seconds) st.seconds[k] += v;
    st.total_seconds += f.total_seconds;
    st.criterion = f.criterion;
    ++stats_.substeps;
    stats_.forces += n_active;
    kick_listed(p, level_, active_, half);  // closing half-kicks
    if (s == nsub) break;
    // New levels, no longer than the grid allows here (lowest), and the opening half-kicks.
    for (std::size_t i = 0; i < n; ++i) {
      if (!active_[i]) continue;
      bool f = false;
      const int k = std::max(block_level(a2(i), dt, levels_, eta_, eps_, &f), lowest);
      floor_[i] |= f;
      --count[level_[i]];
      ++count[k];
      level_[i] = static_cast<std::uint8_t>(k);
    }
    kick_listed(p, level_, active_, half);
  }
  stats_.floor = std::max<std::uint64_t>(
      stats_.floor, static_cast<std::uint64_t>(std::count(floor_.begin(), floor_.end(), 1)));
  integrate_seconds_ += sw.seconds();
  return st;
}

}  // namespace hoshi
