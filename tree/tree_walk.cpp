// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics (the
// _mm512_undefined_ps() pass-through of rsqrt14 and reduce_add, GCC bug 105593): silenced here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "tree/tree_walk.hpp"

#include <algorithm>
#include <cmath>

#include "core/bounds.hpp"
#include "direct/simd.hpp"
#include "physics/multipole.hpp"
#include "tree/walk_particle.hpp"

namespace hoshi {

namespace {

WalkParams<float> walk_params(const TreeWalkConfig& c) {
  return make_walk_params<float>(c.criterion, c.order, c.softening, c.eps);
}

}  // namespace

WalkCounts walk_tree_particles(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                               double* ax, double* ay, double* az, double* pot) {
  const TreeView t = tree.view();
  const WalkParams<float> w = walk_params(cfg);
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(t.n_particles);
  std::uint64_t pp = 0, pc = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : pp, pc)
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const float aa = alpha_a ? alpha_a[k] : 0.0f;
    const ParticleForce<float> f =
        walk_particle<float>(t, static_cast<std::uint64_t>(k), t.x[k], t.y[k], t.z[k], w, aa);
    const std::size_t i = tree.index[k];
    ax[i] = cfg.G * f.ax;
    ay[i] = cfg.G * f.ay;
    az[i] = cfg.G * f.az;
    pot[i] = cfg.G * f.pot;
    pp += f.pp;
    pc += f.pc;
  }
  return {pp, pc};
}

std::vector<Group> make_groups(const std::vector<TreeNode>& nodes, int n_group) {
  std::vector<Group> groups;
  const std::uint64_t ng = static_cast<std::uint64_t>(std::max(1, n_group));
  const std::uint32_t nn = static_cast<std::uint32_t>(nodes.size());
  if (nn == 0) return groups;
  if (nodes[0].end - nodes[0].begin <= ng) return {{nodes[0].begin, nodes[0].end}};
  // Children of every node with more than n_group particles: runs of consecutive siblings
  // that fit n_group together form one group (a group is then a compact piece of one node,
  // and groups are near n_group in size rather than n_group / 8); a child too big for a group
  // is descended into; a leaf too big (coincident points) is cut into pieces.
  // The next node in pre-order with more than n_group particles, from j on.
  auto next_big = [&](std::uint32_t j) {
    while (j < nn && nodes[j].end - nodes[j].begin <= ng) j = nodes[j].next;
    return j;
  };
  for (std::uint32_t i = 0; i < nn;) {
    const TreeNode& n = nodes[i];
    if (n.first_child == 0) {  // a leaf with more than n_group particles
      for (std::uint64_t b = n.begin; b < n.end; b += ng)
        groups.push_back({b, std::min(n.end, b + ng)});
      i = next_big(n.next);
      continue;
    }
    Group run{0, 0};
    for (std::uint32_t c = n.first_child; c < n.next; c = nodes[c].next) {
      const std::uint64_t count = nodes[c].end - nodes[c].begin;
      if (count > ng) continue;  // descended into below
      if (run.end == nodes[c].begin && run.end - run.begin + count <= ng) {
        run.end = nodes[c].end;
      } else {
        if (run.end > run.begin) groups.push_back(run);
        run = {nodes[c].begin, nodes[c].end};
      }
    }
    if (run.end > run.begin) groups.push_back(run);
    i = next_big(i + 1);
  }
  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return a.begin < b.begin; });
  return groups;
}

GroupBox group_box(const TreeView& t, const Group& g) {
  const Box b = bounding_box(t.x, t.y, t.z, g.begin, g.end);
  return {b.centre(0), b.centre(1), b.centre(2), b.half(0), b.half(1), b.half(2)};
}

