// Walk settings of the CUDA tree solvers, taken from a SolverConfig exactly as the CPU tree
// solver takes them (tree/tree_solver.cpp, tree/tree_walk.cpp), so that the CPU per-particle
// walk and the CUDA walk see the same parameters. Plain C++.
#pragma once

#include "solver/solver.hpp"
#include "tree/tree_solver.hpp"
#include "tree/walk_particle.hpp"

namespace hoshi::gpu {

// The walk parameters of tree/walk_particle.hpp for this configuration and criterion.
inline WalkParams<float> walk_params_for(const SolverConfig& c, Criterion used) {
  return make_walk_params<float>(used, c.tree.order, c.softening, c.eps);
}

}  // namespace hoshi::gpu
