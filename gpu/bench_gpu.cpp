// hoshi_gpu_bench: times the CUDA direct and tree solvers and checks them against the CPU
// double reference on sampled targets; the timing half of scripts/gpu-check.sh. Plain C++ over
// the GravitySolver interface; kernel times come from the solvers' CUDA events.
//
// usage: hoshi_gpu_bench [--direct LO:HI] [--tree LO:HI] [--step LO:HI] [--repeats R]
//                        [--samples S] [--walk LIST] [--theta T] [--criterion C] [--alpha A]
//                        [--direct-targets LIST] [--seconds S]
//                        [--out FILE]
//   LO:HI are log2 N ranges (defaults 12:20, 16:24 and 20:24); 0:0 skips one. --tree times the
//   tree solver's compute() (the non-resident path: host keys, sort and build, upload, walk,
//   download); --step times a whole kick-drift-kick step of device-resident stepping
//   (gpu::DeviceStepper, what `hoshi run --backend cuda` does) phase by phase. --walk: particle
//   (default), group (the group mode, a warp per group: the lanes kernel), lists (the group
//   mode's lists kernel, gpu::GroupWalkKernel::lists) and lists7, lists8 (the lists kernel built
//   for 7 or 8 blocks per SM), comma-separated (rows tree, tree/g, tree/l, tree/l7, tree/l8).
//   --direct-targets: the direct kernel variants to time: targets per thread, any of 1, 2 and 4
//   (rows "direct", "direct2", "direct4"), each optionally with "p" for the prefetching tile
//   schedule (gpu::set_direct_prefetch; rows "directp", "direct2p", "direct4p"). The tree settings
//   default to hoshi's CUDA defaults for the walk (default_theta / default_criterion /
//   default_alpha): the relative criterion, whose first call bootstraps |a_old| with barnes94 (the
//   warm-up call); the timed calls use the previous call's accelerations, as every step of a run
//   does.
//   --seconds S: a time budget for the sweep (default 0: none): a row predicted to end past its
//   table's share of S is skipped, with the larger rows of its series, and printed as skipped
//   (gpu/bench_budget.hpp), so that the goals summary is always printed within S.
// Without a CUDA device it prints why and exits 0 (nothing to time).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/timer.hpp"
#include "direct/direct.hpp"
#include "gpu/bench_budget.hpp"
#include "gpu/cuda_solvers.hpp"
#include "gpu/device.hpp"
#include "gpu/device_stepper.hpp"
#include "ic/ic.hpp"
#include "solver/solver.hpp"

