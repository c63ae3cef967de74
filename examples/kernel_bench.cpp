// Throughput of the group walk's SIMD kernels (tree/group_kernels.hpp) on one synthetic group
// of the size the default walk makes at N = 1e6 (docs/perf-tree.md): nanoseconds per
// particle-particle pair and per particle-cell term, and per far cell (M2L) and per target
// (L2P). One thread; the best of 5 rounds. Build: make -C build kernel_bench
//   build/kernel_bench [targets=96] [sources=704] [cells=336] [far=160]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "example_args.hpp"
#include "tree/group_kernels.hpp"
using namespace hoshi;
using namespace hoshi::group_kernels;

template <class F>
double best_seconds(F&& f, int reps) {
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) f();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps);
  }
  return best;
}

int run(int argc, char** argv) {
  const examples::Args a(argc, argv);
  const std::size_t nt = a.count(1, "targets", 96), ns = a.count(2, "sources", 704);
  const std::size_t nc = a.count(3, "cells", 336), nf = a.count(4, "far cells", 160);
  GroupBuffers g;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  auto fill = [&](std::vector<float>& v, std::size_t n, float scale, float offset) {
    v.resize(padded(n, kTargetBlock) + kW);
    for (float& x : v) x = offset + scale * u(rng);
  };
  fill(g.tx, nt, 1, 0), fill(g.ty, nt, 1, 0), fill(g.tz, nt, 1, 0);
  fill(g.sx, ns, 2, 2), fill(g.sy, ns, 2, 0), fill(g.sz, ns, 2, 0), fill(g.sm, ns, 0.1f, 1);
  fill(g.cx, nc, 3, 6), fill(g.cy, nc, 3, 0), fill(g.cz, nc, 3, 0), fill(g.cm, nc, 0.1f, 1);
  for (auto* q : {&g.qxx, &g.qxy, &g.qxz, &g.qyy, &g.qyz, &g.qzz}) fill(*q, nc, 0.01f, 0);
  fill(g.mr2, nc, 0.01f, 0.01f);
  for (std::size_t k = 0; k < nf; ++k) {
    TreeNode n{};
    n.com_x = 8 + 4 * u(rng), n.com_y = 8 * u(rng), n.com_z = 8 * u(rng), n.m = 1;
    g.far.add(n, 0, 0, 0, 1.0);
  }
  g.far.pad();
  g.nt = nt, g.ns = padded(ns, kW), g.own_end = padded(nt, kW), g.nc = nc, g.scale = 1;
  set_whole_group_targets(g);
  std::vector<float> o[4];
  for (auto& v : o) v.assign(padded(nt, kTargetBlock), 0);
  float* const out[4] = {o[0].data(), o[1].data(), o[2].data(), o[3].data()};
  const FlushDenormals ftz;
  const int reps = 400;
  const VecF zero(0.0f), one(1.0f);
  const double pp = best_seconds([&] { pp_kernel<kBlockPP, false>(g, zero, one, out); }, reps);
  const double pc = best_seconds([&] { pc_kernel<kBlockPC, 2>(g, zero, out); }, reps);
  const double pc1 = best_seconds([&] { pc_kernel<kBlockPC, 1>(g, zero, out); }, reps);
  float coef[kLocalCount];
  const double m2 = best_seconds([&] { m2l<2>(g.far, 0.0f, coef); }, reps);
  const double lp = best_seconds([&] { l2p(coef, 0.1, 0.1, 0.1, 1.0, g, out); }, reps);
  const double pairs = double(padded(nt, kBlockPP)) * g.ns;
  const double terms = double(padded(nt, kBlockPC)) * padded(nc, kW);
  printf("SIMD width %d, blocks pp %d pc %d, group: %zu targets, %zu sources, %zu cells, %zu far\n",
         kW, kBlockPP, kBlockPC, nt, ns, nc, nf);
  printf(
      "p-p %.3f ns/pair | p-c quadrupole %.3f ns/term (%.2f pairs) | p-c monopole %.3f ns/term"
      " | M2L %.2f ns/cell | L2P %.2f ns/target (checksum %.3g)\n",
      1e9 * pp / pairs, 1e9 * pc / terms, pc / terms / (pp / pairs), 1e9 * pc1 / terms,
      1e9 * m2 / double(nf), 1e9 * lp / double(nt), double(o[0][0]) + coef[0]);
  return 0;
}

int main(int argc, char** argv) {
  return hoshi::examples::run_main("kernel_bench",
                                   "kernel_bench [targets=96] [sources=704] [cells=336] [far=160]",
                                   [&] { return run(argc, argv); });
}