namespace {

// The group walk itself: visitor.cell(i) for every accepted node, visitor.leaf(i) for every
// opened leaf, in pre-order. A node is accepted when its criterion holds at the nearest point
// of the box (so for every particle inside).
template <class Visitor>
inline void walk_group_visit(const TreeView& t, const GroupBox& b, Criterion criterion,
                             double alpha_a, Visitor& visitor) {
  // The kernels see positions relative to the group centre in float, resolved to ~2^-24 of
  // the group size. A cell closer than 2^-20 of the group size (possible with bmax, whose
  // r_crit is 0 for a one-particle node) could round onto a target and make r = 0 in a cell
  // term, which has no r = 0 mask: open such a node instead.
  const double dmin = 0x1.0p-20 * (b.hx + b.hy + b.hz);
  const double dmin2 = dmin * dmin;
  std::uint32_t i = 0;
  while (i < t.n_nodes) {
    const TreeNode& n = t.nodes[i];
    // The walk continues at i + 1 (sequential, found by the hardware prefetcher) or at next:
    // fetch that one while the criterion is evaluated.
    __builtin_prefetch(&t.nodes[n.next]);
    // Distance from the centre of mass to the nearest point of the box.
    const double ex = std::max(std::abs(n.com_x - b.cx) - b.hx, 0.0);
    const double ey = std::max(std::abs(n.com_y - b.cy) - b.hy, 0.0);
    const double ez = std::max(std::abs(n.com_z - b.cz) - b.hz, 0.0);
    const double d2 = ex * ex + ey * ey + ez * ez;
    if (d2 > dmin2 && node_accepted<double>(n, d2, criterion, alpha_a)) {
      visitor.cell(i);
      i = n.next;
    } else if (n.first_child == 0) {
      visitor.leaf(i);
      i = n.next;
    } else {
      i = n.first_child;
    }
  }
}

struct ListVisitor {
  InteractionList* list;
  void cell(std::uint32_t i) { list->cells.push_back(i); }
  void leaf(std::uint32_t i) { list->leaves.push_back(i); }
};

}  // namespace

void group_interaction_list(const TreeView& t, const GroupBox& b, Criterion criterion,
                            double alpha_a, InteractionList& list) {
  list.clear();
  ListVisitor v{&list};
  walk_group_visit(t, b, criterion, alpha_a, v);
}

namespace {

using simd::VecF;
constexpr int kW = simd::kWidth;
#ifndef HOSHI_TREE_BLOCK_PP
#define HOSHI_TREE_BLOCK_PP 4
#endif
#ifndef HOSHI_TREE_BLOCK_PC
#define HOSHI_TREE_BLOCK_PC 2
#endif
constexpr int kTargetBlock = 4;  // targets are padded to a multiple of this (>= both blocks)
// Padding entries: zero mass (and moments) far away, so they add exactly zero.
constexpr float kPadPosition = 1e18f;

// Per-thread buffers of one group: sources, cells and targets relative to the group centre,
// filled by the walk itself (FillVisitor) so that every node is read once per group.
struct GroupBuffers {
  std::vector<float> sx, sy, sz, sm;                                // particle sources
  std::vector<float> cx, cy, cz, cm, qxx, qxy, qxz, qyy, qyz, qzz;  // cells
  std::vector<float> tx, ty, tz;                                    // targets
  std::size_t ns = 0, nc = 0, nt = 0;                               // counts without padding
};

std::size_t padded(std::size_t n, std::size_t w) {
  return (n + w - 1) / w * w;
}

template <std::size_t K>
void grow(std::vector<float>* const (&v)[K], std::size_t n) {
  if (v[0]->size() >= n) return;
  const std::size_t size = std::max<std::size_t>(2 * n, 1024);
  for (auto* a : v) a->resize(size);
}

// Writes the accepted cells and the opened leaves' particles into the float buffers,
// relative to the group centre (difference in double), as the walk finds them.
struct FillVisitor {
  const TreeView* t;
  const GroupBox* b;
  GroupBuffers* g;
  std::size_t ns = 0, nc = 0;

