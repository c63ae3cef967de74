// CUDA device discovery (plain C++ header; implemented in device.cu).
#pragma once

#include <string>

namespace hoshi::gpu {

// Number of visible CUDA devices; 0 when there is no device or no driver.
int device_count();

// One line per fact: CUDA runtime and driver versions, then each visible device (name,
// compute capability, multiprocessors, memory), or the reason none is usable.
std::string device_report();

// "" while the current device's context is usable; otherwise the CUDA error that ended it (a
// kernel fault is sticky: every later call fails with it). Waits for the device, and clears a
// non-sticky last error (an allocation that failed), after which the context is usable.
std::string device_error();

}  // namespace hoshi::gpu
