#include <math_constants.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "gpu/cub_ops.cuh"
#include "gpu/launch_geometry.hpp"
#include "gpu/tree_walk.cuh"
#include "tree/tree_walk.hpp"
#include "tree/walk_warp.hpp"

namespace hoshi::gpu {

namespace {

// Interaction counts: warp sums, one atomic per warp. Every lane of the warp calls it.
__device__ inline void add_counts(unsigned long long pp, unsigned long long pc,
                                  unsigned long long* d_counts) {
  for (int o = 16; o > 0; o /= 2) {
    pp += __shfl_down_sync(0xffffffffu, pp, o);
    pc += __shfl_down_sync(0xffffffffu, pc, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&d_counts[0], pp);
    atomicAdd(&d_counts[1], pc);
  }
}

__global__ void tree_walk_kernel(TreeView t, WalkParams<float> w,
                                 const float* __restrict__ d_alpha_a, float G,
                                 const std::uint32_t* __restrict__ d_order,
                                 float4* __restrict__ d_out,
                                 unsigned long long* __restrict__ d_counts) {
  const std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long pp = 0, pc = 0;
  if (k < t.n_particles) {
    const float alpha_a = d_alpha_a ? d_alpha_a[k] : 0.f;
    const ParticleForce<float> f = walk_particle<float>(t, k, t.x[k], t.y[k], t.z[k], w, alpha_a);
    const std::uint64_t i = d_order ? d_order[k] : k;
    d_out[i] = make_float4(G * f.ax, G * f.ay, G * f.az, G * f.pot);
    pp = f.pp;
    pc = f.pc;
  }
  add_counts(pp, pc, d_counts);
}

// The group's bounding box and smallest alpha_a, formed by the warp with shuffles (min and max
// are exact, so the box is the host's group_box bit for bit). Every lane of the warp calls it.
__device__ inline void warp_group_box(const TreeView& t, const Group& g,
                                      const float* __restrict__ d_alpha_a, unsigned lane,
                                      GroupBox& box, double& alpha_a) {
  double lo_x = CUDART_INF, lo_y = CUDART_INF, lo_z = CUDART_INF;
  double hi_x = -CUDART_INF, hi_y = -CUDART_INF, hi_z = -CUDART_INF;
  float aa = CUDART_INF_F;
  for (std::uint64_t k = g.begin + lane; k < g.end; k += 32) {
    lo_x = fmin(lo_x, t.x[k]);
    lo_y = fmin(lo_y, t.y[k]);
    lo_z = fmin(lo_z, t.z[k]);
    hi_x = fmax(hi_x, t.x[k]);
    hi_y = fmax(hi_y, t.y[k]);
    hi_z = fmax(hi_z, t.z[k]);
    if (d_alpha_a) aa = fminf(aa, d_alpha_a[k]);
  }
  for (int o = 16; o > 0; o /= 2) {
    lo_x = fmin(lo_x, __shfl_xor_sync(0xffffffffu, lo_x, o));
    lo_y = fmin(lo_y, __shfl_xor_sync(0xffffffffu, lo_y, o));
    lo_z = fmin(lo_z, __shfl_xor_sync(0xffffffffu, lo_z, o));
    hi_x = fmax(hi_x, __shfl_xor_sync(0xffffffffu, hi_x, o));
    hi_y = fmax(hi_y, __shfl_xor_sync(0xffffffffu, hi_y, o));
    hi_z = fmax(hi_z, __shfl_xor_sync(0xffffffffu, hi_z, o));
    aa = fminf(aa, __shfl_xor_sync(0xffffffffu, aa, o));
  }
  box = box_from_corners(lo_x, lo_y, lo_z, hi_x, hi_y, hi_z);
  alpha_a = d_alpha_a ? static_cast<double>(aa) : 0.0;
}

// The group mode, lanes kernel: a warp per group (make_groups with kCudaGroupSize; a group of
// any size is taken 32 targets at a time). Every lane walks the box's path (walk_box.hpp) for
// its targets: the path depends on the box only, so the lanes never diverge in the walk.
__global__ void tree_walk_groups_kernel(TreeView t, const Group* __restrict__ groups,
                                        const std::uint32_t* __restrict__ group_order,
                                        std::uint64_t n_groups, WalkParams<float> w,
                                        const float* __restrict__ d_alpha_a, float G,
                                        const std::uint32_t* __restrict__ d_order,
                                        float4* __restrict__ d_out,
                                        unsigned long long* __restrict__ d_counts) {
  const std::uint64_t warp =
      (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x & 31u;
  unsigned long long pp = 0, pc = 0;
  if (warp < n_groups) {  // the same for every lane of the warp
    const Group g = groups[group_order ? group_order[warp] : warp];
    GroupBox box;
    double alpha_a;
    warp_group_box(t, g, d_alpha_a, lane, box, alpha_a);
    for (std::uint64_t k = g.begin + lane; k < g.end; k += 32) {
      const ParticleForce<float> f =
          walk_box_target<float>(t, box, alpha_a, k, t.x[k], t.y[k], t.z[k], w);
      const std::uint64_t i = d_order ? d_order[k] : k;
      d_out[i] = make_float4(G * f.ax, G * f.ay, G * f.az, G * f.pot);
      pp += f.pp;
      pc += f.pc;
    }
  }
  add_counts(pp, pc, d_counts);
}

// The warp policy of tree/walk_warp.hpp on the device: a Var is the lane's own register, the
// collectives are shuffles.
struct DeviceWarp {
  unsigned lane;
  template <class T>
  struct Var {
    T v;
    __device__ T& operator[](int) { return v; }
    __device__ const T& operator[](int) const { return v; }
  };
  template <class F>
  __device__ void each(F&& f) {
    f(static_cast<int>(lane));
  }
  __device__ void sync() { __syncwarp(); }
  __device__ Var<std::uint32_t> exclusive_sum(const Var<std::uint32_t>& v, std::uint32_t& total) {
    std::uint32_t x = v.v;
    for (int o = 1; o < 32; o *= 2) {
      const std::uint32_t y = __shfl_up_sync(0xffffffffu, x, o);
      if (lane >= static_cast<unsigned>(o)) x += y;
    }
    total = __shfl_sync(0xffffffffu, x, 31);
    return {x - v.v};
  }
  template <class T>
  __device__ Var<T> gather(const Var<T>& v, const Var<int>& src) {
    return {__shfl_sync(0xffffffffu, v.v, src.v)};
  }
  __device__ std::uint32_t or_all(const Var<std::uint32_t>& v) {
#if __CUDA_ARCH__ >= 800
    return __reduce_or_sync(0xffffffffu, v.v);
#else
    std::uint32_t x = v.v;
    for (int o = 16; o > 0; o /= 2) x |= __shfl_xor_sync(0xffffffffu, x, o);
    return x;
#endif
  }
};

// The group mode, lists kernel (tree/walk_warp.hpp): a warp per group as above, the warp
// testing 32 nodes at a time and summing the accepted cells and opened leaves' particles from
// shared-memory tiles (blockDim.x / 32 WarpScratch of dynamic shared memory). The stack cannot
// run out (walk_warp.hpp, kStackHeadroom), so there is no fallback walk here (it cost 10
// registers, 90 against 80); a walk that ran out anyway is counted in d_counts[2] and the
// launcher throws. The body of the three kernels below.
__device__ __forceinline__ void lists_walk(const TreeView& t, const NodeChildren* __restrict__ kids,
                                           const Group* __restrict__ groups,
                                           const std::uint32_t* __restrict__ group_order,
                                           std::uint64_t n_groups, const WalkParams<float>& w,
                                           const float* __restrict__ d_alpha_a, float G,
                                           const std::uint32_t* __restrict__ d_order,
                                           float4* __restrict__ d_out,
                                           unsigned long long* __restrict__ d_counts) {
  extern __shared__ __align__(16) unsigned char smem[];
  WarpScratch& scratch = reinterpret_cast<WarpScratch*>(smem)[threadIdx.x / 32];
  const std::uint64_t warp =
      (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  DeviceWarp dw{threadIdx.x & 31u};
  unsigned long long pp = 0, pc = 0;
  if (warp < n_groups) {  // the same for every lane of the warp
    const Group g = groups[group_order ? group_order[warp] : warp];
    GroupBox box;
    double alpha_a;
    warp_group_box(t, g, d_alpha_a, dw.lane, box, alpha_a);
    for (std::uint64_t k0 = g.begin; k0 < g.end; k0 += 32) {
      DeviceWarp::Var<LaneTarget> tg{lane_target(t, box, g.begin, k0, g.end, dw.lane)};
      if (!walk_group_warp(dw, t, kids, box, w.criterion, alpha_a, w, g.begin, k0, scratch,
                           kWarpStack, tg)) {
        // Unreachable (kWarpStack is above the headroom, which depth-first descents cannot
        // exceed: tree/walk_warp.hpp); counted, and the launcher throws.
        if (dw.lane == 0) atomicAdd(&d_counts[2], 1ull);
        continue;
      }
      const std::uint64_t k = k0 + dw.lane;
      if (k < g.end) {
        const std::uint64_t i = d_order ? d_order[k] : k;
        const ParticleForce<float>& f = tg.v.f;
        d_out[i] = make_float4(G * f.ax, G * f.ay, G * f.az, G * f.pot);
        pp += f.pp;
        pc += f.pc;
      }
    }
  }
  add_counts(pp, pc, d_counts);
}

#define HOSHI_LISTS_KERNEL_PARAMS                                                                 \
  TreeView t, const NodeChildren *__restrict__ kids, const Group *__restrict__ groups,            \
      const std::uint32_t *__restrict__ group_order, std::uint64_t n_groups, WalkParams<float> w, \
      const float *__restrict__ d_alpha_a, float G, const std::uint32_t *__restrict__ d_order,    \
      float4 *__restrict__ d_out, unsigned long long *__restrict__ d_counts
#define HOSHI_LISTS_KERNEL_ARGS \
  t, kids, groups, group_order, n_groups, w, d_alpha_a, G, d_order, d_out, d_counts

// GroupWalkKernel::lists: as the compiler allocates (80 registers, no spills, 6 blocks of 128
// threads per SM with the 24.5 KB of scratch per block).
__global__ void tree_walk_lists_kernel(HOSHI_LISTS_KERNEL_PARAMS) {
  lists_walk(HOSHI_LISTS_KERNEL_ARGS);
}
// GroupWalkKernel::lists7 / lists8: the same code compiled for 7 / 8 resident blocks of at most
// kListsOccupancyBlock threads per SM (72 / 64 registers, with spills): more warps to hide the
// walk's latencies, against spill traffic; which wins only the device can say.
constexpr int kListsOccupancyBlock = 128;
__global__ void __launch_bounds__(kListsOccupancyBlock, 7)
    tree_walk_lists7_kernel(HOSHI_LISTS_KERNEL_PARAMS) {
  lists_walk(HOSHI_LISTS_KERNEL_ARGS);
}
__global__ void __launch_bounds__(kListsOccupancyBlock, 8)
    tree_walk_lists8_kernel(HOSHI_LISTS_KERNEL_PARAMS) {
  lists_walk(HOSHI_LISTS_KERNEL_ARGS);
}
#undef HOSHI_LISTS_KERNEL_PARAMS
#undef HOSHI_LISTS_KERNEL_ARGS

// The child table of the lists kernel (tree/walk_warp.hpp): element i = node i's children.
__global__ void node_children_kernel(const TreeNode* __restrict__ nodes, std::uint32_t n_nodes,
                                     NodeChildren* __restrict__ kids) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n_nodes) kids[i] = node_children(nodes, static_cast<std::uint32_t>(i));
}

// The group mode's schedule key: the smallest alpha |a_old| of each group (the float's bits:
// a non-negative float orders as its bits do), and the identity as the values to sort.
__global__ void group_alpha_keys_kernel(const Group* __restrict__ groups, std::uint64_t n_groups,
                                        const float* __restrict__ d_alpha,
                                        std::uint64_t* __restrict__ keys,
                                        std::uint32_t* __restrict__ index) {
  const std::uint64_t g = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= n_groups) return;
  float a = CUDART_INF_F;
  for (std::uint64_t k = groups[g].begin; k < groups[g].end; ++k) a = fminf(a, d_alpha[k]);
  keys[g] = __float_as_uint(fmaxf(a, 0.0f));
  index[g] = static_cast<std::uint32_t>(g);
}

// keys[g] = g + n (every group after the hoisted ones, in particle order), then keys[g] = g for
// the groups in the first `hoist` places of by_alpha: sorting by these keys puts the hoisted
// groups first, each class in particle (Morton) order.
__global__ void schedule_rest_keys_kernel(std::uint64_t n_groups,
                                          std::uint64_t* __restrict__ keys) {
  const std::uint64_t g = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < n_groups) keys[g] = g + n_groups;
}
__global__ void schedule_hoist_keys_kernel(const std::uint32_t* __restrict__ by_alpha,
                                           std::uint64_t hoist, std::uint64_t* __restrict__ keys) {
  const std::uint64_t r = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < hoist) keys[by_alpha[r]] = by_alpha[r];
}

}  // namespace

