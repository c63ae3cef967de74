// Tiled direct-summation kernel (CUDA side). Plain C++ callers go through gpu/cuda_solvers.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/device_buffer.cuh"
#include "gpu/launch_geometry.hpp"
#include "physics/softening.hpp"

namespace hoshi::gpu {

// Forces of all n particles on all n particles. d_pos[i] = (x, y, z, m) in float, positions
// relative to a local origin. Writes d_out[i] = (ax, ay, az, pot) with G applied and the
// self-pair excluded. `partial` is scratch for the split-source partial sums (resized here).
// Returns the geometry it launched with.
DirectGeometry direct_forces(const float4* d_pos, std::size_t n, Softening kernel, double eps,
                             double G, float4* d_out, DeviceBuffer<float4>& partial, int sm_count,
                             cudaStream_t stream = nullptr, const DirectPolicy& policy = {});

}  // namespace hoshi::gpu
