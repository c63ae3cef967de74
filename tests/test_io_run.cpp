// hoshi run's outputs end to end (through the hoshi executable): restarts that continue bit
// for bit, clean stops on SIGINT, parameter files, protected output directories; and the
// renderer.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <png.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "integrator/block.hpp"
#include "io/atomic_file.hpp"
#include "io/csv.hpp"
#include "io/hdf5_snapshot.hpp"
#include "io/param_file.hpp"
#include "io/render.hpp"
#include "io/snapshot_io.hpp"
#include "io/tipsy.hpp"
#include "io_test_util.hpp"
#include "solver/solver.hpp"

namespace hoshi::io {
namespace {

using test::ScratchDir;

// Runs `hoshi ARGS`, returns the exit status; stdout+stderr go to `log`.
int hoshi(const std::string& args, const std::string& log) {
  const std::string cmd = std::string(HOSHI_EXE) + " " + args + " > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

void expect_same_particles(const ParticleSet& a, const ParticleSet& b) {
  // Bit for bit: exact equality of every double of every column.
  test::expect_columns(a, b, test::kAllColumns);
}

double state(const SnapshotData& d, const char* key) {
  const ParamValue* v = find_param(d.info.state, key);
  if (!v) return std::nan("");
  if (const auto* i = std::get_if<std::int64_t>(v)) return double(*i);
  return std::get<double>(*v);
}

// The rows of a CSV file after its header, split at the commas.
std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(f, line)) {
    std::stringstream s(line);
    rows.emplace_back();
    for (std::string x; std::getline(s, x, ',');) rows.back().push_back(x);
  }
  return rows;
}

const std::string kRun = "run --ic plummer -n 64 --dt 0.0625 --solver direct --quiet ";

TEST(IoRun, RestartContinuesBitForBit) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun +
                      "--t-end 1 --snapshot-every 0.5 --render-every 0.5 "
                      "--render-resolution 32 --out " +
                      a,
                  log),
            0)
      << test::read_all(log);
  for (const char* frame : {"/frame_000.png", "/frame_001.png", "/frame_002.png"})
    EXPECT_TRUE(std::filesystem::exists(a + frame)) << frame;
  ASSERT_EQ(hoshi(kRun + "--t-end 0.5 --snapshot-every 0.5 --out " + b, log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 1", log), 0) << test::read_all(log);
  const SnapshotData ca = read_hdf5_snapshot(a + "/checkpoint.hdf5");
  const SnapshotData cb = read_hdf5_snapshot(b + "/checkpoint.hdf5");
  expect_same_particles(ca.particles, cb.particles);
  EXPECT_EQ(state(ca, "step"), 16);
  EXPECT_EQ(state(cb, "step"), 16);
  EXPECT_EQ(ca.info.time, 1.0);
  expect_same_particles(read_hdf5_snapshot(a + "/snapshot_002.hdf5").particles,
                        read_hdf5_snapshot(b + "/snapshot_002.hdf5").particles);
  // The energy log of the continued run is the uninterrupted one, byte for byte.
  EXPECT_EQ(test::read_all(a + "/energy.csv"), test::read_all(b + "/energy.csv"));
}

// Block time steps (--levels): the levels of a base step follow from its start's state, so a
// restart continues bit for bit; --levels is recorded; with --levels --eta is each particle's
// criterion and goes with --dt; the options it needs are named.
TEST(IoRun, BlockStepsRestartBitForBit) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  // n = 64, eps 0.01: 0.2 sqrt(eps / |a|) puts the particles on levels 1 to 3 of 1/16.
  const std::string blocks = kRun + "--levels 4 ";
  ASSERT_EQ(hoshi(blocks + "--t-end 1 --out " + a, log), 0) << test::read_all(log);
  const std::string said = test::read_all(log);
  EXPECT_NE(said.find("block steps: "), std::string::npos) << said;
  ASSERT_EQ(hoshi(blocks + "--t-end 0.5 --out " + b, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 1", log), 0) << test::read_all(log);
  const SnapshotData ca = read_hdf5_snapshot(a + "/checkpoint.hdf5");
  const SnapshotData cb = read_hdf5_snapshot(b + "/checkpoint.hdf5");
  expect_same_particles(ca.particles, cb.particles);
  EXPECT_EQ(state(ca, "step"), 16);
  EXPECT_EQ(test::read_all(a + "/energy.csv"), test::read_all(b + "/energy.csv"));
  const ParamValue* levels = find_param(cb.info.parameters, "levels");
  ASSERT_TRUE(levels);
  EXPECT_EQ(to_number(*levels), 4.0);
  // The hierarchical scheme (kept by the restart from the checkpoint) continues bit for bit too,
  // and is another run.
  const std::string ha = dir.file("HA"), hb = dir.file("HB");
  const std::string hier = blocks + "--level-scheme hierarchical ";
  ASSERT_EQ(hoshi(hier + "--t-end 1 --out " + ha, log), 0) << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("; hierarchical: each set of levels"), std::string::npos)
      << test::read_all(log);
  ASSERT_EQ(hoshi(hier + "--t-end 0.5 --out " + hb, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + hb + " --t-end 1", log), 0) << test::read_all(log);
  const SnapshotData cha = read_hdf5_snapshot(ha + "/checkpoint.hdf5");
  expect_same_particles(cha.particles, read_hdf5_snapshot(hb + "/checkpoint.hdf5").particles);
  EXPECT_EQ(test::read_all(ha + "/energy.csv"), test::read_all(hb + "/energy.csv"));
  EXPECT_NE(cha.particles.x, ca.particles.x);
  // The same run at one level is another run (the levels were taken).
  ASSERT_EQ(hoshi(kRun + "--t-end 1 --out " + dir.file("C"), log), 0) << test::read_all(log);
  EXPECT_NE(read_hdf5_snapshot(dir.file("C") + "/checkpoint.hdf5").particles.x, ca.particles.x);

  // The criterion used is stored (0 given: 0.2).
  EXPECT_EQ(to_number(*find_param(cb.info.parameters, "eta")), kLevelEta);
  const std::string d = dir.file("D");
  EXPECT_EQ(hoshi(kRun + "--levels 4 --eta 0.1 --t-end 0.125 --out " + d, log), 0)
      << test::read_all(log);
  // Restarted with one level, the block steps' eta is no adaptive step: fixed steps of dt (it
  // went on with "adaptive dt, eta 0.1").
  ASSERT_EQ(hoshi("run --restart " + d + " --levels 1 --t-end 0.25", log), 0)
      << test::read_all(log);
  // ... and is checked as a new run's step is (1/16 is 1.1 of sqrt(eps / max|a|) here: a fresh
  // run is warned; the restart went on unsaid).
  EXPECT_NE(test::read_all(log).find("warning: --dt 0.0625 is "), std::string::npos)
      << test::read_all(log);
  const SnapshotData cd = read_hdf5_snapshot(d + "/checkpoint.hdf5");
  EXPECT_EQ(state(cd, "step"), 4);
  EXPECT_EQ(to_number(*find_param(cd.info.parameters, "eta")), 0.0);
  // An adaptive step's eta is no block criterion: block steps added on its restart take 0.2.
  const std::string g = dir.file("G");
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --solver direct --quiet --eta 0.05 --t-end 0.0625 "
                  "--out " +
                      g,
                  log),
            0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + g + " --levels 4 --dt 1/16 --t-end 0.125", log), 0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("the checkpoint's --eta 0.05 was its adaptive step; the "
                                     "block steps take eta 0.2"),
            std::string::npos)
      << test::read_all(log);
  EXPECT_EQ(
      to_number(*find_param(read_hdf5_snapshot(g + "/checkpoint.hdf5").info.parameters, "eta")),
      kLevelEta);
  // The softening's limit on the smallest level's step, and the levels that meet it.
  ASSERT_EQ(hoshi(kRun + "--levels 2 --softening 1e-3 --t-end 0.0625 --out " + dir.file("H"), log),
            0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("warning: --dt 0.0625: its smallest level's step dt / 2^1 = "
                                     "0.03125 is 1.7"),
            std::string::npos)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find(", or --levels 6)"), std::string::npos) << test::read_all(log);
  // Its reason: the particles' criterion, not the fixed steps' 0.3 (an audit: it said the steps
  // did not resolve encounters, at 0.244 of the scale, which a fixed step passes).
  EXPECT_NE(test::read_all(log).find("the particle of max|a| wants a shorter step than the "
                                     "smallest level's (--eta 0.2 of that scale)"),
            std::string::npos)
      << test::read_all(log);
  // A step whose smallest level the particles' criterion wants below is said so.
  ASSERT_EQ(hoshi(kRun + "--dt 1/4 --levels 2 --t-end 0.25 --out " + dir.file("F"), log), 0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("wanted a step below the smallest level's, dt / 2^1 = 0.125 "
                                     "(0.2 sqrt(eps / |a|)), and took that one"),
            std::string::npos)
      << test::read_all(log);
  for (const auto& [args, message] :
       {std::pair<std::string, std::string>{"--levels 0", "invalid --levels 0 (1 to 30)"},
        {"--levels 31", "invalid --levels 31 (1 to 30)"},
        {"--levels 4 --softening 0", "invalid --softening 0 (block steps (--levels > 1) need > 0)"},
        {"--levels 4 --eta -1", "invalid --eta -1 (must be >= 0)"}}) {
    EXPECT_EQ(hoshi(kRun + args + " --t-end 0.125 --out " + dir.file("E"), log), 2) << args;
    EXPECT_NE(test::read_all(log).find(message), std::string::npos) << test::read_all(log);
    EXPECT_FALSE(std::filesystem::exists(dir.file("E"))) << args;
  }
}

// A run that ended off its step grid (steps of 0.1, a short last one to t_end = 0.505) is
// continued on a grid from there (0.505 + k 0.1); continuing it once to 2.5 or twice (stopping
// at 1.005, a full step) gave the same particles but times an ulp apart (1.105 against
// 1.1050000000000002: the second restart took its grid from its own checkpoint, 1.005 as
// rounded): the checkpoint now records the grid.
TEST(IoRun, RestartsOfAContinuedRunOffTheGridKeepItsTimes) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  const std::string run = "run -n 64 --solver direct --dt 0.1 --output-every 0.05 --quiet ";
  ASSERT_EQ(hoshi(run + "--t-end 0.505 --out " + a, log), 0) << test::read_all(log);
  std::filesystem::copy(a, b, std::filesystem::copy_options::recursive);
  // A continuation off the grid is said; one on the grid it continued on is not.
  const std::string note = "note: t = 0.505 is off the step grid of the run (--dt 0.1;";
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 2.5", log), 0) << test::read_all(log);
  EXPECT_NE(test::read_all(log).find(note), std::string::npos) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 1.005", log), 0) << test::read_all(log);
  EXPECT_NE(test::read_all(log).find(note), std::string::npos) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 2.5", log), 0) << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("is off the step grid"), std::string::npos)
      << test::read_all(log);
  const SnapshotData ca = read_hdf5_snapshot(a + "/checkpoint.hdf5");
  const SnapshotData cb = read_hdf5_snapshot(b + "/checkpoint.hdf5");
  expect_same_particles(ca.particles, cb.particles);
  EXPECT_EQ(state(ca, "step"), state(cb, "step"));
  EXPECT_EQ(test::read_all(a + "/energy.csv"), test::read_all(b + "/energy.csv"));
}

// A run extended with --restart --t-end: the first run's closing row at its t_end (0.3125, off
// the output grid of 0.25) stayed in the log, which an uninterrupted run does not have. A log
// deleted by hand is started again with its header.
// kRun to t = 0.5 at once into A, and to 0.3125 then --restart --t-end 0.5 into B, both with
// --output-every EVERY: the two energy logs must be equal. Returns false if a run failed.
bool straight_and_extended(const std::string& a, const std::string& b, const std::string& every,
                           const std::string& log) {
  const std::string rows = " --output-every " + every + " --out ";
  EXPECT_EQ(hoshi(kRun + "--t-end 0.5" + rows + a, log), 0) << test::read_all(log);
  EXPECT_EQ(hoshi(kRun + "--t-end 0.3125" + rows + b, log), 0) << test::read_all(log);
  EXPECT_NE(test::read_all(b + "/energy.csv").find("\n5,0.3125,"), std::string::npos);
  EXPECT_EQ(hoshi("run --restart " + b + " --t-end 0.5", log), 0) << test::read_all(log);
  EXPECT_EQ(test::read_all(a + "/energy.csv"), test::read_all(b + "/energy.csv")) << every;
  return !::testing::Test::HasFailure();
}

TEST(IoRun, ExtendedRunsEnergyLogIsTheUninterruptedOne) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  ASSERT_TRUE(straight_and_extended(a, b, "0.25", log));
  std::filesystem::remove(b + "/energy.csv");
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 0.75", log), 0) << test::read_all(log);
  EXPECT_EQ(test::read_all(b + "/energy.csv").rfind("step,time,dt,", 0), 0u)
      << test::read_all(b + "/energy.csv");
}

// With a fixed step the rows are at the first step at or after each multiple of
// --output-every, not on the multiples: dt 0.0625, every 0.1 gives rows at 0.125, 0.25, 0.3125,
// 0.4375, 0.5. A run that stopped at such a row (its --t-end 0.3125 here, a signal, or a crash
// after a checkpoint there) lost it on restart: it was taken for the closing row of an
// off-grid --t-end. Nor may a restart that changes --output-every drop the earlier run's
// rows (the row at t = 1, a multiple of the old 0.25, not of the new 0.3).
TEST(IoRun, RestartKeepsARowAtTheFirstStepAfterAMultiple) {
  ScratchDir dir("run");
  const std::string log = dir.file("log");
  EXPECT_TRUE(straight_and_extended(dir.file("A"), dir.file("B"), "0.1", log));
  const std::string c = dir.file("C");
  ASSERT_EQ(hoshi(kRun + "--t-end 1 --output-every 0.25 --out " + c, log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + c + " --t-end 2 --output-every 0.3", log), 0)
      << test::read_all(log);
  std::vector<std::string> times;
  for (const auto& row : csv_rows(c + "/energy.csv")) times.push_back(row.at(1));
  const std::vector<std::string> expected{"0",    "0.25", "0.5",    "0.75", "1",
                                          "1.25", "1.5",  "1.8125", "2"};
  EXPECT_EQ(times, expected);
}

TEST(IoRun, RestartAfterShortFinalStepKeepsTime) {
  // 0.53 is off the step grid: the first part ends with a short step; the continued run must
  // count time from there (t = 0.53 + k dt), ending exactly at 1 (to round-off, 1e-12).
  ScratchDir dir("run");
  const std::string b = dir.file("B"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0.53 --out " + b, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 1", log), 0) << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(b + "/checkpoint.hdf5");
  EXPECT_NEAR(state(c, "time"), 1.0, 1e-12);
  // 8 full steps + 1 short to 0.53, then ceil(0.47 / 0.0625) = 8 more.
  EXPECT_EQ(state(c, "step"), 17);
}

TEST(IoRun, RestartWithNoTimeLeftIsRefusedAndTouchesNothing) {
  // --t-end at or before the checkpoint's time: exit 2 with one line, before the energy log is
  // truncated or the checkpoint rewritten (it used to report "0 steps" and rewrite both).
  ScratchDir dir("run");
  const std::string b = dir.file("B"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0.5 --out " + b, log), 0) << test::read_all(log);
  const std::string energy = test::read_all(b + "/energy.csv");
  const std::string checkpoint = test::read_all(b + "/checkpoint.hdf5");
  for (const char* t_end : {"0.25", "0.5"}) {
    EXPECT_EQ(hoshi("run --restart " + b + " --t-end " + t_end, log), 2) << t_end;
    const std::string err = test::read_all(log);
    EXPECT_NE(err.find("is not after the time 0.5"), std::string::npos) << err;
    EXPECT_EQ(test::read_all(b + "/energy.csv"), energy);
    EXPECT_EQ(test::read_all(b + "/checkpoint.hdf5"), checkpoint);
  }
  // Eleven steps of 0.03 end an ulp short of 0.33, which the run loop takes as 0.33: its
  // restart has no time left either (it took no step and rewrote the checkpoint).
  const std::string c = dir.file("C");
  ASSERT_EQ(
      hoshi("run --ic plummer -n 64 --solver direct --quiet --t-end 0.33 --dt 0.03 --out " + c,
            log),
      0)
      << test::read_all(log);
  const std::string ulp = test::read_all(c + "/checkpoint.hdf5");
  EXPECT_EQ(hoshi("run --restart " + c + "/", log), 2);
  EXPECT_NE(test::read_all(log).find("is not after the time 0.33"), std::string::npos)
      << test::read_all(log);
  // The directory named once (--restart C/ printed C//checkpoint.hdf5).
  EXPECT_NE(test::read_all(log).find(c + "/checkpoint.hdf5"), std::string::npos)
      << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("//"), std::string::npos) << test::read_all(log);
  EXPECT_EQ(test::read_all(c + "/checkpoint.hdf5"), ulp);
}

