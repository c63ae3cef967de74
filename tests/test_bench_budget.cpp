// The time budget of hoshi_gpu_bench --seconds (gpu/bench_budget.hpp): plain C++, so it runs
// without a GPU. scripts/gpu-check.sh relies on it to print the goals summary before the device
// tool's time limit ends the command.
#include <gtest/gtest.h>

#include "gpu/bench_budget.hpp"

namespace hoshi::gpu {
namespace {

TEST(SweepBudget, WithoutABudgetEveryRowRuns) {
  SweepBudget b(0);
  EXPECT_FALSE(b.limited());
  b.start_table(0.3, 2);
  b.record("force:direct2", 1024, 1e6);
  EXPECT_TRUE(b.fits("force:direct2", 1u << 20, 1e9));
}

TEST(SweepBudget, PredictsFromTheSeriesLastRowByTheSizeRatio) {
  SweepBudget b(100);
  b.start_table(0.3, 2);  // direct summation: time ~ N^2
  EXPECT_EQ(b.predict("force:direct2", 4096), 0.0) << "a series' first row has no prediction";
  b.record("force:direct2", 1024, 0.5);
  EXPECT_DOUBLE_EQ(b.predict("force:direct2", 4096), 0.5 * 16);
  b.start_table(0.7, 1);  // tree: time ~ N
  b.record("force:tree/g", 1u << 16, 0.25);
  EXPECT_DOUBLE_EQ(b.predict("force:tree/g", 1u << 20), 0.25 * 16);
  EXPECT_EQ(b.predict("force:tree/l", 1u << 20), 0.0) << "series are kept apart";
}

TEST(SweepBudget, ARowPastItsTablesDeadlineIsSkippedWithTheRestOfItsSeries) {
  SweepBudget b(100);
  b.start_table(0.3, 2);
  EXPECT_DOUBLE_EQ(b.deadline(), 30);
  b.record("force:direct2", 1u << 16, 2.0);
  EXPECT_TRUE(b.fits("force:direct2", 1u << 17, 21.9));   // 21.9 + 8 <= 30
  EXPECT_FALSE(b.fits("force:direct2", 1u << 17, 22.1));  // 22.1 + 8 > 30
  // Once refused, the series stays stopped, even for a row that would fit.
  EXPECT_FALSE(b.fits("force:direct2", 1u << 16, 0.0));
  // Another series of the same table still starts, its first row while the deadline holds.
  EXPECT_TRUE(b.fits("force:direct4", 1u << 12, 29.0));
  EXPECT_FALSE(b.fits("force:direct2p", 1u << 12, 30.5));
}

TEST(SweepBudget, TimeATableLeavesUnusedGoesToTheNext) {
  SweepBudget b(100);
  b.start_table(0.3, 2);
  b.record("force:direct2", 1u << 12, 1.0);
  b.start_table(0.7, 1);  // the direct table ended early, at 10 s: the tree rows have 60 s
  b.record("force:tree/g", 1u << 20, 20.0);
  EXPECT_TRUE(b.fits("force:tree/g", 1u << 21, 29.0));   // 29 + 40 <= 70
  EXPECT_FALSE(b.fits("force:tree/l", 1u << 16, 70.5));  // past the table's deadline
  b.start_table(1.0, 1);
  EXPECT_TRUE(b.fits("step:tree/g", 1u << 20, 70.5)) << "the step table's own deadline";
}

}  // namespace
}  // namespace hoshi::gpu
