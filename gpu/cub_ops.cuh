// CUB where it belongs: device radix sort of (key, index) pairs and device reductions
// (bounding box, energy sums). Each wrapper uses CUB's two-phase pattern: a first call with a
// null temporary pointer returns the bytes needed, CubTemp grows once, the second call runs.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/device_buffer.cuh"

namespace hoshi::gpu {

struct Box3 {
  double lo[3];
  double hi[3];
};

// Axis-aligned bounding box of n points (n >= 1). Synchronises `stream` to return it.
Box3 bounding_box(const double* d_x, const double* d_y, const double* d_z, std::size_t n,
                  CubTemp& temp, cudaStream_t stream = nullptr);

// sum_i 0.5 m_i |v_i|^2 (double).
double kinetic_energy(const double* d_vx, const double* d_vy, const double* d_vz, const double* d_m,
                      std::size_t n, CubTemp& temp, cudaStream_t stream = nullptr);

// sum_i 0.5 m_i pot_i, pot_i the .w of d_acc (G included): the potential energy of the system.
double potential_energy(const double* d_m, const float4* d_acc, std::size_t n, CubTemp& temp,
                        cudaStream_t stream = nullptr);

// max_i |a_i|^2 over the .x, .y, .z of d_acc, summed in double as the host's
// max_acceleration2 does (the squares of floats are exact in double, so the result is the
// host's bit for bit); 0 for n = 0.
double max_acceleration2(const float4* d_acc, std::size_t n, CubTemp& temp,
                         cudaStream_t stream = nullptr);

// The median (the element of rank n / 2) of n doubles, by CUB's radix sort of a copy into
// d_scratch (n elements). Synchronises `stream` to return it; 0 for n = 0.
double median(const double* d_in, std::size_t n, double* d_scratch, CubTemp& temp,
              cudaStream_t stream = nullptr);

// Sorts (keys, values) by key with CUB's device radix sort over the low `end_bit` bits.
// Results in d_keys_out, d_values_out; inputs unchanged.
void sort_pairs(const std::uint64_t* d_keys_in, std::uint64_t* d_keys_out,
                const std::uint32_t* d_values_in, std::uint32_t* d_values_out, std::size_t n,
                CubTemp& temp, cudaStream_t stream = nullptr, int end_bit = 64);

}  // namespace hoshi::gpu
