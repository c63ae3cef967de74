// The time budget of hoshi_gpu_bench --seconds (scripts/gpu-check.sh passes what is left of its
// GPU_CHECK_SECONDS): plain C++, so that the CPU tests cover it.
//
// A lent device runs one command for at most a fixed time, and a sweep cut off by that limit
// loses its goals summary. So each row is predicted before it starts, from the last row of its
// series (the same solver in the same table) scaled by the size ratio to the power `exponent`
// (2 for direct summation, 1 for the tree force and the step), and a row that would end past its
// table's deadline is skipped together with the rest of its series (larger N). Each table has its
// own deadline, a fraction of the budget counted from the start, so that the direct kernel's
// rows cannot take the time of the tree rows after them; time a table leaves unused goes to the
// next. A series' first row has no prediction and runs whenever its table's deadline has not
// passed.
#pragma once

#include <cmath>
#include <cstddef>
#include <map>
#include <string>

namespace hoshi::gpu {

class SweepBudget {
 public:
  // seconds <= 0: no budget (every row runs).
  explicit SweepBudget(double seconds) : seconds_(seconds) {}

  bool limited() const { return seconds_ > 0; }
  double seconds() const { return seconds_; }

  // The rows that follow belong to a table that must end by fraction * seconds from the start,
  // and take time ~ N^exponent.
  void start_table(double fraction, double exponent) {
    deadline_ = fraction * seconds_;
    exponent_ = exponent;
  }

  // The predicted seconds of a row of `series` with n particles (0 for a series' first row).
  double predict(const std::string& series, std::size_t n) const {
    const auto it = last_.find(series);
    if (it == last_.end()) return 0;
    const double ratio = static_cast<double>(n) / static_cast<double>(it->second.n);
    return it->second.seconds * std::pow(ratio, exponent_);
  }

  // Whether that row may start at `elapsed` seconds from the start. Once a row of a series is
  // refused, every later row of the series is too (they are larger).
  bool fits(const std::string& series, std::size_t n, double elapsed) {
    if (!limited()) return true;
    if (stopped_.count(series)) return false;
    if (elapsed + predict(series, n) <= deadline_) return true;
    stopped_[series] = true;
    return false;
  }

  // A row of `series` with n particles took `seconds`.
  void record(const std::string& series, std::size_t n, double seconds) {
    last_[series] = {n, seconds};
  }

  // The deadline of the current table, seconds from the start.
  double deadline() const { return deadline_; }

 private:
  struct Last {
    std::size_t n;
    double seconds;
  };
  double seconds_;
  double deadline_ = 0, exponent_ = 1;
  std::map<std::string, Last> last_;
  std::map<std::string, bool> stopped_;
};

}  // namespace hoshi::gpu