// A restart may turn on a series that was off (no file of it yet): it starts at the first
// multiple at or after the checkpoint's time, with the straight run's files there; a series
// with files keeps its interval.
TEST(IoRun, RestartMayStartASnapshotSeriesThatWasOff) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), s = dir.file("S"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0.5 --out " + a, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 1 --snapshot-every 0.25", log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi(kRun + "--t-end 1 --snapshot-every 0.25 --out " + s, log), 0)
      << test::read_all(log);
  for (const char* name : {"snapshot_000.hdf5", "snapshot_001.hdf5"})
    EXPECT_FALSE(std::filesystem::exists(a + "/" + name)) << name;
  for (const char* name : {"snapshot_002.hdf5", "snapshot_003.hdf5", "snapshot_004.hdf5"}) {
    ASSERT_TRUE(std::filesystem::exists(a + "/" + name)) << name;
    const SnapshotData x = read_hdf5_snapshot(a + "/" + name);
    const SnapshotData y = read_hdf5_snapshot(s + "/" + name);
    EXPECT_EQ(x.info.time, y.info.time) << name;
    EXPECT_EQ(x.particles.x, y.particles.x) << name;
    EXPECT_EQ(x.particles.vz, y.particles.vz) << name;
  }
  // Now that it has files, another interval is refused, and turning it off is not.
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 1.5 --snapshot-every 0.125", log), 2);
  EXPECT_NE(test::read_all(log).find("numbered by the interval 0.25"), std::string::npos)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 1.25 --snapshot-every 0", log), 0)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(a + "/snapshot_005.hdf5"));
  // Turned off, it keeps its interval: another is still refused, its own takes the series up
  // again at the first multiple at or after the checkpoint's time (t = 1.25, snapshot_005), as
  // the run made with it throughout has it. A stray file named like an output is no output (it
  // held the series back past its number).
  test::write_all(a + "/snapshot_1000000.bak", "x");
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 1.5 --snapshot-every 0.125", log), 2);
  EXPECT_NE(test::read_all(log).find("numbered by the interval 0.25"), std::string::npos)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 1.5 --snapshot-every 0.25", log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi(kRun + "--t-end 1.5 --snapshot-every 0.25 --overwrite --out " + s, log), 0)
      << test::read_all(log);
  for (const char* name : {"snapshot_005.hdf5", "snapshot_006.hdf5"}) {
    ASSERT_TRUE(std::filesystem::exists(a + "/" + name)) << name;
    const SnapshotData x = read_hdf5_snapshot(a + "/" + name);
    const SnapshotData y = read_hdf5_snapshot(s + "/" + name);
    EXPECT_EQ(x.info.time, y.info.time) << name;
    EXPECT_EQ(x.particles.x, y.particles.x) << name;
  }
}

// A restart from a checkpoint that its run went past (killed after it) removes that run's
// snapshots and frames numbered after the checkpoint, as it trims energy.csv: a restart that
// ended sooner or changed the forces left them beside its own, one series of two trajectories.
// Another code's file of such a name stays.
TEST(IoRun, RestartRemovesTheOutputsWrittenAfterItsCheckpoint) {
  namespace fs = std::filesystem;
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log"), kept = dir.file("ck.hdf5");
  ASSERT_EQ(hoshi(kRun +
                      "--t-end 1 --snapshot-every 0.25 --render-every 0.25 "
                      "--checkpoint-every 1 --out " +
                      a,
                  log),
            0)
      << test::read_all(log);
  fs::copy_file(a + "/checkpoint.hdf5", kept);
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 2", log), 0) << test::read_all(log);
  ASSERT_TRUE(fs::exists(a + "/snapshot_008.hdf5") && fs::exists(a + "/frame_008.png"));
  test::write_all(a + "/snapshot_009.hdf5", "not a hoshi snapshot");
  fs::copy_file(kept, a + "/checkpoint.hdf5", fs::copy_options::overwrite_existing);
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 1.25 --softening 0.05", log), 0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("removed 8 snapshot(s) and frame(s) written after the "
                                     "checkpoint"),
            std::string::npos)
      << test::read_all(log);
  for (const char* name : {"snapshot_004.hdf5", "snapshot_005.hdf5", "frame_004.png",
                           "frame_005.png", "snapshot_009.hdf5"})
    EXPECT_TRUE(fs::exists(a + "/" + name)) << name;
  for (const char* name :
       {"snapshot_006.hdf5", "snapshot_008.hdf5", "frame_006.png", "frame_008.png"})
    EXPECT_FALSE(fs::exists(a + "/" + name)) << name;
  EXPECT_EQ(read_hdf5_snapshot(a + "/snapshot_005.hdf5").info.time, 1.25);
  // The run's own input in the directory, numbered past the checkpoint, stays (--overwrite kept
  // it as the input; the restart removed it, the earlier run's only copy of that state), also
  // for a restart from another working directory than the run's, which gave --ic relative to
  // its own (the checkpoint records the input by its name in the directory and its file).
  const std::string b = dir.file("B");
  ASSERT_EQ(hoshi(kRun + "--t-end 2 --snapshot-every 0.25 --out " + b, log), 0)
      << test::read_all(log);
  const std::string in_dir = "cd " + fs::path(b).parent_path().string() + " && " + HOSHI_EXE;
  ASSERT_EQ(std::system((in_dir +
                         " run --ic B/snapshot_008.hdf5 --dt 0.0625 --solver direct "
                         "--quiet --t-end 1 --snapshot-every 0.25 --overwrite --out B > " +
                         log + " 2>&1")
                            .c_str()),
            0)
      << test::read_all(log);
  ASSERT_EQ(std::system(("cd / && " + std::string(HOSHI_EXE) + " run --restart " + b +
                         " --t-end 1.5 > " + log + " 2>&1")
                            .c_str()),
            0)
      << test::read_all(log);
  EXPECT_TRUE(fs::exists(b + "/snapshot_008.hdf5"));
  EXPECT_TRUE(fs::exists(b + "/snapshot_006.hdf5"));
}

// Two runs in one directory at once: the second is refused before it touches anything, naming
// the first's process (a restart and a new --overwrite run into one directory both exited 0
// and mixed their energy.csv, checkpoint and snapshots). A directory that holds only the lock
// file is empty for a new run.
TEST(IoRun, ARunIntoADirectoryInUseIsRefused) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0.125 --out " + a, log), 0) << test::read_all(log);
  const std::string before = test::read_all(a + "/energy.csv");
  {
    const io::DirectoryLock held(a, "--out");  // as a run in progress holds it
    ASSERT_TRUE(held.held());
    const std::string busy = ": in use by another hoshi run (process " + std::to_string(::getpid());
    EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --quiet", log), 2);
    EXPECT_NE(test::read_all(log).find("--restart " + a + busy), std::string::npos)
        << test::read_all(log);
    EXPECT_EQ(hoshi(kRun + "--t-end 0.0625 --overwrite --out " + a, log), 2);
    EXPECT_NE(test::read_all(log).find("--out " + a + busy), std::string::npos)
        << test::read_all(log);
    EXPECT_EQ(test::read_all(a + "/energy.csv"), before);
  }
  // A run still before its first checkpoint: named too (it was "no checkpoint.hdf5 there ... is
  // this a run's output directory?"; an audit), and a directory with no lock file gets none.
  std::filesystem::create_directories(b);
  {
    const io::DirectoryLock held(b, "--out");
    EXPECT_EQ(hoshi("run --restart " + b + " --t-end 0.25 --quiet", log), 2);
    EXPECT_NE(
        test::read_all(log).find("--restart " + b + ": in use by another hoshi run (process " +
                                 std::to_string(::getpid())),
        std::string::npos)
        << test::read_all(log);
  }
  // A killed run's lock file, held by nobody, is left as it is (the probe wrote its own id).
  test::write_all(b + "/" + io::kDirectoryLockName, "12345\n");
  EXPECT_EQ(hoshi("run --restart " + b + " --t-end 0.25 --quiet", log), 2);
  EXPECT_NE(test::read_all(log).find("no checkpoint.hdf5 there"), std::string::npos)
      << test::read_all(log);
  EXPECT_EQ(test::read_all(b + "/" + io::kDirectoryLockName), "12345\n");
  std::filesystem::remove(b + "/" + io::kDirectoryLockName);
  EXPECT_EQ(hoshi("run --restart " + b + " --t-end 0.25 --quiet", log), 2);
  EXPECT_NE(test::read_all(log).find("no checkpoint.hdf5 there"), std::string::npos)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(b + "/" + io::kDirectoryLockName));
  std::filesystem::remove_all(b);
  // Holding the directory, a restart removes the temporaries of the run's own outputs whatever
  // process id they carry (a live one here: this test's; a killed run's id may be a live process
  // of another node, or the restart's own as PID 1 in a new container); others' stay.
  const std::string pid = std::to_string(::getpid());
  test::write_all(a + "/.checkpoint.hdf5.tmp." + pid + ".0", "half a checkpoint");
  test::write_all(a + "/.notes.txt.tmp." + pid + ".0", "someone else's");
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.375 --quiet", log), 0) << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(a + "/.checkpoint.hdf5.tmp." + pid + ".0"));
  EXPECT_TRUE(std::filesystem::exists(a + "/.notes.txt.tmp." + pid + ".0"));
  std::filesystem::create_directories(b);
  test::write_all(b + "/" + io::kDirectoryLockName, "");
  EXPECT_EQ(hoshi(kRun + "--t-end 0.0625 --out " + b, log), 0) << test::read_all(log);
}

// A closed log pipe stops the run as SIGINT does, with a checkpoint to continue from (SIGPIPE
// ended it without one: `hoshi run | head`, or `| tee log` over a dropped ssh session). 4000
// progress lines overfill the pipe, so the run writes to it after head has gone.
TEST(IoRun, AClosedLogPipeStopsTheRunWithACheckpoint) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), err = dir.file("err"), log = dir.file("log");
  const std::string cmd = "bash -c 'set -o pipefail; " + std::string(HOSHI_EXE) +
                          " run --ic plummer -n 64 --dt 0.0625 --solver direct --t-end 1000 "
                          "--out " +
                          a + " 2>" + err + " | head -1 >/dev/null'";
  // SIGPIPE at its default, as in a shell (a harness that ignores it passes that on, and a run
  // that starts with it ignored keeps it so: its writes to the pipe just fail).
  const auto old = std::signal(SIGPIPE, SIG_DFL);
  const int rc = std::system(cmd.c_str());
  std::signal(SIGPIPE, old);
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 0) << test::read_all(err);
  EXPECT_NE(test::read_all(err).find("stopped by signal " + std::to_string(SIGPIPE)),
            std::string::npos)
      << test::read_all(err);
  ASSERT_TRUE(std::filesystem::exists(a + "/checkpoint.hdf5"));
  EXPECT_EQ(hoshi("run --restart " + a + " --quiet", log), 0) << test::read_all(log);
}

// A series turned off by a checkpoint that does not record the interval of its files (written
// before 2026-12-02) is refused as before: its files' interval is unknown.
TEST(IoRun, RestartRefusesASeriesTurnedOffWithoutItsRecordedInterval) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0.5 --snapshot-every 0.25 --out " + a, log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.75 --snapshot-every 0", log), 0)
      << test::read_all(log);
  const std::string file = a + "/checkpoint.hdf5";
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t g = H5Gopen2(f, "RunState", H5P_DEFAULT);
  ASSERT_GE(g, 0);
  EXPECT_GE(H5Adelete(g, "snapshot_files_every"), 0);
  H5Gclose(g);
  H5Fclose(f);
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 1 --snapshot-every 0.25", log), 2);
  EXPECT_NE(test::read_all(log).find("numbered by the run's interval"), std::string::npos)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(a + "/snapshot_003.hdf5"));
}

// A progress line's time has the decimals its output interval needs (an interval of 5e-5
// printed "t =    0.0001" for two rows).
TEST(IoRun, ProgressLinesTellSmallOutputIntervalsApart) {
  ScratchDir dir("run");
  const std::string log = dir.file("log");
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --solver direct --softening 0.1 --t-end 0.0001 --dt "
                  "0.00001 --output-every 0.00005 --out " +
                      dir.file("A"),
                  log),
            0)
      << test::read_all(log);
  const std::string text = test::read_all(log);
  for (const char* t : {"t =    0.000000  step       0", "t =    0.000050  step       5",
                        "t =    0.000100  step      10"})
    EXPECT_NE(text.find(t), std::string::npos) << t << "\n" << text;
}

TEST(IoRun, QuietRunPrintsOnlyItsTwoClosingLines) {
  ScratchDir dir("run");
  const std::string out = dir.file("Q"), log = dir.file("log");
  // A softening the step of 0.0625 resolves: with 0.01 the run warns, a third line.
  // --out with a trailing slash names the same directory; the summary shows it once ("Q/:").
  ASSERT_EQ(
      hoshi(kRun + "--softening 0.1 --t-end 0.25 --snapshot-every 0.25 --out " + out + "//", log),
      0)
      << test::read_all(log);
  const std::string text = test::read_all(log);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_EQ(text.rfind("solver direct (cpu), 4 steps to t = 0.25; " + out +
                           "/: energy.csv, checkpoint.hdf5, 2 snapshots, 0 frames\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("\nrelative energy error "), std::string::npos) << text;
}

TEST(IoRun, ShortRunTakesAllItsSteps) {
  // t_end = 1e-11 in steps of 1e-12: ten steps (an absolute time tolerance of 1e-12 used to
  // stop it after nine, at t = 9e-12, and a 1e-12 run after none).
  ScratchDir dir("run");
  const std::string out = dir.file("S"), log = dir.file("log");
  ASSERT_EQ(
      hoshi("run --ic plummer -n 64 --solver direct --quiet --t-end 1e-11 --dt 1e-12 --out " + out,
            log),
      0)
      << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(out + "/checkpoint.hdf5");
  EXPECT_EQ(state(c, "step"), 10);
  EXPECT_NEAR(state(c, "time"), 1e-11, 1e-23);
}

// The time column of OUT/energy.csv.
std::vector<double> energy_times(const std::string& out) {
  std::istringstream in(test::read_all(out + "/energy.csv"));
  std::string line;
  std::getline(in, line);  // header
  std::vector<double> t;
  while (std::getline(in, line)) {
    const auto a = line.find(','), b = line.find(',', a + 1);
    t.push_back(std::stod(line.substr(a + 1, b - a - 1)));
  }
  return t;
}

// An output interval shorter than a fixed step is said at the start: the series numbers skip
// (snapshot_000, 001, 003, ... with every 1/256 and dt 1/128, without a word).
TEST(IoRun, AnIntervalShorterThanTheStepIsNoted) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log");
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --dt 0.0625 --solver direct --t-end 0.125 "
                  "--snapshot-every 1/32 --output-every 0.0625 --out " +
                      a,
                  log),
            0)
      << test::read_all(log);
  const std::string said = test::read_all(log);
  EXPECT_NE(said.find("note: --snapshot-every 0.03125 is shorter than the step 0.0625: one "
                      "snapshot per step, numbered by the first multiple of the interval it "
                      "reached (the others' numbers are skipped)"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("note: --output-every"), std::string::npos) << said;  // equal: no note
  // t = 0.0625 passed multiples 1 and 2: snapshot_001; t = 0.125, 3 and 4: snapshot_003.
  EXPECT_EQ(read_hdf5_snapshot(a + "/snapshot_001.hdf5").info.time, 0.0625);
  EXPECT_EQ(read_hdf5_snapshot(a + "/snapshot_003.hdf5").info.time, 0.125);
  EXPECT_FALSE(std::filesystem::exists(a + "/snapshot_002.hdf5"));
}

TEST(IoRun, OutputTimesAreMultiplesNotSums) {
  // Output times were found by adding output_every again and again: after 1e5 outputs of 0.03
  // the sum had drifted past a step that landed on its multiple, and that row was missing
  // (step 91360 here); with --eta the steps were cut to the sums (0.6 - 1e-16, 0.8 - 1e-16, and
  // t_end - 1e-16) instead of the multiples k T and t_end.
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  ASSERT_EQ(hoshi("run --ic kepler --softening 0 --solver direct --precision double --dt 0.03 "
                  "--output-every 0.03 --t-end 3000 --quiet --out " +
                      a,
                  log),
            0)
      << test::read_all(log);
  EXPECT_EQ(energy_times(a).size(), 100001u);  // t = 0 and every step
  ASSERT_EQ(hoshi("run --ic kepler --softening 0.01 --solver direct --precision double --eta 0.1 "
                  "--output-every 0.1 --t-end 1 --quiet --out " +
                      b,
                  log),
            0)
      << test::read_all(log);
  const std::vector<double> t = energy_times(b);
  ASSERT_EQ(t.size(), 11u);
  for (int k = 0; k <= 10; ++k) EXPECT_EQ(t[k], k * 0.1) << k;  // the multiples, bit for bit
}

// Whether the run writing into `out` is stepping: a few energy.csv rows within a minute.
bool run_is_stepping(const std::string& out) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = test::read_all(out + "/energy.csv");
    if (std::count(text.begin(), text.end(), '\n') >= 4) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

class IoRunSignal : public ::testing::TestWithParam<int> {};

