#include "gpu/launch_geometry.hpp"
#include "gpu/stepper_kernels.cuh"

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

}  // namespace hoshi::gpu
