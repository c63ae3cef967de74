// hoshi bench: times the force evaluation alone (no file I/O) for one or more N.
#include <omp.h>

#include <cxxopts.hpp>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "cli/commands.hpp"
#include "direct/direct.hpp"
#include "ic/ic.hpp"
#include "solver/solver.hpp"

namespace hoshi::cli {

namespace {

// ---- temporary local option handling, until src/cli/options.hpp lands on main ------------
// (then: add_solver_options, add_ic_options, add_threads_option, solver_config,
// parse_size_list, apply_threads from there, and this block goes).
std::vector<std::size_t> local_size_list(const std::string& text, const std::string& option) {
  std::vector<std::size_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t pos = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos != item.size() || item.empty() || v < 1)
      throw std::invalid_argument("invalid " + option + " '" + item +
                                  "' (expected positive integers separated by commas)");
    out.push_back(static_cast<std::size_t>(v));
  }
  if (out.empty()) throw std::invalid_argument("invalid " + option + " '' (empty list)");
  return out;
}

ParticleSet local_model(const std::string& name, std::size_t n, std::uint64_t seed) {
  if (name == "plummer") return make_plummer(n, seed);
  if (name == "uniform") return make_uniform_sphere(n, seed);
  throw std::invalid_argument("invalid --ic '" + name + "' (expected plummer|uniform)");
}
// -------------------------------------------------------------------------------------------

}  // namespace