void DeviceTree::upload(const TreeView& t, cudaStream_t stream) {
  upload_nodes(t, stream);
  const std::size_t n = t.n_particles;
  x_.upload(t.x, n, stream);
  y_.upload(t.y, n, stream);
  z_.upload(t.z, n, stream);
  m_.upload(t.m, n, stream);
  view_.x = x_.data();
  view_.y = y_.data();
  view_.z = z_.data();
  view_.m = m_.data();
}

void DeviceTree::upload_nodes(const TreeView& t, cudaStream_t stream) {
  nodes_.upload(t.nodes, t.n_nodes, stream);
  children_.resize(t.n_nodes);
  if (t.n_nodes > 0) {
    node_children_kernel<<<static_cast<unsigned>(elementwise_blocks(t.n_nodes, 256)), 256, 0,
                           stream>>>(nodes_.data(), t.n_nodes, children_.data());
    HOSHI_CUDA_CHECK_LAUNCH();
  }
  view_ = t;
  view_.nodes = nodes_.data();
  view_.x = x_.data();
  view_.y = y_.data();
  view_.z = z_.data();
  view_.m = m_.data();
}

namespace {

// Zeroes the three counters (p-p terms, p-c terms, the lists kernel's walks that ran out of
// stack), runs launch(blocks, d_counts) (one kernel launch on `stream` over `threads` threads
// in blocks of policy.block), checks it and returns the counts; std::logic_error if a walk ran
// out of stack.
template <class Launch>
InteractionCounts counted_launch(std::size_t threads, const TreePolicy& policy, const char* what,
                                 DeviceBuffer<unsigned long long>& counters, cudaStream_t stream,
                                 Launch&& launch) {
  // The counters' warp sums (and the group mode's warps) need whole warps.
  if (policy.block <= 0 || policy.block % 32 != 0 || policy.block > 1024)
    throw std::invalid_argument(std::string(what) + ": block size " + std::to_string(policy.block) +
                                " is not a multiple of 32 in [32, 1024]");
  const std::size_t blocks = elementwise_blocks(threads, policy.block);
  if (blocks > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument(std::string(what) + ": too many threads for one launch");
  counters.resize(3);  // pp, pc, and the lists kernel's walks that ran out of stack
  HOSHI_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, 3 * sizeof(unsigned long long), stream));
  launch(static_cast<unsigned>(blocks), counters.data());
  HOSHI_CUDA_CHECK_LAUNCH();
  unsigned long long h[3];
  counters.download(h, 3, stream);
  if (h[2] != 0)
    throw std::logic_error(std::string(what) + ": " + std::to_string(h[2]) +
                           " warp walk(s) ran out of stack (kWarpStack); this is a bug");
  return {h[0], h[1]};
}

