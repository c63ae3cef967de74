// The CPU mirror of the CUDA group mode (--backend cuda --walk group), as a GravitySolver for
// the tests: the CPU solver's tree build (build_tree_for), the relative criterion's bootstrap
// and alpha |a_old| (compute_with_bootstrap, relative_alpha), then walk_tree_boxes with the
// device's groups (make_groups with kCudaGroupSize): every target walks its group's box
// (tree/walk_box.hpp, the function the kernel calls per lane). The CUDA group mode therefore
// sees the interaction sets of this solver and differs from it by rounding only. With
// `lists`, the mirror of the lists kernel instead (gpu::GroupWalkKernel::lists): walk_tree_warps,
// the same HOSTDEV warp walk (tree/walk_warp.hpp) with the lanes run one after the other.
#pragma once

#include <string>

#include "solver/solver.hpp"
#include "tree/tree_solver.hpp"
#include "tree/tree_walk.hpp"

namespace hoshi::testing_support {

class BoxMirrorSolver final : public GravitySolver {
 public:
  explicit BoxMirrorSolver(SolverConfig c, bool lists = false) : lists_(lists) {
    c.tree.walk = WalkKind::group;  // "auto" settings as for the CUDA group mode
    c.tree.walk_auto = false;
    c_ = resolve_auto(c, Backend::cuda);
    validate(c_);
  }
  ForceStats compute(ParticleSet& p) override {
    return compute_with_bootstrap(c_, p, [this](ParticleSet& q) { return compute_once(q); });
  }
  std::string name() const override { return "tree"; }
  std::string backend() const override { return "cpu"; }
  const Octree& tree() const { return tree_; }

 private:
  ForceStats compute_once(ParticleSet& p) {
    ForceStats st;
    const std::size_t n = p.size();
    p.ax.resize(n);
    p.ay.resize(n);
    p.az.resize(n);
    p.pot.resize(n);
    if (n == 0) return st;
    const Criterion used = criterion_for_call(c_, has_accelerations(p));
    build_tree_for(c_, used, p, tree_, st.seconds);
    std::vector<float> alpha_a;
    if (used == Criterion::relative) alpha_a = relative_alpha(c_, tree_, p);
    TreeWalkConfig wc = walk_config_for(c_, used);
    wc.n_group = kCudaGroupSize;  // the device's groups
    const float* aa = alpha_a.empty() ? nullptr : alpha_a.data();
    const WalkCounts counts =
        lists_
            ? walk_tree_warps(tree_, wc, aa, p.ax.data(), p.ay.data(), p.az.data(), p.pot.data())
            : walk_tree_boxes(tree_, wc, aa, p.ax.data(), p.ay.data(), p.az.data(), p.pot.data());
    st.seconds["walk"] = 0;
    st.pp = counts.pp;
    st.pc = counts.pc;
    st.criterion = used;
    st.total_seconds = 1e-9;
    return st;
  }

  SolverConfig c_;
  bool lists_;
  Octree tree_;
};

}  // namespace hoshi::testing_support