TEST_P(IoRunSignal, FinishesStepCheckpointsAndRestartMatches) {
  ScratchDir dir("run");
  const std::string s = dir.file("S"), u = dir.file("U"), log = dir.file("log");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string out = s, slog = dir.file("slog");
    freopen(slog.c_str(), "w", stdout);
    freopen(dir.file("elog").c_str(), "w", stderr);
    // As from a terminal: a test run in the background of a non-interactive shell (a CI job)
    // has SIGINT ignored, which the run then keeps ignoring, as a background job should.
    std::signal(GetParam(), SIG_DFL);
    execl(HOSHI_EXE, HOSHI_EXE, "run", "--ic", "plummer", "-n", "64", "--dt", "0.01", "--solver",
          "direct", "--t-end", "1e6", "--output-every", "0.05", "--out", out.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the run is stepping (a few energy.csv rows), then interrupt it.
  ASSERT_TRUE(run_is_stepping(s)) << "the run did not start";
  kill(pid, GetParam());
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed instead of a clean exit";
  EXPECT_EQ(WEXITSTATUS(status), 0) << test::read_all(dir.file("slog"));
  // Said when the signal is taken, not only after the step.
  EXPECT_NE(test::read_all(dir.file("elog"))
                .find("hoshi run: stopping after this step, with a "
                      "checkpoint (a second signal stops at once"),
            std::string::npos)
      << test::read_all(dir.file("elog"));
  const SnapshotData c = read_hdf5_snapshot(s + "/checkpoint.hdf5");
  const double step = state(c, "step");
  ASSERT_GT(step, 0);
  EXPECT_EQ(state(c, "time"), step * 0.01);  // t = step dt exactly on the grid
  // Continue 5 more steps and compare with an uninterrupted run to the same time.
  std::ostringstream t_end;
  t_end.precision(17);
  t_end << (step + 5) * 0.01;
  ASSERT_EQ(hoshi("run --restart " + s + " --t-end " + t_end.str(), log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --dt 0.01 --solver direct --quiet --output-every 0.05 "
                  "--t-end " +
                      t_end.str() + " --out " + u,
                  log),
            0)
      << test::read_all(log);
  expect_same_particles(read_hdf5_snapshot(s + "/checkpoint.hdf5").particles,
                        read_hdf5_snapshot(u + "/checkpoint.hdf5").particles);
  EXPECT_EQ(test::read_all(s + "/energy.csv"), test::read_all(u + "/energy.csv"));
}

// A stop signal the run started with ignored stays ignored: `nohup hoshi run &` goes on past
// the terminal's SIGHUP at logout (catching it stopped the run at the next step).
TEST(IoRun, ASignalIgnoredAtTheStartStaysIgnored) {
  ScratchDir dir("run");
  const std::string s = dir.file("S"), slog = dir.file("slog");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    freopen(slog.c_str(), "w", stdout);
    std::signal(SIGHUP, SIG_IGN);  // nohup
    std::signal(SIGINT, SIG_IGN);  // a script's background job
    execl(HOSHI_EXE, HOSHI_EXE, "run", "--ic", "plummer", "-n", "64", "--dt", "0.01", "--solver",
          "direct", "--t-end", "100", "--output-every", "0.05", "--out", s.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_TRUE(run_is_stepping(s)) << "the run did not start";
  kill(pid, SIGHUP);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << test::read_all(slog);
  EXPECT_EQ(test::read_all(slog).find("stopped by signal"), std::string::npos)
      << test::read_all(slog);
  EXPECT_EQ(state(read_hdf5_snapshot(s + "/checkpoint.hdf5"), "time"), 100.0);
  // An ignored SIGINT is said at the start, with the signal that stops the run.
  EXPECT_NE(test::read_all(slog).find("note: SIGINT is ignored (inherited, as by a script's "
                                      "background job): stop the run with SIGTERM"),
            std::string::npos)
      << test::read_all(slog);
}

TEST(IoRun, GalaxyUnitsGiveAnEquilibriumModelWithPhysicalG) {
  ScratchDir dir("run");
  const std::string out = dir.file("G"), log = dir.file("log");
  ASSERT_EQ(hoshi("run --ic plummer -n 512 --solver direct --precision double --softening 0 "
                  "--units galaxy --t-end 0 --quiet --out " +
                      out,
                  log),
            0)
      << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(out + "/checkpoint.hdf5");
  EXPECT_EQ(c.info.units.name, "galaxy");
  const ParticleSet& p = c.particles;
  double kinetic = 0, potential = 0, mass = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    kinetic += 0.5 * p.m[i] * (p.vx[i] * p.vx[i] + p.vy[i] * p.vy[i] + p.vz[i] * p.vz[i]);
    potential += 0.5 * p.m[i] * p.pot[i];  // pot includes G = 43007.1
    mass += p.m[i];
  }
  EXPECT_NEAR(mass, 1.0, 1e-12);  // 1e10 Msun
  // A Plummer model is in virial equilibrium: 2K/|W| = 1 up to sampling noise, a few percent
  // for 512 particles (tolerance 0.15). Without the velocity scaling to G it would be
  // 1/43007.1.
  EXPECT_NEAR(2 * kinetic / std::abs(potential), 1.0, 0.15);
  // Henon energy E = -1/4 G M^2 / r_unit scales with G: E = -43007.1 / 4 (same noise).
  EXPECT_NEAR((kinetic + potential) / (-43007.1 / 4), 1.0, 0.15);
  // Exactly: the same draw in Henon units has the same positions, velocities 1/sqrt(G) of
  // these and potentials 1/G of these (to the round-off of one scaling and the double sums).
  const std::string henon = dir.file("H");
  ASSERT_EQ(hoshi("run --ic plummer -n 512 --solver direct --precision double --softening 0 "
                  "--t-end 0 --quiet --out " +
                      henon,
                  log),
            0)
      << test::read_all(log);
  const ParticleSet h = read_hdf5_snapshot(henon + "/checkpoint.hdf5").particles;
  ASSERT_EQ(h.size(), p.size());
  // The unit system's G from the cgs constants (43007.1057...), as the checkpoint records it.
  const double G = c.info.G > 0 ? c.info.G : c.info.units.G(), sqrt_g = std::sqrt(G);
  EXPECT_NEAR(G, 43007.1, 0.01);
  for (std::size_t i = 0; i < p.size(); ++i) {
    ASSERT_EQ(p.x[i], h.x[i]) << i;
    ASSERT_EQ(p.z[i], h.z[i]) << i;
    ASSERT_NEAR(p.vy[i], sqrt_g * h.vy[i], 1e-14 * sqrt_g * (std::abs(h.vy[i]) + 1e-3)) << i;
    ASSERT_NEAR(p.pot[i], G * h.pot[i], 1e-12 * G * std::abs(h.pot[i])) << i;
  }
  // hoshi analyze uses the snapshot's G: the model is bound (it took G = 1 and found no bound
  // mass) and vcirc = sqrt(G M(<r) / r) with G = 43007.1 (it printed the G = 1 value).
  const std::string csv = dir.file("a.csv"), prof = dir.file("prof");
  ASSERT_EQ(hoshi("analyze " + out + "/checkpoint.hdf5 --bound --softening 0.01 --csv " + csv +
                      " --profiles " + prof,
                  log),
            0)
      << test::read_all(log);
  std::istringstream rows(test::read_all(csv));
  std::string line;
  std::getline(rows, line);
  std::getline(rows, line);
  EXPECT_EQ(line.substr(line.rfind(',') + 1), "1") << line;  // bound_mass: all of 1e10 Msun
  std::istringstream radial(test::read_all(prof + "/checkpoint_radial.csv"));
  std::getline(radial, line);  // r_lo,r_hi,r_mid,count,density,enclosed_mass,sigma_r,...,vcirc
  int rows_checked = 0;
  while (std::getline(radial, line)) {
    std::vector<double> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(std::stod(x));
    ASSERT_EQ(f.size(), 9u) << line;
    EXPECT_NEAR(f[8] * f[8] * f[1] / f[5] / 43007.1, 1.0, 1e-5) << line;  // printed digits
    ++rows_checked;
  }
  EXPECT_GT(rows_checked, 5);
  // Run from without --units galaxy: converted to Henon units, and said so even with --quiet
  // (every mass became 43007 times larger without a word); with it, nothing is said.
  const std::string again = dir.file("again");
  ASSERT_EQ(hoshi("run --ic " + out + "/checkpoint.hdf5 --t-end 0 --quiet --out " + again, log), 0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("note: converted from the file's units (galaxy"),
            std::string::npos)
      << test::read_all(log);
  std::filesystem::remove_all(again);
  ASSERT_EQ(
      hoshi("run --ic " + out + "/checkpoint.hdf5 --units galaxy --t-end 0 --quiet --out " + again,
            log),
      0)
      << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("converted"), std::string::npos) << test::read_all(log);
  // So is a tipsy file's, from its units file (G = 1 units of its length and mass): converted
  // unsaid before (an audit); a galaxy-units run of its own galaxy-units file says nothing.
  const std::string tipsy = dir.file("g.tipsy");
  ASSERT_EQ(hoshi("ic -n 512 --units galaxy --out " + tipsy, log), 0) << test::read_all(log);
  for (const std::string units : {"henon", "galaxy"}) {
    std::filesystem::remove_all(again);
    ASSERT_EQ(
        hoshi("run --ic " + tipsy + " --units " + units + " --t-end 0 --quiet --out " + again, log),
        0)
        << test::read_all(log);
    EXPECT_EQ(
        test::read_all(log).find("note: converted from the file's units") == std::string::npos,
        units == "galaxy")
        << units << ": " << test::read_all(log);
  }
}

