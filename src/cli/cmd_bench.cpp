// hoshi bench: times the force evaluation alone (no file I/O) for one or more N.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_guard.hpp"
#include "core/number_text.hpp"
#include "direct/direct.hpp"
#include "solver/solver.hpp"

namespace hoshi::cli {

namespace {

cxxopts::Options bench_options() {
  cxxopts::Options o(
      "hoshi bench",
      "Times one force evaluation (GravitySolver::compute alone, no file I/O): a warm-up call,\n"
      "then the median of R timed calls, for each N. Prints seconds, interactions per second,\n"
      "GFLOP/s at 20 flops per interaction (tree: pp + pc interactions; the cells taken\n"
      "through local expansions are the CSV's m2l_per_particle) and the fraction of\n"
      "the float32 peak of the threads used:\n"
      "  peak = cores x FMA units x SIMD width x 2 flops x clock\n"
      "  (e.g. 2 x 2 x 16 x 2 x 3.75 GHz = 480 GFLOP/s for 2 cores with two 512-bit FMA units;\n"
      "  half that with one, as AMD Zen 4 has).\n"
      "By default the peak is measured at start-up with a dense FMA loop on the same threads\n"
      "(each thread's best of short slices); --peak-gflops sets it instead. Rows of\n"
      "--precision double (the double direct sum) have no fraction of the float32 peak.");
  o.add_options("bench")("repeat",
                         "timed repeats per N (the median is reported; the lower of the two "
                         "middle ones for an even count)",
                         cxxopts::value<std::string>()->default_value("5"))(
      "csv",
      "also write one CSV row per N to FILE, columns solver, backend, n, threads, seconds, "
      "interactions_per_second, gflops, peak_fraction (0 for CUDA and float64 rows), the tree "
      "build's seconds_keys, seconds_sort, seconds_permute, seconds_build, seconds_moments and "
      "seconds_walk, pp_per_particle, pc_per_particle, m2l_per_particle (cells taken through "
      "local expansions), precision",
      cxxopts::value<std::string>())("overwrite", "replace an existing --csv file")(
      "peak-gflops", "float32 peak in GFLOP/s instead of measuring it",
      cxxopts::value<std::string>());
  add_solver_options(o, "auto", true,
                     "; auto: the softening and kernel a particle file (--ic FILE) records, as "
                     "hoshi forces and accuracy take them, else 0; a length given keeps the "
                     "recorded kernel unless --kernel is given");
  add_ic_options(o, "4096,16384");
  add_threads_option(o);
  return o;
}

// The model for one N: the shared initial_conditions() on argv with "-n N" appended (the
// last -n wins), so every model and its options behave exactly as in hoshi run.
ParticleSet model_for_n(int argc, char** argv, std::size_t n) {
  std::vector<std::string> args(argv, argv + argc);
  args.push_back("--particles=" + std::to_string(n));
  std::vector<char*> ptrs;
  for (auto& a : args) ptrs.push_back(a.data());
  cxxopts::Options o = bench_options();
  return initial_conditions(parse_options(o, int(ptrs.size()), ptrs.data(), false));
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  cxxopts::Options o = bench_options();
  const auto r = parse_options(o, argc, argv);

  SolverConfig config = solver_config(r, /*softening_auto=*/true);
  const int repeat = integer(r, "repeat");
  if (repeat < 1)
    throw std::invalid_argument("invalid --repeat " + std::to_string(repeat) + " (must be >= 1)");
  const std::string ic = r["ic"].as<std::string>();
  const bool from_file = !is_model(ic);
  // A name that is neither a model nor a file is that error, not "-n: the file sets N".
  if (from_file && r.count("particles") && std::filesystem::exists(ic))
    throw std::invalid_argument("-n " + r["particles"].as<std::string>() + ": the particle file " +
                                ic + " sets N");
  const std::vector<std::size_t> sizes =
      from_file ? std::vector<std::size_t>{0}
                : parse_size_list(r["particles"].as<std::string>(), "-n");
  // The two-body model has no N to time (bench's own -n default would be blamed on the user).
  if (ic == "kepler")
    throw std::invalid_argument(
        "--ic kepler: a two-body model; hoshi bench times sets of N "
        "particles (-n, default 4096,16384): use another model or a file");
  std::string csv;
  if (r.count("csv")) {
    csv = r["csv"].as<std::string>();
    require_new_output(csv, flag(r, "overwrite"), "--csv", {r["ic"].as<std::string>()});
  }
  double peak = 0;
  if (r.count("peak-gflops")) {
    peak = number(r, "peak-gflops");
    if (!(peak >= 1e-3))  // below a MFLOP/s the fractions are nonsense (1e-320 gave inf)
      throw std::invalid_argument("invalid --peak-gflops " + number_text(peak) +
                                  " (must be >= 0.001)");
  }
  if (flag(r, "overwrite") && csv.empty())
    std::cerr << "hoshi bench: note: --overwrite unused without --csv\n";
  const int threads = apply_threads(r);
  // Every set and its solver before the table's header: a bad file, model parameter or solver
  // setting is one error line, not a header followed by an error (a model that cannot be made
  // at a later N, a disk with no disk particles, failed after the rows before it were timed).
  // Sets beyond a quarter of the memory are checked and let go, and made again at their row
  // (sets_kept_until_their_row; 96 B per particle: a ParticleSet's 11 doubles and 64-bit id).
  constexpr double kParticleBytes = 96;
  io::SnapshotInfo info;
  std::vector<ParticleSet> sets;
  // (A file's one set, counted as 0 particles here, is always kept.)
  const std::vector<bool> kept =
      sets_kept_until_their_row(sizes, kParticleBytes, physical_memory() / 4);
  const auto make_set = [&](std::size_t k) {
    try {
      return model_for_n(argc, argv, sizes[k]);
    } catch (const std::invalid_argument& e) {
      if (sizes.size() == 1) throw;
      throw std::invalid_argument("-n " + std::to_string(sizes[k]) + ": " + e.what());
    }
  };
  if (from_file) {
    sets.push_back(initial_conditions(r, &info));
  } else {
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      ParticleSet s = make_set(k);
      make_solver(config, s.size());
      sets.push_back(kept[k] ? std::move(s) : ParticleSet{});
    }
  }
  const ParticleSet& first = sets.front();
  if (from_file) {
    // The forces the run that wrote the file computed (bench timed eps 0 on a run's snapshot).
    take_recorded_softening_and_say("bench", r, info.parameters, ic, config, info.gadget_softening);
    require_distinct_positions_in(first, config.eps, ic);
  }
  if (from_file) make_solver(config, first.size());
  // Options the forces of a row do not read, as forces and run say them, once per text (-n
  // 2000,20000 --theta 0.3: the direct row's note; an audit).
  {
    std::vector<std::string> said;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::size_t n = from_file ? first.size() : sizes[k];
      const std::string unused = unused_tree_options(r, config, n);
      if (unused.empty() || std::find(said.begin(), said.end(), unused) != said.end()) continue;
      said.push_back(unused);
      std::cerr << "hoshi bench: note: "
                << (sizes.size() > 1 && !from_file ? "-n " + std::to_string(n) + ": "
                                                   : std::string())
                << unused << "\n";
    }
  }
  const bool measured = peak == 0;
  if (measured) peak = measure_peak_gflops(threads);