  void cell(std::uint32_t i) {
    GroupBuffers& q = *g;
    grow<10>({&q.cx, &q.cy, &q.cz, &q.cm, &q.qxx, &q.qxy, &q.qxz, &q.qyy, &q.qyz, &q.qzz}, nc + kW);
    const TreeNode& n = t->nodes[i];
    q.cx[nc] = static_cast<float>(n.com_x - b->cx);
    q.cy[nc] = static_cast<float>(n.com_y - b->cy);
    q.cz[nc] = static_cast<float>(n.com_z - b->cz);
    q.cm[nc] = static_cast<float>(n.m);
    q.qxx[nc] = n.qxx;
    q.qxy[nc] = n.qxy;
    q.qxz[nc] = n.qxz;
    q.qyy[nc] = n.qyy;
    q.qyz[nc] = n.qyz;
    q.qzz[nc] = n.qzz;
    ++nc;
  }
  void leaf(std::uint32_t i) {
    GroupBuffers& q = *g;
    const TreeNode& n = t->nodes[i];
    const std::size_t count = n.end - n.begin;
    grow<4>({&q.sx, &q.sy, &q.sz, &q.sm}, ns + count + kW);
    for (std::uint64_t j = n.begin; j < n.end; ++j, ++ns) {
      q.sx[ns] = static_cast<float>(t->x[j] - b->cx);
      q.sy[ns] = static_cast<float>(t->y[j] - b->cy);
      q.sz[ns] = static_cast<float>(t->z[j] - b->cz);
      q.sm[ns] = static_cast<float>(t->m[j]);
    }
  }
};

// The group's interaction list straight into the buffers, padded to kW.
void walk_fill(const TreeView& t, const GroupBox& b, Criterion criterion, double alpha_a,
               GroupBuffers& g) {
  FillVisitor v{&t, &b, &g};
  walk_group_visit(t, b, criterion, alpha_a, v);
  for (std::size_t k = v.ns; k < padded(v.ns, kW); ++k) {
    g.sx[k] = g.sy[k] = g.sz[k] = kPadPosition;
    g.sm[k] = 0;
  }
  for (std::size_t k = v.nc; k < padded(v.nc, kW); ++k) {
    g.cx[k] = g.cy[k] = g.cz[k] = kPadPosition;
    g.cm[k] = g.qxx[k] = g.qxy[k] = g.qxz[k] = g.qyy[k] = g.qyz[k] = g.qzz[k] = 0;
  }
  g.ns = v.ns;
  g.nc = v.nc;
}

void fill_targets(const TreeView& t, const Group& grp, const GroupBox& b, GroupBuffers& g) {
  const std::size_t nt = grp.end - grp.begin;
  const std::size_t np = padded(nt, kTargetBlock);
  for (auto* v : {&g.tx, &g.ty, &g.tz})
    if (v->size() < np) v->resize(np);
  for (std::size_t k = 0; k < nt; ++k) {
    g.tx[k] = static_cast<float>(t.x[grp.begin + k] - b.cx);
    g.ty[k] = static_cast<float>(t.y[grp.begin + k] - b.cy);
    g.tz[k] = static_cast<float>(t.z[grp.begin + k] - b.cz);
  }
  for (std::size_t k = nt; k < np; ++k) {  // repeat the last target; results are dropped
    g.tx[k] = g.tx[nt - 1];
    g.ty[k] = g.ty[nt - 1];
    g.tz[k] = g.tz[nt - 1];
  }
  g.nt = nt;
}

// Particle-particle terms of sources [0, ns) (padded to kW) on targets [0, nt) (padded to
// kTargetBlock), B targets at a time against each source vector, accumulators in registers.
// kSpline picks the kernel; kSoft: softened, every pair valid (the caller removes the self
// pair); otherwise pairs at r = 0 (the self pair) are masked. Results are added to out.
template <int B, bool kSpline, bool kSoft>
void pp_kernel(const GroupBuffers& g, VecF eps2, VecF h_inv, float* const out[4]) {
  const std::size_t n = padded(g.ns, kW);
  for (std::size_t t0 = 0; t0 < g.nt; t0 += B) {
    VecF X[B], Y[B], Z[B], ax[B], ay[B], az[B], pot[B];
    for (int b = 0; b < B; ++b) {
      X[b] = VecF(g.tx[t0 + b]);
      Y[b] = VecF(g.ty[t0 + b]);
      Z[b] = VecF(g.tz[t0 + b]);
      ax[b] = ay[b] = az[b] = pot[b] = VecF(0.0f);
    }
    for (std::size_t j = 0; j < n; j += kW) {
      const VecF x = VecF::load(&g.sx[j]), y = VecF::load(&g.sy[j]), z = VecF::load(&g.sz[j]);
      const VecF m = VecF::load(&g.sm[j]);
      for (int b = 0; b < B; ++b) {
        const VecF dx = x - X[b], dy = y - Y[b], dz = z - Z[b];
        if constexpr (kSoft) {
          if constexpr (kSpline)
            spline_pair(dx, dy, dz, m, h_inv, true, ax[b], ay[b], az[b], pot[b]);
          else
            plummer_pair(dx, dy, dz, m, eps2, true, ax[b], ay[b], az[b], pot[b]);
        } else {
          const auto valid = dx * dx + dy * dy + dz * dz > VecF(0.0f);
          // eps2 = -0: r2 + (-0) == r2 exactly, which the compiler may fold (it may not fold
          // r2 + 0, which turns -0 into +0): one add fewer per pair.
          plummer_pair(dx, dy, dz, m, VecF(-0.0f), valid, ax[b], ay[b], az[b], pot[b]);
        }
      }
    }
    for (int b = 0; b < B && t0 + b < g.nt; ++b) {
      out[0][t0 + b] += simd::reduce_add(ax[b]);
      out[1][t0 + b] += simd::reduce_add(ay[b]);
      out[2][t0 + b] += simd::reduce_add(az[b]);
      out[3][t0 + b] += simd::reduce_add(pot[b]);
    }
  }
}

// Particle-cell terms (monopole, or monopole + quadrupole) of the cells on the targets.
template <int B, int kOrder>
void pc_kernel(const GroupBuffers& g, VecF eps2, float* const out[4]) {
  const std::size_t n = padded(g.nc, kW);
  for (std::size_t t0 = 0; t0 < g.nt; t0 += B) {
    VecF X[B], Y[B], Z[B], ax[B], ay[B], az[B], pot[B];
    for (int b = 0; b < B; ++b) {
      X[b] = VecF(g.tx[t0 + b]);
      Y[b] = VecF(g.ty[t0 + b]);
      Z[b] = VecF(g.tz[t0 + b]);
      ax[b] = ay[b] = az[b] = pot[b] = VecF(0.0f);
    }
    for (std::size_t j = 0; j < n; j += kW) {
      const VecF x = VecF::load(&g.cx[j]), y = VecF::load(&g.cy[j]), z = VecF::load(&g.cz[j]);
      const VecF m = VecF::load(&g.cm[j]);
      if constexpr (kOrder == 1) {
        for (int b = 0; b < B; ++b)
          cell_monopole(x - X[b], y - Y[b], z - Z[b], m, eps2, ax[b], ay[b], az[b], pot[b]);
      } else {
        const VecF qxx = VecF::load(&g.qxx[j]), qxy = VecF::load(&g.qxy[j]);
        const VecF qxz = VecF::load(&g.qxz[j]), qyy = VecF::load(&g.qyy[j]);
        const VecF qyz = VecF::load(&g.qyz[j]), qzz = VecF::load(&g.qzz[j]);
        for (int b = 0; b < B; ++b)
          cell_quadrupole(x - X[b], y - Y[b], z - Z[b], m, qxx, qxy, qxz, qyy, qyz, qzz, eps2,
                          ax[b], ay[b], az[b], pot[b]);
      }
    }
    for (int b = 0; b < B && t0 + b < g.nt; ++b) {
      out[0][t0 + b] += simd::reduce_add(ax[b]);
      out[1][t0 + b] += simd::reduce_add(ay[b]);
      out[2][t0 + b] += simd::reduce_add(az[b]);
      out[3][t0 + b] += simd::reduce_add(pot[b]);
    }
  }
}

constexpr int kBlockPP = HOSHI_TREE_BLOCK_PP;
constexpr int kBlockPC = HOSHI_TREE_BLOCK_PC;

template <bool kSpline, bool kSoft, int kOrder>
void group_kernel(const GroupBuffers& g, const WalkParams<float>& w, float* out_ax, float* out_ay,
                  float* out_az, float* out_pot) {
  float* const out[4] = {out_ax, out_ay, out_az, out_pot};
  for (float* o : out) std::fill(o, o + g.nt, 0.0f);
  pp_kernel<kBlockPP, kSpline, kSoft>(g, VecF(w.soft.eps2), VecF(w.soft.h_inv), out);
  pc_kernel<kBlockPC, kOrder>(g, VecF(w.cell_eps2), out);
}

using GroupKernel = void (*)(const GroupBuffers&, const WalkParams<float>&, float*, float*, float*,
                             float*);

template <bool kSpline, bool kSoft>
GroupKernel pick_order(int order) {
  return order == 1 ? &group_kernel<kSpline, kSoft, 1> : &group_kernel<kSpline, kSoft, 2>;
}

GroupKernel pick_kernel(const WalkParams<float>& w, bool soft) {
  if (!soft) return pick_order<false, false>(w.order);
  if (w.soft.kind == Softening::spline) return pick_order<true, true>(w.order);
  return pick_order<false, true>(w.order);
}

}  // namespace

