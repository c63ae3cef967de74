#include <cmath>

#include "gpu/launch_geometry.hpp"
#include "gpu/stepper_kernels.cuh"
#include "tree/morton.hpp"

namespace hoshi::gpu {

namespace {

constexpr int kBlock = 256;

__global__ void to_local_float4_kernel(
    const double* __restrict__ d_x, const double* __restrict__ d_y, const double* __restrict__ d_z,
    const double* __restrict__ d_m, const std::uint32_t* __restrict__ d_order, std::int64_t n,
    double cx, double cy, double cz, float4* __restrict__ d_out) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const std::int64_t i = d_order ? static_cast<std::int64_t>(d_order[k]) : k;
  d_out[k] = make_float4(static_cast<float>(d_x[i] - cx), static_cast<float>(d_y[i] - cy),
                         static_cast<float>(d_z[i] - cz), static_cast<float>(d_m[i]));
}

__global__ void kick_kernel(double* __restrict__ d_vx, double* __restrict__ d_vy,
                            double* __restrict__ d_vz, const float4* __restrict__ d_acc,
                            std::int64_t n, double dt) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 a = d_acc[i];
  d_vx[i] += static_cast<double>(a.x) * dt;
  d_vy[i] += static_cast<double>(a.y) * dt;
  d_vz[i] += static_cast<double>(a.z) * dt;
}

__global__ void drift_kernel(double* __restrict__ d_x, double* __restrict__ d_y,
                             double* __restrict__ d_z, const double* __restrict__ d_vx,
                             const double* __restrict__ d_vy, const double* __restrict__ d_vz,
                             std::int64_t n, double dt) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  d_x[i] += d_vx[i] * dt;
  d_y[i] += d_vy[i] * dt;
  d_z[i] += d_vz[i] * dt;
}

__global__ void morton_keys_kernel(const double* __restrict__ d_x, const double* __restrict__ d_y,
                                   const double* __restrict__ d_z, std::int64_t n, double lo_x,
                                   double lo_y, double lo_z, double side,
                                   std::uint64_t* __restrict__ d_keys) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  d_keys[i] = morton_key(d_x[i], d_y[i], d_z[i], lo_x, lo_y, lo_z, side);
}

__global__ void iota_kernel(std::uint32_t* __restrict__ d_index, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) d_index[i] = static_cast<std::uint32_t>(i);
}

__global__ void gather_sorted_kernel(const double* __restrict__ d_x, const double* __restrict__ d_y,
                                     const double* __restrict__ d_z, const double* __restrict__ d_m,
                                     const std::uint32_t* __restrict__ d_order, std::int64_t n,
                                     double* __restrict__ d_xs, double* __restrict__ d_ys,
                                     double* __restrict__ d_zs, double* __restrict__ d_ms) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const std::uint32_t i = d_order[k];
  d_xs[k] = d_x[i];
  d_ys[k] = d_y[i];
  d_zs[k] = d_z[i];
  d_ms[k] = d_m[i];
}

__global__ void relative_alpha_kernel(const float4* __restrict__ d_acc,
                                      const std::uint32_t* __restrict__ d_order, std::int64_t n,
                                      double scale, float* __restrict__ d_alpha_a) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const float4 a = d_acc[d_order[k]];
  const double ax = a.x, ay = a.y, az = a.z;
  d_alpha_a[k] = static_cast<float>(scale * sqrt(ax * ax + ay * ay + az * az));
}

unsigned blocks(std::size_t n) {
  return static_cast<unsigned>(elementwise_blocks(n, kBlock));
}

}  // namespace

void to_local_float4(const double* d_x, const double* d_y, const double* d_z, const double* d_m,
                     std::size_t n, double cx, double cy, double cz, float4* d_out,
                     cudaStream_t stream) {
  gather_local_float4(d_x, d_y, d_z, d_m, nullptr, n, cx, cy, cz, d_out, stream);
}

void gather_local_float4(const double* d_x, const double* d_y, const double* d_z, const double* d_m,
                         const std::uint32_t* d_order, std::size_t n, double cx, double cy,
                         double cz, float4* d_out, cudaStream_t stream) {
  if (n == 0) return;
  to_local_float4_kernel<<<blocks(n), kBlock, 0, stream>>>(
      d_x, d_y, d_z, d_m, d_order, static_cast<std::int64_t>(n), cx, cy, cz, d_out);
  HOSHI_CUDA_CHECK_LAUNCH();
}

void kick(double* d_vx, double* d_vy, double* d_vz, const float4* d_acc, std::size_t n, double dt,
          cudaStream_t stream) {
  if (n == 0) return;
  kick_kernel<<<blocks(n), kBlock, 0, stream>>>(d_vx, d_vy, d_vz, d_acc,
                                                static_cast<std::int64_t>(n), dt);
  HOSHI_CUDA_CHECK_LAUNCH();
}

void drift(double* d_x, double* d_y, double* d_z, const double* d_vx, const double* d_vy,
           const double* d_vz, std::size_t n, double dt, cudaStream_t stream) {
  if (n == 0) return;
  drift_kernel<<<blocks(n), kBlock, 0, stream>>>(d_x, d_y, d_z, d_vx, d_vy, d_vz,
                                                 static_cast<std::int64_t>(n), dt);
  HOSHI_CUDA_CHECK_LAUNCH();
}

void morton_keys(const double* d_x, const double* d_y, const double* d_z, std::size_t n,
                 double lo_x, double lo_y, double lo_z, double side, std::uint64_t* d_keys,
                 cudaStream_t stream) {
  if (n == 0) return;
  morton_keys_kernel<<<blocks(n), kBlock, 0, stream>>>(d_x, d_y, d_z, static_cast<std::int64_t>(n),
                                                       lo_x, lo_y, lo_z, side, d_keys);
  HOSHI_CUDA_CHECK_LAUNCH();
}

void iota(std::uint32_t* d_index, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  iota_kernel<<<blocks(n), kBlock, 0, stream>>>(d_index, static_cast<std::int64_t>(n));
  HOSHI_CUDA_CHECK_LAUNCH();
}

void gather_sorted(const double* d_x, const double* d_y, const double* d_z, const double* d_m,
                   const std::uint32_t* d_order, std::size_t n, double* d_xs, double* d_ys,
                   double* d_zs, double* d_ms, cudaStream_t stream) {
  if (n == 0) return;
  gather_sorted_kernel<<<blocks(n), kBlock, 0, stream>>>(
      d_x, d_y, d_z, d_m, d_order, static_cast<std::int64_t>(n), d_xs, d_ys, d_zs, d_ms);
  HOSHI_CUDA_CHECK_LAUNCH();
}

void relative_alpha(const float4* d_acc, const std::uint32_t* d_order, std::size_t n, double scale,
                    float* d_alpha_a, cudaStream_t stream) {
  if (n == 0) return;
  relative_alpha_kernel<<<blocks(n), kBlock, 0, stream>>>(
      d_acc, d_order, static_cast<std::int64_t>(n), scale, d_alpha_a);
  HOSHI_CUDA_CHECK_LAUNCH();
}

}  // namespace hoshi::gpu
