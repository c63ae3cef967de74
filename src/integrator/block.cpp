#include "integrator/block.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

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

BlockLeapfrog::BlockLeapfrog(GravitySolver& solver, int levels, double eta, double eps,
                             LevelScheme scheme)
    : solver_(solver), levels_(levels), eta_(eta), eps_(eps), scheme_(scheme) {
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

// The per-particle loops of a substep run in parallel above this many particles: serial, their
// O(N) per substep would rival a walk of few active particles on many cores.
constexpr std::ptrdiff_t kParallelLoop = 16384;

// Every listed particle's half-kick v += a dt / 2^(level + 1).
void kick_listed(ParticleSet& p, const std::vector<std::uint8_t>& level,
                 const std::vector<std::uint8_t>& listed, const double* half) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(p.size());
#pragma omp parallel for schedule(static) if (n > kParallelLoop)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    if (!listed[i]) continue;
    const double h = half[level[i]];
    p.vx[i] += p.ax[i] * h;
    p.vy[i] += p.ay[i] * h;
    p.vz[i] += p.az[i] * h;
  }
}

// Moves s to the next substep where a step ends, the next multiple of the deepest occupied
// level's step, 2^(top - deepest) substeps (2^29 empty substeps were visited one by one);
// returns the substeps passed. count: the particles per level.
std::uint64_t next_boundary(const std::vector<std::uint64_t>& count, int top, std::uint64_t& s) {
  int deepest = 0;
  for (int k = top; k > 0; --k)
    if (count[k] > 0) {
      deepest = k;
      break;
    }
  const std::uint64_t stride = std::uint64_t{1} << (top - deepest);
  const std::uint64_t pending = (s / stride + 1) * stride - s;
  s += pending;
  return pending;
}

// A force evaluation's statistics added to a step's.
void add_stats(ForceStats& st, const ForceStats& f) {
  st.pp += f.pp;
  st.pc += f.pc;
  st.m2l += f.m2l;
  for (const auto& [key, v] : f.seconds) st.seconds[key] += v;
  st.total_seconds += f.total_seconds;
  st.criterion = f.criterion;
}

// Each particle's level from its acceleration (floor: wanted a step below the smallest), and
// the particles per level.
void assign_levels(const ParticleSet& p, double dt, int levels, double eta, double eps,
                   std::vector<std::uint8_t>& level, std::vector<std::uint8_t>& floor,
                   std::vector<std::uint64_t>& count) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(p.size());
  level.resize(p.size());
  floor.resize(p.size());
  count.assign(levels, 0);
  std::uint64_t* c = count.data();
#pragma omp parallel for schedule(static) reduction(+ : c[:levels]) if (n > kParallelLoop)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    bool f = false;
    const double a2 = p.ax[i] * p.ax[i] + p.ay[i] * p.ay[i] + p.az[i] * p.az[i];
    level[i] = static_cast<std::uint8_t>(block_level(a2, dt, levels, eta, eps, &f));
    floor[i] = f;
    ++c[level[i]];
  }
}

// The indices i with level[i] >= m, in order (two passes over chunks, in parallel for many).
void indices_from_level(const std::vector<std::uint8_t>& level, int m,
                        std::vector<std::size_t>& out) {
  const std::size_t n = level.size();
#ifdef _OPENMP
  const int chunks = n > static_cast<std::size_t>(kParallelLoop) ? omp_get_max_threads() : 1;
#else
  const int chunks = 1;
#endif
  std::vector<std::size_t> start(chunks + 1, 0);
  const auto lo = [&](int c) { return n * static_cast<std::size_t>(c) / chunks; };
#pragma omp parallel for schedule(static, 1) num_threads(chunks) if (chunks > 1)
  for (int c = 0; c < chunks; ++c) {
    std::size_t k = 0;
    for (std::size_t i = lo(c); i < lo(c + 1); ++i) k += level[i] >= m;
    start[c + 1] = k;
  }
  for (int c = 0; c < chunks; ++c) start[c + 1] += start[c];
  out.resize(start[chunks]);
#pragma omp parallel for schedule(static, 1) num_threads(chunks) if (chunks > 1)
  for (int c = 0; c < chunks; ++c) {
    std::size_t k = start[c];
    for (std::size_t i = lo(c); i < lo(c + 1); ++i)
      if (level[i] >= m) out[k++] = i;
  }
}

}  // namespace

