// Accuracy and cost of the CUDA group mode on the CPU (docs/perf-gpu.md): walk_tree_boxes, the
// mirror of tree_walk_groups_kernel (every target of a group of <= n_group particles walks its
// group's box), and walk_tree_warps, the mirror of the lists kernel (tree/walk_warp.hpp),
// against the double direct sum on 2000 targets of a Plummer sphere (seed 42);
// the per-particle walk at the same setting for comparison. The relative criterion's |a_old|
// comes from the per-particle solver's own bootstrap and second call. Build:
// make -C build box_mirror_accuracy
//   build/box_mirror_accuracy N CRITERION PARAM [n_group=32] [eps=0] [model=plummer]
//     PARAM: alpha for relative, theta otherwise; model: a name of `hoshi ic --ic` (its defaults).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "direct/direct.hpp"
#include "example_args.hpp"
#include "ic/ic.hpp"
#include "ic/models.hpp"
#include "solver/solver.hpp"
#include "tree/tree_solver.hpp"
#include "tree/tree_walk.hpp"

using namespace hoshi;

namespace {

// Sorted relative acceleration errors of (ax, ay, az) at the targets.
std::vector<double> errors(const std::vector<std::size_t>& targets, const ForceArrays& ref,
                           const double* ax, const double* ay, const double* az) {
  std::vector<double> e;
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const std::size_t i = targets[k];
    const double dx = ax[i] - ref.ax[k], dy = ay[i] - ref.ay[k], dz = az[i] - ref.az[k];
    e.push_back(std::sqrt(dx * dx + dy * dy + dz * dz) /
                std::sqrt(ref.ax[k] * ref.ax[k] + ref.ay[k] * ref.ay[k] + ref.az[k] * ref.az[k]));
  }
  std::sort(e.begin(), e.end());
  return e;
}

double quantile(const std::vector<double>& v, double q) {
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * v.size()))];
}

}  // namespace

int run(int argc, char** argv) {
  const examples::Args a(argc, argv);
  if (argc < 4) throw std::invalid_argument("N, CRITERION and PARAM are needed");
  const std::size_t n = a.count(1, "N", 0, 2, LLONG_MAX);  // errors need another particle
  const Criterion criterion = parse_criterion(argv[2]);
  const double param = a.number(3, "PARAM", 0);
  const int n_group = static_cast<int>(a.count(4, "n_group", kCudaGroupSize));
  const double eps = a.number(5, "eps", 0.0, /*positive=*/false);

  const std::string model = a.text(6, "plummer");
  ParticleSet p = make_model(model, n, 42);
  std::vector<std::size_t> targets;
  for (std::size_t k = 0; k < 2000; ++k) targets.push_back((k * 7919u * 104729u) % n);
  ForceArrays ref;
  direct_reference(p, 1.0, Softening::plummer, eps, targets, ref);

  SolverConfig c;
  c.solver = SolverKind::tree;
  c.backend = Backend::cpu;
  c.eps = eps;
  c.tree.walk = WalkKind::particle;
  c.tree.walk_auto = false;
  c.tree.criterion = criterion;
  if (criterion == Criterion::relative) {
    c.tree.alpha = param;
    c.tree.theta = kThetaParticleWalk;  // the bootstrap's
  } else {
    c.tree.theta = param;
  }
  // The per-particle walk (its second call for the relative criterion, as a run's steps).
  ParticleSet q = p;
  TreeSolver per_particle(c);
  per_particle.compute(q);
  if (criterion == Criterion::relative) per_particle.compute(q);

  // The box walk on the same tree, with |a_old| from the per-particle result.
  Octree t;
  PhaseTimes times;
  build_tree_for(c, criterion, q, t, times);
  std::vector<float> alpha_a;
  if (criterion == Criterion::relative) alpha_a = relative_alpha(c, t, q);
  TreeWalkConfig wc = walk_config_for(c, criterion);
  wc.n_group = n_group;
  std::vector<double> ax(n), ay(n), az(n), pot(n);
  const double t0 = omp_get_wtime();
  const WalkCounts wk = walk_tree_boxes(t, wc, alpha_a.empty() ? nullptr : alpha_a.data(),
                                        ax.data(), ay.data(), az.data(), pot.data());
  const double t1 = omp_get_wtime();

  // The lists kernel's mirror (tree/walk_warp.hpp) on the same tree: the same interaction sets,
  // box-relative float positions; and how many warp walks found the stack too small.
  std::vector<double> lx(n), ly(n), lz(n), lpot(n);
  std::uint64_t fallbacks = 0;
  const WalkCounts wl =
      walk_tree_warps(t, wc, alpha_a.empty() ? nullptr : alpha_a.data(), lx.data(), ly.data(),
                      lz.data(), lpot.data(), kWarpStack, &fallbacks);
  const double t2 = omp_get_wtime();
  std::uint64_t chunks = 0;
  for (const Group& g : make_groups(t.nodes, n_group))
    chunks += (g.end - g.begin + kWarpLanes - 1) / kWarpLanes;

  const std::vector<double> e = errors(targets, ref, ax.data(), ay.data(), az.data());
  const std::vector<double> el = errors(targets, ref, lx.data(), ly.data(), lz.data());
  const std::vector<double> ep = errors(targets, ref, q.ax.data(), q.ay.data(), q.az.data());
  std::printf(
      "%s n %zu %s %g n_group %d | box: p50 %.2e p99 %.2e max %.2e pp %.0f pc %.0f per particle, "
      "%.2f s | particle: p50 %.2e p99 %.2e\n",
      model.c_str(), n, argv[2], param, n_group, quantile(e, 0.5), quantile(e, 0.99), e.back(),
      double(wk.pp) / double(n), double(wk.pc) / double(n), t1 - t0, quantile(ep, 0.5),
      quantile(ep, 0.99));
  std::printf(
      "  lists mirror: p50 %.2e p99 %.2e max %.2e, counts %s the box walk's, %.2f s, stack "
      "(%d entries) too small for %llu of %llu warp walks\n",
      quantile(el, 0.5), quantile(el, 0.99), el.back(),
      wl.pp == wk.pp && wl.pc == wk.pc ? "equal to" : "DIFFERENT from", t2 - t1, kWarpStack,
      static_cast<unsigned long long>(fallbacks), static_cast<unsigned long long>(chunks));
  return 0;
}

int main(int argc, char** argv) {
  return hoshi::examples::run_main(
      "box_mirror_accuracy",
      "box_mirror_accuracy N CRITERION PARAM [n_group=32] [eps=0] [model=plummer]",
      [&] { return run(argc, argv); });
}
