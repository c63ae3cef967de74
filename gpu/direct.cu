// Tiled shared-memory direct summation (Nyland, Harris & Prins, GPU Gems 3 ch. 31):
// one thread per target; each block stages `Block` sources as float4 (x, y, z, m) in shared
// memory, every thread accumulates the tile's interactions in registers through the shared
// HOSTDEV pair kernels (rsqrtf on the device), with the inner loop unrolled. Any N: the last
// tile is padded with zero-mass sources far away (kPadSource), which contribute exactly zero. For
// small N the source range is split across grid.y and direct_reduce_kernel sums the partial results
// (see gpu/launch_geometry.hpp). Two tile schedules, the same arithmetic in the same order (so
// bit-for-bit the same results): the classic one (load, barrier, sum, barrier) and a
// prefetching one (two tiles, the next tile's global load in flight while the current one is
// summed, one barrier per tile).
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpu/cuda_solvers.hpp"
#include "gpu/direct.cuh"

namespace hoshi::gpu {

namespace {

constexpr int kDirectBlock = 128;
constexpr int kUnroll = 16;
// A padding source: zero mass at 1e18, so that every term with it is finite and zero. (At the
// origin, which is the particles' median position, a target there met it at r = 0 unsoftened:
// 0 * rsqrt(0) is NaN.)
__device__ constexpr float4 kPadSource = {1e18f, 1e18f, 1e18f, 0.f};

// Finalisation shared by the one-split path and the reduction: G.
struct Finalize {
  float G;
  __device__ float4 operator()(float4 a) const {
    return make_float4(G * a.x, G * a.y, G * a.z, G * a.w);
  }
};

// kKind: the softening kernel; kSoft: eps > 0. The self-pair is masked out by index, and only
// in the block's diagonal tiles (the tiles holding its own targets: tiles start at multiples
// of Block, as split_range's ranges do): every other tile runs unmasked, 15 issue slots per
// Plummer pair instead of the 20 that a per-pair r^2 > 0 test cost without softening (SASS,
// sm_90; distinct particles never coincide: the solver checks, and two that round to one float
// position give a non-finite force, which it reports). Softened kernels included the self
// pair until 2026-11-30 and removed its potential -m/eps at the end, after it had rounded the
// float sums at its size. Each thread
// holds T targets, blockIdx.x * Block * T + u * Block + threadIdx.x for u < T (coalesced), and
// applies every tile source to all of them: one shared-memory load per T pair terms.
// kPrefetch: tile t goes to buffer t % 2, and the load of tile t + 1 is issued right after
// tile t's barrier, so its global (L2) latency hides behind tile t's sums instead of stalling
// the whole block between two barriers. One barrier per tile suffices: the store into buffer
// t % 2 comes after every thread passed tile t - 1's barrier, which follows its last read of
// that buffer (tile t - 2).
template <int Block, int T, Softening kKind, bool kSoft, bool kPrefetch>
__global__ void __launch_bounds__(Block)
    direct_forces_kernel(const float4* __restrict__ d_pos, std::int64_t n,
                         std::int64_t sources_per_split, SofteningParams<float> s, bool finalize,
                         Finalize fin, float4* __restrict__ d_out) {
  __shared__ float4 tiles[kPrefetch ? 2 : 1][Block];
  const std::int64_t tb = static_cast<std::int64_t>(blockIdx.x) * Block * T;  // its targets
  const std::int64_t base = tb + threadIdx.x;
  float4 t[T];
  float ax[T], ay[T], az[T], pot[T];
#pragma unroll
  for (int u = 0; u < T; ++u) {
    const std::int64_t i = base + u * Block;
    t[u] = i < n ? d_pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    ax[u] = ay[u] = az[u] = pot[u] = 0.f;
  }

  const SourceRange r = split_range(sources_per_split, n, blockIdx.y);
  const std::int64_t j_end = r.end;
  auto fetch = [&](std::int64_t j0) {
    const std::int64_t j = j0 + threadIdx.x;
    return j < j_end ? d_pos[j] : kPadSource;
  };
  float4 next = kPrefetch ? fetch(r.begin) : make_float4(0.f, 0.f, 0.f, 0.f);
  int buffer = 0;
  for (std::int64_t j0 = r.begin; j0 < j_end; j0 += Block) {
    if constexpr (!kPrefetch) next = fetch(j0);
    float4* const tile = tiles[buffer];
    tile[threadIdx.x] = next;
    __syncthreads();
    if constexpr (kPrefetch) {
      if (j0 + Block < j_end) next = fetch(j0 + Block);
      buffer ^= 1;
    }
    // kMasked: the tile may hold a target of this thread.
    auto sum_tile = [&](auto masked) {
      constexpr bool kMasked = decltype(masked)::value;
#pragma unroll kUnroll
      for (int k = 0; k < Block; ++k) {
        const float4 q = tile[k];
#pragma unroll
        for (int u = 0; u < T; ++u) {
          const float dx = q.x - t[u].x, dy = q.y - t[u].y, dz = q.z - t[u].z;
          // A constant true outside the diagonal tiles: no mask in the bulk loop.
          const bool valid = !kMasked || j0 + k != base + u * Block;
          if constexpr (kKind == Softening::plummer)
            plummer_pair(dx, dy, dz, q.w, kSoft ? s.eps2 : 0.f, valid, ax[u], ay[u], az[u], pot[u]);
          else  // softened spline (eps = 0 runs as Plummer)
            spline_pair(dx, dy, dz, q.w, s.h_inv, valid, ax[u], ay[u], az[u], pot[u]);
        }
      }
    };
    // Uniform over the block: the tile [j0, j0 + Block) meets its targets [tb, tb + Block T).
    if (j0 < tb + Block * T && j0 + Block > tb)
      sum_tile(std::true_type{});
    else
      sum_tile(std::false_type{});
    if constexpr (!kPrefetch) __syncthreads();
  }
#pragma unroll
  for (int u = 0; u < T; ++u) {
    const std::int64_t i = base + u * Block;
    if (i >= n) continue;
    const float4 a = make_float4(ax[u], ay[u], az[u], pot[u]);
    if (finalize)
      d_out[i] = fin(a);
    else
      d_out[static_cast<std::int64_t>(blockIdx.y) * n + i] = a;
  }
}

// Sums the `splits` partial results of each target in split order, then finalises.
__global__ void direct_reduce_kernel(const float4* __restrict__ d_partial, std::int64_t n,
                                     std::int64_t splits, Finalize fin,
                                     float4* __restrict__ d_out) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
  for (std::int64_t s = 0; s < splits; ++s) {
    const float4 p = d_partial[s * n + i];
    a.x += p.x;
    a.y += p.y;
    a.z += p.z;
    a.w += p.w;
  }
  d_out[i] = fin(a);
}

template <int T, Softening kKind, bool kSoft>
void launch_direct_t(const DirectGeometry& g, dim3 grid, const float4* d_pos, std::int64_t n,
                     const SofteningParams<float>& s, bool finalize, Finalize fin, float4* d_out,
                     bool prefetch, cudaStream_t stream) {
  if (prefetch)
    direct_forces_kernel<kDirectBlock, T, kKind, kSoft, true><<<grid, kDirectBlock, 0, stream>>>(
        d_pos, n, sources_per_split(g), s, finalize, fin, d_out);
  else
    direct_forces_kernel<kDirectBlock, T, kKind, kSoft, false><<<grid, kDirectBlock, 0, stream>>>(
        d_pos, n, sources_per_split(g), s, finalize, fin, d_out);
  HOSHI_CUDA_CHECK_LAUNCH();
}

template <Softening kKind, bool kSoft>
void launch_direct(const DirectGeometry& g, dim3 grid, const float4* d_pos, std::int64_t n,
                   const SofteningParams<float>& s, bool finalize, Finalize fin, float4* d_out,
                   bool prefetch, cudaStream_t stream) {
  if (g.targets_per_thread == 4)
    launch_direct_t<4, kKind, kSoft>(g, grid, d_pos, n, s, finalize, fin, d_out, prefetch, stream);
  else if (g.targets_per_thread == 2)
    launch_direct_t<2, kKind, kSoft>(g, grid, d_pos, n, s, finalize, fin, d_out, prefetch, stream);
  else
    launch_direct_t<1, kKind, kSoft>(g, grid, d_pos, n, s, finalize, fin, d_out, prefetch, stream);
}

// Two by default: 1.03-1.06x the one-target kernel for N = 2^12 .. 2^18 on an H200 (equal at
// 2^19, 0.98x at 2^20; docs/perf-gpu.md).
std::atomic<int> g_targets_per_thread{2};
// The classic tile schedule by default: the prefetching one is not yet timed on a device.
std::atomic<bool> g_prefetch{false};

}  // namespace

