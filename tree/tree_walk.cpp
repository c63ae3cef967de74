#include "tree/tree_walk.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>

#include "core/bounds.hpp"
#include "core/parallel_errors.hpp"
#include "tree/group_kernels.hpp"
#include "tree/morton.hpp"
#include "tree/walk_particle.hpp"

namespace hoshi {

using namespace group_kernels;

namespace {

WalkParams<float> walk_params(const TreeWalkConfig& c) {
  return make_walk_params<float>(c.criterion, c.order, c.softening, c.eps);
}

// Target i's force (without G) into the caller's arrays, G applied.
inline void store_force(const ParticleForce<float>& f, double G, std::size_t i, double* ax,
                        double* ay, double* az, double* pot) {
  ax[i] = G * f.ax;
  ay[i] = G * f.ay;
  az[i] = G * f.az;
  pot[i] = G * f.pot;
}

// Smallest alpha |a_old| over [begin, end): 16 running minima (x < a ? x : a is the vector
// min instruction, which GCC does not form from std::min without -ffinite-math-only), as the
// top targets of the walk span up to all N particles.
inline double min_alpha(const float* alpha_a, std::uint64_t begin, std::uint64_t end) {
  if (!alpha_a) return 0;
  constexpr int kLanes = 16;
  float a = alpha_a[begin];
  std::uint64_t k = begin;
  if (end - begin >= kLanes) {
    float lane[kLanes];
    for (int j = 0; j < kLanes; ++j) lane[j] = alpha_a[k + j];
    for (k += kLanes; k + kLanes <= end; k += kLanes)
      for (int j = 0; j < kLanes; ++j)
        lane[j] = alpha_a[k + j] < lane[j] ? alpha_a[k + j] : lane[j];
    for (int j = 0; j < kLanes; ++j) a = std::min(a, lane[j]);
  }
  for (; k < end; ++k) a = std::min(a, alpha_a[k]);
  return a;
}

}  // namespace

std::vector<std::uint64_t> active_prefix(const Octree& tree, const std::uint8_t* flags) {
  const std::size_t n = tree.index.size();
  std::vector<std::uint64_t> prefix(n + 1);
  for (std::size_t k = 0; k < n; ++k) prefix[k + 1] = prefix[k] + (flags[tree.index[k]] != 0);
  return prefix;
}

WalkCounts walk_tree_particles(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                               double* ax, double* ay, double* az, double* pot,
                               const ActiveTargets& active) {
  const TreeView t = tree.view();
  const WalkParams<float> w = walk_params(cfg);
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(t.n_particles);
  std::uint64_t pp = 0, pc = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : pp, pc)
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    if (!active.any(k, k + 1)) continue;
    const float aa = alpha_a ? alpha_a[k] : 0.0f;
    const ParticleForce<float> f =
        walk_particle<float>(t, static_cast<std::uint64_t>(k), t.x[k], t.y[k], t.z[k], w, aa);
    store_force(f, cfg.G, tree.index[k], ax, ay, az, pot);
    pp += f.pp;
    pc += f.pc;
  }
  return {pp, pc};
}

GroupBox group_box(const TreeView& t, const Group& g) {
  const Box b = bounding_box(t.x, t.y, t.z, g.begin, g.end);
  return box_from_corners(b.lo[0], b.lo[1], b.lo[2], b.hi[0], b.hi[1], b.hi[2]);
}

WalkCounts walk_tree_boxes(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                           double* ax, double* ay, double* az, double* pot) {
  const TreeView t = tree.view();
  const WalkParams<float> w = walk_params(cfg);
  const std::vector<Group> groups = make_groups(tree.nodes, cfg.n_group);
  const std::ptrdiff_t ng = static_cast<std::ptrdiff_t>(groups.size());
  std::uint64_t pp = 0, pc = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : pp, pc)
  for (std::ptrdiff_t g = 0; g < ng; ++g) {
    const Group& grp = groups[g];
    const GroupBox box = group_box(t, grp);
    // The group's alpha: the smallest of its targets' (as the device warp forms it).
    const double aa = min_alpha(alpha_a, grp.begin, grp.end);
    for (std::uint64_t k = grp.begin; k < grp.end; ++k) {
      const ParticleForce<float> f =
          walk_box_target<float>(t, box, aa, k, t.x[k], t.y[k], t.z[k], w);
      store_force(f, cfg.G, tree.index[k], ax, ay, az, pot);
      pp += f.pp;
      pc += f.pc;
    }
  }
  return {pp, pc};
}

std::vector<NodeChildren> child_table(const TreeView& t) {
  std::vector<NodeChildren> kids(t.n_nodes);
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(t.n_nodes);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i)
    kids[i] = node_children(t.nodes, static_cast<std::uint32_t>(i));
  return kids;
}

