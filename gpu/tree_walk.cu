#include <limits>
#include <stdexcept>
#include <string>

#include "gpu/launch_geometry.hpp"
#include "gpu/tree_walk.cuh"

namespace hoshi::gpu {

namespace {

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
  // Interaction counts: warp sums, one atomic per warp.
  for (int o = 16; o > 0; o /= 2) {
    pp += __shfl_down_sync(0xffffffffu, pp, o);
    pc += __shfl_down_sync(0xffffffffu, pc, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&d_counts[0], pp);
    atomicAdd(&d_counts[1], pc);
  }
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
  view_ = t;
  view_.nodes = nodes_.data();
  view_.x = x_.data();
  view_.y = y_.data();
  view_.z = z_.data();
  view_.m = m_.data();
}

InteractionCounts tree_walk(const TreeView& d_view, const WalkParams<float>& w,
                            const float* d_alpha_a, double G, const std::uint32_t* d_order,
                            float4* d_out, DeviceBuffer<unsigned long long>& counters,
                            cudaStream_t stream, const TreePolicy& policy) {
  InteractionCounts c;
  const std::size_t n = d_view.n_particles;
  if (n == 0 || d_view.n_nodes == 0) return c;
  counters.resize(2);
  HOSHI_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, 2 * sizeof(unsigned long long), stream));
  // The counters' warp sums need whole warps.
  if (policy.block <= 0 || policy.block % 32 != 0 || policy.block > 1024)
    throw std::invalid_argument("tree_walk: block size " + std::to_string(policy.block) +
                                " is not a multiple of 32 in [32, 1024]");
  const std::size_t blocks = elementwise_blocks(n, policy.block);
  if (blocks > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument("tree_walk: too many particles for one launch");
  tree_walk_kernel<<<static_cast<unsigned>(blocks), policy.block, 0, stream>>>(
      d_view, w, d_alpha_a, static_cast<float>(G), d_order, d_out, counters.data());
  HOSHI_CUDA_CHECK_LAUNCH();
  unsigned long long h[2];
  counters.download(h, 2, stream);
  c.pp = h[0];
  c.pc = h[1];
  return c;
}

}  // namespace hoshi::gpu
