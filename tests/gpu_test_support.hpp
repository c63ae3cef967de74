// Shared by the tests that run one body on the CPU and, when built and a device is present, on
// CUDA: the backend parameter and the skip with a visible reason.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <ostream>
#include <string>

#include "solver/solver.hpp"
#ifdef HOSHI_HAVE_CUDA
#include "gpu/cuda_solvers.hpp"
#include "gpu/device.hpp"
#endif

namespace hoshi {
// gtest prints a parameter through PrintTo (found by ADL): the backend's name, not its bytes.
inline void PrintTo(Backend b, std::ostream* os) {
  *os << to_string(b);
}
}  // namespace hoshi

namespace hoshi::testing_support {

// Empty when `b` can run here; otherwise why not (the GTEST_SKIP message).
inline std::string backend_unavailable(Backend b) {
  if (b != Backend::cuda) return "";
#ifdef HOSHI_HAVE_CUDA
  if (gpu::device_count() == 0) return "no CUDA device present: " + gpu::device_report();
  return "";
#else
  return "hoshi built without CUDA (configure with -DHOSHI_CUDA=ON)";
#endif
}

// True when HOSHI_REQUIRE_CUDA is set and not "0" (scripts/gpu-check.sh sets it): a CUDA test
// that cannot run then fails instead of skipping, so that a device the runtime cannot see
// does not pass as a run of skipped tests.
inline bool cuda_required() {
  const char* v = std::getenv("HOSHI_REQUIRE_CUDA");
  return v && *v && std::string(v) != "0";
}

// Selects the CUDA group mode's kernel (gpu::set_group_walk_kernel) for a scope and restores
// the previous one after it; nothing without CUDA.
class GroupKernelScope {
 public:
  enum Kernel { lanes, lists, lists7, lists8 };
  explicit GroupKernelScope(Kernel k) {
#ifdef HOSHI_HAVE_CUDA
    before_ = gpu::group_walk_kernel();
    gpu::set_group_walk_kernel(k == lists    ? gpu::GroupWalkKernel::lists
                               : k == lists7 ? gpu::GroupWalkKernel::lists7
                               : k == lists8 ? gpu::GroupWalkKernel::lists8
                                             : gpu::GroupWalkKernel::lanes);
#else
    (void)k;
#endif
  }
  ~GroupKernelScope() {
#ifdef HOSHI_HAVE_CUDA
    gpu::set_group_walk_kernel(before_);
#endif
  }
  GroupKernelScope(const GroupKernelScope&) = delete;
  GroupKernelScope& operator=(const GroupKernelScope&) = delete;

 private:
#ifdef HOSHI_HAVE_CUDA
  gpu::GroupWalkKernel before_;
#endif
};

inline std::string backend_test_name(const ::testing::TestParamInfo<Backend>& info) {
  return to_string(info.param);
}

}  // namespace hoshi::testing_support

#define HOSHI_SKIP_IF_UNAVAILABLE(backend)                                                  \
  do {                                                                                      \
    const std::string why_ = ::hoshi::testing_support::backend_unavailable(backend);        \
    if (!why_.empty()) {                                                                    \
      if ((backend) == ::hoshi::Backend::cuda && ::hoshi::testing_support::cuda_required()) \
        FAIL() << "HOSHI_REQUIRE_CUDA is set, but " << why_;                                \
      GTEST_SKIP() << why_;                                                                 \
    }                                                                                       \
  } while (0)