WalkCounts walk_tree_warps(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                           double* ax, double* ay, double* az, double* pot, int stack_capacity,
                           std::uint64_t* fallbacks) {
  if (fallbacks) *fallbacks = 0;
  const TreeView t = tree.view();
  if (t.n_nodes == 0) return {};
  const WalkParams<float> w = walk_params(cfg);
  const std::vector<Group> groups = make_groups(tree.nodes, cfg.n_group);
  const std::vector<NodeChildren> kids = child_table(t);
  const std::ptrdiff_t ng = static_cast<std::ptrdiff_t>(groups.size());
  const int capacity = std::clamp(stack_capacity, 1, kWarpStack);
  std::uint64_t pp = 0, pc = 0, fell_back = 0;
#pragma omp parallel reduction(+ : pp, pc, fell_back)
  {
    auto scratch = std::make_unique<WarpScratch>();
#pragma omp for schedule(dynamic, 16)
    for (std::ptrdiff_t g = 0; g < ng; ++g) {
      const Group& grp = groups[g];
      const GroupBox box = group_box(t, grp);
      const double aa = min_alpha(alpha_a, grp.begin, grp.end);
      for (std::uint64_t k0 = grp.begin; k0 < grp.end; k0 += kWarpLanes) {
        HostWarp warp;
        HostWarp::Var<LaneTarget> tg;
        warp.each([&](int l) { tg[l] = lane_target(t, box, grp.begin, k0, grp.end, l); });
        const bool done = walk_group_warp(warp, t, kids.data(), box, w.criterion, aa, w, grp.begin,
                                          k0, *scratch, capacity, tg);
        fell_back += !done;
        warp.each([&](int l) {
          const std::uint64_t k = k0 + static_cast<std::uint64_t>(l);
          if (k >= grp.end) return;
          const ParticleForce<float> f =
              done ? tg[l].f : walk_box_target<float>(t, box, aa, k, t.x[k], t.y[k], t.z[k], w);
          store_force(f, cfg.G, tree.index[k], ax, ay, az, pot);
          pp += f.pp;
          pc += f.pc;
        });
      }
    }
  }
  if (fallbacks) *fallbacks = fell_back;
  return {pp, pc};
}

