// A memcpy split across the OpenMP threads: one thread does not reach the memory bandwidth of a
// many-core host (the device stepper copies each step's nodes, ~29 MB at 1M particles, into
// pinned memory before the upload).
#pragma once

#include <cstddef>

namespace hoshi {

// Copies `bytes` from src to dst (not overlapping), in chunks of at least 1 MiB per thread.
void parallel_copy(void* dst, const void* src, std::size_t bytes);

}  // namespace hoshi
