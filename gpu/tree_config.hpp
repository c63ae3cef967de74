// Walk settings of the CUDA tree solvers, taken from a SolverConfig exactly as the CPU tree
// solver takes them (tree/tree_solver.cpp, tree/tree_walk.cpp), so that the CPU per-particle
// walk and the CUDA walk see the same parameters. Plain C++.
#pragma once

#include "solver/solver.hpp"
#include "tree/walk_particle.hpp"

namespace hoshi::gpu {

// The relative criterion needs the previous accelerations; on a first call (all zero) the
// CPU solver walks with barnes94 at the same theta, and so do the CUDA solvers.
inline Criterion criterion_for_call(const SolverConfig& c, bool have_old_acceleration) {
  if (c.tree.criterion == Criterion::relative && !have_old_acceleration) return Criterion::barnes94;
  return c.tree.criterion;
}

// Mirrors walk_params() of tree/tree_walk.cpp: cells always take the Plummer form, unsoftened
// with the spline kernel (multipole.hpp).
inline WalkParams<float> walk_params_for(const SolverConfig& c, Criterion used) {
  WalkParams<float> w;
  w.criterion = used;
  w.order = c.tree.order;
  w.soft = SofteningParams<float>::make(c.softening, c.eps);
  w.cell_eps2 = w.soft.kind == Softening::plummer ? static_cast<float>(c.eps * c.eps) : 0.0f;
  return w;
}

}  // namespace hoshi::gpu