namespace {

// Radius of a box (half its diagonal) and the squared distance beyond which a cell enters the
// box's local expansion (infinity: none).
inline double box_radius(const GroupBox& b) {
  return std::sqrt(b.hx * b.hx + b.hy * b.hy + b.hz * b.hz);
}
inline double far_distance2(double radius, double local_ratio) {
  if (!(local_ratio > 0 && radius > 0)) return std::numeric_limits<double>::infinity();
  const double d = radius / local_ratio;
  return d * d;
}

// Which accepted cells enter a box's local expansion: those whose centre of mass is farther
// than radius / local_ratio from the box centre (far_d2), and whose share of the expansion's
// truncation error, ~ (P + 1) rho^P of the cell's force M / d^2 at the box's edge
// (rho = radius / d, P = kLocalOrder), is either
//  * at most 4 times the cell's own multipole truncation error: the first omitted moment over
//    M d^(order + 1), bounded by q / d^2 (order 1) and b_max q / d^3 (order 2), where
//    q = sum m |y|^2 / M (mr2 / m), small for a cell whose mass sits at its centre of mass
//    whatever its b_max; or
//  * (relative criterion) at most a hundredth of what the criterion allows a cell,
//    alpha |a_old| / G of the group (a light cell, whatever its shape). The expansion's
//    truncation errors of a group's ~100 far cells add up with one sign (the multipole errors
//    that the criterion bounds partly cancel), which a tenth let through where |a_old| is a
//    small residual of large pulls: an evenly spaced softened ring of 2e5, p99 1.2e-2 (a
//    hundredth: 1.3e-3; none: 5.5e-4); Plummer 1e5 and 1e6, Hernquist and disk 1e5 keep their
//    errors and all but 0.3 of their p-c terms per particle (2026-12-01).
// A compact heavy cell keeps its particle-cell term instead: a single particle is exact there,
// and a star's or a black hole's force taken through the expansion was off by up to 1.3%
// (2026-11-30 audit: a point mass beside a 140-particle cloud, p99 7.9e-3 against 7e-7 without
// local expansions; a light disk around a star, p99 1.0e-3 against 1.5e-6 with barnes94).
// Default: no local expansion.
struct FarRule {
  double far_d2 = std::numeric_limits<double>::infinity();
  double radius2 = 0;
  int order = 2;
  double light2 = 0;  // (alpha |a_old| / G / 100)^2 of the group, relative criterion; else 0
  FarRule() = default;
  // eps: the softening. Past 4096 radii no local expansion is formed: its coefficients, in
  // units of the radius, fall with (radius / eps)^5 below float's range and were flushed to
  // zero (a Plummer sphere of size 1e-11 with eps 1: max error 1.2e-3 against 1.6e-7 without
  // local expansions; 2026-12-01 audit). The far cells are then particle-cell terms.
  FarRule(double radius, double local_ratio, int order_, Criterion criterion, double alpha_a,
          double eps)
      : far_d2(far_distance2(radius, local_ratio)), radius2(radius * radius), order(order_) {
    if (!(eps <= 4096 * radius)) far_d2 = std::numeric_limits<double>::infinity();
    if (criterion == Criterion::relative && alpha_a > 0) light2 = 1e-4 * alpha_a * alpha_a;
  }
  bool far(const TreeNode& n, double d2) const {
    if (!(d2 > far_d2)) return false;
    if (!(n.m > 0)) return true;
    const double x = radius2 / d2;
    double xp = 1;
    for (int k = 0; k < kLocalOrder; ++k) xp *= x;
    const double expansion2 = double((kLocalOrder + 1) * (kLocalOrder + 1)) * xp;  // squared
    const double m = double(n.m), force2 = m * m / (d2 * d2);
    if (expansion2 * force2 <= light2) return true;
    const double q = double(n.mr2) / m;
    double own2 = q * q / (d2 * d2);
    if (order >= 2) own2 *= double(n.b_max) * double(n.b_max) / d2;
    return expansion2 <= 16 * own2;  // 4 times, squared
  }
};

// The group walk itself: visitor.cell(i) for every accepted node, visitor.leaf(i) for every
// opened leaf, in pre-order. A node is accepted when its criterion holds at the nearest point
// of the box (so for every particle inside). An accepted node that `far` sends to the box's
// local expansion goes to visitor.far(i) instead.
// The walk covers the nodes [start, stop) in pre-order: the whole tree, or the subtree of
// node c with start = c, stop = nodes[c].next.
template <class Visitor>
inline void walk_group_visit(const TreeView& t, const GroupBox& b, Criterion criterion,
                             double alpha_a, const FarRule& far, Visitor& visitor,
                             std::uint32_t start, std::uint32_t stop) {
  const double dmin2 = box_min_cell_d2(b);
  std::uint32_t i = start;
  while (i < stop) {
    const TreeNode& n = t.nodes[i];
    // The walk continues at i + 1 (sequential, found by the hardware prefetcher) or at next:
    // fetch that one while the criterion is evaluated.
    __builtin_prefetch(&t.nodes[n.next]);
    if (box_node_accepted(n, b, dmin2, criterion, alpha_a)) {
      if (far.far(n, box_centre_d2(n, b)))
        visitor.far(i);
      else
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
  void far(std::uint32_t i) { list->cells.push_back(i); }
  void leaf(std::uint32_t i) { list->leaves.push_back(i); }
};

}  // namespace

void group_interaction_list(const TreeView& t, const GroupBox& b, Criterion criterion,
                            double alpha_a, InteractionList& list) {
  list.clear();
  ListVisitor v{&list};
  walk_group_visit(t, b, criterion, alpha_a, FarRule{}, v, 0, t.n_nodes);
}

namespace {

// Writes the accepted cells and the opened leaves' particles into the float buffers,
// relative to the group centre (difference in double), as the walk finds them.
struct FillVisitor {
  const TreeView* t;
  const GroupBox* b;
  GroupBuffers* g;
  double inv_scale = 1;                      // 1 / group radius, for the far cells
  std::uint64_t own_begin = 0, own_end = 0;  // the group's particles
  std::size_t ns = 0, nc = 0;

  void far(std::uint32_t i) { g->far.add(t->nodes[i], b->cx, b->cy, b->cz, inv_scale); }

  void cell(std::uint32_t i) {
    GroupBuffers& q = *g;
    grow<11>({&q.cx, &q.cy, &q.cz, &q.cm, &q.qxx, &q.qxy, &q.qxz, &q.qyy, &q.qyz, &q.qzz, &q.mr2},
             nc + kW);
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
    q.mr2[nc] = n.mr2;
    ++nc;
  }
  // The leaf's particles, except the group's own [own_begin, own_end) (already in front).
  void leaf(std::uint32_t i) {
    const TreeNode& n = t->nodes[i];
    if (n.begin >= own_begin && n.end <= own_end) return;
    copy(n.begin, std::min(n.end, own_begin));
    copy(std::max(n.begin, own_end), n.end);
  }
  void copy(std::uint64_t begin, std::uint64_t end) {
    if (begin >= end) return;
    GroupBuffers& q = *g;
    grow<4>({&q.sx, &q.sy, &q.sz, &q.sm}, ns + (end - begin) + kW);
    for (std::uint64_t j = begin; j < end; ++j, ++ns) {
      q.sx[ns] = static_cast<float>(t->x[j] - b->cx);
      q.sy[ns] = static_cast<float>(t->y[j] - b->cy);
      q.sz[ns] = static_cast<float>(t->z[j] - b->cz);
      q.sm[ns] = static_cast<float>(t->m[j]);
    }
  }
};

// The group's interaction list straight into the buffers, padded to kW: the group's own
// particles, then the walks of the subtrees of the candidate nodes cand[0, ncand). Accepted
// cells that the FarRule sends to the group's local expansion go to the far buffer.
void walk_fill(const TreeView& t, const Group& grp, const GroupBox& b, Criterion criterion,
               double alpha_a, double local_ratio, double eps, int order, const std::uint32_t* cand,
               std::size_t ncand, GroupBuffers& g) {
  const double radius = box_radius(b);
  const FarRule far(radius, local_ratio, order, criterion, alpha_a, eps);
  FillVisitor v{&t, &b, &g};
  v.inv_scale = far.far_d2 < std::numeric_limits<double>::infinity() ? 1 / radius : 1;
  g.scale = 1 / v.inv_scale;
  g.far.n = 0;
  // The group's own particles (every one is in an opened leaf: a box never accepts a node
  // whose centre of mass lies inside it).
  v.own_begin = grp.begin;
  v.own_end = grp.end;
  v.copy(grp.begin, grp.end);
  for (; v.ns < padded(v.ns, kW); ++v.ns) {
    g.sx[v.ns] = g.sy[v.ns] = g.sz[v.ns] = kPadPosition;
    g.sm[v.ns] = 0;
  }
  g.own_end = v.ns;
  for (std::size_t k = 0; k < ncand; ++k)
    walk_group_visit(t, b, criterion, alpha_a, far, v, cand[k], t.nodes[cand[k]].next);
  for (std::size_t k = v.ns; k < padded(v.ns, kW); ++k) {
    g.sx[k] = g.sy[k] = g.sz[k] = kPadPosition;
    g.sm[k] = 0;
  }
  for (std::size_t k = v.nc; k < padded(v.nc, kW); ++k) {
    g.cx[k] = g.cy[k] = g.cz[k] = kPadPosition;
    g.cm[k] = g.qxx[k] = g.qxy[k] = g.qxz[k] = g.qyy[k] = g.qyz[k] = g.qzz[k] = g.mr2[k] = 0;
  }
  if (g.far.n > 0) g.far.pad();
  g.ns = v.ns;
  g.nc = v.nc;
}

// The group's targets: every particle, or with active flags only the active ones (their
// lists are the group's: a block step's substep pays the kernels for its active particles
// alone).
void fill_targets(const TreeView& t, const Group& grp, const GroupBox& b,
                  const ActiveTargets& active, GroupBuffers& g) {
  const std::size_t size = grp.end - grp.begin;
  const std::size_t np = padded(size, kTargetBlock);
  for (auto* v : {&g.tx, &g.ty, &g.tz, &g.tself})
    if (v->size() < np) v->resize(np);
  if (g.toff.size() < np) g.toff.resize(np);
  const bool all = active.count(grp.begin, grp.end) == size;
  std::size_t nt = 0;
  for (std::size_t k = 0; k < size; ++k) {
    if (!all && !active.any(grp.begin + k, grp.begin + k + 1)) continue;
    g.tx[nt] = static_cast<float>(t.x[grp.begin + k] - b.cx);
    g.ty[nt] = static_cast<float>(t.y[grp.begin + k] - b.cy);
    g.tz[nt] = static_cast<float>(t.z[grp.begin + k] - b.cz);
    g.tself[nt] = static_cast<float>(k);
    g.toff[nt] = static_cast<std::uint32_t>(k);
    ++nt;
  }
  for (std::size_t k = nt; k < padded(nt, kTargetBlock); ++k) {  // repeat the last target;
    g.tx[k] = g.tx[nt - 1];                                      // results are dropped
    g.ty[k] = g.ty[nt - 1];
    g.tz[k] = g.tz[nt - 1];
    g.tself[k] = g.tself[nt - 1];
  }
  g.nt = nt;
}

}  // namespace

int local_expansion_order() {
  return kLocalOrder;
}

double local_ratio_for(double R, Criterion criterion, double theta, double alpha, int order) {
  if (!(R > 0)) return 0;
  const double e = criterion == Criterion::relative ? kRelativeErrorScale * alpha
                                                    : std::pow(theta, double(order + 1));
  return std::min(0.5, R * std::pow(e, 1.0 / kLocalOrder));
}

// ---- The hierarchical group walk ---------------------------------------------------------
//
// Targets form a hierarchy: nodes with more than n_group particles ("big" targets, their cube
// as box), whose target children are their big child nodes and the groups made of runs of
// their small children (target_children). A big target T receives candidate nodes from its
// parent (the root: {0}) and classifies each against its cube:
//  * accepted by the criterion at the cube's nearest point and farther than radius(T) /
//    local_ratio from its centre: added to T's local expansion (one M2L for all particles of
//    T); the groups below evaluate it on their particles (L2P);
//  * larger than T (side > side(T)) and not accepted: opened, its children classified in turn;
//  * otherwise (accepted but near, a leaf, or a node not larger than T): passed on as a
//    candidate to T's children.
// A group walks the subtrees of its candidates as the flat walk does (walk_group_visit). Every
// node accepted for T is accepted for every box inside T's cube (the criterion only gets
// easier farther away, and the relative criterion's alpha |a_old| is the minimum over T), so a
// group sees every particle exactly once: as a particle, in a cell, or in the local expansion
// of the group or of one of its big ancestors (tests/test_tree_forces.cpp, counting test).

namespace {

// A run of sibling nodes that may become one group: its particle range, the box of its nodes'
// spheres (com +- b_max) and the smallest mean interparticle spacing among its nodes of more
// than one particle (2 b_max / count^(1/3); infinity while there is none).
struct GroupRun {
  Group range{0, 0};
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  double spacing = std::numeric_limits<double>::infinity();

  static double node_spacing(const TreeNode& c) {
    const auto count = static_cast<double>(c.end - c.begin);
    const double s = count > 1 ? 2.0 * c.b_max / std::cbrt(count) : 0.0;
    return s > 0 ? s : std::numeric_limits<double>::infinity();
  }
  void start(const TreeNode& c) {
    range = {c.begin, c.end};
    const double x[3] = {c.com_x, c.com_y, c.com_z};
    for (int k = 0; k < 3; ++k) lo[k] = x[k] - c.b_max, hi[k] = x[k] + c.b_max;
    spacing = node_spacing(c);
  }
  // Whether c may join: a group's sources and targets enter the float kernels relative to its
  // box centre, with a rounding of ~extent 2^-24, so the box may be at most 2^10 spacings of its
  // densest member wide (rounding <= 6e-5 of that spacing). Sibling cells in a cluster make
  // boxes of ~10 spacings; a cluster's octant merged with an escaper 1e6 away in the next
  // octant made a group 1e6 wide, and the octant's particles lost 1e-2 of their forces.
  bool compact_with(const TreeNode& c) const {
    const double x[3] = {c.com_x, c.com_y, c.com_z};
    double extent = 0;
    for (int k = 0; k < 3; ++k)
      extent = std::max(extent, std::max(hi[k], x[k] + c.b_max) - std::min(lo[k], x[k] - c.b_max));
    const double s = std::min(spacing, node_spacing(c));
    return !(extent > 1024.0 * s);  // no spacing (single particles) or a compact box
  }
  void add(const TreeNode& c) {
    range.end = c.end;
    const double x[3] = {c.com_x, c.com_y, c.com_z};
    for (int k = 0; k < 3; ++k)
      lo[k] = std::min(lo[k], x[k] - c.b_max), hi[k] = std::max(hi[k], x[k] + c.b_max);
    spacing = std::min(spacing, node_spacing(c));
  }
};

// Calls f(big node) for every big target child of big node i and f(group) for its groups, in
// particle order: runs of consecutive small children of at most ng particles together, as long
// as their box stays compact (GroupRun::compact_with).
template <class FBig, class FGroup>
void target_children(const TreeView& t, std::uint32_t i, std::uint64_t ng, FBig&& big,
                     FGroup&& group) {
  const TreeNode& n = t.nodes[i];
  if (n.first_child == 0) {  // a leaf with more than n_group particles: cut into pieces
    for (std::uint64_t b = n.begin; b < n.end; b += ng) group(Group{b, std::min(n.end, b + ng)});
    return;
  }
  GroupRun run;
  const auto flush = [&] {
    if (run.range.end > run.range.begin) group(run.range);
    run.range = {0, 0};
  };
  for (std::uint32_t c = n.first_child; c < n.next; c = t.nodes[c].next) {
    const TreeNode& child = t.nodes[c];
    const std::uint64_t count = child.end - child.begin;
    if (count > ng) {
      // The run of small children before c first: targets come out in particle order.
      flush();
      big(c);
    } else if (run.range.end > run.range.begin && run.range.end == child.begin &&
               run.range.end - run.range.begin + count <= ng && run.compact_with(child)) {
      // (An empty run, {0, 0} with the box (0, 0, 0), is started, never joined.)
      run.add(child);
    } else {
      flush();
      run.start(child);
    }
  }
  flush();
}

inline GroupBox cube_box(const TreeNode& n) {
  const double h = 0.5 * n.side;
  return {n.cx, n.cy, n.cz, h, h, h};
}

// A unit of parallel work: a target (big node or group) with its candidates and the local
// expansions of its big ancestors (Policy::Chain).
template <class Chain>
struct WalkTask {
  bool is_group;
  std::uint32_t node;
  Group group;
  std::vector<std::uint32_t> cand;
  Chain chain;
  int depth;
};

// The traversal, generic over what is done with far cells and groups (Policy):
//   policy.begin_far(box, radius), policy.far(node), policy.end_far(), policy.pop_far()
//   policy.group(group, candidates, count)
//   policy.chain() / policy.set_chain(chain): the ancestors' expansions, for tasks
template <class Policy>
struct Traversal {
  const TreeView& t;
  const TreeWalkConfig& cfg;
  const float* alpha_a;
  ActiveTargets active;  // targets without an active particle are skipped
  std::uint64_t ng;
  Policy& policy;
  // Serial phase: targets with at most spawn_below particles become tasks instead.
  std::uint64_t spawn_below = 0;
  std::vector<WalkTask<typename Policy::Chain>>* tasks = nullptr;
  std::vector<std::vector<std::uint32_t>> passed;  // candidates passed down, per depth
  std::vector<std::uint32_t> work;

  void big(std::uint32_t i, const std::vector<std::uint32_t>& cand, int depth) {
    const TreeNode& T = t.nodes[i];
    const GroupBox box = cube_box(T);
    const double aa = min_alpha(alpha_a, T.begin, T.end);
    const double radius = box_radius(box);
    const FarRule far(radius, cfg.local_ratio, cfg.order, cfg.criterion, aa, cfg.eps);
    const double dmin2 = box_min_cell_d2(box);
    // Sized once: a resize would move the lists that the callers' `cand` refer to. Target
    // depth is at most the tree depth, kTreeMaxLevel + 1.
    if (passed.empty()) passed.resize(kTreeMaxLevel + 2);
    std::vector<std::uint32_t>& out = passed[depth];
    out.clear();
    work.assign(cand.begin(), cand.end());
    policy.begin_far(box, radius);
    while (!work.empty()) {
      const std::uint32_t c = work.back();
      work.pop_back();
      const TreeNode& n = t.nodes[c];
      if (box_node_accepted(n, box, dmin2, cfg.criterion, aa)) {
        if (far.far(n, box_centre_d2(n, box)))
          policy.far(c);
        else
          out.push_back(c);
      } else if (n.first_child != 0 && n.side > T.side) {
        for (std::uint32_t k = n.first_child; k < n.next; k = t.nodes[k].next) work.push_back(k);
      } else {
        out.push_back(c);
      }
    }
    policy.end_far();
    target_children(
        t, i, ng,
        [&](std::uint32_t b) {
          if (!active.any(t.nodes[b].begin, t.nodes[b].end)) return;
          if (tasks && t.nodes[b].end - t.nodes[b].begin <= spawn_below)
            tasks->push_back({false, b, Group{0, 0}, out, policy.chain(), depth + 1});
          else
            big(b, passed[depth], depth + 1);
        },
        [&](const Group& g) {
          if (!active.any(g.begin, g.end)) return;
          if (tasks)
            tasks->push_back({true, 0, g, out, policy.chain(), depth + 1});
          else
            policy.group(g, passed[depth].data(), passed[depth].size());
        });
    policy.pop_far();
  }
};

// One particle's result, in tree order.
struct TreeOrderForce {
  double ax, ay, az, pot;
};

// The force policy: far cells into local expansions (LocalFrame), groups through the kernels.
// One expansion is carried down the targets: a big target with far cells of its own starts a
// frame at its centre (M2L) and adds its parent's frame shifted there (L2L); a group does the
// same with its own far cells and evaluates the one result on its particles (L2P).
struct ForcePolicy {
  struct Chain {
    bool valid = false;  // false: no far cells above the current target
    LocalFrame frame;
  };
  const TreeView* t = nullptr;
  const TreeWalkConfig* cfg = nullptr;
  const WalkParams<float>* w = nullptr;
  const float* alpha_a = nullptr;
  ActiveTargets active;  // the targets: a group's active particles
  GroupKernel kernel = nullptr;
  TreeOrderForce* out_tree = nullptr;  // results in tree order
  std::uint64_t pp = 0, pc = 0, m2l_count = 0;

  Chain current;             // the expansion of everything far from the current target
  std::vector<Chain> saved;  // per open big target: the frame before it, to restore
  FarBuffer far_buf;         // far cells of the current big target
  GroupBox far_box{};
  double far_scale = 1;
  GroupBuffers g;
  std::vector<float> fa[4];

  Chain chain() const { return current; }
  void set_chain(const Chain& c) {
    current = c;
    saved.clear();
  }
  void begin_far(const GroupBox& box, double radius) {
    far_buf.n = 0;
    far_box = box;
    far_scale = radius > 0 ? radius : 1;
  }
  void far(std::uint32_t i) {
    far_buf.add(t->nodes[i], far_box.cx, far_box.cy, far_box.cz, 1 / far_scale);
  }
  // A new frame at (cx, cy, cz) of the far cells in f, plus the current one shifted there.
  Chain combined(const FarBuffer& f, double cx, double cy, double cz, double scale) const {
    Chain next{true, {}};
    far_to_local(f, cx, cy, cz, scale, w->order, w->cell_eps2, next.frame);
    if (current.valid) add_shifted(current.frame, next.frame);
    return next;
  }
  void end_far() {
    saved.push_back(current);
    if (far_buf.n == 0) return;
    far_buf.pad();
    current = combined(far_buf, far_box.cx, far_box.cy, far_box.cz, far_scale);
    m2l_count += far_buf.n;
  }
  void pop_far() {
    current = saved.back();
    saved.pop_back();
  }

  void group(const Group& grp, const std::uint32_t* cand, std::size_t ncand) {
    const GroupBox box = group_box(*t, grp);
    const double aa = min_alpha(alpha_a, grp.begin, grp.end);
    walk_fill(*t, grp, box, cfg->criterion, aa, cfg->local_ratio, cfg->eps, cfg->order, cand, ncand,
              g);
    fill_targets(*t, grp, box, active, g);
    for (auto& v : fa)
      if (v.size() < padded(g.nt, kTargetBlock)) v.resize(padded(g.nt, kTargetBlock));
    float* const out[4] = {fa[0].data(), fa[1].data(), fa[2].data(), fa[3].data()};
    kernel(g, *w, out[0], out[1], out[2], out[3]);
    // One expansion for all that is far: the group's own far cells (about its centre, in units
    // of its radius g.scale) and its ancestors' (current, shifted there).
    const Chain far = g.far.n > 0 ? combined(g.far, box.cx, box.cy, box.cz, g.scale) : current;
    if (far.valid) {
      const LocalFrame& f = far.frame;
      l2p(f.coef, (box.cx - f.cx) / f.scale, (box.cy - f.cy) / f.scale, (box.cz - f.cz) / f.scale,
          f.scale, g, out);
    }
    const double G = cfg->G;
    for (std::size_t k = 0; k < g.nt; ++k)  // the kernels mask the self pair
      out_tree[grp.begin + g.toff[k]] = {G * fa[0][k], G * fa[1][k], G * fa[2][k], G * fa[3][k]};
    // The group's own particles are in its list (a box is never accepted by itself).
    pp += static_cast<std::uint64_t>(g.nt) * ((grp.end - grp.begin) + (g.ns - g.own_end) - 1);
    pc += static_cast<std::uint64_t>(g.nt) * g.nc;
    m2l_count += g.far.n;
  }
};

// Runs the traversal: serially down to targets of at most spawn_below particles, then those
// in parallel. make_policy() returns a policy for one thread; merge(policy) is called by
// each thread at the end (under a critical section).
template <class Policy, class Make, class Merge>
void run_traversal(const TreeView& t, const TreeWalkConfig& cfg, const float* alpha_a,
                   const ActiveTargets& active, Make&& make_policy, Merge&& merge) {
  if (t.n_nodes == 0 || !active.any(t.nodes[0].begin, t.nodes[0].end)) return;
  const std::uint64_t ng = static_cast<std::uint64_t>(std::max(1, cfg.n_group));
  const std::uint64_t n = t.nodes[0].end - t.nodes[0].begin;
  std::vector<WalkTask<typename Policy::Chain>> tasks;
  {
    const FlushDenormals ftz;
    Policy serial = make_policy();
    Traversal<Policy> tr{t, cfg, alpha_a, active, ng, serial, 0, nullptr, {}, {}};
    tr.tasks = &tasks;
    // Enough tasks for dynamic balance: targets of at most ~n / 64 particles, or of the active
    // ones (a dense centre's 10% would otherwise be a few tasks).
    const std::uint64_t n_active = active.count(t.nodes[0].begin, t.nodes[0].end);
    tr.spawn_below = std::max<std::uint64_t>(ng, n_active / 64);
    if (n <= ng) {
      tasks.push_back({true, 0, Group{t.nodes[0].begin, t.nodes[0].end}, {0}, {}, 0});
    } else {
      tr.big(0, std::vector<std::uint32_t>{0}, 0);
    }
    merge(serial);
  }
  const std::ptrdiff_t ntasks = static_cast<std::ptrdiff_t>(tasks.size());
  // The threads' buffers grow as they walk: a failed allocation is rethrown after the region
  // (it ended the program inside it).
  ParallelErrors errors;
#pragma omp parallel
  {
    // Flush denormals to zero in this walk: tiny terms (far cells' high-order coefficients,
    // padding) are then exact zeros instead of slow microcode assists.
    const FlushDenormals ftz;
    std::optional<Policy> policy;
    std::optional<Traversal<Policy>> tr;
    errors.run([&] {
      policy.emplace(make_policy());
      tr.emplace(Traversal<Policy>{t, cfg, alpha_a, active, ng, *policy, 0, nullptr, {}, {}});
    });
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t k = 0; k < ntasks; ++k)
      errors.run([&] {
        const auto& task = tasks[k];
        policy->set_chain(task.chain);
        if (task.is_group)
          policy->group(task.group, task.cand.data(), task.cand.size());
        else
          tr->big(task.node, task.cand, task.depth);
      });
#pragma omp critical(hoshi_walk_merge)
    errors.run([&] { merge(*policy); });
  }
  errors.rethrow();
}

// The lists policy (tests): records every group's cells, leaves and far cells.
struct ListPolicy {
  using Chain = std::vector<std::vector<std::uint32_t>>;
  const TreeView* t = nullptr;
  const TreeWalkConfig* cfg = nullptr;
  const float* alpha_a = nullptr;
  Chain frames;
  std::vector<std::uint32_t> current;
  std::vector<GroupLists> out;

  Chain chain() const { return frames; }
  void set_chain(const Chain& c) { frames = c; }
  void begin_far(const GroupBox&, double) { current.clear(); }
  void far(std::uint32_t i) { current.push_back(i); }
  void end_far() { frames.push_back(current); }
  void pop_far() { frames.pop_back(); }
  void group(const Group& grp, const std::uint32_t* cand, std::size_t ncand) {
    struct V {
      GroupLists* l;
      void cell(std::uint32_t i) { l->cells.push_back(i); }
      void far(std::uint32_t i) { l->far.push_back(i); }
      void leaf(std::uint32_t i) { l->leaves.push_back(i); }
    };
    GroupLists lists;
    lists.group = grp;
    for (const auto& f : frames) lists.far.insert(lists.far.end(), f.begin(), f.end());
    const GroupBox box = group_box(*t, grp);
    const FarRule far(box_radius(box), cfg->local_ratio, cfg->order, cfg->criterion,
                      min_alpha(alpha_a, grp.begin, grp.end), cfg->eps);
    V v{&lists};
    for (std::size_t k = 0; k < ncand; ++k)
      walk_group_visit(*t, box, cfg->criterion, min_alpha(alpha_a, grp.begin, grp.end), far, v,
                       cand[k], t->nodes[cand[k]].next);
    out.push_back(std::move(lists));
  }
};

}  // namespace

std::vector<GroupLists> group_walk_lists(const Octree& tree, const TreeWalkConfig& cfg,
                                         const float* alpha_a) {
  const TreeView t = tree.view();
  std::vector<GroupLists> all;
  run_traversal<ListPolicy>(
      t, cfg, alpha_a, {},
      [&] {
        ListPolicy p;
        p.t = &t;
        p.cfg = &cfg;
        p.alpha_a = alpha_a;
        return p;
      },
      [&](ListPolicy& p) {
        for (auto& l : p.out) all.push_back(std::move(l));
      });
  std::sort(all.begin(), all.end(),
            [](const GroupLists& a, const GroupLists& b) { return a.group.begin < b.group.begin; });
  return all;
}

std::vector<Group> make_groups(const std::vector<TreeNode>& nodes, int n_group) {
  std::vector<Group> groups;
  if (nodes.empty()) return groups;
  const std::uint64_t ng = static_cast<std::uint64_t>(std::max(1, n_group));
  TreeView t;
  t.nodes = nodes.data();
  t.n_nodes = static_cast<std::uint32_t>(nodes.size());
  if (nodes[0].end - nodes[0].begin <= ng) return {{nodes[0].begin, nodes[0].end}};
  // Depth first, children in order (target_children emits in particle order), so the groups
  // come out sorted with no sort. The nodes are visited from the root down to big nodes of at
  // most kUnit particles serially; those subtrees (units) are split in parallel, each into its
  // own list, and the lists are spliced in order: the result is the serial one (the serial
  // pass cost ~4 ms at 1M, a chain of cache misses over the nodes).
  constexpr std::uint64_t kUnit = 4096;
  // The top pass (top = true) leaves a placeholder {unit, kUnitMark} for each unit in `out`.
  constexpr std::uint64_t kUnitMark = ~std::uint64_t{0};
  std::vector<std::uint32_t> units;
  const auto visit = [&](const auto& self, std::uint32_t i, bool top,
                         std::vector<Group>& out) -> void {
    target_children(
        t, i, ng,
        [&](std::uint32_t b) {
          if (top && nodes[b].end - nodes[b].begin <= kUnit) {
            out.push_back({units.size(), kUnitMark});
            units.push_back(b);
          } else {
            self(self, b, top, out);
          }
        },
        [&](const Group& g) { out.push_back(g); });
  };
  std::vector<Group> top;
  visit(visit, 0, true, top);
  std::vector<std::vector<Group>> unit_groups(units.size());
  const std::ptrdiff_t nu = static_cast<std::ptrdiff_t>(units.size());
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 4)
  for (std::ptrdiff_t u = 0; u < nu; ++u)
    errors.run([&] { visit(visit, units[u], false, unit_groups[u]); });
  errors.rethrow();
  std::size_t total = 0;
  for (const Group& g : top) total += g.end == kUnitMark ? unit_groups[g.begin].size() : 1;
  groups.reserve(total);
  for (const Group& g : top) {
    if (g.end == kUnitMark)
      groups.insert(groups.end(), unit_groups[g.begin].begin(), unit_groups[g.begin].end());
    else
      groups.push_back(g);
  }
  return groups;
}