TEST(IoRun, GravitationalConstantScalesTheModelAndSurvivesRestarts) {
  // -G 2: the model keeps its positions and masses and its velocities scale by sqrt(2), so it
  // starts in the same equilibrium (it started with 2K/|W| = 1/2 when the velocities stayed);
  // G is a run parameter: a parameter file sets it, a restart keeps it.
  ScratchDir dir("run");
  const std::string one = dir.file("one"), two = dir.file("two"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0 --out " + one, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi(kRun + "-G 2 --t-end 0 --out " + two, log), 0) << test::read_all(log);
  const ParticleSet p1 = read_hdf5_snapshot(one + "/checkpoint.hdf5").particles;
  const ParticleSet p2 = read_hdf5_snapshot(two + "/checkpoint.hdf5").particles;
  ASSERT_EQ(p1.size(), p2.size());
  EXPECT_EQ(p1.x, p2.x);
  EXPECT_EQ(p1.m, p2.m);
  const double s = std::sqrt(2.0);
  for (std::size_t i = 0; i < p1.size(); ++i) {
    EXPECT_EQ(p2.vx[i], p1.vx[i] * s);
    EXPECT_EQ(p2.vz[i], p1.vz[i] * s);
  }
  const std::string params = dir.file("g.yml"), from_file = dir.file("file");
  test::write_all(params, "G: 2\n");
  ASSERT_EQ(hoshi("run " + params + " --ic plummer -n 64 --dt 0.0625 --solver direct --quiet " +
                      "--t-end 0 --out " + from_file,
                  log),
            0)
      << test::read_all(log);
  EXPECT_EQ(read_hdf5_snapshot(from_file + "/checkpoint.hdf5").particles.vx, p2.vx);

  const std::string a = dir.file("A"), b = dir.file("B");
  ASSERT_EQ(hoshi(kRun + "-G 2 --t-end 1 --out " + a, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi(kRun + "-G 2 --t-end 0.5 --out " + b, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 1", log), 0) << test::read_all(log);
  expect_same_particles(read_hdf5_snapshot(a + "/checkpoint.hdf5").particles,
                        read_hdf5_snapshot(b + "/checkpoint.hdf5").particles);
  EXPECT_EQ(test::read_all(a + "/energy.csv"), test::read_all(b + "/energy.csv"));
  // The snapshots name the G behind their potentials and accelerations.
  const SnapshotData c = read_hdf5_snapshot(a + "/checkpoint.hdf5");
  ASSERT_NE(find_param(c.info.parameters, "G"), nullptr);
  EXPECT_EQ(to_string(*find_param(c.info.parameters, "G")), "2");
  ASSERT_NE(find_param(c.info.parameters, "GravityConstantInternal"), nullptr);
  EXPECT_EQ(to_string(*find_param(c.info.parameters, "GravityConstantInternal")), "2");
}

TEST(IoRun, TipsyRoundTripKeepsTheVelocitiesOfARunWithItsOwnG) {
  // write_tipsy converts to G = 1 with the run's G (v / 2 at -G 4); reading the file into a run
  // with the same -G converts back (it returned v / 2: only the unit system's G was undone).
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  ASSERT_EQ(
      hoshi(kRun + "-G 4 --t-end 0 --snapshot-every 1 --snapshot-format tipsy --out " + a, log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --ic " + a +
                      "/snapshot_000.tipsy -G 4 --solver direct --t-end 0 --quiet "
                      "--out " +
                      b,
                  log),
            0)
      << test::read_all(log);
  const ParticleSet pa = read_hdf5_snapshot(a + "/checkpoint.hdf5").particles;
  const ParticleSet pb = read_hdf5_snapshot(b + "/checkpoint.hdf5").particles;
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    EXPECT_NEAR(pb.vx[i], pa.vx[i], 1e-6 * (std::abs(pa.vx[i]) + 1)) << i;  // tipsy is float32
    EXPECT_NEAR(pb.x[i], pa.x[i], 1e-6 * (std::abs(pa.x[i]) + 1)) << i;
  }
}

TEST(IoRun, FormatConversionKeepsTimeAndUnits) {
  // hoshi ic --ic FILE --out OTHER wrote the values with henon units at t = 0: a galaxy-units
  // snapshot came out with its masses labelled 43007 times too small.
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log"), conv = dir.file("conv.hdf5");
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --dt 1e-4 --solver direct --quiet --units galaxy "
                  "--t-end 0.0005 --snapshot-every 0.0005 --out " +
                      a,
                  log),
            0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("ic --ic " + a + "/snapshot_001.hdf5 --out " + conv, log), 0)
      << test::read_all(log);
  const SnapshotData s = read_hdf5_snapshot(a + "/snapshot_001.hdf5");
  const SnapshotData c = read_hdf5_snapshot(conv);
  EXPECT_EQ(c.info.units.name, "galaxy");
  EXPECT_EQ(c.info.units.mass_g, s.info.units.mass_g);
  EXPECT_EQ(c.info.time, s.info.time);
  EXPECT_EQ(c.particles.x, s.particles.x);
  EXPECT_EQ(c.particles.vx, s.particles.vx);
}

// A file without units (Gadget-2's HDF5 writer writes no /Units; Gadget binary and CSV have
// none) is in the run's units. The HDF5 one was taken as henon and converted: with --units
// galaxy every mass shrank by 43007 and the set came out unbound. A converted copy stays
// without units (hoshi ic wrote henon /Units into it). A tipsy file without its .param is in
// G = 1 units of the run's length and mass: only its velocities scale, by sqrt(G).
// hoshi ic records what made a model's particles, as a run's snapshots do (it recorded none:
// the seed of an initial-conditions file was lost); a conversion keeps that record.
TEST(IoRun, IcRecordsTheModelItsSeedAndParameters) {
  ScratchDir dir("run");
  const std::string h5 = dir.file("h.hdf5"), conv = dir.file("c.hdf5"), log = dir.file("log");
  ASSERT_EQ(hoshi("ic --ic hernquist -n 100 --seed 5 --model-param a=2 --out " + h5, log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("ic --ic " + h5 + " --out " + conv, log), 0) << test::read_all(log);
  for (const std::string& f : {h5, conv}) {
    const SnapshotData d = read_hdf5_snapshot(f);
    for (const auto& [key, value] : {std::pair<const char*, const char*>{"ic", "hernquist"},
                                     {"particles", "100"},
                                     {"seed", "5"},
                                     {"model.a", "2"},
                                     {"model.mass_cut", "0.999"}}) {
      const ParamValue* v = find_param(d.info.parameters, key);
      ASSERT_NE(v, nullptr) << f << " " << key;
      EXPECT_EQ(to_string(*v), value) << f << " " << key;
    }
  }
}

TEST(IoRun, FilesWithoutUnitsAreInTheRunsUnits) {
  ScratchDir dir("run");
  const std::string csv = dir.file("a.csv"), h5 = dir.file("a.hdf5"), tipsy = dir.file("a.tipsy");
  const std::string log = dir.file("log");
  ASSERT_EQ(hoshi("ic --ic plummer -n 64 --out " + csv, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("ic --ic " + csv + " --out " + h5, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("ic --ic " + csv + " --out " + tipsy, log), 0) << test::read_all(log);
  EXPECT_FALSE(read_hdf5_snapshot(h5).info.units_known);
  EXPECT_FALSE(std::filesystem::exists(tipsy + ".param"));
  const auto first_energies = [&](const std::string& in, const std::string& out) {
    EXPECT_EQ(hoshi("run --ic " + in +
                        " --units galaxy --solver direct --precision double --t-end 0 --out " +
                        out + " --quiet",
                    log),
              0)
        << test::read_all(log);
    const auto rows = csv_rows(out + "/energy.csv");
    return std::make_pair(std::stod(rows.at(0).at(3)), std::stod(rows.at(0).at(4)));  // K, W
  };
  const auto [k_csv, w_csv] = first_energies(csv, dir.file("C"));
  const auto [k_h5, w_h5] = first_energies(h5, dir.file("H"));
  const auto [k_tipsy, w_tipsy] = first_energies(tipsy, dir.file("T"));
  EXPECT_EQ(k_h5, k_csv);
  EXPECT_EQ(w_h5, w_csv);
  // tipsy is float32: 1e-6; the velocities scale by sqrt(G), the kinetic energy by G.
  EXPECT_NEAR(w_tipsy / w_csv, 1.0, 1e-6);
  EXPECT_NEAR(k_tipsy / k_csv, units_galaxy().G(), 1e-6 * units_galaxy().G());
}

// hoshi ic kept a snapshot's time and units but not its G: a -G 2 run's snapshot came out with
// GravityConstantInternal 1 (analyze's bound mass 0.6 instead of 1), and its tipsy copy with
// velocities sqrt(2) too large. hoshi forces used G = 1 for it.
TEST(IoRun, FormatConversionAndForcesKeepTheRecordedG) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log"), conv = dir.file("conv.hdf5");
  ASSERT_EQ(hoshi(kRun + "-G 2 --t-end 0 --snapshot-every 1 --out " + a, log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi(kRun + "-G 2 --t-end 0 --snapshot-every 1 --snapshot-format tipsy --out " +
                      dir.file("T"),
                  log),
            0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("ic --ic " + a + "/snapshot_000.hdf5 --out " + conv, log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("ic --ic " + a + "/snapshot_000.hdf5 --out " + dir.file("conv.tipsy"), log), 0)
      << test::read_all(log);
  EXPECT_EQ(snapshot_G(load_snapshot(conv)), 2.0);
  EXPECT_EQ(test::read_all(dir.file("conv.tipsy")),
            test::read_all(dir.file("T") + "/snapshot_000.tipsy"));
  // forces: the file's G unless -G is given; the tree too, whose relative criterion takes
  // |a_old| from the file's accelerations, scaled to the G used (they were misjudged by 2x).
  // The tree on 3000 particles, where the criterion's choices depend on |a_old| / G.
  const std::string big = dir.file("B");
  ASSERT_EQ(hoshi("run --ic plummer -n 3000 --solver tree -G 2 --t-end 0 --snapshot-every 1 "
                  "--quiet --out " +
                      big,
                  log),
            0)
      << test::read_all(log);
  for (const char* solver : {"direct", "tree"}) {
    SCOPED_TRACE(solver);
    const std::string in = solver[0] == 'd' ? conv : big + "/snapshot_000.hdf5";
    ASSERT_EQ(
        hoshi("forces " + in + " --solver " + solver + " --overwrite --out " + dir.file("f2.csv"),
              log),
        0)
        << test::read_all(log);
    ASSERT_EQ(hoshi("forces " + in + " --solver " + solver + " -G 1 --overwrite --out " +
                        dir.file("f1.csv"),
                    log),
              0)
        << test::read_all(log);
    // -G auto, the default spelled out (the help said "default: 1", which a file's G and the
    // unit system's overrode): the file's G.
    ASSERT_EQ(hoshi("forces " + in + " --solver " + solver + " -G auto --overwrite --out " +
                        dir.file("fa.csv"),
                    log),
              0)
        << test::read_all(log);
    EXPECT_EQ(test::read_all(dir.file("fa.csv")), test::read_all(dir.file("f2.csv")));
    const auto f1 = csv_rows(dir.file("f1.csv")), f2 = csv_rows(dir.file("f2.csv"));
    ASSERT_EQ(f1.size(), solver[0] == 'd' ? 64u : 3000u);
    ASSERT_EQ(f2.size(), f1.size());
    for (std::size_t i = 0; i < f1.size(); ++i) {
      ASSERT_EQ(f1[i].size(), 5u);  // id,ax,ay,az,pot
      for (int k = 1; k < 5; ++k)
        EXPECT_EQ(std::stod(f2[i].at(k)), 2 * std::stod(f1[i][k])) << i;  // exact: x2
    }
  }
  // accuracy: the file's G for --errors' a_ref too (the relative errors do not depend on it).
  ASSERT_EQ(hoshi("accuracy --ic " + conv + " --targets 8 --errors " + dir.file("e2.csv"), log), 0)
      << test::read_all(log);
  ASSERT_EQ(
      hoshi("accuracy --ic " + conv + " --targets 8 -G 1 --errors " + dir.file("e1.csv"), log), 0)
      << test::read_all(log);
  const auto a_ref = [](const std::string& path) {
    std::vector<double> out;  // criterion,order,walk,theta,alpha,id,r,a_ref,acc_err,pot_err
    for (const auto& row : csv_rows(path)) out.push_back(std::stod(row.at(7)));
    return out;
  };
  const std::vector<double> r2 = a_ref(dir.file("e2.csv")), r1 = a_ref(dir.file("e1.csv"));
  ASSERT_EQ(r2.size(), r1.size());
  ASSERT_FALSE(r1.empty());
  // Printed to 7 significant digits.
  for (std::size_t i = 0; i < r1.size(); ++i) EXPECT_NEAR(r2[i], 2 * r1[i], 1e-6 * r2[i]) << i;
}

// A recorded softening that is not a number is an error naming it (it read as none: unsoftened
// forces, and a note that the file records no softening); --softening replaces it.
TEST(IoRun, ARecordedSofteningThatIsNotANumberIsAnError) {
  ScratchDir dir("run");
  const std::string log = dir.file("log"), g = dir.file("g.hdf5");
  write_hdf5_snapshot(g, make_plummer(50, 1), SnapshotInfo{});
  test::set_hdf5_string(g, "Parameters", "softening", "0.05x");
  EXPECT_EQ(hoshi("forces " + g + " --out " + dir.file("f.csv"), log), 2);
  EXPECT_NE(
      test::read_all(log).find(
          g + ": field /Parameters/softening: value '0.05x' (not a number; give --softening)"),
      std::string::npos)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(dir.file("f.csv")));
  EXPECT_EQ(hoshi("forces " + g + " --softening 0.05 --out " + dir.file("f.csv"), log), 0)
      << test::read_all(log);
}

// A Gadget-4 run's snapshot (its softening classes in /Parameters): forces takes its one
// softening with the spline kernel, as given by hand, and says where it came from; ic records
// it as hoshi's softening and kernel, converted with --units like the positions (Mpc to kpc).
TEST(IoRun, GadgetRunsSofteningIsTakenAndKeptOnConversion) {
  ScratchDir dir("run");
  const std::string log = dir.file("log"), g = dir.file("g4.hdf5");
  SnapshotInfo info;
  info.units = units_from_cgs(3.0856775814913673e24, 1.989e43, 1e5);  // Mpc, 1e10 Msun, km/s
  write_hdf5_snapshot(g, make_plummer(200, 5), info);
  test::set_hdf5_string(g, "Header", "Code", "GADGET-4");
  test::set_hdf5_double(g, "Parameters", "SofteningClassOfPartType1", 0);
  test::set_hdf5_double(g, "Parameters", "SofteningComovingClass0", 0.05);
  const std::string forces = "forces " + g + " --solver direct --precision double -G 1 --out ";
  ASSERT_EQ(hoshi(forces + dir.file("a.csv"), log), 0) << test::read_all(log);
  EXPECT_NE(test::read_all(log).find(
                "note: the softening " + g +
                " records: 0.05 (spline kernel, Gadget-4's SofteningComovingClass0 for PartType1; "
                "--softening overrides)"),
            std::string::npos)
      << test::read_all(log);
  ASSERT_EQ(hoshi(forces + dir.file("b.csv") + " --softening 0.05 --kernel spline", log), 0);
  EXPECT_EQ(test::read_all(dir.file("a.csv")), test::read_all(dir.file("b.csv")));
  ASSERT_EQ(hoshi(forces + dir.file("p.csv") + " --softening 0.05 --kernel plummer", log), 0);
  EXPECT_NE(test::read_all(dir.file("a.csv")), test::read_all(dir.file("p.csv")));
  // A length alone: Gadget's spline kernel.
  ASSERT_EQ(hoshi(forces + dir.file("c.csv") + " --softening 0.05", log), 0);
  EXPECT_EQ(test::read_all(dir.file("a.csv")), test::read_all(dir.file("c.csv")));
  EXPECT_NE(test::read_all(log).find(g + " is a Gadget-4 run's, whose kernel is the spline"),
            std::string::npos)
      << test::read_all(log);
  // Converted to hoshi's HDF5 in kpc: softening 50 kpc, spline.
  const std::string kpc = dir.file("kpc.hdf5");
  ASSERT_EQ(hoshi("ic --ic " + g + " --units galaxy --out " + kpc, log), 0) << test::read_all(log);
  const SnapshotData k = read_hdf5_snapshot(kpc);
  ASSERT_NE(find_param(k.info.parameters, "softening"), nullptr);
  const double l = info.units.length_cm / units_galaxy().length_cm;  // about 1000
  EXPECT_DOUBLE_EQ(*to_number(*find_param(k.info.parameters, "softening")), 0.05 * l);
  ASSERT_NE(find_param(k.info.parameters, "kernel"), nullptr);
  EXPECT_EQ(to_string(*find_param(k.info.parameters, "kernel")), "spline");
  EXPECT_DOUBLE_EQ(k.particles.x[0], make_plummer(200, 5).x[0] * l);
  // A bad class value is an error where the softening would be taken, not with --softening.
  test::set_hdf5_double(g, "Parameters", "SofteningComovingClass0", -1);
  EXPECT_EQ(hoshi(forces + dir.file("d.csv"), log), 2);
  EXPECT_NE(test::read_all(log).find(g + ": field /Parameters/SofteningComovingClass0: value -1"),
            std::string::npos)
      << test::read_all(log);
  EXPECT_EQ(hoshi(forces + dir.file("d.csv") + " --softening 0.05", log), 0) << test::read_all(log);
}

// hoshi ic had no --units or -G: a galaxy-units model (what hoshi run --units galaxy starts
// from) could not be written, and converting a galaxy-units snapshot to Gadget binary or CSV,
// which carry no units, silently dropped them (read back in henon units: unbound, its forces
// 43007x small). Now ic makes a model as run does, converts or declares a file's units, and
// notes how to read back a file that cannot record them.
TEST(IoRun, IcWritesTheRunsModelInItsUnitsAndNotesWhatAFormatCannotRecord) {
  ScratchDir dir("run");
  const std::string log = dir.file("log"), g = dir.file("g.hdf5");
  // -G auto: the default spelled out, the unit system's G.
  for (const std::string units : {"--units galaxy", "-G 2", "--units galaxy -G auto"}) {
    SCOPED_TRACE(units);
    const std::string a = dir.file(units == "-G 2"             ? "G2"
                                   : units == "--units galaxy" ? "GAL"
                                                               : "GAL_AUTO"),
                      ic = a + ".hdf5";
    ASSERT_EQ(hoshi("ic --ic plummer -n 64 --seed 3 " + units + " --out " + ic, log), 0)
        << test::read_all(log);
    ASSERT_EQ(hoshi(kRun + "--seed 3 " + units + " --t-end 0 --snapshot-every 1 --out " + a, log),
              0)
        << test::read_all(log);
    const LoadedSnapshot m = load_snapshot(ic), r = load_snapshot(a + "/snapshot_000.hdf5");
    EXPECT_EQ(m.particles.x, r.particles.x);
    EXPECT_EQ(m.particles.vx, r.particles.vx);
    EXPECT_EQ(m.particles.m, r.particles.m);
    EXPECT_EQ(m.units.name, r.units.name);
    EXPECT_EQ(snapshot_G(m), snapshot_G(r));
  }
  EXPECT_EQ(snapshot_G(load_snapshot(dir.file("GAL_AUTO") + "/snapshot_000.hdf5")),
            snapshot_G(load_snapshot(dir.file("GAL") + "/snapshot_000.hdf5")));
  EXPECT_GT(snapshot_G(load_snapshot(dir.file("GAL_AUTO.hdf5"))), 43000.0);
  // A run from the -G 2 model's file takes its recorded G (it ran with G = 1, 2K/|W| = 2.07):
  // the same first energies as the run that made the model with -G 2.
  ASSERT_EQ(hoshi("run --ic " + dir.file("G2.hdf5") +
                      " --dt 0.0625 --solver direct --t-end 0 --out " + dir.file("R"),
                  log),
            0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("G = 2, as the file records it"), std::string::npos)
      << test::read_all(log);
  EXPECT_EQ(csv_rows(dir.file("R") + "/energy.csv").at(0).at(5),
            csv_rows(dir.file("G2") + "/energy.csv").at(0).at(5));  // total energy
  ASSERT_EQ(hoshi("ic --ic plummer -n 64 --seed 3 --units galaxy --out " + g, log), 0);
  // Gadget binary: the note names the option that reads it back, and with it the set is the
  // same (without it, henon: G = 1); in double, bit for bit.
  ASSERT_EQ(hoshi("ic --ic " + g + " --gadget-precision double --out " + dir.file("g.gadget"), log),
            0);
  EXPECT_NE(test::read_all(log).find("cannot record units or G: read it with --units galaxy"),
            std::string::npos)
      << test::read_all(log);
  ASSERT_EQ(
      hoshi("ic --ic " + dir.file("g.gadget") + " --units galaxy --out " + dir.file("back.hdf5"),
            log),
      0)
      << test::read_all(log);
  const LoadedSnapshot a = load_snapshot(g), b = load_snapshot(dir.file("back.hdf5"));
  EXPECT_EQ(b.units.name, "galaxy");
  EXPECT_EQ(b.particles.x, a.particles.x);
  EXPECT_EQ(b.particles.vx, a.particles.vx);
  EXPECT_EQ(snapshot_G(b), snapshot_G(a));
  ASSERT_EQ(hoshi("ic --ic " + dir.file("g.gadget") + " --out " + dir.file("p.csv") + " -G 2", log),
            0);
  EXPECT_NE(test::read_all(log).find("read it with -G 2"), std::string::npos)
      << test::read_all(log);
  // HDF5 records them: no note. A file with units converts to --units: masses in henon units
  // are 1e10 Msun / 2.325e5 Msun = 43007.1 of them, and G is 1 there.
  ASSERT_EQ(hoshi("ic --ic " + g + " --units henon --out " + dir.file("h.hdf5"), log), 0);
  EXPECT_EQ(test::read_all(log).find("note"), std::string::npos) << test::read_all(log);
  const LoadedSnapshot h = load_snapshot(dir.file("h.hdf5"));
  EXPECT_EQ(h.units.name, "henon");
  EXPECT_NEAR(h.particles.m[0] / a.particles.m[0], units_galaxy().G(), 1e-9 * units_galaxy().G());
  EXPECT_NEAR(snapshot_G(h), 1.0, 1e-12);
  // A file's recorded G is not replaced by -G (that would change its dynamics).
  EXPECT_EQ(hoshi("ic --ic " + g + " -G 3 --out " + dir.file("x.hdf5"), log), 2);
  EXPECT_NE(test::read_all(log).find("-G 3 with --ic " + g + ": the file records G = 43007"),
            std::string::npos)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.hdf5")));
  for (const char* bad : {"-G 0", "-G -1", "--units cgs"})
    EXPECT_EQ(
        hoshi(std::string("ic --ic plummer -n 8 ") + bad + " --out " + dir.file("x.hdf5"), log), 2)
        << bad;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.hdf5")));
}

// A run's printed and stored parameters are the options as given ("auto" included): a snapshot
// did not say which solver, theta or alpha computed it, tree options on a run that --solver
// auto made direct were silently unused, a run from a snapshot at t = 1 silently started at 0,
// and gadget snapshots of a galaxy-units run silently lost the units. Now /Parameters/forces
// holds the resolved settings, and each of the others is noted.
TEST(IoRun, RunRecordsTheResolvedForcesAndNotesWhatItDoesNotUse) {
  ScratchDir dir("run");
  const std::string log = dir.file("log");
  const std::string base =
      "run --ic plummer -n 64 --dt 0.0625 --t-end 0.0625 --snapshot-every "
      "0.0625 --out ";
  ASSERT_EQ(hoshi(base + dir.file("D") + " --backend cpu --theta 0.3 --criterion barnes94", log), 0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find(
                "note: --theta, --criterion unused: the forces are a direct sum (--solver auto "
                "below N = " +
                std::to_string(direct_tree_crossover_n(Backend::cpu)) + ")"),
            std::string::npos)
      << test::read_all(log);
  const auto forces = [](const std::string& file) {
    const SnapshotData d = read_hdf5_snapshot(file);
    const ParamValue* v = find_param(d.info.parameters, "forces");
    return v ? to_string(*v) : std::string("(none)");
  };
  EXPECT_EQ(forces(dir.file("D") + "/snapshot_001.hdf5"),
            "direct cpu float32 G=1 eps=0.01 plummer");
  ASSERT_EQ(hoshi(base + dir.file("T") + " --solver tree --backend cpu", log), 0)
      << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("unused"), std::string::npos) << test::read_all(log);
  const std::string tree = forces(dir.file("T") + "/snapshot_001.hdf5");
  EXPECT_EQ(tree.rfind("tree cpu float32 G=1 eps=0.01 plummer theta=0.65 criterion=relative "
                       "alpha=0.02 order=2",
                       0),
            0u)
      << tree;
  EXPECT_NE(test::read_all(log).find("forces: " + tree), std::string::npos) << test::read_all(log);
  // A restart ignores the stored "forces" (not an option) and continues.
  ASSERT_EQ(hoshi("run --restart " + dir.file("T") + " --t-end 0.125 --quiet", log), 0)
      << test::read_all(log);
  // A new run from a snapshot at t = 0.0625 starts at 0, and says so, with --quiet too.
  ASSERT_EQ(hoshi("run --ic " + dir.file("T") +
                      "/snapshot_001.hdf5 --t-end 0.0625 --dt 0.0625 --quiet "
                      "--out " +
                      dir.file("N"),
                  log),
            0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("note: the file is at t = 0.0625; this run starts at t = 0"),
            std::string::npos)
      << test::read_all(log);
  // A tipsy snapshot's time is in G = 1 units: the note gives it in the run's (a galaxy-units
  // run's file at t = 6.25e-5 was said to be at 0.01296, its G = 1 time).
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --solver direct --units galaxy --dt 0.0000625 "
                  "--t-end 0.000125 --snapshot-every 0.0000625 --snapshot-format tipsy --quiet "
                  "--out " +
                      dir.file("TG"),
                  log),
            0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --ic " + dir.file("TG") +
                      "/snapshot_001.tipsy --units galaxy --t-end 0.0000625 --dt 0.0000625 "
                      "--quiet --out " +
                      dir.file("NG"),
                  log),
            0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("note: the file is at t = 6.25e-05; this run starts at t = 0"),
            std::string::npos)
      << test::read_all(log);
  // Gadget snapshots of a galaxy-units run: the note names the option that reads them back.
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --units galaxy --dt 1e-4 --t-end 1e-4 --snapshot-every "
                  "1e-4 --snapshot-format gadget --out " +
                      dir.file("G"),
                  log),
            0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find(
                "note: a gadget snapshot cannot record units or G: read it with --units galaxy"),
            std::string::npos)
      << test::read_all(log);
  // A -G run's HDF5 output keeps its unit system's /Units, which yt and pynbody read alone: said
  // with --quiet, with the factor for their masses.
  ASSERT_EQ(hoshi("run --ic plummer -n 64 -G 2 --dt 0.0625 --t-end 0.0625 --solver direct --quiet "
                  "--out " +
                      dir.file("G2"),
                  log),
            0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("note: HDF5 output (checkpoints): its /Units imply "
                                     "G = 1 and its G = 2 is in"),
            std::string::npos)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("multiply theirs by 2 "), std::string::npos)
      << test::read_all(log);
  const std::string ulog = dir.file("ulog");
  // A tree's settings that its criterion or walk does not read (--alpha with barnes94,
  // --n-group with the per-particle walk: the same forces, unsaid; an audit).
  ASSERT_EQ(hoshi(base + dir.file("U") +
                      " --solver tree --backend cpu --criterion barnes94 --alpha 0.001 --walk "
                      "particle --n-group 8",
                  ulog),
            0)
      << test::read_all(ulog);
  EXPECT_NE(test::read_all(ulog).find("note: --alpha unused: it is the relative criterion's (the "
                                      "forces' is barnes94); --n-group unused: the group walk's "
                                      "(the forces' walk is particle)"),
            std::string::npos)
      << test::read_all(ulog);
}

// A checkpoint whose model parameters a later version no longer takes (halo_r_cut of the disk
// model, refused since 2026-11-30) could not be continued: the restart resolved the stored
// --model-param again and refused it, and --model-param cannot change on a restart. The
// particles continue from the checkpoint; its model.* record is kept as it is.
TEST(IoRun, RestartKeepsModelParametersALaterVersionRefuses) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log");
  ASSERT_EQ(hoshi("run --ic hernquist -n 64 --model-param a=1 --dt 0.0625 --solver direct "
                  "--t-end 0.0625 --quiet --out " +
                      a,
                  log),
            0)
      << test::read_all(log);
  test::set_hdf5_string(a + "/checkpoint.hdf5", "Parameters", "model-param", "a=1,r_cut=3");
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.125 --quiet", log), 0) << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(a + "/checkpoint.hdf5");
  EXPECT_EQ(state(c, "time"), 0.125);
  const ParamValue* m = find_param(c.info.parameters, "model.a");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(std::get<double>(*m), 1.0);
}