// The block size must fit the kernel's registers (and __launch_bounds__): a 1024-thread block of
// the ~72-register group kernels exceeds an SM's 64K registers and fails to launch.
template <class Kernel>
void require_block_fits(Kernel* kernel, int block, const char* what) {
  cudaFuncAttributes a{};
  HOSHI_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  if (block > a.maxThreadsPerBlock)
    throw std::invalid_argument(std::string(what) + ": blocks of " + std::to_string(block) +
                                " threads; this kernel launches at most " +
                                std::to_string(a.maxThreadsPerBlock));
}

// The lists kernels hold 6 KB of scratch per warp in shared memory (`dynamic_bytes` per block):
// 7 or 8 resident blocks of 128 threads need ~180-205 KB of an SM's 228 KB. Asks for the
// smallest shared-memory carveout that holds as many blocks as the registers allow (7 and 8 for
// lists7 and lists8, ~6 for lists), so that the driver's split of the L1/shared array does not
// quietly run fewer blocks, and the rest of the array stays L1, through which the walk reads its
// 128-B nodes, child tables and particles (the largest carveout, asked for until 2026-12-03, left
// 28 KB of L1 to every lists kernel, 6-block lists included, which needs ~153 KB of shared memory:
// a handicap against the lanes kernel, which keeps the default split, that had nothing to do
// with the algorithms being compared).
void prefer_shared_memory(const void* kernel, int block, std::size_t dynamic_bytes) {
  int device = 0, max_shared = 0, reserved = 0, by_registers = 0;
  HOSHI_CUDA_CHECK(cudaGetDevice(&device));
  HOSHI_CUDA_CHECK(
      cudaDeviceGetAttribute(&max_shared, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  HOSHI_CUDA_CHECK(
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  cudaFuncAttributes a{};
  HOSHI_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  // The blocks that registers and threads allow: counted with the largest carveout, so that an
  // earlier call's smaller one does not limit the count.
  HOSHI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
  HOSHI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&by_registers, kernel, block, 0));
  if (max_shared <= 0 || by_registers <= 0) return;  // the largest, as set
  const double need = static_cast<double>(by_registers) *
                      static_cast<double>(dynamic_bytes + a.sharedSizeBytes + reserved);
  const int percent = std::clamp(static_cast<int>(std::ceil(100.0 * need / max_shared)), 1, 100);
  HOSHI_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, percent));
}

}  // namespace