WalkCounts walk_tree_groups(const Octree& tree, const TreeWalkConfig& cfg, const float* alpha_a,
                            double* ax, double* ay, double* az, double* pot,
                            const ActiveTargets& active) {
  const TreeView t = tree.view();
  const WalkParams<float> w = walk_params(cfg);
  const GroupKernel kernel = pick_kernel(w);
  WalkCounts counts;
  // Every active particle's entry is written by its group: no zeroing (32 B per particle).
  // The others are left unset and are not read back.
  const auto out_tree = std::make_unique_for_overwrite<TreeOrderForce[]>(t.n_particles);
  run_traversal<ForcePolicy>(
      t, cfg, alpha_a, active,
      [&] {
        ForcePolicy p;
        p.t = &t;
        p.cfg = &cfg;
        p.w = &w;
        p.alpha_a = alpha_a;
        p.active = active;
        p.kernel = kernel;
        p.out_tree = out_tree.get();
        return p;
      },
      [&](ForcePolicy& p) {
        counts.pp += p.pp;
        counts.pc += p.pc;
        counts.m2l += p.m2l_count;
      });
  // Back to input order. Writing each result straight to its input position costs four random
  // cache lines per particle (read for ownership, then written back): the walk's largest
  // memory cost. Instead the walk writes in tree order (above), the inverse permutation is
  // formed (one random 4-byte write), and each input position gathers its 32 bytes (one random
  // read) while ax, ay, az, pot are written in sequence.
  const std::size_t n = t.n_particles;
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
  auto to_input_order = [&](auto* inv) {
#pragma omp parallel
    {
#pragma omp for schedule(static)
      for (std::ptrdiff_t k = 0; k < nn; ++k)
        inv[tree.index[k]] = static_cast<std::remove_pointer_t<decltype(inv)>>(k);
#pragma omp for schedule(static)
      for (std::ptrdiff_t i = 0; i < nn; ++i) {
        if (!active.active(i)) continue;
        const TreeOrderForce& f = out_tree[inv[i]];
        ax[i] = f.ax;
        ay[i] = f.ay;
        az[i] = f.az;
        pot[i] = f.pot;
      }
    }
  };
  if (n <= std::numeric_limits<std::uint32_t>::max())
    to_input_order(std::make_unique_for_overwrite<std::uint32_t[]>(n).get());
  else
    to_input_order(std::make_unique_for_overwrite<std::uint64_t[]>(n).get());
  return counts;
}

}  // namespace hoshi
