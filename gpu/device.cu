#include <sstream>

#include "gpu/cuda_check.cuh"
#include "gpu/device.hpp"

namespace hoshi::gpu {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

std::string device_report() {
  std::ostringstream s;
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  s << "CUDA runtime " << runtime / 1000 << "." << (runtime % 1000) / 10;
  if (driver > 0)
    s << ", driver " << driver / 1000 << "." << (driver % 1000) / 10;
  else
    s << ", no CUDA driver";
  s << "\n";
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    s << "CUDA devices: none (" << cudaGetErrorString(e) << ")\n";
    return s.str();
  }
  s << "CUDA devices: " << n << "\n";
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    s << "  [" << d << "] " << p.name << ", compute capability " << p.major << "." << p.minor
      << ", " << p.multiProcessorCount << " SMs, "
      << static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0) << " GiB\n";
  }
  return s.str();
}

std::string device_error() {
  // A sticky error fails every later call, cudaDeviceSynchronize too. A non-sticky one (an
  // allocation that ran out of memory) stays behind as the last error only: cleared here, the
  // context usable (it was reported as lost, and a bench skipped every later row).
  const cudaError_t e = cudaDeviceSynchronize();
  (void)cudaGetLastError();
  return e == cudaSuccess ? std::string() : std::string(cudaGetErrorString(e));
}

}  // namespace hoshi::gpu