InteractionCounts tree_walk(const TreeView& d_view, const WalkParams<float>& w,
                            const float* d_alpha_a, double G, const std::uint32_t* d_order,
                            float4* d_out, DeviceBuffer<unsigned long long>& counters,
                            cudaStream_t stream, const TreePolicy& policy) {
  if (d_view.n_particles == 0 || d_view.n_nodes == 0) return {};
  return counted_launch(d_view.n_particles, policy, "tree_walk", counters, stream,
                        [&](unsigned blocks, unsigned long long* d_counts) {
                          require_block_fits(tree_walk_kernel, policy.block, "tree_walk");
                          tree_walk_kernel<<<blocks, policy.block, 0, stream>>>(
                              d_view, w, d_alpha_a, static_cast<float>(G), d_order, d_out,
                              d_counts);
                        });
}

void GroupSchedule::order_by_alpha(const Group* d_groups, std::size_t n_groups,
                                   const float* d_alpha, cudaStream_t stream) {
  if (n_groups > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("GroupSchedule: too many groups");
  keys_.resize(n_groups);
  keys_sorted_.resize(n_groups);
  index_.resize(n_groups);
  by_alpha_.resize(n_groups);
  order_.resize(n_groups);
  if (n_groups == 0) return;
  const unsigned blocks = static_cast<unsigned>(elementwise_blocks(n_groups, 256));
  group_alpha_keys_kernel<<<blocks, 256, 0, stream>>>(d_groups, n_groups, d_alpha, keys_.data(),
                                                      index_.data());
  HOSHI_CUDA_CHECK_LAUNCH();
  sort_pairs(keys_.data(), keys_sorted_.data(), index_.data(), by_alpha_.data(), n_groups, temp_,
             stream, 32);
  // Only the costliest 1/32 go first; the rest keep the particle order, whose neighbouring
  // groups share nodes in the caches (a full sort by alpha made the walk 1.2-1.3x slower from
  // 2^21 particles, where the nodes outgrow the L2 cache).
  const std::uint64_t hoist = std::max<std::uint64_t>(1, n_groups / 32);
  schedule_rest_keys_kernel<<<blocks, 256, 0, stream>>>(n_groups, keys_.data());
  HOSHI_CUDA_CHECK_LAUNCH();
  schedule_hoist_keys_kernel<<<static_cast<unsigned>(elementwise_blocks(hoist, 256)), 256, 0,
                               stream>>>(by_alpha_.data(), hoist, keys_.data());
  HOSHI_CUDA_CHECK_LAUNCH();
  sort_pairs(keys_.data(), keys_sorted_.data(), index_.data(), order_.data(), n_groups, temp_,
             stream, 64 - __builtin_clzll(2 * n_groups));
}

InteractionCounts tree_walk_groups(const TreeView& d_view, const NodeChildren* d_kids,
                                   const Group* d_groups, std::size_t n_groups,
                                   const WalkParams<float>& w, const float* d_alpha, double G,
                                   const std::uint32_t* d_order, float4* d_out,
                                   DeviceBuffer<unsigned long long>& counters, cudaStream_t stream,
                                   const TreePolicy& policy, const std::uint32_t* d_group_order) {
  if (d_view.n_particles == 0 || d_view.n_nodes == 0 || n_groups == 0) return {};
  const GroupWalkKernel kernel = policy.group_kernel;
  const bool lists = kernel != GroupWalkKernel::lanes;
  if (lists && d_kids == nullptr)
    throw std::invalid_argument("tree_walk_groups: the lists kernel needs the child table");
  // The lists kernel's scratch, a WarpScratch per warp, within the 48 KB of shared memory a
  // block gets without opting in (blocks of up to 224 threads).
  if (lists && static_cast<std::size_t>(policy.block / 32) * sizeof(WarpScratch) > 48 * 1024)
    throw std::invalid_argument("tree_walk_groups: blocks of " + std::to_string(policy.block) +
                                " threads need more than 48 KB of shared memory for the lists "
                                "kernel (at most 224 threads)");
  if ((kernel == GroupWalkKernel::lists7 || kernel == GroupWalkKernel::lists8) &&
      policy.block > kListsOccupancyBlock)
    throw std::invalid_argument("tree_walk_groups: blocks of " + std::to_string(policy.block) +
                                " threads; the lists7 and lists8 kernels are built for at most " +
                                std::to_string(kListsOccupancyBlock));
  return counted_launch(
      n_groups * 32, policy, "tree_walk_groups", counters, stream,
      [&](unsigned blocks, unsigned long long* d_counts) {
        if (lists) {
          const std::size_t shared =
              static_cast<std::size_t>(policy.block / 32) * sizeof(WarpScratch);
          const auto launch = [&](auto* k) {
            require_block_fits(k, policy.block, "tree_walk_groups");
            prefer_shared_memory(reinterpret_cast<const void*>(k), policy.block, shared);
            k<<<blocks, policy.block, shared, stream>>>(d_view, d_kids, d_groups, d_group_order,
                                                        n_groups, w, d_alpha, static_cast<float>(G),
                                                        d_order, d_out, d_counts);
          };
          if (kernel == GroupWalkKernel::lists7)
            launch(tree_walk_lists7_kernel);
          else if (kernel == GroupWalkKernel::lists8)
            launch(tree_walk_lists8_kernel);
          else
            launch(tree_walk_lists_kernel);
        } else {
          require_block_fits(tree_walk_groups_kernel, policy.block, "tree_walk_groups");
          tree_walk_groups_kernel<<<blocks, policy.block, 0, stream>>>(
              d_view, d_groups, d_group_order, n_groups, w, d_alpha, static_cast<float>(G), d_order,
              d_out, d_counts);
        }
      });
}

namespace {
// The group mode's kernel (process-wide; docs/perf-gpu.md for why the default).
std::atomic<GroupWalkKernel> g_group_kernel{GroupWalkKernel::lanes};
}  // namespace

GroupWalkKernel group_walk_kernel() {
  return g_group_kernel.load();
}

void set_group_walk_kernel(GroupWalkKernel k) {
  g_group_kernel.store(k);
}

std::string group_walk_occupancy() {
  const int block = kListsOccupancyBlock;
  const std::size_t shared = static_cast<std::size_t>(block / 32) * sizeof(WarpScratch);
  const auto blocks = [&](const void* k, std::size_t bytes) {
    if (bytes > 0) prefer_shared_memory(k, block, bytes);  // as the launches set it
    int n = 0;
    HOSHI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, block, bytes));
    return std::to_string(n);
  };
  return "lanes " + blocks(reinterpret_cast<const void*>(tree_walk_groups_kernel), 0) + ", lists " +
         blocks(reinterpret_cast<const void*>(tree_walk_lists_kernel), shared) + ", lists7 " +
         blocks(reinterpret_cast<const void*>(tree_walk_lists7_kernel), shared) + ", lists8 " +
         blocks(reinterpret_cast<const void*>(tree_walk_lists8_kernel), shared);
}