namespace {

using namespace hoshi;

constexpr double kH200Fp32Peak = 67e12;  // FLOP/s, H200 SXM datasheet (FMA = 2)
constexpr double kFlopsPerPP = 20;       // the conventional count per pair interaction

struct Range {
  int lo, hi;
};

Range parse_range(const char* s, const char* what) {
  Range r{};
  if (std::sscanf(s, "%d:%d", &r.lo, &r.hi) != 2 || r.lo < 0 || r.hi < r.lo || r.hi > 30)
    throw std::invalid_argument(std::string(what) + ": '" + s + "' is not LO:HI (log2 N)");
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const std::size_t k = static_cast<std::size_t>(std::ceil(q * v.size())) - 1;
  return v[std::min(k, v.size() - 1)];
}

struct Row {
  std::size_t n;
  std::string solver;
  double kernel_ms, call_ms;  // the walk or direct kernel; the solver's whole compute()
  std::uint64_t pp, pc;
  double err50, err99, errmax;
};

// The table's solver column: direct, tree (per-particle walk), tree/g (group mode, lanes
// kernel) or tree/l (group mode, lists kernel), by the process-wide kernel choices.
std::string solver_label(SolverKind kind, WalkKind walk) {
  if (kind == SolverKind::direct) {  // "direct2", "direct4": two, four targets per thread
    const int t = hoshi::gpu::direct_targets_per_thread();
    return (t == 1 ? "direct" : "direct" + std::to_string(t)) +
           (hoshi::gpu::direct_prefetch() ? "p" : "");
  }
  if (walk != WalkKind::group) return "tree";
  switch (hoshi::gpu::group_walk_kernel()) {
    case hoshi::gpu::GroupWalkKernel::lists:
      return "tree/l";
    case hoshi::gpu::GroupWalkKernel::lists7:
      return "tree/l7";
    case hoshi::gpu::GroupWalkKernel::lists8:
      return "tree/l8";
    default:
      return "tree/g";
  }
}

Row run(SolverKind kind, std::size_t n, int repeats, std::size_t samples, const TreeParams& tree) {
  SolverConfig c;
  c.solver = kind;
  c.backend = Backend::cuda;
  c.eps = 1e-3;  // well below the mean separation of 2^24 Plummer particles (~2e-3 at a)
  c.tree = tree;
  ParticleSet p = make_plummer(n, 1000 + n);
  auto solver = make_solver(c, n);
  const std::string phase = kind == SolverKind::direct ? "direct" : "walk";
  solver->compute(p);  // warm-up: module load, allocations, the relative criterion's bootstrap
  std::vector<double> kernel, call;
  ForceStats st;
  // Above 4M particles the host build dominates the wall time of a repeat: three repeats keep
  // the whole sweep inside the 5 minutes of scripts/gpu-check.sh.
  if (n >= (std::size_t{1} << 22)) repeats = std::min(repeats, 3);
  for (int r = 0; r < repeats; ++r) {
    st = solver->compute(p);
    kernel.push_back(st.seconds.at(phase));
    call.push_back(st.total_seconds);
  }
  // Error against the double reference on `samples` targets spread over the set.
  std::vector<std::size_t> targets;
  Random rng(77);
  for (std::size_t s = 0; s < std::min(samples, n); ++s)
    targets.push_back(static_cast<std::size_t>(rng.uniform() * n) % n);
  ForceArrays ref;
  direct_reference(p, c.G, c.softening, c.eps, targets, ref);
  std::vector<double> err;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const std::size_t i = targets[t];
    const double dx = p.ax[i] - ref.ax[t], dy = p.ay[i] - ref.ay[t], dz = p.az[i] - ref.az[t];
    const double a =
        std::sqrt(ref.ax[t] * ref.ax[t] + ref.ay[t] * ref.ay[t] + ref.az[t] * ref.az[t]);
    err.push_back(std::sqrt(dx * dx + dy * dy + dz * dz) / a);
  }
  return {n,     solver_label(kind, tree.walk), 1e3 * median(kernel),  1e3 * median(call),  st.pp,
          st.pc, percentile(err, 0.5),          percentile(err, 0.99), percentile(err, 1.0)};
}

std::string format(const Row& r) {
  const double s = 1e-3 * r.kernel_ms;
  const double inter = static_cast<double>(r.pp + r.pc) / s;
  const double gflops = kFlopsPerPP * static_cast<double>(r.pp) / s * 1e-9;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%9zu %-7s%10.3f %10.3f %11.3e %11.3e %10.3e %9.1f %6.1f%% %9.2e %9.2e %9.2e", r.n,
                r.solver.c_str(), r.kernel_ms, r.call_ms, static_cast<double>(r.pp),
                static_cast<double>(r.pc), inter, gflops, 100 * gflops * 1e9 / kH200Fp32Peak,
                r.err50, r.err99, r.errmax);
  return buf;
}

// One device-resident step, phase by phase (milliseconds, medians over the timed steps).
struct StepRow {
  std::size_t n;
  std::string solver;
  double step_ms;
  PhaseTimes phase_ms;  // keys, sort, download, build, upload, walk, integrate
  double energy_drift;  // |E_end - E_start| / |E_start| over the timed steps
};