std::size_t BlockLeapfrog::subset_forces(const ParticleSet& p, const std::vector<std::uint8_t>& lv,
                                         int m, ForceStats& st) {
  indices_from_level(lv, m, sub_index_);
  const std::size_t k = sub_index_.size();
  sub_.resize(k);
  const std::ptrdiff_t kk = static_cast<std::ptrdiff_t>(k);
#pragma omp parallel for schedule(static) if (kk > kParallelLoop)
  for (std::ptrdiff_t j = 0; j < kk; ++j) {
    const std::size_t i = sub_index_[j];
    sub_.x[j] = p.x[i];
    sub_.y[j] = p.y[i];
    sub_.z[j] = p.z[i];
    sub_.m[j] = p.m[i];
    sub_.id[j] = p.id[i];
    sub_.ax[j] = p.ax[i];  // the relative criterion's |a_old|: the full force's
    sub_.ay[j] = p.ay[i];
    sub_.az[j] = p.az[i];
  }
  if (k < 2) {
    std::fill(sub_.ax.begin(), sub_.ax.end(), 0.0);
    std::fill(sub_.ay.begin(), sub_.ay.end(), 0.0);
    std::fill(sub_.az.begin(), sub_.az.end(), 0.0);
    return k;
  }
  const ForceStats f = solver_.compute(sub_);
  add_stats(st, f);
  stats_.forces += k;
  return k;
}

void BlockLeapfrog::kick_subset(ParticleSet& p, double w) const {
  const std::ptrdiff_t k = static_cast<std::ptrdiff_t>(sub_index_.size());
#pragma omp parallel for schedule(static) if (k > kParallelLoop)
  for (std::ptrdiff_t j = 0; j < k; ++j) {
    const std::size_t i = sub_index_[j];
    p.vx[i] += sub_.ax[j] * w;
    p.vy[i] += sub_.ay[j] * w;
    p.vz[i] += sub_.az[j] * w;
  }
}

namespace {

// The level whose set {level >= k} is {level >= m} (the smallest occupied level >= m), or -1
// when that set is empty.
int set_level(const std::vector<std::uint64_t>& count, int m) {
  for (int k = m; k < static_cast<int>(count.size()); ++k)
    if (count[k] > 0) return k;
  return -1;
}

}  // namespace

void BlockLeapfrog::add_half_kicks(const std::vector<std::uint64_t>& count, int from,
                                   const double* half, double* w) const {
  for (int m = from; m < levels_; ++m) {
    const int k = set_level(count, m);
    if (k < 0) break;
    w[k] += m == from ? half[from] : -half[m];
  }
}

void BlockLeapfrog::apply_kicks(ParticleSet& p, const std::vector<std::uint8_t>& lv, double* w,
                                ForceStats& st) {
  for (int k = 0; k < levels_; ++k) {
    if (w[k] == 0) continue;
    if (subset_forces(p, lv, k, st) > 1) kick_subset(p, w[k]);
    w[k] = 0;
  }
}