// Paths are compared as locations on a restart: --out A/ with --restart A, and the run's own
// --ic file written another way, were refused as changes.
TEST(IoRun, RestartComparesPathsAsLocations) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log"), ic = dir.file("f.csv");
  write_csv(ic, test::sample_particles(32));
  ASSERT_EQ(
      hoshi("run --ic " + ic + " --dt 0.0625 --solver direct --t-end 0.0625 --quiet --out " + a,
            log),
      0)
      << test::read_all(log);
  const std::string dotted = dir.file(".") + "/f.csv";  // DIR/./f.csv
  ASSERT_EQ(
      hoshi("run --restart " + a + "/ --out " + a + " --ic " + dotted + " --t-end 0.125 --quiet",
            log),
      0)
      << test::read_all(log);
  EXPECT_EQ(state(read_hdf5_snapshot(a + "/checkpoint.hdf5"), "time"), 0.125);
  EXPECT_EQ(hoshi("run --restart " + a + " --out " + dir.file("B") + " --t-end 0.25 --quiet", log),
            2);
  EXPECT_NE(test::read_all(log).find("a continued run writes into its own directory"),
            std::string::npos)
      << test::read_all(log);
}

// A damaged checkpoint's run state is refused with its field and value: next_snapshot -4 wrote
// snapshot_-04, step -5 wrapped the step count, e0 nan gave nan energy errors, time -1 ran from
// t = -1; all exited 0.
TEST(IoRun, RestartRefusesADamagedRunState) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log");
  ASSERT_EQ(hoshi("run -n 64 --dt 0.0625 --solver direct --t-end 0.125 --snapshot-every 0.0625 "
                  "--quiet --out " +
                      a,
                  log),
            0)
      << test::read_all(log);
  const std::string good = test::read_all(a + "/checkpoint.hdf5");
  for (const auto& [key, value, why] : {std::tuple<const char*, double, const char*>{
                                            "next_snapshot", -4, "must be a whole number >= 0"},
                                        {"step", -5, "must be a whole number >= 0"},
                                        {"next_checkpoint", -1, "must be a whole number >= 0"},
                                        {"e0", std::nan(""), "must be finite"},
                                        {"time", -1, "must be >= 0"},
                                        {"next_output", 0, "must be > 0"}}) {
    SCOPED_TRACE(key);
    test::write_all(a + "/checkpoint.hdf5", good);
    test::set_hdf5_double(a + "/checkpoint.hdf5", "RunState", key, value);
    EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --quiet", log), 2);
    const std::string out = test::read_all(log);
    EXPECT_NE(out.find(a + "/checkpoint.hdf5: field RunState/" + key + ": value "),
              std::string::npos)
        << out;
    EXPECT_NE(out.find(why), std::string::npos) << out;
  }
  // A setting every checkpoint records, deleted: the run went on with the default unsaid (dt
  // 1/128 and eps 0.01 for the run's 1/16 and 0.01; no snapshots).
  for (const char* key : {"dt", "softening", "snapshot-every"}) {
    SCOPED_TRACE(key);
    test::write_all(a + "/checkpoint.hdf5", good);
    test::remove_hdf5_attribute(a + "/checkpoint.hdf5", "Parameters", key);
    EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --quiet", log), 2);
    const std::string out = test::read_all(log);
    EXPECT_NE(out.find(a + "/checkpoint.hdf5: field /Parameters/" + key + ": missing"),
              std::string::npos)
        << out;
  }
  // A stored value that does not parse is traced to the checkpoint, as one out of range is.
  test::write_all(a + "/checkpoint.hdf5", good);
  test::set_hdf5_string(a + "/checkpoint.hdf5", "Parameters", "dt", "abc");
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --quiet", log), 2);
  EXPECT_NE(test::read_all(log).find("[--dt abc is stored in " + a + "/checkpoint.hdf5"),
            std::string::npos)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(a + "/snapshot_003.hdf5"));
  test::write_all(a + "/checkpoint.hdf5", good);
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --quiet", log), 0) << test::read_all(log);
}

// --model-param lists merge key by key (the command line's a=1 replaces a parameter file's
// a=0.5), and a run stores the merged list: it stored "a=0.5,a=1", which it then refused,
// and a restart that repeated the run's own --model-param (or its parameter file) was refused
// as a change ("a=0.5,a=0.5" against "a=0.5"). Another value is still refused.
TEST(IoRun, ModelParamsMergeByKeyAndARestartMayRepeatThem) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log"), yml = dir.file("h.yml");
  test::write_all(yml, "ic: hernquist\nmodel-param: a=0.5,mass_cut=0.99\nparticles: 64\n");
  ASSERT_EQ(hoshi("run " + yml +
                      " --model-param a=1 --dt 0.0625 --solver direct --t-end 0.0625 --quiet "
                      "--out " +
                      a,
                  log),
            0)
      << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(a + "/checkpoint.hdf5");
  EXPECT_EQ(to_string(*find_param(c.info.parameters, "model-param")), "a=1,mass_cut=0.99");
  EXPECT_EQ(std::get<double>(*find_param(c.info.parameters, "model.a")), 1.0);
  // The same values again, from the file and the command line, in another order and spelling.
  ASSERT_EQ(hoshi("run --restart " + a + " " + yml +
                      " --model-param mass_cut=0.990,a=1 --t-end 0.125 --quiet",
                  log),
            0)
      << test::read_all(log);
  EXPECT_EQ(state(read_hdf5_snapshot(a + "/checkpoint.hdf5"), "time"), 0.125);
  EXPECT_EQ(hoshi("run --restart " + a + " --model-param a=2 --t-end 0.25 --quiet", log), 2);
  EXPECT_NE(test::read_all(log).find("--model-param a=2,mass_cut=0.99 with --restart " + a +
                                     ": the checkpoint's particles continue (it was "
                                     "a=1,mass_cut=0.99)"),
            std::string::npos)
      << test::read_all(log);
  // A run with the model's defaults stores no list: a restart's values are compared with its
  // model.KEY record (a=5 was taken and stored, the particles being those of a = 1/3).
  const std::string b = dir.file("B");
  ASSERT_EQ(hoshi("run --ic hernquist -n 64 --dt 0.0625 --solver direct --t-end 0.0625 --quiet "
                  "--out " +
                      b,
                  log),
            0)
      << test::read_all(log);
  EXPECT_EQ(hoshi("run --restart " + b + " --model-param a=5 --t-end 0.125 --quiet", log), 2);
  EXPECT_NE(test::read_all(log).find("(it was made with the model's defaults)"), std::string::npos)
      << test::read_all(log);
  EXPECT_EQ(
      hoshi("run --restart " + b + " --model-param mass_cut=0.999 --t-end 0.125 --quiet", log), 0)
      << test::read_all(log);
}

// A checkpoint may hold a value this version refuses (n-group above 65536 was accepted before
// 2026-11-30): the restart's error named --n-group as if it had been typed. It now says that
// the value is the checkpoint's and how to override it; overriding it continues the run.
TEST(IoRun, RestartNamesACheckpointValueThisVersionRefuses) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log");
  ASSERT_EQ(hoshi("run -n 64 --dt 0.0625 --solver tree --t-end 0.0625 --quiet --out " + a, log), 0)
      << test::read_all(log);
  test::set_hdf5_double(a + "/checkpoint.hdf5", "Parameters", "n-group", 100000);
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.125 --quiet", log), 2);
  const std::string out = test::read_all(log);
  EXPECT_NE(out.find("invalid --n-group 100000"), std::string::npos) << out;
  EXPECT_NE(out.find("[--n-group 100000 is stored in " + a + "/checkpoint.hdf5; give --n-group"),
            std::string::npos)
      << out;
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.125 --quiet --n-group 64", log), 0)
      << test::read_all(log);
  EXPECT_EQ(state(read_hdf5_snapshot(a + "/checkpoint.hdf5"), "time"), 0.125);
  // Given on the command line, the value is the user's: no note.
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --quiet --n-group 100000", log), 2);
  EXPECT_EQ(test::read_all(log).find("is stored in"), std::string::npos) << test::read_all(log);
}

// A new run from a file starts as from the same particles without accelerations: the file's
// accelerations (another run's, perhaps with another G or softening) served as the relative
// criterion's |a_old| for the first forces, which then depended on them.
TEST(IoRun, NewRunFromAFileIgnoresItsAccelerations) {
  ScratchDir dir("run");
  const std::string with = dir.file("with.hdf5"), without = dir.file("without.hdf5");
  ParticleSet p = test::sample_particles(400);  // random accelerations in [-1, 1]
  write_hdf5_snapshot(with, p, SnapshotInfo{});
  for (auto* a : {&p.ax, &p.ay, &p.az, &p.pot}) std::fill(a->begin(), a->end(), 0.0);
  write_hdf5_snapshot(without, p, SnapshotInfo{});
  const std::string log = dir.file("log");
  for (const auto& [ic, out] : {std::pair{with, dir.file("A")}, std::pair{without, dir.file("B")}})
    ASSERT_EQ(hoshi("run --ic " + ic +
                        " --solver tree --criterion relative --dt 0.0625 --t-end "
                        "0.0625 --quiet --out " +
                        out,
                    log),
              0)
        << test::read_all(log);
  expect_same_particles(read_hdf5_snapshot(dir.file("A") + "/checkpoint.hdf5").particles,
                        read_hdf5_snapshot(dir.file("B") + "/checkpoint.hdf5").particles);
}

// A bad value from a parameter file is named with the file and field (it read as if typed on
// the command line); given on the command line as well, the command line's value is the one.
TEST(IoRun, ParameterFileValuesAreNamedWithTheFile) {
  ScratchDir dir("run");
  const std::string yml = dir.file("p.yml"), log = dir.file("log");
  for (const auto& [text, needle] :
       {std::pair<std::string, std::string>{"dt: abc\n", ": field dt: option --dt: value 'abc'"},
        {"render-every: 1\nrender-resolution: 5\n", ": field render-resolution: --render-"},
        {"softening: -1\n", ": field softening: "},
        // These went unnamed (thrown outside the part of the setup that named the file; or
        // naming no option: "format: value 'foo'", "unknown parameter 'foo' for model").
        {"seed: -1\n", ": field seed: option --seed: value '-1'"},
        {"threads: -1\n", ": field threads: invalid --threads -1"},
        {"snapshot-format: foo\n", ": field snapshot-format: --snapshot-format: value 'foo'"},
        {"units: foo\n", ": field units: --units: value 'foo'"},
        {"ic: nosuch\n", ": field ic: --ic nosuch: no such file"},
        {"model-param: foo=1\n", ": field model-param: unknown parameter 'foo'"},
        // The models' own words for --eccentricity and --radius (review).
        {"ic: kepler\neccentricity: 2\n", ": field eccentricity: invalid eccentricity 2"},
        {"ic: uniform\nradius: -1\n", ": field radius: invalid radius -1"}}) {
    test::write_all(yml, text);
    EXPECT_EQ(hoshi("run " + yml + (text.rfind("ic:", 0) == 0 ? "" : " -n 64") +
                        " --t-end 0 --out " + dir.file("A"),
                    log),
              2)
        << text;
    const std::string out = test::read_all(log);
    EXPECT_NE(out.find(yml + needle), std::string::npos) << out;
  }
  // The model's own values too (particles: many was reported as a bad -n).
  test::write_all(yml, "particles: many\n");
  EXPECT_EQ(hoshi("run " + yml + " --t-end 0 --out " + dir.file("A"), log), 2);
  EXPECT_NE(test::read_all(log).find(yml + ": field particles: invalid -n value 'many'"),
            std::string::npos)
      << test::read_all(log);
  test::write_all(yml, "dt: 0.5\n");
  EXPECT_EQ(hoshi("run " + yml + " -n 64 --t-end 0 --dt -1 --out " + dir.file("A"), log), 2);
  EXPECT_EQ(test::read_all(log).find(yml), std::string::npos) << test::read_all(log);
  // A model's error about a typed -n is not the file's model-param (it was blamed on it).
  test::write_all(yml, "ic: disk\nmodel-param: disk_fraction=0.9\n");
  EXPECT_EQ(hoshi("run " + yml + " -n 3 --t-end 0 --out " + dir.file("A"), log), 2);
  EXPECT_EQ(test::read_all(log).find("field model-param"), std::string::npos)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("-n 3"), std::string::npos) << test::read_all(log);
}

// The command line's step overrides the file's other one: --eta with dt: in the file (and
// --dt with eta:) was an error that only an edit of the file cleared.
TEST(IoRun, TheCommandLinesStepOverridesTheFilesOtherOne) {
  ScratchDir dir("run");
  const std::string yml = dir.file("p.yml"), log = dir.file("log");
  test::write_all(yml, "dt: 0.0078125\nt-end: 0.0625\n");
  ASSERT_EQ(hoshi("run " + yml + " -n 64 --eta 0.05 --quiet --out " + dir.file("A"), log), 0)
      << test::read_all(log);
  const SnapshotData a = read_hdf5_snapshot(dir.file("A") + "/checkpoint.hdf5");
  EXPECT_EQ(io::to_string(*find_param(a.info.parameters, "eta")), "0.05");
  // --eta 0 (fixed steps of --dt) keeps the file's dt.
  ASSERT_EQ(hoshi("run " + yml + " -n 64 --eta 0 --quiet --out " + dir.file("Z"), log), 0)
      << test::read_all(log);
  EXPECT_EQ(csv_rows(dir.file("Z") + "/energy.csv").back().at(2), "0.0078125");
  test::write_all(yml, "eta: 0.05\nt-end: 0.0625\n");
  ASSERT_EQ(hoshi("run " + yml + " -n 64 --dt 0.03125 --quiet --out " + dir.file("B"), log), 0)
      << test::read_all(log);
  const SnapshotData b = read_hdf5_snapshot(dir.file("B") + "/checkpoint.hdf5");
  EXPECT_EQ(io::to_string(*find_param(b.info.parameters, "eta")), "0");
  EXPECT_EQ(csv_rows(dir.file("B") + "/energy.csv").back().at(2), "0.03125");
  // Both typed: still an error.
  EXPECT_EQ(hoshi("run " + yml + " -n 64 --dt 0.03125 --eta 0.1 --out " + dir.file("C"), log), 2);
}

// energy.csv holds whole rows only: a row cut short (a full disk, a kill mid-write) is dropped
// by a restart's trim (a cut "17" read as step 1 was kept, and the continued log had a line
// "1"), and a row whose write fails is cut back (half a row was left for readers).
TEST(IoRun, EnergyLogKeepsWholeRowsOnly) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  const std::string every = "--output-every 0.0625 ";
  ASSERT_EQ(hoshi(kRun + every + "--t-end 0.125 --out " + a, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi(kRun + every + "--t-end 0.25 --out " + b, log), 0) << test::read_all(log);
  // A row cut in the middle of the log, as an earlier version's restart kept one ("2," as a
  // line of its own, good rows after it), is dropped, and the rows after it stay (the trim
  // dropped those too).
  const std::string whole = test::read_all(a + "/energy.csv");
  const std::size_t second = whole.find('\n', whole.find('\n') + 1) + 1;  // after row 0
  test::write_all(a + "/energy.csv", whole.substr(0, second) + "2,\n" + whole.substr(second));
  std::ofstream(a + "/energy.csv", std::ios::app) << "1";  // a cut last row
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --quiet", log), 0) << test::read_all(log);
  EXPECT_EQ(test::read_all(a + "/energy.csv"), test::read_all(b + "/energy.csv"));
  // Writes past the next whole KiB fail (the file-size limit, as a full disk): the row that
  // crosses it (a row is ~260 B).
  const std::size_t limit_kib = test::read_all(a + "/energy.csv").size() / 1024 + 1;
  const std::string limited = "bash -c \"trap '' XFSZ; ulimit -f " + std::to_string(limit_kib) +
                              "; exec " + std::string(HOSHI_EXE) + " run --restart " + a +
                              " --t-end 4 --quiet\" >/dev/null 2>" + log;
  const int raw = std::system(limited.c_str());
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 1) << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("energy.csv failed (disk full?)"), std::string::npos)
      << test::read_all(log);
  const std::string text = test::read_all(a + "/energy.csv");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_LE(text.size(), 1024 * limit_kib);
  EXPECT_GT(csv_rows(a + "/energy.csv").size(), csv_rows(b + "/energy.csv").size());
  for (const auto& row : csv_rows(a + "/energy.csv")) EXPECT_EQ(row.size(), 14u);
}

// -G auto (typed, or in the parameter file the run began with) continues with the checkpoint's
// G: it was refused as a change ("it was 43007.1"), and the run could not be restarted from
// its own parameter file. A restart warns of its step only when the step is given again (the
// checkpoint's own --dt repeated the first part's warning at every restart).
TEST(IoRun, RestartWithGAutoKeepsTheStoredGAndWarnsOfAGivenStepOnly) {
  ScratchDir dir("run");
  const std::string yml = dir.file("g.yml"), a = dir.file("A"), log = dir.file("log");
  test::write_all(yml, "G: auto\nunits: galaxy\nparticles: 64\nsolver: direct\nt-end: 0.0625\n");
  ASSERT_EQ(hoshi("run " + yml + " --quiet --out " + a, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("run " + yml + " --restart " + a + " --t-end 0.125 --quiet", log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + a + " -G auto --t-end 0.1875 --quiet", log), 0)
      << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("warning"), std::string::npos) << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(a + "/checkpoint.hdf5");
  EXPECT_NEAR(std::stod(io::to_string(*find_param(c.info.parameters, "G"))), 43007.1, 0.01);
  EXPECT_EQ(state(c, "time"), 0.1875);
  EXPECT_EQ(hoshi("run --restart " + a + " -G 2 --t-end 0.25 --quiet", log), 2);
  // The softening 0.001 at dt 1/128 warns (sqrt(eps / max|a|)); a restart that gives the step
  // again is warned again, one that does not is not.
  const std::string b = dir.file("B");
  ASSERT_EQ(
      hoshi("run -n 300 --softening 0.001 --dt 0.0078125 --t-end 0.0625 --quiet --out " + b, log),
      0);
  ASSERT_NE(test::read_all(log).find("warning"), std::string::npos) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 0.125 --quiet", log), 0);
  EXPECT_EQ(test::read_all(log).find("warning"), std::string::npos) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 0.25 --dt 0.0078125 --quiet", log), 0);
  EXPECT_NE(test::read_all(log).find("warning"), std::string::npos) << test::read_all(log);
}