const char* const kStepPhases[] = {"keys", "sort", "download", "build", "upload", "walk"};

// Kick-drift-kick steps of gpu::DeviceStepper on p (dt = 1/1024 in Henon units): a warm-up step
// (after the first forces, which bootstrap the relative criterion), then `repeats` timed ones.
// The step time is the host's wall clock around kick, drift, compute_forces, kick (kick waits
// for its kernel, so the step is complete when the clock stops).
StepRow run_steps(const ParticleSet& p, int repeats, const TreeParams& tree) {
  SolverConfig c;
  c.solver = SolverKind::tree;
  c.backend = Backend::cuda;
  c.eps = 1e-3;
  c.tree = tree;
  const double dt = 1.0 / 1024;
  gpu::DeviceStepper s(c, p);
  const auto step = [&] {
    s.kick(0.5 * dt);
    s.drift(dt);
    const ForceStats st = s.compute_forces();
    s.kick(0.5 * dt);
    return st;
  };
  const auto integrated = [&] {
    double t = 0;
    for (const auto& [phase, sec] : s.integrate_seconds()) t += sec;
    return t;
  };
  s.compute_forces();
  step();
  if (p.size() >= (std::size_t{1} << 22)) repeats = std::min(repeats, 3);
  const gpu::DeviceEnergies e0 = s.energies();
  std::vector<double> wall, integrate;
  std::map<std::string, std::vector<double>> phases;
  for (int r = 0; r < repeats; ++r) {
    const double before = integrated();
    Stopwatch sw;
    const ForceStats st = step();
    wall.push_back(sw.seconds());
    integrate.push_back(integrated() - before);
    for (const char* ph : kStepPhases) {
      const auto it = st.seconds.find(ph);
      phases[ph].push_back(it == st.seconds.end() ? 0.0 : it->second);
    }
  }
  const gpu::DeviceEnergies e1 = s.energies();
  const double E0 = e0.kinetic + e0.potential, E1 = e1.kinetic + e1.potential;
  StepRow row{p.size(),
              solver_label(SolverKind::tree, tree.walk),
              1e3 * median(wall),
              {},
              std::abs(E1 - E0) / std::abs(E0)};
  for (auto& [ph, v] : phases) row.phase_ms[ph] = 1e3 * median(v);
  row.phase_ms["integrate"] = 1e3 * median(integrate);
  return row;
}

std::string format(const StepRow& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%9zu %-6s %9.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %9.3f %9.2e %9.2e", r.n,
                r.solver.c_str(), r.step_ms, r.phase_ms.at("keys"), r.phase_ms.at("sort"),
                r.phase_ms.at("download"), r.phase_ms.at("build"), r.phase_ms.at("upload"),
                r.phase_ms.at("walk"), r.phase_ms.at("integrate"),
                static_cast<double>(r.n) / (1e-3 * r.step_ms), r.energy_drift);
  return buf;
}

// The goals, judged from the rows measured (1M = 2^20 particles here).
// A row that failed or was skipped: N, solver column, and its table ("force" or "step").
struct Failure {
  std::size_t n;
  std::string solver, table;
};