// V_m below is the potential of the pairs whose longer step is level m's (both particles on
// levels >= m, one on m), W_m that of all pairs on levels >= m, and F_m the forces of W_m (the
// particles on levels >= m, from those particles alone): V_m = W_m - W_(m+1). A level-m step
// of length h = dt / 2^m is kick(V_m, h/2), then level m's drift by h beside two steps of the
// levels > m, then kick(V_m, h/2) (Gadget-4's hierarchical time integration; Pelupessy et al.
// 2012, HOLD). Summed over m, a half-kick of the levels >= L at one of their boundaries is
// h_L/2 F_L - sum over m > L of h_m/2 F_m, each set's forces once (add_half_kicks: a set of
// several m, when a level between them is empty, takes their weights together).
ForceStats BlockLeapfrog::step_hierarchical(ParticleSet& p, double dt) {
  Stopwatch wall;
  const std::size_t n = p.size();
  const int top = levels_ - 1;
  const std::uint64_t nsub = std::uint64_t{1} << top;
  double half[kMaxLevels];
  for (int k = 0; k < levels_; ++k) half[k] = std::ldexp(dt, -k - 1);
  std::vector<std::uint64_t> count;
  assign_levels(p, dt, levels_, eta_, eps_, level_, floor_, count);
  stats_.level = count;
  ForceStats st;
  double w[kMaxLevels] = {}, w_old[kMaxLevels] = {};
  // A synchronised state's kicks: the set of every particle (p's forces) and the deeper sets.
  const auto full_kicks = [&] {
    add_half_kicks(count, 0, half, w);
    const int k0 = set_level(count, 0);
    if (k0 >= 0) {
      kick(p, w[k0]);
      w[k0] = 0;
    }
    apply_kicks(p, level_, w, st);
  };
  full_kicks();  // opening half-kicks: p's forces are F_0
  for (std::uint64_t s = 0; s < nsub;) {
    const std::uint64_t pending = next_boundary(count, top, s);
    const int lowest = top - std::countr_zero(s);
    drift(p, static_cast<double>(pending) * std::ldexp(dt, -top));
    ++stats_.substeps;
    if (s == nsub) {
      const ForceStats f = solver_.compute(p);
      add_stats(st, f);
      stats_.forces += n;
      full_kicks();  // closing half-kicks
      break;
    }
    // The particles whose steps end here, levels >= lowest: their forces among themselves
    // (F_lowest), their new levels from those (on the grid, as in step(); the forces of the
    // particles on longer steps are not computed here: as Gadget-4, the criterion sees F_lowest)
    // and the closing (old levels) and opening (new levels) half-kicks.
    subset_forces(p, level_, lowest, st);
    old_level_ = level_;
    const std::vector<std::uint64_t> old_count = count;
    std::int64_t moved[kMaxLevels] = {};  // the change of count[k]
    // A move from level a to b changes the sets {level >= m} of min(a, b) < m <= max(a, b):
    // span is their difference array.
    std::int64_t span[kMaxLevels + 1] = {};
    const std::ptrdiff_t na = static_cast<std::ptrdiff_t>(sub_index_.size());
#pragma omp parallel for schedule(static) reduction(+ : moved[ : levels_]) \
    reduction(+ : span[ : levels_ + 1]) if (na > kParallelLoop)
    for (std::ptrdiff_t j = 0; j < na; ++j) {
      const std::size_t i = sub_index_[j];
      const double b2 = sub_.ax[j] * sub_.ax[j] + sub_.ay[j] * sub_.ay[j] + sub_.az[j] * sub_.az[j];
      bool f = false;
      const int k = std::max(block_level(b2, dt, levels_, eta_, eps_, &f), lowest);
      floor_[i] |= f;
      if (k != level_[i]) {
        ++span[std::min<int>(k, level_[i]) + 1];
        --span[std::max<int>(k, level_[i]) + 1];
        --moved[level_[i]];
        ++moved[k];
        level_[i] = static_cast<std::uint8_t>(k);
      }
    }
    for (int k = 0; k < levels_; ++k) count[k] += static_cast<std::uint64_t>(moved[k]);
    bool changed[kMaxLevels] = {};
    for (std::int64_t c = 0, m = 0; m < levels_; ++m) changed[m] = (c += span[m]) != 0;
    add_half_kicks(old_count, lowest, half, w_old);  // closing, the old levels' sets
    add_half_kicks(count, lowest, half, w);          // opening, the new ones'
    // An old set that no particle left or entered is a new one: one evaluation for both. The
    // old set of index k is {old level >= m} for every m down to the occupied level below k.
    for (int k = lowest; k < levels_; ++k) {
      if (w_old[k] == 0) continue;
      for (int m = k; m >= lowest; --m) {
        if (!changed[m]) {
          w[set_level(count, m)] += w_old[k];
          w_old[k] = 0;
          break;
        }
        if (m == lowest || old_count[m - 1] > 0) break;
      }
    }
    const int k0 = set_level(count, lowest);  // the set computed above (never changed)
    kick_subset(p, w[k0]);
    w[k0] = 0;
    apply_kicks(p, old_level_, w_old, st);
    apply_kicks(p, level_, w, st);
  }
  stats_.floor = std::max<std::uint64_t>(
      stats_.floor, static_cast<std::uint64_t>(std::count(floor_.begin(), floor_.end(), 1)));
  integrate_seconds_ += std::max(0.0, wall.seconds() - st.total_seconds);
  return st;
}