int cmd_bench(int argc, char** argv) {
  cxxopts::Options opts(
      "hoshi bench",
      "Times one force evaluation (GravitySolver::compute alone, no file I/O): a warm-up call,\n"
      "then the median of R timed calls, for each N. Prints seconds, interactions per second,\n"
      "GFLOP/s at 20 flops per interaction (pp + pc for the tree) and the fraction of the\n"
      "float32 peak of the threads used. Peak = cores x FMA units x SIMD width x 2 x clock\n"
      "(2 x 2 x 16 x 2 x 3.75 GHz = 480 GFLOP/s on the 2-core AVX-512 machine); by default it\n"
      "is measured at start-up with a dense FMA loop on the same threads (--peak-gflops sets it).");
  // clang-format off
  opts.add_options()
    ("solver", "direct|tree|auto", cxxopts::value<std::string>()->default_value("direct"))
    ("backend", "cpu|cuda|auto", cxxopts::value<std::string>()->default_value("cpu"))
    ("softening", "Plummer-equivalent softening length eps", cxxopts::value<double>()->default_value("0"))
    ("kernel", "softening kernel plummer|spline", cxxopts::value<std::string>()->default_value("plummer"))
    ("precision", "float|double (direct only)", cxxopts::value<std::string>()->default_value("float"))
    ("theta", "tree opening angle", cxxopts::value<double>()->default_value("0.5"))
    ("criterion", "bh|barnes94|bmax|relative", cxxopts::value<std::string>()->default_value("barnes94"))
    ("order", "1 monopole, 2 quadrupole", cxxopts::value<int>()->default_value("2"))
    ("alpha", "relative criterion tolerance", cxxopts::value<double>()->default_value("0.0025"))
    ("n-leaf", "particles per leaf at most", cxxopts::value<int>()->default_value("16"))
    ("n-group", "particles per walk group at most", cxxopts::value<int>()->default_value("64"))
    ("walk", "group|particle", cxxopts::value<std::string>()->default_value("group"))
    ("ic", "model plummer|uniform", cxxopts::value<std::string>()->default_value("plummer"))
    ("n,number", "particle counts N[,N...]", cxxopts::value<std::string>()->default_value("4096,16384"))
    ("seed", "random seed of the model", cxxopts::value<std::uint64_t>()->default_value("1"))
    ("repeat", "timed repeats per N (median reported)", cxxopts::value<int>()->default_value("5"))
    ("csv", "also write one CSV row per N to FILE", cxxopts::value<std::string>())
    ("threads", "OpenMP threads (default: all)", cxxopts::value<int>())
    ("peak-gflops", "float32 peak in GFLOP/s instead of measuring it", cxxopts::value<double>())
    ("h,help", "print this help");
  // clang-format on
  cxxopts::ParseResult r;
  try {
    r = opts.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    throw std::invalid_argument(e.what());
  }
  if (r.count("help")) {
    std::cout << opts.help() << "\n";
    return 0;
  }
  if (!r.unmatched().empty())
    throw std::invalid_argument("unexpected argument '" + r.unmatched().front() + "'");

  SolverConfig config;
  config.solver = parse_solver_kind(r["solver"].as<std::string>());
  config.backend = parse_backend(r["backend"].as<std::string>());
  config.precision = parse_precision(r["precision"].as<std::string>());
  config.eps = r["softening"].as<double>();
  config.softening = parse_softening(r["kernel"].as<std::string>());
  config.tree.theta = r["theta"].as<double>();
  config.tree.criterion = parse_criterion(r["criterion"].as<std::string>());
  config.tree.order = r["order"].as<int>();
  config.tree.alpha = r["alpha"].as<double>();
  config.tree.n_leaf = r["n-leaf"].as<int>();
  config.tree.n_group = r["n-group"].as<int>();
  config.tree.walk = parse_walk(r["walk"].as<std::string>());
  validate(config);
  const std::vector<std::size_t> sizes = local_size_list(r["n"].as<std::string>(), "-n");
  const int repeat = r["repeat"].as<int>();
  if (repeat < 1)
    throw std::invalid_argument("invalid --repeat " + std::to_string(repeat) + " (must be >= 1)");
  if (r.count("threads")) {
    const int k = r["threads"].as<int>();
    if (k < 1) throw std::invalid_argument("invalid --threads " + std::to_string(k));
    omp_set_num_threads(k);
  }
  const int threads = omp_get_max_threads();
  // Fail on an unwritable CSV path before spending minutes on timings.
  std::string csv;
  if (r.count("csv")) {
    csv = r["csv"].as<std::string>();
    const auto dir = std::filesystem::path(csv).parent_path();
    if (!dir.empty() && !std::filesystem::is_directory(dir))
      throw std::invalid_argument("--csv " + csv + ": directory does not exist");
  }

  double peak = 0;
  std::string peak_how;
  if (r.count("peak-gflops")) {
    peak = r["peak-gflops"].as<double>();
    if (!(peak > 0)) throw std::invalid_argument("invalid --peak-gflops (must be > 0)");
    peak_how = "given";
  } else {
    peak = measure_peak_gflops(threads);
    peak_how = "measured: dense FMA loop on " + std::to_string(threads) + " threads";
  }

  std::cout << "hoshi bench: solver " << to_string(config.solver) << ", backend "
            << to_string(config.backend) << ", kernel " << to_string(config.softening)
            << ", softening " << config.eps << ", threads " << threads << ", CPU SIMD "
            << direct_simd_name() << ", median of " << repeat << "\n"
            << "float32 peak " << std::fixed << std::setprecision(1) << peak << " GFLOP/s ("
            << peak_how << "); 20 flops per interaction\n";
  std::cout << std::setw(10) << "n" << std::setw(8) << "solver" << std::setw(12) << "seconds"
            << std::setw(16) << "interactions/s" << std::setw(10) << "GFLOP/s" << std::setw(8)
            << "peak"
            << "\n";
  std::vector<BenchRow> rows;
  for (std::size_t n : sizes) {
    ParticleSet p = local_model(r["ic"].as<std::string>(), n, r["seed"].as<std::uint64_t>());
    auto solver = make_solver(config, p.size());
    BenchRow row = time_force(*solver, p, repeat);
    std::cout << std::setw(10) << row.n << std::setw(8) << row.solver << std::setw(12)
              << std::setprecision(6) << row.seconds << std::setw(16) << std::scientific
              << std::setprecision(3) << row.interactions_per_second() << std::fixed
              << std::setw(10) << std::setprecision(1) << row.gflops() << std::setw(8)
              << std::setprecision(3) << row.gflops() / peak << "\n";
    rows.push_back(std::move(row));
  }
  if (!csv.empty()) {
    write_bench_csv(csv, rows, peak);
    std::cout << "wrote " << csv << "\n";
  }
  return 0;
}

}  // namespace hoshi::cli