int direct_targets_per_thread() {
  return g_targets_per_thread.load();
}

bool direct_prefetch() {
  return g_prefetch.load();
}

void set_direct_prefetch(bool prefetch) {
  g_prefetch.store(prefetch);
}

void set_direct_targets_per_thread(int t) {
  if (t != 1 && t != 2 && t != 4)
    throw std::invalid_argument("direct kernel: targets per thread " + std::to_string(t) +
                                " (compiled for 1, 2 and 4)");
  g_targets_per_thread.store(t);
}

DirectGeometry direct_forces(const float4* d_pos, std::size_t n, Softening kernel, double eps,
                             double G, float4* d_out, DeviceBuffer<float4>& partial, int sm_count,
                             cudaStream_t stream, const DirectPolicy& policy_in) {
  DirectPolicy policy = policy_in;
  policy.block = kDirectBlock;  // the kernel is compiled for this tile size
  policy.targets_per_thread = direct_targets_per_thread();
  const DirectGeometry g = direct_geometry(n, n, sm_count, policy);
  if (g.splits == 0) return g;
  const auto s = SofteningParams<float>::make(kernel, eps);
  const bool soft = eps > 0;
  Finalize fin{static_cast<float>(G)};
  const bool finalize = g.splits == 1;
  float4* out = d_out;
  if (!finalize) {
    partial.resize(g.splits * n);
    out = partial.data();
  }
  const dim3 grid(static_cast<unsigned>(g.blocks_x), static_cast<unsigned>(g.splits));
  const std::int64_t nn = static_cast<std::int64_t>(n);
  const bool prefetch = direct_prefetch();
  if (s.kind == Softening::spline)
    launch_direct<Softening::spline, true>(g, grid, d_pos, nn, s, finalize, fin, out, prefetch,
                                           stream);
  else if (soft)
    launch_direct<Softening::plummer, true>(g, grid, d_pos, nn, s, finalize, fin, out, prefetch,
                                            stream);
  else
    launch_direct<Softening::plummer, false>(g, grid, d_pos, nn, s, finalize, fin, out, prefetch,
                                             stream);
  if (!finalize) {
    const int block = 256;
    direct_reduce_kernel<<<static_cast<unsigned>(elementwise_blocks(n, block)), block, 0, stream>>>(
        partial.data(), nn, static_cast<std::int64_t>(g.splits), fin, d_out);
    HOSHI_CUDA_CHECK_LAUNCH();
  }
  return g;
}

}  // namespace hoshi::gpu