void DeviceTree::upload_groups(const std::vector<TreeNode>& nodes, cudaStream_t stream) {
  h_groups_ = make_groups(nodes, kCudaGroupSize);
  groups_.upload(h_groups_.data(), h_groups_.size(), stream);
}

InteractionCounts DeviceTree::walk(WalkKind walk, const WalkParams<float>& w, const float* d_alpha,
                                   double G, const std::uint32_t* d_order, float4* d_out,
                                   DeviceBuffer<unsigned long long>& counters,
                                   cudaStream_t stream) const {
  if (walk == WalkKind::group) {
    // With the relative criterion a group's cost grows as its smallest alpha |a_old| falls
    // (near a potential minimum, |a| -> 0): up to 10x the mean at 2^20 (Plummer). Those
    // groups go first, so that their long walks overlap the rest instead of running alone at
    // the end (without this the SMs idled ~40% of the kernel's time on an H200).
    const std::uint32_t* order = nullptr;
    if (d_alpha) {
      schedule_.order_by_alpha(groups_.data(), h_groups_.size(), d_alpha, stream);
      order = schedule_.order();
    }
    TreePolicy policy;
    policy.group_kernel = group_walk_kernel();
    return tree_walk_groups(view_, children_.data(), groups_.data(), h_groups_.size(), w, d_alpha,
                            G, d_order, d_out, counters, stream, policy, order);
  }
  return tree_walk(view_, w, d_alpha, G, d_order, d_out, counters, stream);
}

}  // namespace hoshi::gpu
