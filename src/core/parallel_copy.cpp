#include "core/parallel_copy.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace hoshi {

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t kMinChunk = std::size_t{1} << 20;
  const int threads = static_cast<int>(std::clamp<std::size_t>(
      bytes / kMinChunk, 1, static_cast<std::size_t>(omp_get_max_threads())));
  if (threads == 1) {
    if (bytes) std::memcpy(dst, src, bytes);
    return;
  }
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const std::size_t b = bytes * t / threads, e = bytes * (t + 1) / threads;
    std::memcpy(d + b, s + b, e - b);
  }
}

}  // namespace hoshi
