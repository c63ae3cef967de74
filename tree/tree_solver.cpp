#include "tree/tree_solver.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/parallel_errors.hpp"
#include "tree/tree_walk.hpp"

namespace hoshi {

TreeSolver::TreeSolver(const SolverConfig& config) : c_(config) {
  validate(c_);
}

void build_tree_for(const SolverConfig& c, Criterion used, const ParticleSet& p, Octree& tree,
                    PhaseTimes& times) {
  TreeBuildParams bp;
  bp.n_leaf = c.tree.n_leaf;
  bp.criterion = used;
  bp.theta = c.tree.theta;
  bp.kernel_radius = cell_kernel_radius(c.softening, c.eps);
  build_tree(p, bp, tree, times);
  if (c.eps == 0) require_no_coincident(tree, p);
}

std::vector<float> relative_alpha(const SolverConfig& c, const Octree& tree, const ParticleSet& p) {
  const std::size_t n = p.size();
  // In input order first (streaming), then one 4-byte gather per particle in tree order
  // instead of three 8-byte ones from three arrays.
  const auto a_input = std::make_unique_for_overwrite<float[]>(n);
  std::vector<float> alpha_a(n);
  const double s = c.tree.alpha / c.G;
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < nn; ++i)
      a_input[i] = static_cast<float>(
          s * std::sqrt(p.ax[i] * p.ax[i] + p.ay[i] * p.ay[i] + p.az[i] * p.az[i]));
#pragma omp for schedule(static)
    for (std::ptrdiff_t k = 0; k < nn; ++k) alpha_a[k] = a_input[tree.index[k]];
  }
  return alpha_a;
}

TreeWalkConfig walk_config_for(const SolverConfig& c, Criterion used) {
  TreeWalkConfig wc;
  wc.criterion = used;
  wc.order = c.tree.order;
  wc.softening = c.softening;
  wc.eps = c.eps;
  wc.G = c.G;
  wc.n_group = c.tree.n_group;
  wc.local_ratio =
      local_ratio_for(c.tree.local_ratio, used, c.tree.theta, c.tree.alpha, c.tree.order);
  return wc;
}

bool has_accelerations(const ParticleSet& p) {
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p.ax[i] != 0 || p.ay[i] != 0 || p.az[i] != 0) return true;
  return false;
}

template <class Index>
void require_no_coincident(const std::uint64_t* keys, const Index* index, const double* x,
                           const double* y, const double* z, std::size_t n,
                           const std::uint64_t* ids) {
  auto fail = [&](std::size_t a, std::size_t b) {
    const std::size_t i = index[a], j = index[b];
    std::ostringstream s;
    s << "particles with ids " << ids[std::min(i, j)] << " and " << ids[std::max(i, j)]
      << " are at the same position (" << x[a] << ", " << y[a] << ", " << z[a]
      << ") and the softening is 0: their force is infinite; use --softening > 0";
    throw std::invalid_argument(s.str());
  };
  auto same = [&](std::size_t a, std::size_t b) {
    return x[a] == x[b] && y[a] == y[b] && z[a] == z[b];
  };
  using Pair = std::pair<std::size_t, std::size_t>;
  // The first coincident pair of the runs of equal keys that start in [b0, e0), in scan order.
  auto scan = [&](std::size_t b0, std::size_t e0) -> std::optional<Pair> {
    for (std::size_t b = b0; b < e0;) {
      std::size_t e = b + 1;
      while (e < n && keys[e] == keys[b]) ++e;
      if (e - b > 1) {  // a run of equal keys: compare positions
        if (e - b <= 32) {
          for (std::size_t i = b; i < e; ++i)
            for (std::size_t j = i + 1; j < e; ++j)
              if (same(i, j)) return Pair(i, j);
        } else {
          std::vector<std::size_t> r(e - b);
          std::iota(r.begin(), r.end(), b);
          std::sort(r.begin(), r.end(), [&](std::size_t i, std::size_t j) {
            return std::tie(x[i], y[i], z[i]) < std::tie(x[j], y[j], z[j]);
          });
          for (std::size_t k = 1; k < r.size(); ++k)
            if (same(r[k - 1], r[k])) return Pair(r[k - 1], r[k]);
        }
      }
      b = e;
    }
    return std::nullopt;
  };
  // One chunk per thread, each starting at the start of a run of equal keys; the pair of the
  // first chunk that has one is the pair the one-thread scan finds (the same message).
#ifdef _OPENMP
  const int chunks = n < 65536 ? 1 : omp_get_max_threads();
#else
  const int chunks = 1;
#endif
  std::vector<std::size_t> start(chunks + 1, n);
  for (int c = 0; c < chunks; ++c) {
    std::size_t s = n * static_cast<std::size_t>(c) / static_cast<std::size_t>(chunks);
    while (s > 0 && s < n && keys[s] == keys[s - 1]) ++s;
    start[c] = s;
  }
  std::vector<std::optional<Pair>> found(chunks);
  ParallelErrors errors;  // a long run's sort allocates
#pragma omp parallel for schedule(static, 1) num_threads(chunks) if (chunks > 1)
  for (int c = 0; c < chunks; ++c)
    errors.run([&] { found[c] = scan(start[c], std::max(start[c], start[c + 1])); });
  errors.rethrow();
  for (const auto& f : found)
    if (f) fail(f->first, f->second);
}

