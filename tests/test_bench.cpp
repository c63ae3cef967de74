// hoshi bench: the timing helper, the CSV it writes and its command-line errors.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "ic/ic.hpp"

namespace hoshi {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int status;
  std::string out;
};

// Runs `hoshi ARGS` with stdout and stderr captured; returns the exit status.
CliRun hoshi(const std::string& args) {
  const fs::path log =
      fs::temp_directory_path() / ("hoshi_bench_test_" + std::to_string(::getpid()) + ".log");
  const std::string cmd = std::string(HOSHI_EXE) + " " + args + " > " + log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(log);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, ss.str()};
}

std::vector<std::vector<std::string>> read_csv(const fs::path& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

fs::path scratch_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("hoshi_" + name + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(Bench, CsvRowsAreConsistent) {
  const fs::path dir = scratch_dir("bench_csv");
  const fs::path csv = dir / "b.csv";
  const CliRun r = hoshi(
      "bench -n 100,250 --repeat 3 --softening 0.01 --threads 2 "
      "--peak-gflops 480 --csv " +
      csv.string());
  ASSERT_EQ(r.status, 0) << r.out;
  // Only the CSV itself: no temporary file left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 3u);
  const std::vector<std::string> header = {
      "solver",          "backend",          "n",
      "threads",         "seconds",          "interactions_per_second",
      "gflops",          "peak_fraction",    "seconds_keys",
      "seconds_sort",    "seconds_permute",  "seconds_build",
      "seconds_moments", "seconds_walk",     "pp_per_particle",
      "pc_per_particle", "m2l_per_particle", "precision"};
  EXPECT_EQ(rows[0], header);
  const double ns[] = {100, 250};
  for (int k = 0; k < 2; ++k) {
    const auto& row = rows[k + 1];
    ASSERT_EQ(row.size(), header.size());
    EXPECT_EQ(row[0], "direct");
    EXPECT_EQ(row[1], "cpu");
    EXPECT_EQ(std::stod(row[2]), ns[k]);
    EXPECT_EQ(row[3], "2");
    const double n = ns[k], seconds = std::stod(row[4]), ips = std::stod(row[5]);
    const double gflops = std::stod(row[6]), fraction = std::stod(row[7]);
    ASSERT_GT(seconds, 0);
    // Printed with 6 significant digits: relations hold to 1e-5 relative.
    EXPECT_NEAR(ips, n * (n - 1) / seconds, 1e-5 * ips);
    EXPECT_NEAR(gflops, 20 * ips * 1e-9, 1e-5 * gflops);
    EXPECT_NEAR(fraction, gflops / 480, 1e-5 * fraction);
    for (int c = 8; c <= 13; ++c) EXPECT_EQ(std::stod(row[c]), 0.0) << header[c];
    EXPECT_EQ(std::stod(row[14]), n - 1);
    EXPECT_EQ(std::stod(row[15]), 0.0);
    EXPECT_EQ(std::stod(row[16]), 0.0);
    EXPECT_EQ(row[17], "float32");
  }
  // The double direct sum: named, and no fraction of the float32 peak (rows could not be told
  // from float32 ones, and took their fraction).
  const fs::path dcsv = dir / "d.csv";
  const CliRun d =
      hoshi("bench -n 100 --repeat 1 --precision double --peak-gflops 480 --csv " + dcsv.string());
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_NE(d.out.find("precision float64"), std::string::npos) << d.out;
  const auto drows = read_csv(dcsv);
  ASSERT_EQ(drows.size(), 2u);
  ASSERT_EQ(drows[1].size(), header.size());
  EXPECT_EQ(drows[1][17], "float64");
  EXPECT_EQ(std::stod(drows[1][7]), 0.0);
  fs::remove_all(dir);
}

TEST(Bench, BadArgumentsExitTwoAndWriteNothing) {
  const fs::path dir = scratch_dir("bench_bad");
  const fs::path csv = dir / "b.csv";
  const std::string tail = " --peak-gflops 1 --csv " + csv.string();
  const std::pair<std::string, std::string> cases[] = {
      {"-n 0", "invalid -n 0 (must be >= 1)"},
      {"-n 100,x", "invalid -n value 'x'"},
      {"--repeat 0", "invalid --repeat 0 (must be >= 1)"},
      {"--softening -1", "invalid --softening -1 (must be >= 0)"},
      {"--solver warp", "invalid --solver 'warp'"},
      {"--threads -1", "invalid --threads -1"},
      {"--repeat 2x", "option --repeat: value '2x' is not an integer"},
      {"--repeat 99999999999", "'99999999999' is out of range"},  // was "not an integer"
      // A misspelt model beside -n is that error (it was "-n 50: the particle file sets N").
      {"--ic plumer", "no such file, and not a model"},
      {"--no-such-option", "no-such-option"},
  };
  for (const auto& [args, mention] : cases) {
    const CliRun r = hoshi("bench -n 50 " + args + tail);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_NE(r.out.find(mention), std::string::npos) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_FALSE(fs::exists(csv)) << args;
  }
  // A model that cannot be made at a later N of the list: refused before any row is timed,
  // naming that N (it failed after the rows before it, and said no N).
  CliRun r = hoshi("bench --ic disk -n 500,1" + tail);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("-n 1: model disk:"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_FALSE(fs::exists(csv));
  // A peak so small that the fractions overflow (1e-320 printed inf).
  r = hoshi("bench -n 50 --peak-gflops 1e-320 --csv " + csv.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("invalid --peak-gflops"), std::string::npos) << r.out;
  // A number's own '+' (it was "not an integer").
  r = hoshi("bench -n +50 --repeat +1 --peak-gflops 1");
  EXPECT_EQ(r.status, 0) << r.out;
  // A CSV in a missing directory is refused before any timing.
  r = hoshi("bench -n 50 --peak-gflops 1 --csv " + (dir / "missing" / "b.csv").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--csv " + (dir / "missing" / "b.csv").string()), std::string::npos)
      << r.out;
  // An existing CSV is not replaced without --overwrite.
  std::ofstream(csv) << "keep\n";
  r = hoshi("bench -n 50 --peak-gflops 1 --csv " + csv.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--csv " + csv.string()), std::string::npos) << r.out;
  {
    std::ifstream kept(csv);
    std::string line;
    std::getline(kept, line);
    EXPECT_EQ(line, "keep");
  }
  r = hoshi("bench -n 50 --peak-gflops 1 --overwrite --csv " + csv.string());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_csv(csv).size(), 2u);
  fs::remove_all(dir);
}

// The measured peak is that of the cores the threads have: more threads than cores add no FMA
// units (each thread's best slice is a core's rate, and 8 threads on 2 cores summed to 4 cores'
// peak). The bound allows the noise of best-of-slices rates, not another core's worth per core.
TEST(Bench, PeakCountsEachCoreOnce) {
  const std::size_t cores = physical_cores();
  ASSERT_GE(cores, 1u);
  ASSERT_LE(cores, static_cast<std::size_t>(omp_get_num_procs()));
  const int n = static_cast<int>(cores);
  const double own = measure_peak_gflops(n, 0.05);
  const double crowded = measure_peak_gflops(4 * n, 0.05);
  EXPECT_GT(own, 0);
  EXPECT_LT(crowded, 1.5 * own) << cores << " cores";
}

// bench checks every -n set before its first row and keeps those that fit within its budget (a
// quarter of the memory) in -n order until their row; the others are made again there.
TEST(Bench, SetsBeyondTheBudgetAreMadeAgainAtTheirRow) {
  const std::vector<std::size_t> n = {1000, 4000, 2000, 500};
  EXPECT_EQ(sets_kept_until_their_row(n, 100, 0), std::vector<bool>(4, true));  // no budget
  EXPECT_EQ(sets_kept_until_their_row(n, 100, 1e9), std::vector<bool>(4, true));
  // 1e5 + 2e5 = 3e5 kept; 4e5 would pass 4.5e5, 5e4 fits after them; at the budget is within.
  EXPECT_EQ(sets_kept_until_their_row(n, 100, 4.5e5), (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(sets_kept_until_their_row(n, 100, 5e5), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(sets_kept_until_their_row(n, 100, 1e5), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(sets_kept_until_their_row(n, 100, 4e4),
            (std::vector<bool>{false, false, false, false}));
}

// The table on standard output is bench's (and accuracy's) output: a write to it that fails is
// a failure (it exited 0 on a full disk); so are the help and version texts (hoshi --help and
// --version exited 0 there).
TEST(Bench, AFailedWriteToStandardOutputIsAFailure) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  for (const char* args : {"bench -n 50 --repeat 1 --peak-gflops 1", "accuracy -n 500 --targets 50",
                           "--help", "--version", "run --help", "help bench"}) {
    const std::string cmd = std::string(HOSHI_EXE) + " " + args + " > /dev/full 2>/dev/null";
    const int rc = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(rc)) << args;
    EXPECT_EQ(WEXITSTATUS(rc), 1) << args;
  }
}

// A closed pipe (`| head -1`) is such a failed write, not a death by SIGPIPE: the tables' files
// are written all the same (they were lost, status 141; an audit). Standard output here is a
// pipe whose reading end is closed before the command starts, so its first write fails.
TEST(Bench, AClosedPipeStillWritesTheCsvFiles) {
  const fs::path dir = scratch_dir("bench_pipe");
  for (const std::string& args :
       {"bench -n 200,300,400 --repeat 1 --peak-gflops 1 --csv " + (dir / "b.csv").string(),
        "accuracy -n 2000 --targets 100 --theta 0.4,0.6,0.8 --csv " + (dir / "a.csv").string() +
            " --errors " + (dir / "e.csv").string()}) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
    const std::string cmd = "exec " + std::string(HOSHI_EXE) + " " + args + " 2>/dev/null";
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::dup2(fds[1], 1);
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << args << ": signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 1) << args;  // the failed write, said
  }
  for (const char* f : {"b.csv", "a.csv", "e.csv"}) {
    std::ifstream in(dir / f);
    std::string header, row;
    EXPECT_TRUE(std::getline(in, header) && std::getline(in, row)) << f;
  }
}

// Options a row's forces do not read are said, per -n, once each (bench said nothing; an audit).
TEST(Bench, OptionsARowDoesNotReadAreSaid) {
  const CliRun r = hoshi(
      "bench -n 200,5000 --theta 0.3 --criterion barnes94 --alpha 0.01 --repeat 1 "
      "--peak-gflops 1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: -n 200: --theta, --criterion, --alpha unused: the forces are a "
                       "direct sum"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("note: -n 5000: --alpha unused: it is the relative criterion's (the "
                       "forces' is barnes94)"),
            std::string::npos)
      << r.out;
}

// A run's snapshot is timed with the softening and kernel the run used, as hoshi forces and
// accuracy take them (bench timed eps 0), unless --softening is given.
TEST(Bench, AParticleFileIsTimedWithTheSofteningItRecords) {
  const fs::path dir = scratch_dir("bench_file");
  const fs::path run = dir / "run";
  ASSERT_EQ(hoshi("run -n 300 --softening 0.05 --kernel spline --t-end 0 --snapshot-every 1 "
                  "--quiet --out " +
                  run.string())
                .status,
            0);
  const std::string snap = (run / "snapshot_000.hdf5").string();
  CliRun r = hoshi("bench --ic " + snap + " --repeat 1 --peak-gflops 1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("kernel spline, softening 0.05,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: the softening " + snap + " records: 0.05 (spline"), std::string::npos)
      << r.out;
  // A length given keeps the run's kernel (it was timed with Plummer's), unless --kernel is.
  r = hoshi("bench --ic " + snap + " --repeat 1 --peak-gflops 1 --softening 0.01");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("kernel spline, softening 0.01,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: " + snap + " records the kernel spline"), std::string::npos) << r.out;
  r = hoshi("bench --ic " + snap + " --repeat 1 --peak-gflops 1 --softening 0.01 --kernel plummer");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("kernel plummer, softening 0.01,"), std::string::npos) << r.out;
  // A model has nothing recorded: 0, as before.
  r = hoshi("bench -n 100 --repeat 1 --peak-gflops 1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("kernel plummer, softening 0,"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

// A solver that counts its calls and reports a fixed number of interactions per call, but for
// the first call (the warm-up), whose counts and phases differ: the row must be a timed call's.
class CountingSolver final : public GravitySolver {
 public:
  int calls = 0;
  ForceStats compute(ParticleSet& p) override {
    ++calls;
    ForceStats st;
    if (calls == 1) {
      st.pp = 999;
      st.seconds["walk"] = 9;
      return st;
    }
    st.pp = p.size() * 3;
    st.pc = 7;
    st.m2l = 11;
    st.seconds["walk"] = 0.5;
    return st;
  }
  std::string name() const override { return "tree"; }
  std::string backend() const override { return "cpu"; }
};

TEST(Bench, TimeForceWarmsUpThenRepeats) {
  ParticleSet p = make_plummer(10, 1);
  CountingSolver s;
  const BenchRow row = time_force(s, p, 4);
  EXPECT_EQ(s.calls, 5);  // one warm-up + 4 timed
  EXPECT_EQ(row.n, 10u);
  EXPECT_EQ(row.pp, 30u);
  EXPECT_EQ(row.pc, 7u);
  EXPECT_EQ(row.m2l, 11u);
  EXPECT_EQ(row.phases.at("walk"), 0.5);
  EXPECT_EQ(row.solver, "tree");
  EXPECT_THROW(time_force(s, p, 0), std::invalid_argument);
}

TEST(Bench, CsvWriteFailureLeavesNoFile) {
  const fs::path dir = scratch_dir("bench_fail");
  // The target is an existing directory: the rename fails and nothing is left behind.
  fs::create_directories(dir / "taken");
  BenchRow row;
  row.solver = "direct";
  row.backend = "cpu";
  row.n = 4;
  row.seconds = 1;
  EXPECT_THROW(write_bench_csv((dir / "taken").string(), {row}, 1.0), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(dir / "taken"));
  // Nothing but the directory that was there.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hoshi