// --dt auto, the default: 1/128 where the initial state's limits allow it, else the power of
// two the warning for 1/128 would suggest. A galaxy-units Plummer sphere (G = 43007.1: its
// dynamical times are 1/207 of the Henon model's) at 1/128 ends with an energy error of order 1
// (1.9 by t = 0.02, three steps); the step chosen is at most 0.2 of the softening's measure and
// 1/16 of the shortest dynamical time, where the Henon model at 1/128 (0.1 of the measure,
// 1/60 of the time) keeps its energy to ~1e-4 over ten time units (README). The note says the
// step with --quiet too; the checkpoint stores the step taken, and a restart continues with it.
TEST(IoRun, DefaultStepIsChosenFromTheInitialState) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), h = dir.file("H"), q = dir.file("Q"),
                    log = dir.file("log");
  const auto stored_dt = [](const std::string& run) {
    const SnapshotData c = read_hdf5_snapshot(run + "/checkpoint.hdf5");
    const ParamValue* v = find_param(c.info.parameters, "dt");
    return v && std::holds_alternative<double>(*v) ? std::get<double>(*v) : std::nan("");
  };
  // Henon units: 1/128, said without --quiet, and no warning.
  ASSERT_EQ(hoshi("run -n 256 --solver direct --t-end 0.0625 --out " + h, log), 0);
  std::string said = test::read_all(log);
  EXPECT_NE(said.find("dt auto,"), std::string::npos) << said;
  EXPECT_NE(said.find("\n--dt auto: 0.0078125 = 1/128\n"), std::string::npos) << said;
  EXPECT_EQ(said.find("warning"), std::string::npos) << said;
  EXPECT_EQ(stored_dt(h), 1.0 / 128);
  ASSERT_EQ(hoshi("run -n 256 --solver direct --t-end 0.0625 --quiet --out " + q, log), 0);
  EXPECT_EQ(test::read_all(log).find("--dt auto"), std::string::npos) << test::read_all(log);

  const std::string galaxy = "run --units galaxy -n 512 --solver direct --output-every 0.001 ";
  ASSERT_EQ(hoshi(galaxy + "--t-end 0.02 --quiet --out " + a, log), 0);
  said = test::read_all(log);
  EXPECT_EQ(said.find("warning"), std::string::npos) << said;
  const auto chosen = said.find("--dt auto: ");
  const auto t_dyn = said.find(") = ");
  const auto measure = said.find("sqrt(eps / max|a|) = ");
  ASSERT_TRUE(chosen != std::string::npos && t_dyn != std::string::npos &&
              measure != std::string::npos)
      << said;
  const double dt = std::stod(said.substr(chosen + 11));
  const double bound =
      std::min(std::stod(said.substr(t_dyn + 4)) / 16, 0.2 * std::stod(said.substr(measure + 21)));
  EXPECT_LE(dt, bound) << said;
  EXPECT_GT(dt, bound / 2) << said;
  EXPECT_EQ(dt, std::exp2(std::round(std::log2(dt)))) << said;
  EXPECT_NE(said.find(", " + std::to_string(static_cast<long>(std::ceil(0.02 / dt))) +
                      " steps to --t-end 0.02"),
            std::string::npos)
      << said;
  EXPECT_EQ(stored_dt(a), dt);
  const auto max_error = [](const std::string& run) {
    double e = 0;
    for (const auto& row : csv_rows(run + "/energy.csv"))
      e = std::max(e, std::abs(std::stod(row.at(6))));
    return e;
  };
  EXPECT_LT(max_error(a), 1e-3);
  ASSERT_EQ(hoshi(galaxy + "--dt 0.0078125 --t-end 0.02 --quiet --out " + b, log), 0);
  EXPECT_GT(max_error(b), 0.1);  // what the choice avoids

  // The restart takes the stored step, without a note or a warning: every step's dt but the
  // ones shortened to end at --t-end (0.02 is 655.36 steps).
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.025 --quiet", log), 0) << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("--dt auto"), std::string::npos) << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("warning"), std::string::npos) << test::read_all(log);
  const auto rows = csv_rows(a + "/energy.csv");
  ASSERT_GT(rows.size(), 22u);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (const double t = std::stod(rows[i].at(1)); t != 0.02 && t != 0.025) {
      EXPECT_EQ(std::stod(rows[i].at(2)), dt) << rows[i].at(1);
    }
  }
  EXPECT_EQ(stored_dt(a), dt);

  // A step typed as the note writes it, a fraction, is the number it is.
  const std::string f = dir.file("F");
  ASSERT_EQ(hoshi("run -n 64 --dt 1/64 --t-end 0.0625 --quiet --out " + f, log), 0)
      << test::read_all(log);
  EXPECT_EQ(stored_dt(f), 1.0 / 64);
  EXPECT_EQ(state(read_hdf5_snapshot(f + "/checkpoint.hdf5"), "step"), 4);
  // One particle: nothing to limit the step (auto took inf, and the run failed).
  test::write_all(dir.file("one.csv"), "x,y,z,vx,vy,vz,m\n0,0,0,0.1,0,0,1\n");
  const std::string one = dir.file("one");
  ASSERT_EQ(hoshi("run --ic " + dir.file("one.csv") + " --t-end 0.1 --quiet --out " + one, log), 0)
      << test::read_all(log);
  EXPECT_EQ(stored_dt(one), 1.0 / 128);
  // A step that leaves more than 1e12 steps is refused before the directory is made.
  const std::string c = dir.file("C");
  EXPECT_EQ(hoshi(galaxy + "--t-end 1e9 --output-every 10 --quiet --out " + c, log), 2);
  said = test::read_all(log);
  EXPECT_NE(said.find("--dt auto: "), std::string::npos) << said;
  EXPECT_NE(said.find("leaves more than 1e12 steps to --t-end 1e+09"), std::string::npos) << said;
  EXPECT_FALSE(std::filesystem::exists(c));
}

// A checkpoint edited with h5py stores an integer parameter as float64: its whole value must
// read back through the integer option (it was passed on as "1e+05", "not an integer").
TEST(IoRun, RestartReadsAWholeDoubleIntoAnIntegerOption) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log");
  ASSERT_EQ(hoshi("run -n 64 --dt 0.0625 --solver tree --t-end 0.0625 --quiet --out " + a, log), 0)
      << test::read_all(log);
  for (const auto& [key, value] : {std::pair{"seed", 100000.0}, std::pair{"n-group", 1000.0}}) {
    test::remove_hdf5_attribute(a + "/checkpoint.hdf5", "Parameters", key);  // int64 as written
    test::set_hdf5_double(a + "/checkpoint.hdf5", "Parameters", key, value);
  }
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.125 --quiet", log), 0) << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(a + "/checkpoint.hdf5");
  EXPECT_EQ(state(c, "time"), 0.125);
  for (const auto& [key, text] : {std::pair{"seed", "100000"}, std::pair{"n-group", "1000"}}) {
    const ParamValue* v = find_param(c.info.parameters, key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(io::to_string(*v), text) << key;
  }
}

// hoshi ic --out X.tipsy replaced an existing X.tipsy.param (the units of another file).
TEST(IoRun, ConversionToTipsyKeepsAnExistingParamFile) {
  ScratchDir dir("run");
  const std::string t = dir.file("mine.tipsy"), log = dir.file("log");
  test::write_all(t + ".param", "dKpcUnit = 1000\n");
  EXPECT_EQ(hoshi("ic -n 16 --out " + t, log), 2);
  EXPECT_NE(test::read_all(log).find(".param exists"), std::string::npos) << test::read_all(log);
  EXPECT_EQ(test::read_all(t + ".param"), "dKpcUnit = 1000\n");
  EXPECT_FALSE(std::filesystem::exists(t));
  ASSERT_EQ(hoshi("ic -n 16 --out " + t + " --overwrite", log), 0) << test::read_all(log);
  EXPECT_NE(test::read_all(t + ".param"), "dKpcUnit = 1000\n");
}

TEST(IoRun, ParametersRecordTheParticlesTheRunHas) {
  // A kepler run stored particles = 8192 (-n's default) for its 2 particles.
  ScratchDir dir("run");
  const std::string out = dir.file("K"), log = dir.file("log");
  ASSERT_EQ(hoshi("run --ic kepler --t-end 0.1 --quiet --out " + out, log), 0)
      << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(out + "/checkpoint.hdf5");
  ASSERT_NE(find_param(c.info.parameters, "particles"), nullptr);
  EXPECT_EQ(to_string(*find_param(c.info.parameters, "particles")), "2");
  // --eccentricity is kepler's, --radius uniform's: other runs do not list them.
  EXPECT_NE(find_param(c.info.parameters, "eccentricity"), nullptr);
  EXPECT_EQ(find_param(c.info.parameters, "radius"), nullptr);
  ASSERT_EQ(hoshi("run --restart " + out + " --t-end 0.2 --quiet", log), 0) << test::read_all(log);
  const std::string p = dir.file("P");
  ASSERT_EQ(hoshi("run -n 64 --t-end 0.01 --quiet --out " + p, log), 0) << test::read_all(log);
  const SnapshotData cp = read_hdf5_snapshot(p + "/checkpoint.hdf5");
  EXPECT_EQ(find_param(cp.info.parameters, "eccentricity"), nullptr);
  EXPECT_EQ(find_param(cp.info.parameters, "radius"), nullptr);
}

// What made the particles cannot change on restart (they were stored but ignored, or relabelled
// the data), nor can the intervals that number the files; --out must be the restart directory;
// the energy.csv interval may change and then counts from the checkpoint's time. Nothing is
// written by a refused restart.
TEST(IoRun, RestartRefusesWhatItCannotHonour) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0.125 --snapshot-every 0.0625 --out " + a, log), 0)
      << test::read_all(log);
  const std::string before = test::read_all(a + "/energy.csv");
  for (const std::string& change :
       {std::string("-n 32"), std::string("--seed 5"), std::string("--ic hernquist"),
        std::string("--units galaxy"), std::string("-G 2"), std::string("--snapshot-every 0.25"),
        "--out " + dir.file("elsewhere")}) {
    EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 " + change, log), 2) << change;
    const std::string msg = test::read_all(log);
    EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 1) << change << ": " << msg;
    EXPECT_EQ(test::read_all(a + "/energy.csv"), before) << change;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("elsewhere")));
  // The refusal of another interval says how to change it, and that works: a copy of the
  // checkpoint in a directory of its own continues at the run's time with its settings (the
  // advice was a new run from the checkpoint, which starts at t = 0 with the defaults).
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --snapshot-every 0.25", log), 2);
  EXPECT_NE(test::read_all(log).find("mkdir NEW && cp " + a +
                                     "/checkpoint.hdf5 NEW/ && hoshi run --restart NEW "
                                     "--t-end 0.25 --snapshot-every 0.25)"),
            std::string::npos)
      << test::read_all(log);
  const std::string c = dir.file("C");
  std::filesystem::create_directory(c);
  std::filesystem::copy_file(a + "/checkpoint.hdf5", c + "/checkpoint.hdf5");
  ASSERT_EQ(hoshi("run --restart " + c + " --t-end 0.25 --snapshot-every 0.25", log), 0)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(c + "/snapshot_000.hdf5"));
  EXPECT_EQ(read_hdf5_snapshot(c + "/snapshot_001.hdf5").info.time, 0.25);
  EXPECT_EQ(energy_times(c), std::vector<double>{0.25});
  EXPECT_EQ(test::read_all(a + "/energy.csv"), before);
  // A damaged energy log names its file and line (it said "stoull").
  const std::string b = dir.file("B");
  std::filesystem::copy(a, b, std::filesystem::copy_options::recursive);
  std::string damaged = before;
  damaged.replace(damaged.find('\n', damaged.find('\n') + 1) + 1, 1, "x");
  test::write_all(b + "/energy.csv", damaged);
  EXPECT_EQ(hoshi("run --restart " + b + " --t-end 0.25", log), 2);
  EXPECT_NE(test::read_all(log).find("energy.csv: line 3: field step"), std::string::npos)
      << test::read_all(log);
  // So does another header: the rows of other widths were dropped and the new ones appended
  // under it. The log is left as it was.
  for (const std::string header : {"step,time", "garbage"}) {
    test::write_all(b + "/energy.csv", header + before.substr(before.find('\n')));
    EXPECT_EQ(hoshi("run --restart " + b + " --t-end 0.25", log), 2);
    EXPECT_NE(test::read_all(log).find("energy.csv: line 1: field header: value '" + header +
                                       "' (not hoshi's step,time,dt,"),
              std::string::npos)
        << test::read_all(log);
    EXPECT_EQ(test::read_all(b + "/energy.csv"), header + before.substr(before.find('\n')));
  }
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --output-every 0.0625", log), 0)
      << test::read_all(log);
  const std::vector<double> t = energy_times(a);
  ASSERT_EQ(t.size(), 4u);  // 0, 0.125 (the first run's rows), then 0.1875 and 0.25
  EXPECT_EQ(t[2], 0.1875);
  EXPECT_EQ(t[3], 0.25);
}

// A restart could switch a series of Gadget snapshots between float and double, or 32- and 64-bit
// ids, silently (a checkpoint from before the options existed took the new float default): one
// layout per series, a change is refused, and such a checkpoint continues in double and 64-bit.
TEST(IoRun, GadgetSnapshotSeriesKeepsItsLayoutAcrossRestarts) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  const std::string gadget = "--snapshot-every 0.0625 --snapshot-format gadget ";
  const auto size = [](const std::string& f) { return std::filesystem::file_size(f); };
  // Format 2, 64 particles of equal mass (in the header), double with 64-bit ids.
  const std::uintmax_t f64 = 4 * 24 + 256 + 64 * (6 * 8 + 8);
  ASSERT_EQ(hoshi(kRun + gadget + "--t-end 0.125 --gadget-precision double --out " + a, log), 0)
      << test::read_all(log);
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --gadget-precision float", log), 2);
  EXPECT_NE(test::read_all(log).find("--gadget-precision float with --restart " + a +
                                     ": the Gadget snapshots there are gadget-precision double"),
            std::string::npos)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(a + "/snapshot_003.gadget"));
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.25", log), 0) << test::read_all(log);
  EXPECT_EQ(size(a + "/snapshot_001.gadget"), 4 * 24 + 256 + 64 * (6 * 8 + 4));  // double, 32-bit
  EXPECT_EQ(size(a + "/snapshot_004.gadget"), size(a + "/snapshot_001.gadget"));
  // A checkpoint without the two parameters: its run wrote double with 64-bit ids.
  ASSERT_EQ(
      hoshi(kRun + gadget + "--t-end 0.125 --gadget-precision double --gadget-ids 64 --out " + b,
            log),
      0)
      << test::read_all(log);
  for (const char* key : {"gadget-precision", "gadget-ids"})
    test::remove_hdf5_attribute(b + "/checkpoint.hdf5", "Parameters", key);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 0.25", log), 0) << test::read_all(log);
  EXPECT_EQ(size(b + "/snapshot_001.gadget"), f64);
  EXPECT_EQ(size(b + "/snapshot_004.gadget"), f64);
}

// --dt with --eta > 0 was ignored (the adaptive step sets every step): giving both, on the
// command line or in a parameter file, is an error. A restart of an adaptive run inherits the
// stored default dt with its eta, which is no error; a --dt given to it is one.
TEST(IoRun, FixedStepWithAdaptiveStepIsAnError) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log"), yml = dir.file("dt.yml");
  const std::string adaptive = "run -n 64 --solver direct --quiet --eta 0.05 ";
  EXPECT_EQ(hoshi(adaptive + "--dt 0.01 --t-end 0.0625 --out " + a, log), 2);
  EXPECT_NE(test::read_all(log).find("--dt 0.01 with --eta 0.05: "), std::string::npos)
      << test::read_all(log);
  // Both in one parameter file too (with --eta on the command line, the file's dt is replaced:
  // TheCommandLinesStepOverridesTheFilesOtherOne).
  test::write_all(yml, "dt: 0.01\neta: 0.05\n");
  EXPECT_EQ(hoshi("run -n 64 --solver direct --quiet " + yml + " --t-end 0.0625 --out " + a, log),
            2);
  EXPECT_NE(test::read_all(log).find("--dt 0.01 with --eta 0.05: "), std::string::npos)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(a));
  ASSERT_EQ(hoshi(adaptive + "--t-end 0.0625 --out " + a, log), 0) << test::read_all(log);
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.125", log), 0) << test::read_all(log);
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --dt 0.01", log), 2);
  // --eta 0 is the fixed step, where --dt applies.
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 --eta 0 --dt 0.0625", log), 0)
      << test::read_all(log);
}

