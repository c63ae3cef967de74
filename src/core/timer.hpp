// Wall-clock timing of solver phases.
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace hoshi {

class Stopwatch {
 public:
  Stopwatch() : t0_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  void restart() { t0_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point t0_;
};

// Accumulated seconds per named phase ("keys", "sort", "walk", "direct", ...).
using PhaseTimes = std::map<std::string, double>;

}  // namespace hoshi
