// TreeSolver: the CPU octree solver behind --solver tree --backend cpu.
//
// compute(): build the tree (keys, sort, permute, build, moments), then the group walk
// (default) or the per-particle walk, results written in the caller's particle order.
//
// Relative criterion (Gadget-2): it needs |a_old|, the acceleration of the previous
// evaluation, read from the ParticleSet's ax, ay, az. When these are all zero (a first call),
// compute() bootstraps: one pass with barnes94 at the same theta (as Gadget-2 uses a geometric
// criterion for its first force computation), then the relative pass with those accelerations,
// so every result, the first included, has the relative criterion's errors (a run's energy at
// t = 0 has the same potential error as later, and no step appears in its energy error).
//
// compute_active(): the same tree of every particle, walked only for the targets (particles or
// groups) that hold an active one; a first relative call (no |a_old|) computes every particle.
//
// Zero softening: two distinct particles at one point have an infinite force. They have the
// same Morton key, so they are adjacent in the sorted order; compute() finds them in O(N)
// and throws std::invalid_argument naming their ids.
#pragma once

#include <string>
#include <vector>

#include "solver/solver.hpp"
#include "tree/octree.hpp"
#include "tree/tree_walk.hpp"

namespace hoshi {

class TreeSolver final : public GravitySolver {
 public:
  explicit TreeSolver(const SolverConfig& config);
  ForceStats compute(ParticleSet& p) override;
  ForceStats compute_active(ParticleSet& p, const std::vector<std::uint8_t>& active) override;
  std::string name() const override { return "tree"; }
  std::string backend() const override { return "cpu"; }

  // The tree of the last compute() (for tests and diagnostics).
  const Octree& tree() const { return tree_; }
  // The criterion of the last compute()'s result.
  Criterion criterion_used() const { return criterion_used_; }

 private:
  // active: per particle, nonzero to walk it (nullptr: every particle).
  ForceStats compute_once(ParticleSet& p, const std::vector<std::uint8_t>* active = nullptr);
  SolverConfig c_;
  Octree tree_;
  Criterion criterion_used_ = Criterion::barnes94;
};

// The criterion one evaluation uses: the configured one, except that the relative criterion
// needs |a_old|, so with `have_old_acceleration` false (a first call) it is barnes94 at the same
// theta. Shared by the CPU and CUDA tree solvers.
inline Criterion criterion_for_call(const SolverConfig& c, bool have_old_acceleration) {
  if (c.tree.criterion == Criterion::relative && !have_old_acceleration) return Criterion::barnes94;
  return c.tree.criterion;
}

// Whether p holds accelerations of a previous evaluation (any non-zero component).
bool has_accelerations(const ParticleSet& p);

// One evaluation of a tree solver, `once(p)`, with the relative criterion's bootstrap (see
// TreeSolver): without previous accelerations it runs twice, barnes94 then relative; the stats
// are the second pass's interactions with the phase times of both. Shared by the CPU and CUDA
// tree solvers.
template <class Once>
ForceStats compute_with_bootstrap(const SolverConfig& c, ParticleSet& p, Once&& once) {
  if (c.tree.criterion != Criterion::relative || has_accelerations(p) || p.size() == 0)
    return once(p);
  const ForceStats first = once(p);
  ForceStats st = once(p);
  for (const auto& [phase, s] : first.seconds) st.seconds[phase] += s;
  st.total_seconds += first.total_seconds;
  return st;
}

// The host tree build of one evaluation with criterion `used` (keys, sort, permute, build,
// moments; phases added to `times`), plus the zero-softening check for coincident particles.
// Shared by the CPU and CUDA tree solvers.
void build_tree_for(const SolverConfig& c, Criterion used, const ParticleSet& p, Octree& tree,
                    PhaseTimes& times);

// The CPU walks' settings for configuration c and the criterion of this evaluation.
TreeWalkConfig walk_config_for(const SolverConfig& c, Criterion used);

// The relative criterion's per-target threshold alpha |a_old| / G in tree (sorted) order.
std::vector<float> relative_alpha(const SolverConfig& c, const Octree& tree, const ParticleSet& p);

// Throws std::invalid_argument naming the ids of two distinct particles at the same position,
// if the sorted tree holds any (they share a Morton key, so they are adjacent).
void require_no_coincident(const Octree& tree, const ParticleSet& p);
// The same over n sorted keys and positions held elsewhere (the device stepper's pinned copies);
// index[k] is sorted particle k's position in the unsorted set, whose ids are `ids`. Index:
// std::uint32_t or std::uint64_t.
template <class Index>
void require_no_coincident(const std::uint64_t* keys, const Index* index, const double* x,
                           const double* y, const double* z, std::size_t n,
                           const std::uint64_t* ids);

}  // namespace hoshi