// A restart with another force setting (here the softening) computes the restored state's
// forces again: its first step is that of a new run from the checkpoint's particles with that
// setting (it kicked with the old setting's stored accelerations).
TEST(IoRun, RestartWithNewForceSettingsRecomputesTheForces) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), c = dir.file("C"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--softening 0.05 --t-end 0.125 --out " + a, log), 0)
      << test::read_all(log);
  const std::string start = dir.file("start.hdf5");
  std::filesystem::copy_file(a + "/checkpoint.hdf5", start);
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.1875 --softening 0.02", log), 0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("force settings changed: --softening 0.02 (was 0.05)"),
            std::string::npos)
      << test::read_all(log);
  // The energy error is measured past the jump of the new softening, which is reported.
  EXPECT_NE(test::read_all(log).find("(not counting the jump "), std::string::npos)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --ic " + start +
                      " --dt 0.0625 --solver direct --quiet --softening 0.02 --t-end 0.0625 "
                      "--out " +
                      c,
                  log),
            0)
      << test::read_all(log);
  expect_same_particles(read_hdf5_snapshot(a + "/checkpoint.hdf5").particles,
                        read_hdf5_snapshot(c + "/checkpoint.hdf5").particles);
  // Unchanged settings say nothing of it.
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.25", log), 0) << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("force settings changed"), std::string::npos);
  // Neither do changed options that leave the forces as they were: the checkpoint records the
  // resolved forces, and direct summation has no opening angle (--theta was counted as a
  // change and the restored forces were computed again).
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.3125 --theta 0.3 --walk particle", log), 0)
      << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("force settings changed"), std::string::npos)
      << test::read_all(log);
  const SnapshotData checkpoint = read_hdf5_snapshot(a + "/checkpoint.hdf5");
  const ParamValue* forces = find_param(checkpoint.info.state, "forces");
  ASSERT_NE(forces, nullptr);
  EXPECT_EQ(to_string(*forces), "direct cpu float32 G=1 eps=0.02 plummer");
  // Said with --quiet too (it explains the energies' jump; --quiet hid it).
  ASSERT_EQ(hoshi("run --restart " + a + " --t-end 0.375 --softening 0.03 --quiet", log), 0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("force settings changed: --softening 0.03 (was 0.02)"),
            std::string::npos)
      << test::read_all(log);
  // A per-particle walk's record from before 2026-12-02 also named the group walk's n_group and
  // local_ratio: the same forces, not recomputed (the restart was no longer bit for bit).
  const std::string w = dir.file("W");
  ASSERT_EQ(hoshi(kRun + "--solver tree --walk particle --t-end 0.125 --out " + w, log), 0)
      << test::read_all(log);
  const std::string now =
      to_string(*find_param(read_hdf5_snapshot(w + "/checkpoint.hdf5").info.state, "forces"));
  ASSERT_NE(now.find(" n_leaf=16 walk=particle"), std::string::npos) << now;
  std::string old = now;
  old.replace(old.find(" walk=particle"), 0, " n_group=128 local_ratio=0.37");
  test::set_hdf5_string(w + "/checkpoint.hdf5", "RunState", "forces", old);
  ASSERT_EQ(hoshi("run --restart " + w + " --t-end 0.25", log), 0) << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("force settings changed"), std::string::npos)
      << test::read_all(log);
  // Another value of a key both name is a change.
  std::string other = now;
  other.replace(other.find("n_leaf=16"), 9, "n_leaf=8");
  test::set_hdf5_string(w + "/checkpoint.hdf5", "RunState", "forces", other);
  ASSERT_EQ(hoshi("run --restart " + w + " --t-end 0.375", log), 0) << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("force settings changed"), std::string::npos)
      << test::read_all(log);
}

// A restart option equal in value to the stored one is no change (-G 1.0 against a stored 1
// was refused as another G; 43007.1 against 4.30071e4 likewise).
TEST(IoRun, RestartComparesStoredNumbersByValue) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0.125 --out " + a, log), 0) << test::read_all(log);
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.25 -G 1.0 --softening 1e-2", log), 0)
      << test::read_all(log);
  EXPECT_EQ(test::read_all(log).find("force settings changed"), std::string::npos)
      << test::read_all(log);
}

// --flag=false is false (counting the flag made --overwrite=false overwrite and
// --quiet=false quiet); a YAML file with two documents is refused (the second was ignored); a
// seed beyond int64 survives a restart (it was stored as an inexact double).
TEST(IoRun, FlagsParameterFilesAndLargeSeeds) {
  ScratchDir dir("run");
  const std::string a = dir.file("A"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0.0625 --out " + a, log), 0) << test::read_all(log);
  EXPECT_EQ(hoshi(kRun + "--t-end 0.0625 --out " + a + " --overwrite=false", log), 2);
  EXPECT_NE(test::read_all(log).find("use --overwrite"), std::string::npos) << test::read_all(log);
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --dt 0.0625 --solver direct --t-end 0.0625 --out " + a +
                      " --overwrite --quiet=false",
                  log),
            0);
  EXPECT_NE(test::read_all(log).find("parameters:"), std::string::npos) << test::read_all(log);
  const std::string yml = dir.file("two.yml");
  test::write_all(yml, "kernel: spline\n---\nsoftening: 0.02\n");
  EXPECT_EQ(hoshi("run " + yml + " -n 64 --t-end 0 --out " + dir.file("B"), log), 2);
  EXPECT_NE(test::read_all(log).find("YAML documents"), std::string::npos) << test::read_all(log);
  // A flag's value in a parameter file: YAML's booleans in any case; an empty one is an error
  // (quiet:, ~ and "" turned the flag on, and False was refused).
  for (const std::string off : {"False", "off", "NO"}) {
    test::write_all(yml, "quiet: " + off + "\n");
    ASSERT_EQ(hoshi("run " + yml + " -n 64 --t-end 0 --overwrite --out " + dir.file("B"), log), 0)
        << off << test::read_all(log);
    EXPECT_NE(test::read_all(log).find("parameters:"), std::string::npos) << off;
  }
  test::write_all(yml, "quiet: On\n");
  ASSERT_EQ(hoshi("run " + yml + " -n 64 --t-end 0 --overwrite --out " + dir.file("B"), log), 0);
  EXPECT_EQ(test::read_all(log).find("parameters:"), std::string::npos) << test::read_all(log);
  for (const std::string empty : {"", " ~", " \"\""}) {
    test::write_all(yml, "quiet:" + empty + "\n");
    EXPECT_EQ(hoshi("run " + yml + " -n 64 --t-end 0 --overwrite --out " + dir.file("B"), log), 2)
        << empty;
    EXPECT_NE(test::read_all(log).find("field quiet: value "), std::string::npos)
        << empty << test::read_all(log);
  }
  const std::string s = dir.file("S");
  ASSERT_EQ(hoshi(kRun + "--seed 18446744073709551615 --t-end 0.0625 --out " + s, log), 0)
      << test::read_all(log);
  EXPECT_EQ(hoshi("run --restart " + s + " --t-end 0.125", log), 0) << test::read_all(log);
  EXPECT_EQ(hoshi(kRun + "--t-end 0.5 --seed 0.5 --out " + dir.file("C"), log), 2);
  EXPECT_NE(test::read_all(log).find("option --seed: value '0.5'"), std::string::npos)
      << test::read_all(log);
}

// A run's tipsy snapshots share OUT/snapshot.param. A snapshot of an earlier run kept as the
// input of an --overwrite run into the same directory keeps its units (this run's snapshots
// rewrote the shared file in Henon units, and the galaxy-units input was then read 43007
// times too light); the earlier run's other snapshots go, and with an HDF5 series so does the
// shared file.
TEST(IoRun, TipsySnapshotsShareAUnitsFileThatAnInputKeeps) {
  ScratchDir dir("run");
  const std::string out = dir.file("T"), log = dir.file("log");
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --solver direct --units galaxy --dt 0.0000625 "
                  "--t-end 0.000125 --snapshot-every 0.0000625 --snapshot-format tipsy --quiet "
                  "--out " +
                      out,
                  log),
            0)
      << test::read_all(log);
  for (const char* name : {"snapshot_000.tipsy.param", "snapshot_001.tipsy.param"})
    EXPECT_FALSE(std::filesystem::exists(out + "/" + name)) << name;
  const std::string input = out + "/snapshot_002.tipsy";
  const TipsyData before = read_tipsy(input);
  ASSERT_TRUE(before.units_known);
  ASSERT_EQ(hoshi("run --ic " + input +
                      " --dt 0.0000625 --t-end 0.0000625 --snapshot-every 0.0000625 "
                      "--snapshot-format tipsy --overwrite --quiet --out " +
                      out,
                  log),
            0)
      << test::read_all(log);
  EXPECT_NE(test::read_all(log).find("the units of the input " + input + " are now in " + input +
                                     ".param"),
            std::string::npos)
      << test::read_all(log);
  const TipsyData after = read_tipsy(input);
  EXPECT_EQ(after.units.mass_g, before.units.mass_g);
  EXPECT_EQ(after.particles.m, before.particles.m);
  EXPECT_EQ(read_tipsy(out + "/snapshot_000.tipsy").units.name, "henon");
  // An HDF5 series over it: the tipsy snapshots and their units file go, the input stays.
  ASSERT_EQ(hoshi("run --ic " + input +
                      " --dt 0.0000625 --t-end 0.0000625 --snapshot-every "
                      "0.0000625 --overwrite --quiet --out " +
                      out,
                  log),
            0)
      << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(out + "/snapshot.param"));
  EXPECT_FALSE(std::filesystem::exists(out + "/snapshot_000.tipsy"));
  EXPECT_EQ(read_tipsy(input).units.mass_g, before.units.mass_g);
}