WalkCounts walk_tree_groups(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                            double* ax, double* ay, double* az, double* pot) {
  const TreeView t = tree.view();
  const WalkParams<float> w = walk_params(cfg);
  const bool soft = cfg.eps > 0;
  const GroupKernel kernel = pick_kernel(w, soft);
  // With softening the kernels include the self pair (zero force, potential phi(0) m_i):
  // remove it by evaluating the same kernel at r = 0, in the same float arithmetic.
  const std::vector<Group> groups = make_groups(tree.nodes, cfg.n_group);
  const std::ptrdiff_t ng = static_cast<std::ptrdiff_t>(groups.size());
  std::uint64_t pp = 0, pc = 0;
#pragma omp parallel reduction(+ : pp, pc)
  {
    GroupBuffers g;
    std::vector<float> fa[4];
#pragma omp for schedule(dynamic, 4)
    for (std::ptrdiff_t gi = 0; gi < ng; ++gi) {
      const Group& grp = groups[gi];
      const GroupBox box = group_box(t, grp);
      double aa = 0;
      if (alpha_a) {
        aa = alpha_a[grp.begin];
        for (std::uint64_t k = grp.begin + 1; k < grp.end; ++k)
          aa = std::min(aa, static_cast<double>(alpha_a[k]));
      }
      walk_fill(t, box, cfg.criterion, aa, g);
      fill_targets(t, grp, box, g);
      for (auto& v : fa)
        if (v.size() < g.nt) v.resize(g.nt);
      kernel(g, w, fa[0].data(), fa[1].data(), fa[2].data(), fa[3].data());
      for (std::size_t k = 0; k < g.nt; ++k) {
        const std::uint64_t s = grp.begin + k;
        float self_pot = 0;
        if (soft) {
          float sax = 0, say = 0, saz = 0;
          pair_interaction(w.soft, 0.0f, 0.0f, 0.0f, static_cast<float>(t.m[s]), true, sax, say,
                           saz, self_pot);
        }
        const std::size_t i = tree.index[s];
        ax[i] = cfg.G * fa[0][k];
        ay[i] = cfg.G * fa[1][k];
        az[i] = cfg.G * fa[2][k];
        pot[i] = cfg.G * (static_cast<double>(fa[3][k]) - self_pot);
      }
      // The group's own particles are in its list (a box is never accepted by itself).
      pp += static_cast<std::uint64_t>(g.nt) * (g.ns - 1);
      pc += static_cast<std::uint64_t>(g.nt) * g.nc;
    }
  }
  return {pp, pc};
}

}  // namespace hoshi
