// Exceptions out of OpenMP regions. An exception that leaves the body of an OpenMP region on
// any thread ends the program (std::terminate: "terminate called after throwing an instance of
// 'std::bad_alloc'", exit 134, where hoshi's main says "out of memory" and exits 1).
// ParallelErrors runs a region's body, or one iteration of a worksharing loop, keeps the first
// exception and skips the work that follows it; rethrow() throws it after the region:
//
//   ParallelErrors errors;
//   #pragma omp parallel for
//   for (...) errors.run([&] { ...; });
//   errors.rethrow();
//
// Every thread must still reach each worksharing construct and barrier of the region, so a
// region with an `omp for` inside wraps the parts around it, not the whole body.
#pragma once

#include <atomic>
#include <exception>
#include <mutex>

namespace hoshi {

class ParallelErrors {
 public:
  template <class Body>
  void run(Body&& body) noexcept {
    if (failed()) return;  // the result is an error already: no more work
    try {
      body();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // Throws the first exception caught, if any (call after the region).
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

}  // namespace hoshi