TEST(IoRun, GalaxyUnitsSurviveRestarts) {
  // --units galaxy without -G: G is the unit system's 43007.1. The snapshots store that G (they
  // stored the option's default 1, which a restart passed back as -G 1: the continued run had
  // G = 1 and its energy error jumped to 2).
  ScratchDir dir("run");
  const std::string a = dir.file("A"), b = dir.file("B"), log = dir.file("log");
  const std::string run =
      "run --ic plummer -n 64 --dt 1e-4 --output-every 0.001 --solver direct --quiet --units "
      "galaxy ";
  ASSERT_EQ(hoshi(run + "--t-end 0.002 --out " + a, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi(run + "--t-end 0.001 --out " + b, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("run --restart " + b + " --t-end 0.002", log), 0) << test::read_all(log);
  expect_same_particles(read_hdf5_snapshot(a + "/checkpoint.hdf5").particles,
                        read_hdf5_snapshot(b + "/checkpoint.hdf5").particles);
  EXPECT_EQ(test::read_all(a + "/energy.csv"), test::read_all(b + "/energy.csv"));
  const SnapshotData c = read_hdf5_snapshot(b + "/checkpoint.hdf5");
  const double G = c.info.units.G();
  EXPECT_NEAR(G, 43007.1, 0.1);
  for (const char* key : {"G", "GravityConstantInternal"}) {
    ASSERT_NE(find_param(c.info.parameters, key), nullptr) << key;
    EXPECT_DOUBLE_EQ(std::get<double>(*find_param(c.info.parameters, key)), G) << key;
  }
}

TEST(IoRun, KilledRunLeavesACompleteWallClockCheckpoint) {
  // SIGKILL cannot be caught: what survives is the last periodic checkpoint (every 12 ms of
  // wall clock here), which must be complete, and continuing from it must match a run that
  // was never killed. energy.csv holds rows written after that checkpoint: the continued run
  // drops and rewrites them.
  ScratchDir dir("run");
  const std::string k = dir.file("K"), u = dir.file("U"), log = dir.file("log");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    freopen(dir.file("klog").c_str(), "w", stdout);
    execl(HOSHI_EXE, HOSHI_EXE, "run", "--ic", "plummer", "-n", "64", "--dt", "0.01", "--solver",
          "direct", "--t-end", "1e6", "--output-every", "0.01", "--checkpoint-minutes", "0.0002",
          "--out", k.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Killed once a checkpoint past step 0 exists (on a loaded machine the first periodic one
  // can come before the first step, and 50 ms later there was sometimes no other yet).
  // Reading it while the run replaces it is safe: checkpoints are renamed into place.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(k + "/checkpoint.hdf5") &&
        state(read_hdf5_snapshot(k + "/checkpoint.hdf5"), "step") > 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const SnapshotData c = read_hdf5_snapshot(k + "/checkpoint.hdf5");  // complete and valid
  const double step = state(c, "step");
  ASSERT_GT(step, 0);
  std::ostringstream t_end;
  t_end.precision(17);
  t_end << (step + 3) * 0.01;
  ASSERT_EQ(hoshi("run --restart " + k + " --checkpoint-minutes 0 --t-end " + t_end.str(), log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run --ic plummer -n 64 --dt 0.01 --solver direct --quiet --output-every 0.01 "
                  "--t-end " +
                      t_end.str() + " --out " + u,
                  log),
            0)
      << test::read_all(log);
  expect_same_particles(read_hdf5_snapshot(k + "/checkpoint.hdf5").particles,
                        read_hdf5_snapshot(u + "/checkpoint.hdf5").particles);
  EXPECT_EQ(test::read_all(k + "/energy.csv"), test::read_all(u + "/energy.csv"));
}

TEST(IoRun, ParameterFileWithCommandLineOverride) {
  ScratchDir dir("run");
  const std::string params = dir.file("p.yml"), out = dir.file("P"), log = dir.file("log");
  test::write_all(params, "# test\nparticles: 32\nt_end: 0.25\nsolver: direct\nquiet: true\n");
  ASSERT_EQ(hoshi("run " + params + " --t-end 0.125 --out " + out, log), 0) << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(out + "/checkpoint.hdf5");
  EXPECT_EQ(c.particles.size(), 32u);  // from the file
  EXPECT_EQ(state(c, "time"), 0.125);  // the command line wins
  const ParamValue* t_end = find_param(c.info.parameters, "t-end");
  ASSERT_NE(t_end, nullptr);
  EXPECT_EQ(std::get<double>(*t_end), 0.125);
  const ParamValue* solver = find_param(c.info.parameters, "solver");
  ASSERT_NE(solver, nullptr);
  EXPECT_EQ(std::get<std::string>(*solver), "direct");
}

// Real-valued parameters are stored as doubles also when given as whole numbers (--t-end 1
// was int64, --t-end 0.5 double); counts stay int64, words strings.
TEST(IoRun, RealValuedParametersAreDoublesWhateverTheirText) {
  ScratchDir dir("run");
  const std::string out = dir.file("R"), log = dir.file("log");
  ASSERT_EQ(
      hoshi("run -n 32 --solver direct --t-end 1 --dt 1 --softening 0 -G 2 --quiet --out " + out,
            log),
      0)
      << test::read_all(log);
  const SnapshotData c = read_hdf5_snapshot(out + "/checkpoint.hdf5");
  for (const char* key : {"t-end", "dt", "softening", "G", "eta", "output-every"}) {
    const ParamValue* v = find_param(c.info.parameters, key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_TRUE(std::holds_alternative<double>(*v)) << key;
  }
  EXPECT_EQ(std::get<double>(*find_param(c.info.parameters, "t-end")), 1.0);
  EXPECT_TRUE(std::holds_alternative<std::int64_t>(*find_param(c.info.parameters, "particles")));
  EXPECT_TRUE(std::holds_alternative<std::string>(*find_param(c.info.parameters, "solver")));
}

TEST(IoRun, ModelParametersInSnapshotFromParameterFile) {
  // --model-param from a YAML file plus one from the command line (repeatable: both apply);
  // every effective model parameter, defaults included, is its own /Parameters attribute.
  ScratchDir dir("run");
  const std::string params = dir.file("m.yml"), out = dir.file("M"), log = dir.file("log");
  test::write_all(params,
                  "ic: merger\nmodel-param: \"mass_ratio=0.5,model2=hernquist\"\nparticles: 600\n"
                  "t-end: 0\nsnapshot-every: 1\nsolver: direct\nquiet: true\n");
  ASSERT_EQ(hoshi("run " + params + " --model-param g2.a=0.2 --out " + out, log), 0)
      << test::read_all(log);
  const SnapshotData s = read_hdf5_snapshot(out + "/snapshot_000.hdf5");
  ASSERT_EQ(s.particles.size(), 600u);
  auto get = [&](const std::string& key) -> const ParamValue& {
    static const ParamValue missing = std::string("missing");
    const ParamValue* v = find_param(s.info.parameters, key);
    return v ? *v : missing;
  };
  EXPECT_EQ(std::get<std::string>(get("model-param")), "mass_ratio=0.5,model2=hernquist,g2.a=0.2");
  EXPECT_EQ(std::get<std::string>(get("model.model2")), "hernquist");
  EXPECT_EQ(std::get<double>(get("model.mass_ratio")), 0.5);
  EXPECT_EQ(std::get<double>(get("model.g2.a")), 0.2);
  EXPECT_EQ(std::get<double>(get("model.g2.mass_cut")), 0.999);  // a default
  EXPECT_EQ(std::get<double>(get("model.r_peri")), 0.4);         // a default
  EXPECT_EQ(std::get<double>(get("model.incl2")), 60.0);         // a default
  // The parameters were used: the secondary (last 200 particles) has mass 0.5 * 1.05.
  double m2 = 0;
  for (std::size_t i = 400; i < 600; ++i) m2 += s.particles.m[i];
  EXPECT_NEAR(m2, 0.525, 1e-12);
  // A particle file is not a registry model: no model.* attributes.
  const std::string out2 = dir.file("F");
  ASSERT_EQ(hoshi("run --ic " + out +
                      "/snapshot_000.hdf5 --t-end 0 --snapshot-every 1 --solver "
                      "direct --quiet --out " +
                      out2,
                  log),
            0)
      << test::read_all(log);
  // Nor a seed, which only draws models (seed=1 was stored).
  for (const auto& [k, v] : read_hdf5_snapshot(out2 + "/snapshot_000.hdf5").info.parameters) {
    EXPECT_NE(k.rfind("model.", 0), 0u) << k;
    EXPECT_NE(k, "seed");
  }
}

// --radius and --eccentricity are the uniform and kepler models' keys under other names: given
// either way, the parameters list and store the value the model took (--model-param radius=2
// stored radius=1 beside model.radius=2; --radius 2 stored no model.radius).
TEST(IoRun, BasicModelKeysAreStoredAsTheModelTookThem) {
  ScratchDir dir("run");
  const std::string log = dir.file("log");
  for (const auto& [args, option, key, value] :
       {std::tuple<std::string, std::string, std::string, double>{
            "--ic uniform -n 200 --model-param radius=2", "radius", "model.radius", 2.0},
        {"--ic uniform -n 200 --radius 2", "radius", "model.radius", 2.0},
        {"--ic kepler --model-param e=0.3", "eccentricity", "model.e", 0.3},
        {"--ic kepler --eccentricity 0.2", "eccentricity", "model.e", 0.2}}) {
    const std::string out = dir.file("R");
    std::filesystem::remove_all(out);
    ASSERT_EQ(hoshi("run " + args + " --t-end 0 --snapshot-every 1 --quiet --out " + out, log), 0)
        << args << ": " << test::read_all(log);
    const SnapshotData s = read_hdf5_snapshot(out + "/snapshot_000.hdf5");
    for (const std::string& k : {option, key}) {
      const ParamValue* v = find_param(s.info.parameters, k);
      ASSERT_NE(v, nullptr) << args << ": " << k;
      EXPECT_EQ(std::stod(io::to_string(*v)), value) << args << ": " << k;
    }
  }
}

// A restart refuses the options that shaped no particle of its checkpoint as it refuses the
// others: a file run's --seed (no longer stored, so nothing was compared: accepted unsaid),
// --radius of a model that is not uniform.
TEST(IoRun, RestartRefusesModelOptionsItsParticlesDidNotTake) {
  ScratchDir dir("run");
  const std::string in = dir.file("p.csv"), a = dir.file("A"), b = dir.file("B"),
                    log = dir.file("log");
  ASSERT_EQ(hoshi("ic -n 200 --out " + in, log), 0) << test::read_all(log);
  ASSERT_EQ(hoshi("run --ic " + in + " --dt 0.01 --t-end 0.02 --quiet --out " + a, log), 0)
      << test::read_all(log);
  ASSERT_EQ(hoshi("run -n 200 --dt 0.01 --t-end 0.02 --quiet --out " + b, log), 0)
      << test::read_all(log);
  for (const auto& [dirname, option] : {std::pair{a, std::string("--seed 5")},
                                        {a, "--radius 2"},
                                        {b, "--radius 2"},
                                        {b, "--eccentricity 0.3"}}) {
    EXPECT_EQ(hoshi("run --restart " + dirname + " --t-end 0.04 " + option, log), 2) << option;
    EXPECT_NE(test::read_all(log).find("the checkpoint's particles continue"), std::string::npos)
        << option << ": " << test::read_all(log);
  }
  EXPECT_EQ(hoshi("run --restart " + a + " --t-end 0.04 --quiet", log), 0) << test::read_all(log);
}

TEST(IoRun, UnknownParameterNamesNearestKey) {
  ScratchDir dir("run");
  const std::string params = dir.file("bad.yml"), out = dir.file("X"), log = dir.file("log");
  test::write_all(params, "particls: 32\n");
  EXPECT_EQ(hoshi("run " + params + " --out " + out, log), 2);
  const std::string msg = test::read_all(log);
  EXPECT_NE(msg.find("unknown parameter 'particls' (did you mean 'particles'?)"), std::string::npos)
      << msg;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(nearest_key("snapshot_every", {"snapshot-every", "snapshot-format", "seed"}),
            "snapshot-every");
  // Only a near key is suggested ('n' got 'G', 'overwrite' got 'solver'); case is ignored.
  EXPECT_EQ(nearest_key("n", {"G", "particles"}), "");
  EXPECT_EQ(nearest_key("overwrite", {"solver", "out", "output-every"}), "");
  EXPECT_EQ(nearest_key("g", {"G", "out"}), "G");
  const std::pair<std::string, std::string> cases[] = {
      {"n: 500\n",
       "unknown parameter 'n' (parameter files use the long option names: "
       "'particles')"},
      {"overwrite: true\n", "'overwrite' is a command-line option only, not a parameter"},
      {"restart: old\n", "'restart' is a command-line option only, not a parameter"},
      {"frobnicate: 1\n", "unknown parameter 'frobnicate'\n"},  // nothing near: no suggestion
  };
  for (const auto& [text, needle] : cases) {
    test::write_all(params, text);
    EXPECT_EQ(hoshi("run " + params + " --out " + out, log), 2) << text;
    EXPECT_NE(test::read_all(log).find(needle), std::string::npos) << test::read_all(log);
    EXPECT_EQ(test::read_all(log).find("did you mean"), std::string::npos) << test::read_all(log);
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST(IoRun, ExistingOutputAndBadInputLeaveFilesUntouched) {
  ScratchDir dir("run");
  const std::string out = dir.file("O"), log = dir.file("log");
  std::filesystem::create_directories(out);
  test::write_all(out + "/energy.csv", "precious");
  EXPECT_EQ(hoshi(kRun + "--t-end 0.1 --out " + out, log), 2);
  EXPECT_NE(test::read_all(log).find("--overwrite"), std::string::npos) << test::read_all(log);
  EXPECT_EQ(test::read_all(out + "/energy.csv"), "precious");
  // A corrupt input file: exit 2, one line naming the file, no output directory made.
  const std::string bad = dir.file("bad.tipsy"), out2 = dir.file("O2");
  test::write_all(bad, std::string("\0\0\0\0\0\0\0\0\0\0\0\5\0\0\0\3", 16) + std::string(20, '\0'));
  EXPECT_EQ(hoshi("run --ic " + bad + " --out " + out2, log), 2);
  const std::string msg = test::read_all(log);
  EXPECT_NE(msg.find(bad), std::string::npos) << msg;
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 1) << msg;
  EXPECT_FALSE(std::filesystem::exists(out2));
}

// --overwrite removes what an earlier run wrote (a shorter run left the longer run's later
// snapshots beside its own) and nothing else; bad input still touches nothing.
TEST(IoRun, OverwriteRemovesOnlyTheEarlierRunsOutputs) {
  ScratchDir dir("run");
  const std::string out = dir.file("O"), log = dir.file("log");
  ASSERT_EQ(hoshi(kRun + "--t-end 0.25 --snapshot-every 0.0625 --out " + out, log), 0)
      << test::read_all(log);
  ASSERT_TRUE(std::filesystem::exists(out + "/snapshot_004.hdf5"));
  for (const char* keep : {"/notes.txt", "/snapshot_final.hdf5", "/snapshot_01.hdf5"})
    test::write_all(out + keep, "mine");
  // A killed writer's half-written snapshot (pid 999999999: not alive) goes too; it stayed
  // when the run was killed before its first checkpoint, where no restart could remove it.
  test::write_all(out + "/.snapshot_001.hdf5.tmp.999999999.1", "half");
  EXPECT_EQ(hoshi(kRun + "--t-end 0.1 --out " + out + " --overwrite --dt x", log), 2);
  EXPECT_TRUE(std::filesystem::exists(out + "/snapshot_004.hdf5"));
  ASSERT_EQ(
      hoshi(kRun + "--t-end 0.125 --snapshot-every 0.0625 --out " + out + " --overwrite", log), 0)
      << test::read_all(log);
  for (const char* made :
       {"/snapshot_000.hdf5", "/snapshot_002.hdf5", "/energy.csv", "/checkpoint.hdf5"})
    EXPECT_TRUE(std::filesystem::exists(out + made)) << made;
  EXPECT_FALSE(std::filesystem::exists(out + "/snapshot_003.hdf5"));
  EXPECT_FALSE(std::filesystem::exists(out + "/snapshot_004.hdf5"));
  EXPECT_FALSE(std::filesystem::exists(out + "/.snapshot_001.hdf5.tmp.999999999.1"));
  for (const char* keep : {"/notes.txt", "/snapshot_final.hdf5", "/snapshot_01.hdf5"})
    EXPECT_EQ(test::read_all(out + keep), "mine") << keep;
  EXPECT_EQ(read_hdf5_snapshot(out + "/checkpoint.hdf5").info.time, 0.125);
  // The run's own input stays, even when it is one of the earlier run's outputs (it was
  // deleted; with its checkpoint as --ic, a run killed before its first checkpoint lost it).
  const std::string input = out + "/snapshot_002.hdf5";
  ASSERT_TRUE(std::filesystem::exists(input));
  ASSERT_EQ(hoshi("run --ic " + input + " --dt 0.0625 --solver direct --t-end 0.0625 --quiet " +
                      "--overwrite --out " + out,
                  log),
            0)
      << test::read_all(log);
  EXPECT_TRUE(std::filesystem::exists(input));
  EXPECT_FALSE(std::filesystem::exists(out + "/snapshot_000.hdf5"));
}

// Gadget-4, AREPO and SWIFT also name their outputs snapshot_NNN.hdf5: --overwrite into such a
// directory removed them as "an earlier run's". It removes nothing where no hoshi run was, and
// where one was, no HDF5 file that another code wrote.
TEST(IoRun, OverwriteLeavesAnotherCodesSnapshots) {
  ScratchDir dir("run");
  const std::string out = dir.file("O"), log = dir.file("log");
  std::filesystem::create_directory(out);
  // hoshi's snapshot with its Header/Code removed: as another code writes it.
  for (const char* name : {"/snapshot_000.hdf5", "/snapshot_001.hdf5"}) {
    write_hdf5_snapshot(out + name, test::sample_particles(16), SnapshotInfo{});
    const hid_t f = H5Fopen((out + name).c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
    ASSERT_GE(H5Adelete(h, "Code"), 0);
    H5Gclose(h);
    H5Fclose(f);
    ASSERT_EQ(hdf5_code(out + name), "");
  }
  const std::string other = test::read_all(out + "/snapshot_000.hdf5");
  ASSERT_EQ(hoshi("run --ic " + out +
                      "/snapshot_001.hdf5 --dt 0.0625 --solver direct --t-end 0.0625 --quiet "
                      "--overwrite --out " +
                      out,
                  log),
            0)
      << test::read_all(log);
  EXPECT_EQ(test::read_all(out + "/snapshot_000.hdf5"), other);
  // Now a hoshi run was there (energy.csv, checkpoint): its outputs go, the others' stay.
  ASSERT_EQ(hoshi(kRun + "--t-end 0.0625 --overwrite --out " + out, log), 0) << test::read_all(log);
  EXPECT_EQ(test::read_all(out + "/snapshot_000.hdf5"), other);
  EXPECT_TRUE(std::filesystem::exists(out + "/snapshot_001.hdf5"));
  EXPECT_EQ(hdf5_code(out + "/checkpoint.hdf5"), "hoshi");
  EXPECT_EQ(read_hdf5_snapshot(out + "/checkpoint.hdf5").particles.size(), 64u);
}

TEST(IoParamFile, RejectsRepeatedKeysListsAndSyntaxErrors) {
  ScratchDir dir("params");
  auto message = [&](const std::string& text) {
    test::write_all(dir.file("p.yml"), text);
    return test::invalid_argument_message([&] { read_param_file(dir.file("p.yml")); });
  };
  EXPECT_NE(message("dt: 0.1\ndt: 0.2\n").find("line 2: field dt: given more than once"),
            std::string::npos);
  EXPECT_NE(message("theta: {a: 1}\n").find("field theta: value is a list or mapping"),
            std::string::npos);
  EXPECT_NE(message("a: [1, 2\n").find("YAML error"), std::string::npos);
  EXPECT_NE(message("- 1\n- 2\n").find("mapping"), std::string::npos);
  // A last line without its ':' (it was "unknown parameter 'dt 0.01'", without the line).
  EXPECT_NE(message("particles: 100\ndt 0.01\n")
                .find("line 2: 'dt 0.01' is not a parameter name (a line key: value without its "
                      "':'?)"),
            std::string::npos);
  test::write_all(dir.file("ok.yml"), "t_end: 5\nsolver: tree\n");
  const auto kv = read_param_file(dir.file("ok.yml"));
  ASSERT_EQ(kv.size(), 2u);
  EXPECT_EQ(kv[0].first, "t-end");  // underscores become dashes
  EXPECT_EQ(kv[0].second, "5");
  EXPECT_EQ(std::get<std::int64_t>(param_value_from_text("5")), 5);
  EXPECT_EQ(std::get<double>(param_value_from_text("0.5")), 0.5);
  EXPECT_EQ(std::get<std::string>(param_value_from_text("tree")), "tree");
}

INSTANTIATE_TEST_SUITE_P(Signals, IoRunSignal, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& info) {
                           return std::string(info.param == SIGINT ? "SIGINT" : "SIGTERM");
                         });

// ---- render ------------------------------------------------------------------------------------

TEST(IoRender, SurfaceDensityConservesMassAndProjects) {
  ParticleSet p = test::sample_particles(500);
  // Keep particles well inside the field so that none is clipped.
  ParticleSet inside;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (std::abs(p.x[i]) < 1.5 && std::abs(p.y[i]) < 1.5 && std::abs(p.z[i]) < 1.5)
      inside.push_back(p.x[i], p.y[i], p.z[i], 0, 0, 0, p.m[i], p.id[i]);
  const int n = 64;
  const double L = 4.0, area = (L / n) * (L / n);
  for (int axis : {0, 1, 2}) {
    const auto sigma = surface_density(inside, axis, 0, 0, L, n);
    double mass = 0, want = 0;
    for (double s : sigma) mass += s * area;
    for (double m : inside.m) want += m;
    // CIC weights sum to 1 per particle; sums of 500 terms: relative round-off ~ 500 * 2^-53.
    EXPECT_NEAR(mass, want, 1e-12 * want) << "axis " << axis;
  }
  // One particle at the centre of pixel (column 10, row from top 5) for axis z: u = x, v = y.
  ParticleSet one;
  const double h = L / n;
  one.push_back(-L / 2 + 10.5 * h, L / 2 - 5.5 * h, 123.0, 0, 0, 0, 2.0, 0);
  const auto s = surface_density(one, 2, 0, 0, L, n);
  EXPECT_DOUBLE_EQ(s[5 * n + 10], 2.0 / (h * h));
  // Projected along x, the image shows (y, z): the same particle lands elsewhere (z = 123 is
  // outside), so the image is empty.
  const auto sx = surface_density(one, 0, 0, 0, L, n);
  EXPECT_EQ(*std::max_element(sx.begin(), sx.end()), 0.0);
}

// Whether the four centre pixels of an n x n image (rows and columns n/2 - 1 and n/2, which a
// point at the centre shares equally) have one colour, and the image's corner another.
bool centre_drawn(const Image& im) {
  const int n = im.width;
  const auto colour = [&](int row, int col) {
    const std::size_t k = 3 * (std::size_t(row) * n + col);
    return std::array<int, 3>{im.rgb[k], im.rgb[k + 1], im.rgb[k + 2]};
  };
  const auto c = colour(n / 2 - 1, n / 2 - 1);
  return c == colour(n / 2, n / 2) && c == colour(n / 2 - 1, n / 2) &&
         c == colour(n / 2, n / 2 - 1) && c != colour(0, n - 1);
}

// All particles at one point: the spread was the centre of mass's rounding (~1e-16), which gave
// a field of 1e-16; point-like sets get 1 and are drawn at the centre, also far from the origin
// (100 masses of 0.01 at 1e15: the centre of mass's rounding, 0.7, put them outside the field,
// and the image was blank). Fields whose pixel area leaves double's range are drawn (colours
// are relative: a set at +-1e300 was refused, naming an --extent that was not given, and
// --extent 1e200 was refused); one whose pixel size does is refused, naming the field.
TEST(IoRender, PointLikeSetsAndHugeExtents) {
  RenderOptions o;
  o.resolution = 64;
  for (const double far : {0.3, 1e15}) {
    ParticleSet p;
    for (int i = 0; i < 100; ++i) p.push_back(far, -3 * far, 0.7 * far, 0, 0, 0, 0.01, i);
    EXPECT_EQ(auto_extent(p, 2), 1.0) << far;
    for (const double extent : {0.0, 1e200}) {
      o.extent = extent;
      EXPECT_TRUE(centre_drawn(render_surface_density(p, o))) << far << " " << extent;
    }
  }
  // Three particles about the origin, the middle one at the centre: drawn there.
  for (const double size : {1e300, 1e-300}) {
    ParticleSet q;
    for (int i = -1; i <= 1; ++i) q.push_back(i * size, 0, 0, 0, 0, 0, 1, i + 1);
    o.extent = 0;
    EXPECT_TRUE(centre_drawn(render_surface_density(q, o))) << size;
  }
  ParticleSet huge;
  huge.push_back(-1e300, 0, 0, 0, 0, 0, 1, 0);
  huge.push_back(1e300, 0, 0, 0, 0, 0, 1, 1);
  // At +-1.7e308 the offsets from the first particle overflowed: a field of 1 about an inf
  // centre, a blank image. Now the centre is 0, and the field, 2.2 x 1.7e308, is refused.
  huge.x[0] = -1.7e308;
  huge.x[1] = 1.7e308;
  const std::string msg = test::invalid_argument_message([&] { render_surface_density(huge, o); });
  EXPECT_NE(msg.find("the automatic field of view (--extent 0): value inf"), std::string::npos)
      << msg;
}

// The scale bar's label: "%g" printed 2e+06, and the font has no '+' (the image showed "2e 06").
// Every length a bar can have (a nice 1, 2 or 5 times a power of ten) is drawable.
TEST(IoRender, ScaleBarLabelsAreDrawable) {
  EXPECT_EQ(scale_bar_label(2e6, units_henon()), "2e6");
  EXPECT_EQ(scale_bar_label(5e-5, units_henon()), "5e-5");
  EXPECT_EQ(scale_bar_label(1e100, units_henon()), "1e100");
  EXPECT_EQ(scale_bar_label(0.5, units_henon()), "0.5");
  EXPECT_EQ(scale_bar_label(20, units_galaxy()), "20 kpc");
  EXPECT_FALSE(drawable("2e+06"));
  for (int e = -300; e <= 300; ++e)
    for (double m : {1.0, 2.0, 5.0})
      for (const UnitSystem& u : {units_henon(), units_galaxy()}) {
        const std::string label = scale_bar_label(m * std::pow(10.0, e), u);
        EXPECT_TRUE(drawable(label)) << label;
      }
}

TEST(IoRender, CommandWritesAReadablePng) {
  ScratchDir dir("render");
  const std::string snap = dir.file("s.hdf5"), png = dir.file("s.png"), log = dir.file("log");
  SnapshotInfo info;
  info.units = units_galaxy();
  write_hdf5_snapshot(snap, test::sample_particles(200), info);
  ASSERT_EQ(hoshi("render " + snap + " --out " + png + " --resolution 128 --axis y", log), 0)
      << test::read_all(log);
  FILE* f = std::fopen(png.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  png_structp rd = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info_ptr = png_create_info_struct(rd);
  png_init_io(rd, f);
  png_read_info(rd, info_ptr);
  EXPECT_EQ(png_get_image_width(rd, info_ptr), 128u);
  EXPECT_EQ(png_get_image_height(rd, info_ptr), 128u);
  EXPECT_EQ(png_get_color_type(rd, info_ptr), PNG_COLOR_TYPE_RGB);
  png_destroy_read_struct(&rd, &info_ptr, nullptr);
  std::fclose(f);
  // Not overwritten without --overwrite.
  EXPECT_EQ(hoshi("render " + snap + " --out " + png, log), 2);
  // A PNG under another extension is refused before any work.
  EXPECT_EQ(hoshi("render " + snap + " --out " + dir.file("s.txt"), log), 2);
  EXPECT_NE(test::read_all(log).find("name it *.png"), std::string::npos) << test::read_all(log);
  EXPECT_FALSE(std::filesystem::exists(dir.file("s.txt")));
}

}  // namespace
}  // namespace hoshi::io