template void require_no_coincident(const std::uint64_t*, const std::uint32_t*, const double*,
                                    const double*, const double*, std::size_t,
                                    const std::uint64_t*);
template void require_no_coincident(const std::uint64_t*, const std::uint64_t*, const double*,
                                    const double*, const double*, std::size_t,
                                    const std::uint64_t*);

void require_no_coincident(const Octree& t, const ParticleSet& p) {
  require_no_coincident(t.keys.data(), t.index.data(), t.x.data(), t.y.data(), t.z.data(),
                        t.keys.size(), p.id.data());
}

ForceStats TreeSolver::compute(ParticleSet& p) {
  return compute_with_bootstrap(c_, p, [this](ParticleSet& q) { return compute_once(q); });
}

ForceStats TreeSolver::compute_active(ParticleSet& p, const std::vector<std::uint8_t>& active) {
  require_active_flags(active, p);
  // The relative criterion's bootstrap pass needs every particle's force (|a_old| of the
  // next): without previous accelerations, all are computed.
  if (c_.tree.criterion == Criterion::relative && !has_accelerations(p)) return compute(p);
  return compute_once(p, &active);
}

ForceStats TreeSolver::compute_once(ParticleSet& p, const std::vector<std::uint8_t>* active) {
  ForceStats st;
  Stopwatch total;
  const std::size_t n = p.size();
  // The relative criterion needs the previous accelerations; without them (first call) use
  // barnes94 at the same theta.
  criterion_used_ =
      criterion_for_call(c_, c_.tree.criterion == Criterion::relative && has_accelerations(p));
  build_tree_for(c_, criterion_used_, p, tree_, st.seconds);

  Stopwatch sw;
  std::vector<float> alpha_a;
  if (criterion_used_ == Criterion::relative) alpha_a = relative_alpha(c_, tree_, p);
  const TreeWalkConfig wc = walk_config_for(c_, criterion_used_);
  const float* aa = alpha_a.empty() ? nullptr : alpha_a.data();
  std::vector<std::uint64_t> prefix;
  ActiveTargets targets;
  if (active && n > 0) {
    prefix = active_prefix(tree_, active->data());
    targets = {active->data(), prefix.data()};
  }
  WalkCounts counts;
  if (n > 0) {
    if (c_.tree.walk == WalkKind::group)
      counts = walk_tree_groups(tree_, wc, aa, p.ax.data(), p.ay.data(), p.az.data(), p.pot.data(),
                                targets);
    else
      counts = walk_tree_particles(tree_, wc, aa, p.ax.data(), p.ay.data(), p.az.data(),
                                   p.pot.data(), targets);
  }
  st.seconds["walk"] += sw.seconds();
  st.pp = counts.pp;
  st.pc = counts.pc;
  st.m2l = counts.m2l;
  st.criterion = criterion_used_;
  st.total_seconds = total.seconds();
  return st;
}

}  // namespace hoshi
