// Element-wise kernels of device-resident stepping: conversion to local float4, kick, drift.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/cub_ops.cuh"

namespace hoshi::gpu {

// out[i] = (x_i - c, m_i) in float; the subtraction is done in double.
void to_local_float4(const double* d_x, const double* d_y, const double* d_z, const double* d_m,
                     std::size_t n, double cx, double cy, double cz, float4* d_out,
                     cudaStream_t stream = nullptr);

// As to_local_float4, reading particle d_order[k] into out[k] (sorted order).
void gather_local_float4(const double* d_x, const double* d_y, const double* d_z, const double* d_m,
                         const std::uint32_t* d_order, std::size_t n, double cx, double cy,
                         double cz, float4* d_out, cudaStream_t stream = nullptr);

// v += a dt (a the xyz of d_acc).
void kick(double* d_vx, double* d_vy, double* d_vz, const float4* d_acc, std::size_t n, double dt,
          cudaStream_t stream = nullptr);

// x += v dt.
void drift(double* d_x, double* d_y, double* d_z, const double* d_vx, const double* d_vy,
           const double* d_vz, std::size_t n, double dt, cudaStream_t stream = nullptr);

// keys[i] = morton_key(x_i, y_i, z_i) in the cube (lo, side): tree/morton.hpp, the function
// the host build uses, so device and host keys are identical.
void morton_keys(const double* d_x, const double* d_y, const double* d_z, std::size_t n,
                 double lo_x, double lo_y, double lo_z, double side, std::uint64_t* d_keys,
                 cudaStream_t stream = nullptr);

// index[i] = i.
void iota(std::uint32_t* d_index, std::size_t n, cudaStream_t stream = nullptr);

// out[k] = in[order[k]] for the four double arrays x, y, z, m (sorted particle copies).
void gather_sorted(const double* d_x, const double* d_y, const double* d_z, const double* d_m,
                   const std::uint32_t* d_order, std::size_t n, double* d_xs, double* d_ys,
                   double* d_zs, double* d_ms, cudaStream_t stream = nullptr);

// alpha_a[k] = scale |a[order[k]]| (relative criterion: scale = alpha / G), as the CPU solver
// computes it (double, then float).
void relative_alpha(const float4* d_acc, const std::uint32_t* d_order, std::size_t n, double scale,
                    float* d_alpha_a, cudaStream_t stream = nullptr);

}  // namespace hoshi::gpu