// A goal whose row failed, was skipped (--seconds) or was not in the sweep says so instead of
// being judged.
std::string goals(const std::vector<Row>& rows, const std::vector<StepRow>& steps,
                  const std::vector<Failure>& failed, const std::vector<Failure>& skipped) {
  constexpr std::size_t kMillion = std::size_t{1} << 20, k16M = std::size_t{1} << 24;
  const auto verdict = [](bool met) { return met ? "met" : "NOT met"; };
  const auto missing = [&](std::size_t n, const std::string& solver, const char* table) {
    for (const Failure& f : failed)
      if (f.n == n && f.solver == solver && f.table == table)
        return std::string("FAILED (see its row)");
    for (const Failure& f : skipped)
      if (f.n == n && f.solver == solver && f.table == table)
        return std::string("not measured (skipped: the time budget, --seconds)");
    return std::string("not measured (N = " + std::to_string(n) + " not in the sweep)");
  };
  std::ostringstream g;
  char buf[320];
  g << "\n# Goals (issue 4), from the rows above (1M = 2^20 particles):\n";
  bool any_direct = false;
  std::vector<std::string> direct_labels;  // in the order they ran
  const auto note = [&](const std::string& label) {
    if (label.rfind("direct", 0) == 0 &&
        std::find(direct_labels.begin(), direct_labels.end(), label) == direct_labels.end())
      direct_labels.push_back(label);
  };
  for (const Row& r : rows) note(r.solver);
  for (const Failure& f : failed) note(f.solver);
  for (const std::string& label : direct_labels) {
    double worst = std::numeric_limits<double>::infinity();
    std::size_t worst_n = 0;
    for (const Row& r : rows)
      if (r.solver == label && r.n >= (std::size_t{1} << 16)) {
        const double frac =
            kFlopsPerPP * static_cast<double>(r.pp) / (1e-3 * r.kernel_ms) / kH200Fp32Peak;
        if (!(frac >= worst)) worst = frac, worst_n = r.n;
      }
    bool direct_failed = false;
    for (const Failure& f : failed) direct_failed |= f.solver == label && f.n >= (1u << 16);
    if (!worst_n && !direct_failed) continue;
    any_direct = true;
    if (worst_n)
      std::snprintf(buf, sizeof buf,
                    "#   %-7s kernel >= 60%% of float32 peak for N >= 2^16: lowest %.1f%% (N = "
                    "%zu): %s%s\n",
                    label.c_str(), 100 * worst, worst_n, verdict(worst >= 0.6),
                    direct_failed ? " (and some rows FAILED)" : "");
    else
      std::snprintf(buf, sizeof buf,
                    "#   %-7s kernel >= 60%% of float32 peak: FAILED (see the rows)\n",
                    label.c_str());
    g << buf;
  }
  if (!any_direct) g << "#   direct kernel >= 60% of float32 peak: not measured (no N >= 2^16)\n";
  for (const std::string solver : {"tree", "tree/g", "tree/l", "tree/l7", "tree/l8"}) {
    const Row* r = nullptr;
    for (const Row& x : rows)
      if (x.solver == solver && x.n == kMillion) r = &x;
    bool in_sweep = r != nullptr;
    for (const Row& x : rows) in_sweep |= x.solver == solver;
    for (const Failure& f : failed) in_sweep |= f.solver == solver;
    if (!in_sweep) continue;  // this walk was not timed
    if (r)
      std::snprintf(buf, sizeof buf,
                    "#   %-6s 1M-particle force at p99 <= 1e-3 in < 10 ms: p99 %.2e, walk kernel "
                    "%.2f ms: %s; whole non-resident call %.2f ms: %s\n",
                    solver.c_str(), r->err99, r->kernel_ms,
                    verdict(r->kernel_ms < 10 && r->err99 <= 1e-3), r->call_ms,
                    verdict(r->call_ms < 10 && r->err99 <= 1e-3));
    else
      std::snprintf(buf, sizeof buf, "#   %-6s 1M-particle force < 10 ms: %s\n", solver.c_str(),
                    missing(kMillion, solver, "force").c_str());
    g << buf;
    const StepRow* s = nullptr;
    for (const StepRow& x : steps)
      if (x.solver == solver && x.n == kMillion) s = &x;
    if (s)
      std::snprintf(buf, sizeof buf,
                    "#   %-6s full device-resident step at 1M < 30 ms: %.2f ms: %s\n",
                    solver.c_str(), s->step_ms, verdict(s->step_ms < 30));
    else
      std::snprintf(buf, sizeof buf, "#   %-6s full device-resident step at 1M < 30 ms: %s\n",
                    solver.c_str(), missing(kMillion, solver, "step").c_str());
    g << buf;
  }
  bool ran16 = false, failed16 = false;
  for (const StepRow& r : steps) ran16 |= r.n >= k16M;
  for (const Row& r : rows) ran16 |= r.solver.rfind("direct", 0) != 0 && r.n >= k16M;
  bool skipped16 = false;
  for (const Failure& f : failed) failed16 |= f.n >= k16M && f.solver.rfind("direct", 0) != 0;
  for (const Failure& f : skipped) skipped16 |= f.n >= k16M && f.solver.rfind("direct", 0) != 0;
  g << "#   16M particles fit and run: "
    << (ran16       ? (failed16 ? "met by some rows, others FAILED" : "met (the 2^24 rows above)")
        : failed16  ? "NOT met (the 2^24 rows FAILED)"
        : skipped16 ? "not measured (the 2^24 rows skipped: the time budget, --seconds)"
                    : "not measured (2^24 not in the sweep)")
    << "\n";
  return g.str();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Range direct{12, 20}, tree{16, 24}, steps{20, 24};
    int repeats = 5;
    std::size_t samples = 256;
    double seconds = 0;  // --seconds: the sweep's time budget (0: none)
    // hoshi's CUDA defaults for the walk unless given (resolve_auto below).
    TreeParams tp;
    tp.theta_auto = tp.criterion_auto = tp.alpha_auto = true;
    std::vector<WalkKind> walks = {WalkKind::particle};
    // The group mode's kernel of each entry of walks (lanes for the per-particle walk).
    std::vector<hoshi::gpu::GroupWalkKernel> kernels = {hoshi::gpu::GroupWalkKernel::lanes};
    struct DirectVariant {
      int targets;
      bool prefetch;
    };
    std::vector<DirectVariant> direct_variants = {
        {hoshi::gpu::direct_targets_per_thread(), hoshi::gpu::direct_prefetch()}};
    std::string out;
    for (int a = 1; a < argc; ++a) {
      const auto need = [&](const char* o) {
        if (a + 1 >= argc) throw std::invalid_argument(std::string(o) + " needs a value");
        return argv[++a];
      };
      if (!std::strcmp(argv[a], "--direct"))
        direct = parse_range(need("--direct"), "--direct");
      else if (!std::strcmp(argv[a], "--tree"))
        tree = parse_range(need("--tree"), "--tree");
      else if (!std::strcmp(argv[a], "--direct-targets")) {
        direct_variants.clear();
        std::stringstream list(need("--direct-targets"));
        for (std::string v; std::getline(list, v, ',');) {
          const bool prefetch = !v.empty() && v.back() == 'p';
          const std::string t = prefetch ? v.substr(0, v.size() - 1) : v;
          if (t != "1" && t != "2" && t != "4")
            throw std::invalid_argument("--direct-targets: '" + v +
                                        "' (1, 2 or 4 targets per thread, optionally with p)");
          direct_variants.push_back({std::stoi(t), prefetch});
        }
        if (direct_variants.empty()) throw std::invalid_argument("--direct-targets needs a value");
      } else if (!std::strcmp(argv[a], "--step"))
        steps = parse_range(need("--step"), "--step");
      else if (!std::strcmp(argv[a], "--repeats"))
        repeats = std::max(1, std::atoi(need("--repeats")));
      else if (!std::strcmp(argv[a], "--samples"))
        samples = std::max(1, std::atoi(need("--samples")));
      else if (!std::strcmp(argv[a], "--seconds")) {
        const char* v = need("--seconds");
        char* end = nullptr;
        seconds = std::strtod(v, &end);
        if (end == v || *end != '\0' || !(seconds >= 0) || !std::isfinite(seconds))
          throw std::invalid_argument(std::string("--seconds: '") + v +
                                      "' is not a number of seconds >= 0");
      } else if (!std::strcmp(argv[a], "--theta"))
        tp.theta = std::atof(need("--theta")), tp.theta_auto = false;
      else if (!std::strcmp(argv[a], "--criterion"))
        tp.criterion = parse_criterion(need("--criterion")), tp.criterion_auto = false;
      else if (!std::strcmp(argv[a], "--alpha"))
        tp.alpha = std::atof(need("--alpha")), tp.alpha_auto = false;
      else if (!std::strcmp(argv[a], "--walk")) {
        walks.clear();
        kernels.clear();
        std::stringstream list(need("--walk"));
        for (std::string w; std::getline(list, w, ',');) {
          using hoshi::gpu::GroupWalkKernel;
          const GroupWalkKernel k = w == "lists"    ? GroupWalkKernel::lists
                                    : w == "lists7" ? GroupWalkKernel::lists7
                                    : w == "lists8" ? GroupWalkKernel::lists8
                                                    : GroupWalkKernel::lanes;
          walks.push_back(k != GroupWalkKernel::lanes ? WalkKind::group : parse_walk(w));
          kernels.push_back(k);
        }
        if (walks.empty()) throw std::invalid_argument("--walk needs at least one value");
      } else if (!std::strcmp(argv[a], "--out"))
        out = need("--out");
      else
        throw std::invalid_argument(std::string("unknown option '") + argv[a] + "'");
    }
    // The settings of each walk: given, or hoshi's CUDA defaults for that walk.
    std::vector<TreeParams> tree_settings;
    for (WalkKind w : walks) {
      SolverConfig c;
      c.tree = tp;
      c.tree.walk = w;
      c.tree.walk_auto = false;
      tree_settings.push_back(resolve_auto(c, Backend::cuda).tree);
    }
    std::cout << hoshi::gpu::device_report();
    if (hoshi::gpu::device_count() == 0) {
      const char* msg = "hoshi_gpu_bench: no CUDA device present; nothing to time\n";
      std::cout << msg;
      if (!out.empty()) std::ofstream(out) << hoshi::gpu::device_report() << msg;
      return 0;
    }
    // The table goes to stdout and, line by line, to --out (flushed), so that a failure
    // late in the sweep keeps what was measured before it.
    std::ofstream file;
    if (!out.empty()) {
      file.open(out);
      if (!file) throw std::invalid_argument("--out: cannot write '" + out + "'");
      file << hoshi::gpu::device_report();
    }
    const auto emit = [&](const std::string& text) {
      std::cout << text << std::flush;
      if (file.is_open()) file << text << std::flush;
    };
    // A row that throws (a CUDA error, memory) is reported as FAILED and the sweep goes on,
    // unless the error ended the device's context (a kernel fault): every later call would fail
    // with the same error, so the sweep stops there, saying so.
    std::vector<Failure> failures;
    bool context_lost = false;
    const auto failed = [&](std::size_t n, const std::string& solver, const char* table,
                            const std::exception& e) {
      failures.push_back({n, solver, table});
      char buf[64];
      std::snprintf(buf, sizeof buf, "%9zu %-6s ", n, solver.c_str());
      emit(std::string(buf) + "FAILED: " + e.what() + "\n");
      const std::string lost = hoshi::gpu::device_error();
      if (!lost.empty()) {
        context_lost = true;
        emit("# the CUDA context is lost (" + lost + "): the remaining rows are skipped\n");
      }
    };
    std::ostringstream head;
    head << "# CUDA force benchmarks: kernel ms = median of " << repeats
         << " runs (3 from N = 2^22) after a warm-up (CUDA events around the direct / walk "
            "kernel); call ms = the "
            "solver's whole compute() (non-resident: host tree build, upload, download "
            "included; the device-resident step is the second table).\n"
         << "# GFLOP/s = 20 flops x pp / kernel time (particle-cell terms not counted: see pc); "
            "peak = 67 TFLOP/s (H200 float32). Errors: |a - a_ref| / |a_ref| on "
         << samples << " sampled targets vs the CPU double reference.\n"
         << "# Plummer spheres, Henon units, eps = 1e-3 (Plummer); quadrupole, n_leaf 16.\n";
    for (std::size_t ti = 0; ti < tree_settings.size(); ++ti) {
      const TreeParams& t = tree_settings[ti];
      hoshi::gpu::set_group_walk_kernel(kernels[ti]);
      head << "# " << solver_label(SolverKind::tree, t.walk) << ": " << to_string(t.criterion)
           << (t.criterion == Criterion::relative
                   ? " alpha " + std::to_string(t.alpha) + " (after a barnes94 bootstrap), theta "
                   : ", theta ")
           << t.theta << ", "
           << (t.walk != WalkKind::group ? "per-particle walk (a thread per particle)"
               : kernels[ti] == hoshi::gpu::GroupWalkKernel::lanes
                   ? "group mode (a warp per group of <= 32), lanes kernel"
               : kernels[ti] == hoshi::gpu::GroupWalkKernel::lists
                   ? "group mode (a warp per group of <= 32), lists kernel"
                   : "group mode, lists kernel built for " +
                         std::string(kernels[ti] == hoshi::gpu::GroupWalkKernel::lists7 ? "7"
                                                                                        : "8") +
                         " blocks of 128 per SM")
           << ".\n";
    }
    head << "# Resident blocks of 128 threads per SM: " << hoshi::gpu::group_walk_occupancy()
         << " (expected 7, 6, 7, 8; docs/perf-gpu.md).\n";
    if (seconds > 0)
      head << "# Time budget (--seconds): " << seconds
           << " s; a row predicted to end past its table's share is skipped, with the larger "
              "rows of its series.\n";
    head << "        N solver  kernel_ms    call_ms          pp          pc  inter/s   "
            "GFLOP/s   peak    err_p50   err_p99   err_max\n";
    emit(head.str());
    std::vector<Row> rows;
    std::vector<StepRow> step_rows;
    // The time budget: each table's deadline is its cumulative share of `seconds` (direct 0.3,
    // tree 0.4, step 0.3 of the tables that run), counted from here.
    hoshi::gpu::SweepBudget budget(seconds);
    const Stopwatch clock;
    const double w_direct = direct.hi > 0 ? 0.3 : 0, w_tree = tree.hi > 0 ? 0.4 : 0,
                 w_step = steps.hi > 0 ? 0.3 : 0, w_all = w_direct + w_tree + w_step;
    std::vector<Failure> skipped;
    // Whether the row may start; if not, it is printed and counted as skipped.
    const auto admit = [&](std::size_t n, const std::string& solver, const char* table) {
      const std::string series = std::string(table) + ":" + solver;
      if (budget.fits(series, n, clock.seconds())) return true;
      skipped.push_back({n, solver, table});
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "%9zu %-7s skipped: the time budget (~%.0f s predicted at %.0f s; this "
                    "table ends at %.0f s)\n",
                    n, solver.c_str(), budget.predict(series, n), clock.seconds(),
                    budget.deadline());
      emit(buf);
      return false;
    };
    const auto force_row = [&](SolverKind kind, std::size_t n, const TreeParams& t) {
      if (context_lost) return;
      const std::string label = solver_label(kind, t.walk);
      if (!admit(n, label, "force")) return;
      const double start = clock.seconds();
      try {
        rows.push_back(run(kind, n, repeats, samples, t));
        emit(format(rows.back()) + "\n");
      } catch (const std::exception& e) {
        failed(n, label, "force", e);
      }
      budget.record("force:" + label, n, clock.seconds() - start);
    };
    if (w_all > 0) budget.start_table(w_direct / w_all, 2);
    // Size by size, every variant or walk at each size: a budget that runs short drops the
    // largest sizes of all of them, not every size of the last ones.
    if (direct.hi > 0)
      for (int k = direct.lo; k <= direct.hi; ++k)
        for (const DirectVariant& v : direct_variants) {
          hoshi::gpu::set_direct_targets_per_thread(v.targets);
          hoshi::gpu::set_direct_prefetch(v.prefetch);
          force_row(SolverKind::direct, std::size_t{1} << k, tree_settings[0]);
        }
    if (w_all > 0) budget.start_table((w_direct + w_tree) / w_all, 1);
    if (tree.hi > 0)
      for (int k = tree.lo; k <= tree.hi; ++k)
        for (std::size_t ti = 0; ti < tree_settings.size(); ++ti) {
          hoshi::gpu::set_group_walk_kernel(kernels[ti]);
          force_row(SolverKind::tree, std::size_t{1} << k, tree_settings[ti]);
        }
    if (steps.hi > 0) {
      std::ostringstream sh;
      sh << "\n# Device-resident steps (gpu::DeviceStepper, `hoshi run --backend cuda`): "
            "kick, drift, forces, kick at dt = 1/1024;\n# step ms = host wall clock of a whole "
            "step, median of "
         << repeats
         << " steps (3 from N = 2^22) after a warm-up step; phases in ms (medians): "
            "keys, sort on the device (CUB), download of the sorted keys and x, y, z, m "
            "(pinned), host build (octree + multipoles), upload of the nodes, walk (CUDA "
            "events), kick + drift (CUDA events).\n# dE/E: relative energy change over "
            "the timed steps (device sums). Same particles and settings as the tree rows.\n"
         << "        N solver   step_ms     keys     sort download    build   upload     "
            "walk integrate   part/s      dE/E\n";
      emit(sh.str());
      budget.start_table(1, 1);
      for (int k = steps.lo; k <= steps.hi && !context_lost; ++k) {
        const std::size_t n = std::size_t{1} << k;
        // The walks whose row fits the budget now; the model is made only for them, and its
        // time counts in the first one's row. The others are checked again when their turn
        // comes.
        std::vector<std::size_t> admitted;
        for (std::size_t ti = 0; ti < tree_settings.size(); ++ti) {
          hoshi::gpu::set_group_walk_kernel(kernels[ti]);
          if (admit(n, solver_label(SolverKind::tree, tree_settings[ti].walk), "step"))
            admitted.push_back(ti);
        }
        if (admitted.empty()) continue;
        double start = clock.seconds();
        ParticleSet p;
        try {
          p = make_plummer(n, 1000 + n);
        } catch (const std::exception& e) {
          for (std::size_t ti : admitted) {
            hoshi::gpu::set_group_walk_kernel(kernels[ti]);
            failed(n, solver_label(SolverKind::tree, tree_settings[ti].walk), "step", e);
          }
          continue;
        }
        for (std::size_t ti : admitted) {
          const TreeParams& t = tree_settings[ti];
          hoshi::gpu::set_group_walk_kernel(kernels[ti]);
          if (context_lost) break;
          const std::string label = solver_label(SolverKind::tree, t.walk);
          if (ti != admitted.front() && !admit(n, label, "step")) continue;
          try {
            step_rows.push_back(run_steps(p, repeats, t));
            emit(format(step_rows.back()) + "\n");
          } catch (const std::exception& e) {
            failed(n, label, "step", e);
          }
          budget.record("step:" + label, n, clock.seconds() - start);
          start = clock.seconds();
        }
      }
    }
    emit(goals(rows, step_rows, failures, skipped));
    if (!failures.empty()) {
      emit("# " + std::to_string(failures.size()) + " row(s) FAILED" +
           (context_lost ? ", then the CUDA context was lost\n" : "\n"));
      return 1;
    }
    return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "hoshi_gpu_bench: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hoshi_gpu_bench: error: " << e.what() << "\n";
    return 1;
  }
}
