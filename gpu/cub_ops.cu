#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cmath>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <limits>
#include <stdexcept>

#include "gpu/cub_ops.cuh"

namespace hoshi::gpu {

namespace {

struct PointBox {
  const double *x, *y, *z;
  __host__ __device__ Box3 operator()(std::int64_t i) const {
    return Box3{{x[i], y[i], z[i]}, {x[i], y[i], z[i]}};
  }
};

struct MergeBox {
  __host__ __device__ Box3 operator()(const Box3& a, const Box3& b) const {
    Box3 r;
    for (int k = 0; k < 3; ++k) {
      r.lo[k] = fmin(a.lo[k], b.lo[k]);
      r.hi[k] = fmax(a.hi[k], b.hi[k]);
    }
    return r;
  }
};

struct Kinetic {
  const double *vx, *vy, *vz, *m;
  __host__ __device__ double operator()(std::int64_t i) const {
    return 0.5 * m[i] * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
  }
};

struct Potential {
  const double* m;
  const float4* acc;
  __host__ __device__ double operator()(std::int64_t i) const {
    return 0.5 * m[i] * static_cast<double>(acc[i].w);
  }
};

struct Acceleration2 {
  const float4* acc;
  __host__ __device__ double operator()(std::int64_t i) const {
    const double ax = acc[i].x, ay = acc[i].y, az = acc[i].z;
    return ax * ax + ay * ay + az * az;
  }
};

struct Max {
  __host__ __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

// CUB's two-phase DeviceReduce::Reduce of op(i), i < n (n >= 1), with `reduce` from `init`;
// synchronises the stream to return the result.
template <class T, class Op, class Reduce>
T device_reduce(Op op, std::size_t n, Reduce reduce, T init, CubTemp& temp, cudaStream_t stream) {
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), op);
  T* d_out = static_cast<T*>(temp.result(sizeof(T)));
  std::size_t bytes = 0;
  const auto nn = static_cast<std::int64_t>(n);
  HOSHI_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, in, d_out, nn, reduce, init, stream));
  HOSHI_CUDA_CHECK(
      cub::DeviceReduce::Reduce(temp.get(bytes), bytes, in, d_out, nn, reduce, init, stream));
  T h;
  HOSHI_CUDA_CHECK(cudaMemcpyAsync(&h, d_out, sizeof(T), cudaMemcpyDeviceToHost, stream));
  HOSHI_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

template <class Op>
double device_sum(Op op, std::size_t n, CubTemp& temp, cudaStream_t stream) {
  if (n == 0) return 0.0;
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), op);
  double* d_out = static_cast<double*>(temp.result(sizeof(double)));
  std::size_t bytes = 0;
  const auto nn = static_cast<std::int64_t>(n);
  HOSHI_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, in, d_out, nn, stream));
  HOSHI_CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(bytes), bytes, in, d_out, nn, stream));
  double h = 0;
  HOSHI_CUDA_CHECK(cudaMemcpyAsync(&h, d_out, sizeof(double), cudaMemcpyDeviceToHost, stream));
  HOSHI_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

}  // namespace

Box3 bounding_box(const double* d_x, const double* d_y, const double* d_z, std::size_t n,
                  CubTemp& temp, cudaStream_t stream) {
  if (n == 0) throw std::invalid_argument("bounding_box: no particles");
  const double inf = std::numeric_limits<double>::infinity();
  return device_reduce(PointBox{d_x, d_y, d_z}, n, MergeBox{},
                       Box3{{inf, inf, inf}, {-inf, -inf, -inf}}, temp, stream);
}

double kinetic_energy(const double* d_vx, const double* d_vy, const double* d_vz, const double* d_m,
                      std::size_t n, CubTemp& temp, cudaStream_t stream) {
  return device_sum(Kinetic{d_vx, d_vy, d_vz, d_m}, n, temp, stream);
}

double potential_energy(const double* d_m, const float4* d_acc, std::size_t n, CubTemp& temp,
                        cudaStream_t stream) {
  return device_sum(Potential{d_m, d_acc}, n, temp, stream);
}

double max_acceleration2(const float4* d_acc, std::size_t n, CubTemp& temp, cudaStream_t stream) {
  if (n == 0) return 0.0;
  return device_reduce(Acceleration2{d_acc}, n, Max{}, 0.0, temp, stream);
}

double median(const double* d_in, std::size_t n, double* d_scratch, CubTemp& temp,
              cudaStream_t stream) {
  if (n == 0) return 0.0;
  if (n > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
    throw std::invalid_argument("median: too many items");
  std::size_t bytes = 0;
  const auto nn = static_cast<std::int64_t>(n);
  HOSHI_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, d_in, d_scratch, nn, 0,
                                                  static_cast<int>(sizeof(double) * 8), stream));
  HOSHI_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.get(bytes), bytes, d_in, d_scratch, nn, 0,
                                                  static_cast<int>(sizeof(double) * 8), stream));
  double m = 0;
  HOSHI_CUDA_CHECK(
      cudaMemcpyAsync(&m, d_scratch + n / 2, sizeof(double), cudaMemcpyDeviceToHost, stream));
  HOSHI_CUDA_CHECK(cudaStreamSynchronize(stream));
  return m;
}

void sort_pairs(const std::uint64_t* d_keys_in, std::uint64_t* d_keys_out,
                const std::uint32_t* d_values_in, std::uint32_t* d_values_out, std::size_t n,
                CubTemp& temp, cudaStream_t stream, int end_bit) {
  if (n == 0) return;
  if (n > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
    throw std::invalid_argument("sort_pairs: too many items");
  std::size_t bytes = 0;
  const auto nn = static_cast<std::int64_t>(n);
  HOSHI_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, d_keys_in, d_keys_out, d_values_in, d_values_out, nn, 0, end_bit, stream));
  HOSHI_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(bytes), bytes, d_keys_in, d_keys_out,
                                                   d_values_in, d_values_out, nn, 0, end_bit,
                                                   stream));
}

}  // namespace hoshi::gpu
