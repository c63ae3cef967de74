// CUDA device discovery (plain C++ header; implemented in device.cu).
#pragma once

#include <string>

namespace hoshi::gpu {

// Number of visible CUDA devices; 0 when there is no device or no driver.
int device_count();

// One line per fact: CUDA runtime and driver versions, then each visible device (name,
// compute capability, multiprocessors, memory), or the reason none is usable.
std::string device_report();

}  // namespace hoshi::gpu
