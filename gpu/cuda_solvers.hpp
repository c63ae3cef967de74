// The CUDA force solvers behind the GravitySolver interface (plain C++ header; the
// implementations are in gpu/*.cu). make_solver (src/solver/solver.cpp) returns these for
// --backend cuda, and for --backend auto when a device is present.
#pragma once

#include <memory>
#include <string>

#include "solver/solver.hpp"

namespace hoshi::gpu {

// Tiled shared-memory direct summation in float32 (gpu/direct.cu). Positions are taken
// relative to the particles' median position in double before rounding to float. ForceStats phases:
// "upload" (host conversion to float4 + copy), "direct" (kernel, CUDA events), "download".
// Throws std::invalid_argument when no CUDA device is present.
std::unique_ptr<GravitySolver> make_cuda_direct_solver(const SolverConfig& config);

// Host-built octree uploaded to the device and walked per particle, or a warp per group with
// --walk group (gpu/tree_walk.cu).
// ForceStats phases: "keys", "sort", "build" (host tree build, as the CPU solver reports
// them), "upload", "walk" (kernel, CUDA events), "download".
std::unique_ptr<GravitySolver> make_cuda_tree_solver(const SolverConfig& config);

// Targets per thread of the direct kernel (1, 2 or 4; process-wide, default 2; gpu/direct.cu):
// every direct evaluation on the device uses it. set_ throws std::invalid_argument otherwise.
// Four (one shared-memory load per four pair terms, 64-68 registers) is not yet timed.
int direct_targets_per_thread();
void set_direct_targets_per_thread(int targets);

// The direct kernel's tile schedule (process-wide, default false; gpu/direct.cu): true loads
// the next source tile while summing the current one (two shared-memory tiles, one barrier
// per tile instead of two); same arithmetic in the same order, so bit-for-bit the same
// results. Not yet timed on a device.
bool direct_prefetch();
void set_direct_prefetch(bool prefetch);

// The CUDA group mode's kernel (process-wide, gpu/tree_walk.cu; the interaction sets are the
// same, the rounding differs): lanes, every lane of a group's warp walking the group's box in
// double (tree/walk_box.hpp; measured on an H200, the default); lists, the warp testing 32
// nodes at a time and summing the accepted cells and leaves from shared-memory tiles in float
// relative to the box centre (tree/walk_warp.hpp, as Bonsai does; not yet timed on a device);
// lists7 and lists8, the lists kernel compiled for 7 and 8 resident blocks of 128 threads per
// SM (fewer registers, some spilled: more warps against spill traffic; blocks of at most 128).
enum class GroupWalkKernel { lanes, lists, lists7, lists8 };
GroupWalkKernel group_walk_kernel();
void set_group_walk_kernel(GroupWalkKernel kernel);
// Resident blocks of 128 threads per SM of the current device for each group-mode kernel, with
// its shared memory (cudaOccupancyMaxActiveBlocksPerMultiprocessor), as one line:
// "lanes 7, lists 6, lists7 7, lists8 8" (the variants' point; fewer where the shared memory
// the driver grants limits them).
std::string group_walk_occupancy();

// Throws std::invalid_argument naming the reason when the CUDA backend cannot run here.
void require_device(const char* what);

}  // namespace hoshi::gpu