  std::cout << "hoshi bench: solver " << to_string(config.solver) << ", backend "
            << to_string(config.backend) << ", precision "
            << (config.precision == Precision::float64 ? "float64" : "float32") << ", kernel "
            << to_string(config.softening) << ", softening " << config.eps << ", threads "
            << threads << ", CPU SIMD " << direct_simd_name() << ", median of " << repeat << "\n"
            << "float32 peak " << std::fixed << std::setprecision(1) << peak << " GFLOP/s ("
            << (measured ? "measured: dense FMA loop on " + std::to_string(threads) + " threads"
                         : std::string("given"))
            << "); 20 flops per interaction\n";
  std::cout << std::setw(10) << "n" << std::setw(8) << "solver" << std::setw(8) << "backend"
            << std::setw(12) << "seconds" << std::setw(16) << "interactions/s" << std::setw(10)
            << "GFLOP/s" << std::setw(8) << "peak"
            << "\n";
  std::vector<BenchRow> rows;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    ParticleSet p = kept[k] ? std::move(sets[k]) : make_set(k);  // freed after its row
    auto solver = make_solver(config, p.size());
    BenchRow row;
    try {
      row = time_force(*solver, p, repeat);
    } catch (const std::invalid_argument& e) {
      // A force beyond float32, coincident particles: about the file's particles.
      if (!from_file) throw;
      throw std::invalid_argument(ic + ": " + e.what());
    }
    row.precision = config.precision == Precision::float64 ? "float64" : "float32";
    std::cout << std::setw(10) << row.n << std::setw(8) << row.solver << std::setw(8) << row.backend
              << std::setw(12) << std::setprecision(6) << row.seconds << std::setw(16)
              << std::scientific << std::setprecision(3) << row.interactions_per_second()
              << std::fixed << std::setw(10) << std::setprecision(1) << row.gflops() << std::setw(8)
              << std::setprecision(3);
    // The peak is this CPU's float32 one: a fraction of it means nothing for a CUDA row or a
    // double one.
    if (row.backend == "cpu" && row.precision == "float32")
      std::cout << row.gflops() / peak << std::endl;
    else
      std::cout << "-" << std::endl;
    rows.push_back(std::move(row));
  }
  if (!csv.empty()) {
    write_bench_csv(csv, rows, peak);
    std::cout << "wrote " << csv << "\n";
  }
  return 0;
}

}  // namespace hoshi::cli