ForceStats BlockLeapfrog::step(ParticleSet& p, double dt) {
  if (scheme_ == LevelScheme::hierarchical) return step_hierarchical(p, dt);
  Stopwatch sw;
  const std::size_t n = p.size();
  const int top = levels_ - 1;
  const std::uint64_t nsub = std::uint64_t{1} << top;
  double half[kMaxLevels];  // a level's half step, dt / 2^(k + 1), exact
  for (int k = 0; k < levels_; ++k) half[k] = std::ldexp(dt, -k - 1);
  std::vector<std::uint64_t> count;
  active_.assign(n, 1);
  // floor_: the particles that wanted a step below the smallest level's at any of their steps'
  // starts in this base step (a close encounter's is mid-step).
  assign_levels(p, dt, levels_, eta_, eps_, level_, floor_, count);
  stats_.level = count;
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
  kick_listed(p, level_, active_, half);  // every particle's opening half-kick
  ForceStats st;
  for (std::uint64_t s = 0; s < nsub;) {
    const std::uint64_t pending = next_boundary(count, top, s);  // substeps to drift
    // The levels whose steps end at substep s: k >= lowest (a level-k step is 2^(top - k)
    // substeps long).
    const int lowest = top - std::countr_zero(s);  // 0 at s = nsub = 2^top
    // Drift to substep s by pending h (h = dt / 2^top): exactly dt for a base step with no
    // substep in it, as Leapfrog::step drifts.
    drift(p, static_cast<double>(pending) * std::ldexp(dt, -top));
    std::uint64_t n_active = 0;
#pragma omp parallel for schedule(static) reduction(+ : n_active) if (nn > kParallelLoop)
    for (std::ptrdiff_t i = 0; i < nn; ++i) {
      active_[i] = level_[i] >= lowest;
      n_active += active_[i];
    }
    integrate_seconds_ += sw.seconds();
    const ForceStats f = n_active == n ? solver_.compute(p) : solver_.compute_active(p, active_);
    sw.restart();
    add_stats(st, f);
    ++stats_.substeps;
    stats_.forces += n_active;
    kick_listed(p, level_, active_, half);  // closing half-kicks
    if (s == nsub) break;
    // New levels, no longer than the grid allows here (lowest), and the opening half-kicks.
    std::int64_t moved[kMaxLevels] = {};  // the change of count[k]
#pragma omp parallel for schedule(static) reduction(+ : moved[:levels_]) if (nn > kParallelLoop)
    for (std::ptrdiff_t i = 0; i < nn; ++i) {
      if (!active_[i]) continue;
      bool f = false;
      const double a2 = p.ax[i] * p.ax[i] + p.ay[i] * p.ay[i] + p.az[i] * p.az[i];
      const int k = std::max(block_level(a2, dt, levels_, eta_, eps_, &f), lowest);
      floor_[i] |= f;
      --moved[level_[i]];
      ++moved[k];
      level_[i] = static_cast<std::uint8_t>(k);
    }
    for (int k = 0; k < levels_; ++k) count[k] += static_cast<std::uint64_t>(moved[k]);
    kick_listed(p, level_, active_, half);
  }
  stats_.floor = std::max<std::uint64_t>(
      stats_.floor, static_cast<std::uint64_t>(std::count(floor_.begin(), floor_.end(), 1)));
  integrate_seconds_ += sw.seconds();
  return st;
}

}  // namespace hoshi
