// The accuracy measurement behind `hoshi accuracy`: target sampling, percentiles, and the
// command end to end on a small Plummer sphere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "solver/accuracy.hpp"

namespace hoshi {
namespace {

TEST(Accuracy, SampleTargetsIsDistinctSortedAndReproducible) {
  const auto a = sample_targets(1000, 100, 7);
  ASSERT_EQ(a.size(), 100u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end());
  EXPECT_LT(a.back(), 1000u);
  EXPECT_EQ(a, sample_targets(1000, 100, 7));
  EXPECT_NE(a, sample_targets(1000, 100, 8));
  EXPECT_EQ(sample_targets(5, 0, 1), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(sample_targets(5, 9, 1).size(), 5u);
}

TEST(Accuracy, QuantilesAndErrors) {
  std::vector<double> s(100);
  for (int i = 0; i < 100; ++i) s[i] = i + 1;
  EXPECT_EQ(quantile_sorted(s, 0.5), 50);
  EXPECT_EQ(quantile_sorted(s, 0.99), 99);
  EXPECT_EQ(quantile_sorted(s, 1.0), 100);
  EXPECT_EQ(quantile_sorted(s, 0.0), 1);
  // Target k has reference a = (1, 0, 0), pot = -1 and a computed error of k 1e-3 in ax and
  // 2 k 1e-3 in pot: relative errors k 1e-3 and 2 k 1e-3.
  ParticleSet p;
  p.resize(10);
  ForceArrays ref;
  ref.resize(10);
  std::vector<std::size_t> t;
  for (int k = 0; k < 10; ++k) {
    t.push_back(9 - k);  // targets in another order than the particles
    ref.ax[k] = 1;
    ref.pot[k] = -1;
    p.ax[9 - k] = 1 + (k + 1) * 1e-3;
    p.pot[9 - k] = -1 - 2 * (k + 1) * 1e-3;
  }
  const TargetErrors te = target_errors(p, t, ref);  // in target order
  ASSERT_EQ(te.acc.size(), 10u);
  for (int k = 0; k < 10; ++k) {
    EXPECT_NEAR(te.acc[k], (k + 1) * 1e-3, 1e-12);
    EXPECT_NEAR(te.pot[k], 2 * (k + 1) * 1e-3, 1e-12);
  }
  const ForceErrors e = force_errors(p, t, ref);
  EXPECT_NEAR(e.p50, 5e-3, 1e-12);
  EXPECT_NEAR(e.p90, 9e-3, 1e-12);
  EXPECT_NEAR(e.max, 10e-3, 1e-12);
  EXPECT_NEAR(e.pot_p50, 10e-3, 1e-12);
  // A reference that cancels to round-off (4e-17 at a lattice's centre) is floored at 1e-6 of
  // the median |a_ref|: an absolute error of 1e-3 reads 1e3, not 2.5e13.
  ref.ax[0] = 4e-17;
  p.ax[9] = 1e-3;
  EXPECT_NEAR(target_errors(p, t, ref).acc[0], 1e3, 1e-9);
  EXPECT_NEAR(target_errors(p, t, ref).acc[1], 2e-3, 1e-12);  // the others as they were
}

namespace fs = std::filesystem;

int run(const std::string& args) {
  const int raw = std::system((std::string(HOSHI_EXE) + " accuracy " + args).c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

// The options it has are the ones it takes: --solver and --precision were listed in --help but
// refused with any value (the command measures the float32 tree against the double direct sum).
TEST(Accuracy, HelpListsNoSolverOrPrecision) {
  const fs::path dir = fs::temp_directory_path() / "hoshi_test_accuracy_help";
  fs::create_directories(dir);
  const std::string help = (dir / "help.txt").string();
  ASSERT_EQ(run("--help > " + help), 0);
  std::ifstream in(help);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("--theta"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("--backend"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("--solver"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("--precision"), std::string::npos) << text.str();
  EXPECT_EQ(run("-n 100 --solver tree 2>/dev/null"), 2);  // not an option here
  fs::remove_all(dir);
}

TEST(Accuracy, CommandWritesTheCsvTable) {
  const fs::path dir = fs::temp_directory_path() / "hoshi_test_accuracy";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path csv = dir / "acc.csv";
  // A theta study: a geometric criterion (the default, auto, is the relative criterion for the
  // group walk, whose error follows --alpha, not theta).
  ASSERT_EQ(run("-n 3000 --seed 3 --theta 0.3,0.9 --order 1,2 --criterion barnes94 --targets 300 "
                "--csv " +
                csv.string() + " >/dev/null"),
            0);
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header,
            "criterion,order,walk,theta,alpha,err_p50,err_p90,err_p99,err_p999,err_max,"
            "pot_err_p50,pot_err_p99,pp_per_particle,pc_per_particle,seconds,n,targets,softening,"
            "kernel,G,n_leaf,n_group,local_ratio,backend");
  std::map<std::pair<int, double>, std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string crit, order, walk, theta, alpha, field;
    std::getline(s, crit, ',');
    std::getline(s, order, ',');
    std::getline(s, walk, ',');
    std::getline(s, theta, ',');
    std::getline(s, alpha, ',');
    EXPECT_EQ(crit, "barnes94");
    EXPECT_EQ(walk, "group");
    EXPECT_EQ(alpha, "");  // the relative criterion's column
    std::vector<double> v = {std::stod(theta)};
    for (int k = 0; k < 10 && std::getline(s, field, ','); ++k) v.push_back(std::stod(field));
    ASSERT_EQ(v.size(), 11u);
    // The shared settings: every row the same, the ones used.
    std::string rest;
    std::getline(s, rest);
    EXPECT_EQ(rest, "3000,300,0,plummer,1,16,128,0.37,cpu") << line;
    rows[{std::stoi(order), v[0]}] = v;
  }
  ASSERT_EQ(rows.size(), 4u);
  auto row = [&](int order, double theta) { return rows[std::make_pair(order, theta)]; };
  for (int order : {1, 2}) {
    // Larger theta: larger median error, fewer interactions (v[1] err_p50, v[8] + v[9]).
    EXPECT_GT(row(order, 0.9)[1], row(order, 0.3)[1]);
    EXPECT_LT(row(order, 0.9)[8] + row(order, 0.9)[9], row(order, 0.3)[8] + row(order, 0.3)[9]);
  }
  for (double theta : {0.3, 0.9}) EXPECT_LT(row(2, theta)[1], row(1, theta)[1]);
  // Bad values exit with status 2 and leave no file behind.
  EXPECT_EQ(run("-n 100 --order 3 --csv " + (dir / "x.csv").string() + " 2>/dev/null"), 2);
  EXPECT_EQ(run("-n 100 --theta 0.5,-1 2>/dev/null"), 2);
  EXPECT_EQ(run("-n 100 --criterion bogus 2>/dev/null"), 2);
  EXPECT_EQ(run("-n 100 --alpha 0.01,-1 2>/dev/null"), 2);
  EXPECT_FALSE(fs::exists(dir / "x.csv"));
  fs::remove_all(dir);
}

std::vector<std::vector<std::string>> read_csv(const fs::path& path, std::string& header) {
  std::ifstream in(path);
  std::getline(in, header);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::stringstream s(line);
    rows.emplace_back();
    for (std::string x; std::getline(s, x, ',');) rows.back().push_back(x);
    if (!line.empty() && line.back() == ',') rows.back().push_back("");
  }
  return rows;
}

// A run's snapshot is measured with the softening it ran with (the default 0 measured other
// forces than the run's), as analyze --bound takes it, with a note; --softening overrides. Fewer
// targets than resolve p999 (p99) are said.
TEST(Accuracy, ARunsSnapshotIsMeasuredWithItsSofteningAndSmallSamplesAreSaid) {
  const fs::path dir = fs::temp_directory_path() / "hoshi_test_accuracy_softening";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string hoshi = HOSHI_EXE;
  ASSERT_EQ(std::system((hoshi +
                         " run -n 2000 --softening 0.05 --kernel spline --t-end 0 --quiet "
                         "--out " +
                         (dir / "r").string() + " >/dev/null")
                            .c_str()),
            0);
  const std::string snap = (dir / "r" / "checkpoint.hdf5").string();
  const auto table = [&](const std::string& extra, const std::string& name) {
    const fs::path csv = dir / (name + ".csv"), err = dir / (name + ".err");
    EXPECT_EQ(run("--ic " + snap + " --targets 300 --csv " + csv.string() + " " + extra +
                  " >/dev/null 2>" + err.string()),
              0);
    std::string header, row;
    std::ifstream in(csv);
    std::getline(in, header);
    std::getline(in, row);
    std::stringstream e;
    e << std::ifstream(err).rdbuf();
    // Without seconds (the 15th column), which varies.
    std::stringstream fields(row);
    std::string kept, x;
    for (int k = 0; std::getline(fields, x, ','); ++k)
      if (k != 14) kept += x + ",";
    return std::pair{kept, e.str()};
  };
  const auto [recorded, note] = table("", "recorded");
  EXPECT_NE(note.find("note: the softening " + snap + " records: 0.05 (spline; --softening"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("note: 300 targets: err_p999 is the largest error"), std::string::npos)
      << note;
  EXPECT_EQ(recorded, table("--softening 0.05 --kernel spline", "given").first);
  const auto [zero, zero_note] = table("--softening 0", "zero");
  EXPECT_NE(recorded, zero);
  EXPECT_EQ(zero_note.find("records"), std::string::npos) << zero_note;
  // A file that records none: unsoftened, and said (it went unsaid).
  const std::string plain = (dir / "plain.csv").string(), err = (dir / "plain.err").string();
  ASSERT_EQ(std::system((hoshi + " ic -n 500 --out " + plain + " >/dev/null").c_str()), 0);
  ASSERT_EQ(run("--ic " + plain + " --targets 10 >/dev/null 2>" + err), 0);
  std::stringstream plain_note;
  plain_note << std::ifstream(err).rdbuf();
  EXPECT_NE(plain_note.str().find(plain + " records no softening: the forces are unsoftened"),
            std::string::npos)
      << plain_note.str();
  fs::remove_all(dir);
}

TEST(Accuracy, ErrorsFileHoldsTheDistributionBehindThePercentiles) {
  // --errors writes each target's errors per setting; their percentiles are the table's.
  const fs::path dir = fs::temp_directory_path() / "hoshi_test_accuracy_errors";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path csv = dir / "acc.csv", errors = dir / "errors.csv";
  const std::size_t n = 2000, k = 250;
  ASSERT_EQ(run("-n 2000 --seed 5 --theta 0.5,0.8 --criterion barnes94 --targets 250 --csv " +
                csv.string() + " --errors " + errors.string() + " >/dev/null"),
            0);
  std::string header;
  const auto table = read_csv(csv, header);
  const auto rows = read_csv(errors, header);
  EXPECT_EQ(header, "criterion,order,walk,theta,alpha,id,r,a_ref,acc_err,pot_err");
  ASSERT_EQ(table.size(), 2u);
  ASSERT_EQ(rows.size(), 2 * k);
  std::map<std::string, std::vector<double>> acc, pot;  // theta -> errors
  std::map<std::string, std::set<unsigned long>> ids;
  for (const auto& f : rows) {
    ASSERT_EQ(f.size(), 10u);
    EXPECT_EQ(f[0], "barnes94");
    EXPECT_EQ(f[4], "");
    const unsigned long id = std::stoul(f[5]);
    EXPECT_LT(id, n);
    ids[f[3]].insert(id);
    EXPECT_GT(std::stod(f[6]), 0);  // r
    EXPECT_GT(std::stod(f[7]), 0);  // |a_ref|
    acc[f[3]].push_back(std::stod(f[8]));
    pot[f[3]].push_back(std::stod(f[9]));
  }
  for (const auto& t : table) {
    const std::string theta = t[3];
    ASSERT_EQ(acc[theta].size(), k) << theta;
    EXPECT_EQ(ids[theta].size(), k);  // distinct targets, the same set for every setting
    EXPECT_EQ(ids[theta], ids.begin()->second);
    std::sort(acc[theta].begin(), acc[theta].end());
    std::sort(pot[theta].begin(), pot[theta].end());
    // Both files print 5 significant digits: equal to their rounding.
    EXPECT_NEAR(quantile_sorted(acc[theta], 0.5), std::stod(t[5]), 1e-4 * std::stod(t[5]));
    EXPECT_NEAR(quantile_sorted(acc[theta], 0.99), std::stod(t[7]), 1e-4 * std::stod(t[7]));
    EXPECT_NEAR(acc[theta].back(), std::stod(t[9]), 1e-4 * std::stod(t[9]));
    EXPECT_NEAR(quantile_sorted(pot[theta], 0.99), std::stod(t[11]), 1e-4 * std::stod(t[11]));
  }
  EXPECT_GT(quantile_sorted(acc["0.8"], 0.5), quantile_sorted(acc["0.5"], 0.5));
  // An existing file is kept without --overwrite; a failing run leaves it and no temporary.
  const auto size = fs::file_size(errors);
  EXPECT_EQ(run("-n 300 --errors " + errors.string() + " 2>/dev/null"), 2);
  EXPECT_EQ(run("-n 300 --order 3 --overwrite --errors " + errors.string() + " 2>/dev/null"), 2);
  // This one fails after the temporary exists (reading the initial conditions).
  EXPECT_EQ(run("--ic " + (dir / "none.hdf5").string() + " --overwrite --errors " +
                errors.string() + " 2>/dev/null"),
            2);
  EXPECT_EQ(fs::file_size(errors), size);
  EXPECT_EQ(run("-n 300 --errors " + (dir / "none" / "e.csv").string() + " 2>/dev/null"), 2);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 2u);  // acc.csv, errors.csv: no temporary left
  fs::remove_all(dir);
}

TEST(Accuracy, AlphaListVariesTheRelativeRowsOnly) {
  // An --alpha list gives one relative row per value (a smaller alpha: smaller errors, more
  // terms), whose theta column is empty (theta only sets its bootstrap pass: the rows were
  // repeated once per theta), and a --theta list one barnes94 row per value, whose alpha column
  // is empty.
  const fs::path dir = fs::temp_directory_path() / "hoshi_test_accuracy_alpha";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path csv = dir / "acc.csv";
  ASSERT_EQ(run("-n 3000 --seed 4 --criterion relative,barnes94 --alpha 0.001,0.02 --theta 0.5,0.7 "
                "--targets 300 "
                "--csv " +
                csv.string() + " >/dev/null"),
            0);
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::vector<double>> rows;  // "criterion theta alpha" -> p50, pp + pc
  std::size_t lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    std::stringstream s(line);
    std::vector<std::string> f;
    for (std::string x; std::getline(s, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 24u) << line;
    rows[f[0] + " " + f[3] + " " + f[4]] = {std::stod(f[5]), std::stod(f[11]) + std::stod(f[12])};
  }
  ASSERT_EQ(lines, 4u);
  ASSERT_EQ(rows.size(), 4u);
  ASSERT_TRUE(rows.count("relative  0.001") && rows.count("relative  0.02") &&
              rows.count("barnes94 0.5 ") && rows.count("barnes94 0.7 "));
  EXPECT_LT(rows["relative  0.001"][0], rows["relative  0.02"][0]);
  EXPECT_GT(rows["relative  0.001"][1], rows["relative  0.02"][1]);
  EXPECT_LT(rows["barnes94 0.5 "][0], rows["barnes94 0.7 "][0]);
  // A theta list with only the default (relative) criterion is no theta scan: a note says so
  // (the documented scans printed one relative row, silently). So is an alpha list without the
  // relative criterion (it was ignored unsaid).
  const std::string err = (dir / "err.txt").string();
  const std::string theta_note = "for a theta scan add --criterion barnes94",
                    alpha_note = "--alpha 0.01 is unused here";
  for (const auto& [args, note, noted] :
       {std::tuple<std::string, std::string, bool>{"--theta 0.5,0.7", theta_note, true},
        {"--theta 0.5,0.7", "unused here (--criterion auto is relative,", true},
        {"--theta 0.5,0.7 --criterion relative", theta_note, true},
        // The note names the criterion as typed (it said "auto" of an explicit relative).
        {"--theta 0.5,0.7 --criterion relative", "unused here (--criterion relative,", true},
        {"--theta 0.5,0.7 --criterion auto,barnes94", theta_note, false},
        {"--alpha 0.01 --criterion barnes94", alpha_note, true},
        {"--alpha 0.01 --criterion barnes94,relative", alpha_note, false},
        {"--alpha 0.01", alpha_note, false}}) {
    ASSERT_EQ(run("-n 2000 --targets 50 " + args + " >/dev/null 2>" + err), 0);
    std::ifstream e(err);
    std::stringstream text;
    text << e.rdbuf();
    EXPECT_EQ(text.str().find(note) != std::string::npos, noted) << args << ": " << text.str();
  }
  // Values that differ in the seventh digit keep labels of their own ("%g" gave both
  // 0.123457, and their --errors rows merged into one setting).
  ASSERT_EQ(run("-n 2000 --targets 50 --criterion barnes94,relative --theta 0.1234567,0.1234568 "
                "--alpha 0.01234567,0.01234568 --overwrite --csv " +
                csv.string() + " >/dev/null 2>&1"),
            0);
  std::ifstream fine(csv);
  std::getline(fine, line);
  std::set<std::string> labels;
  while (std::getline(fine, line)) {
    std::stringstream s(line);
    std::vector<std::string> f;
    for (std::string x; std::getline(s, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 5u) << line;
    labels.insert(f[3] + "/" + f[4]);
  }
  EXPECT_EQ(labels,
            (std::set<std::string>{"0.1234567/", "0.1234568/", "/0.01234567", "/0.01234568"}));
  fs::remove_all(dir);
}

TEST(Accuracy, AutoAndItsValueInOneListGiveOneRow) {
  // "auto" and the value it resolves to name one setting: one row and a note (the row was
  // measured and printed twice). Distinct settings still give a row each.
  const fs::path dir = fs::temp_directory_path() / "hoshi_test_accuracy_auto_rows";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string csv = (dir / "acc.csv").string(), err = (dir / "err.txt").string();
  for (const auto& [args, rows, noted] :
       {std::tuple<std::string, std::size_t, bool>{"--alpha auto,0.02", 1, true},
        {"--alpha 0.02,auto,0.01", 2, true},
        {"--criterion barnes94 --theta auto,0.65 --walk auto,group", 1, true},
        {"--criterion barnes94 --theta auto,0.4 --walk group,particle", 4, false},
        {"--criterion barnes94 --theta auto,0.5 --walk group,particle", 3, true},
        {"--criterion auto,relative,barnes94 --theta 0.65", 2, true}}) {
    ASSERT_EQ(
        run("-n 2000 --targets 50 " + args + " --overwrite --csv " + csv + " >/dev/null 2>" + err),
        0)
        << args;
    std::ifstream in(csv);
    std::string line;
    std::size_t lines = 0;
    std::set<std::string> settings;
    for (std::getline(in, line); std::getline(in, line); ++lines) {
      // criterion, order, walk, theta, alpha: the setting
      std::stringstream fields(line);
      std::string setting;
      for (int k = 0; k < 5; ++k) {
        std::string f;
        std::getline(fields, f, ',');
        setting += f + ",";
      }
      settings.insert(setting);
    }
    EXPECT_EQ(lines, rows) << args;
    EXPECT_EQ(settings.size(), rows) << args;
    std::ifstream e(err);
    std::stringstream text;
    text << e.rdbuf();
    EXPECT_EQ(text.str().find("is in the table already") != std::string::npos, noted)
        << args << ": " << text.str();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hoshi
