// Group-walk timing on a fixed tree (docs/perf-tree.md): builds the tree of a Plummer sphere
// once, then times walk_tree_groups R times and prints the smallest thread CPU time (with
// OMP_NUM_THREADS=1 the CPU time of the one thread, insensitive to time-slicing by other
// processes) and the smallest wall time. Build: make -C build walk_bench
//   OMP_NUM_THREADS=1 build/walk_bench N [R=3] [theta=0.65] [n_group=128] [n_leaf=16]
//                                      [local=kLocalRatio] (the R of local_ratio_for)
//                                      [alpha] (> 0: the relative criterion at this alpha,
//                                      |a_old| from a barnes94 walk at theta, as the solver's
//                                      bootstrap; default: barnes94)
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "example_args.hpp"
#include "ic/ic.hpp"
#include "solver/solver.hpp"
#include "tree/octree.hpp"
#include "tree/tree_walk.hpp"
using namespace hoshi;

static double now(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int run(int argc, char** argv) {
  const examples::Args a(argc, argv);
  const std::size_t n = a.count(1, "N", 1000000, 1, LLONG_MAX);
  const int reps = static_cast<int>(a.count(2, "R", 3));
  TreeBuildParams bp;
  bp.theta = a.number(3, "theta", 0.65);
  TreeWalkConfig wc;
  wc.n_group = static_cast<int>(a.count(4, "n_group", 128));
  bp.n_leaf = static_cast<int>(a.count(5, "n_leaf", 16));
  const double ratio = a.number(6, "local_ratio", kLocalRatio, /*positive=*/false);
  const double alpha = a.number(7, "alpha", 0, /*positive=*/false);
  wc.local_ratio = local_ratio_for(ratio, wc.criterion, bp.theta, 0, wc.order);
  ParticleSet p = make_plummer(n, 1);
  Octree tree;
  PhaseTimes times;
  build_tree(p, bp, tree, times);
  std::vector<double> ax(n), ay(n), az(n), pot(n);
  std::vector<float> alpha_a;  // alpha |a_old| / G per sorted particle (G = 1)
  if (alpha > 0) {
    walk_tree_groups(tree, wc, nullptr, ax.data(), ay.data(), az.data(), pot.data());
    alpha_a.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = tree.index[k];
      alpha_a[k] =
          static_cast<float>(alpha * std::sqrt(ax[i] * ax[i] + ay[i] * ay[i] + az[i] * az[i]));
    }
    set_critical_radii(tree.nodes, Criterion::relative, bp.theta);
    wc.criterion = Criterion::relative;
    wc.local_ratio = local_ratio_for(ratio, wc.criterion, bp.theta, alpha, wc.order);
  }
  const float* aa = alpha_a.empty() ? nullptr : alpha_a.data();
  double best_cpu = 1e30, best_wall = 1e30;
  WalkCounts c{};
  for (int r = 0; r < reps; ++r) {
    const double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    c = walk_tree_groups(tree, wc, aa, ax.data(), ay.data(), az.data(), pot.data());
    best_cpu = std::min(best_cpu, now(CLOCK_PROCESS_CPUTIME_ID) - c0);
    best_wall = std::min(best_wall, now(CLOCK_MONOTONIC) - w0);
  }
  const int nt = omp_get_max_threads();
  printf(
      "N %zu %s theta %.2f alpha %.3g n_group %d n_leaf %d local_ratio %.3g threads %d: walk "
      "CPU/thread %.4f s "
      "wall %.4f s | pp %.0f pc %.0f per particle, m2l %.0f per particle\n",
      n, alpha > 0 ? "relative" : "barnes94", bp.theta, alpha, wc.n_group, bp.n_leaf,
      wc.local_ratio, nt, best_cpu / nt, best_wall, double(c.pp) / n, double(c.pc) / n,
      double(c.m2l) / n);
  return 0;
}

int main(int argc, char** argv) {
  return hoshi::examples::run_main(
      "walk_bench",
      "walk_bench [N=1000000] [R=3] [theta=0.65] [n_group=128] [n_leaf=16] [local_ratio] "
      "[alpha=0]",
      [&] { return run(argc, argv); });
}
