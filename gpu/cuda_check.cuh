// HOSHI_CUDA_CHECK: turns a failing CUDA call into hoshi::CudaError naming the call, file and
// line. HOSHI_CUDA_CHECK_LAUNCH() checks cudaGetLastError() after a kernel launch (and
// synchronises in debug builds).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace hoshi {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* call, const char* file, int line)
      : std::runtime_error(std::string("CUDA error in ") + call + " at " + file + ":" +
                           std::to_string(line) + ": " + cudaGetErrorString(code)),
        code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

}  // namespace hoshi

#define HOSHI_CUDA_CHECK(call)                                         \
  do {                                                                 \
    const cudaError_t hoshi_err_ = (call);                             \
    if (hoshi_err_ != cudaSuccess)                                     \
      throw ::hoshi::CudaError(hoshi_err_, #call, __FILE__, __LINE__); \
  } while (0)

#ifdef NDEBUG
#define HOSHI_CUDA_CHECK_LAUNCH() HOSHI_CUDA_CHECK(cudaGetLastError())
#else
#define HOSHI_CUDA_CHECK_LAUNCH()              \
  do {                                         \
    HOSHI_CUDA_CHECK(cudaGetLastError());      \
    HOSHI_CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)
#endif
