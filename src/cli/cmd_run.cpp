// hoshi run: a simulation from initial conditions to --t-end, with snapshots, checkpoints,
// restarts, parameter files, a progress display and clean stops on SIGINT/SIGTERM.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "analysis/analysis.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/checks.hpp"
#include "core/number_text.hpp"
#include "diagnostics/diagnostics.hpp"
#include "integrator/block.hpp"
#include "integrator/leapfrog.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5_snapshot.hpp"
#include "io/param_file.hpp"
#include "io/render.hpp"
#include "io/snapshot_io.hpp"
#include "io/tipsy.hpp"
#include "io/units.hpp"
#include "run/simulation.hpp"

namespace hoshi::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kCheckpointName = "checkpoint.hdf5";
constexpr const char* kTipsyUnitsName = io::kTipsyRunUnitsName;
// The Gadget snapshot layout of runs whose checkpoints predate --gadget-precision and
// --gadget-ids (2026-11-30): double, 64-bit ids.
constexpr std::pair<const char*, const char*> kGadgetLayoutBefore[] = {
    {"gadget-precision", "double"}, {"gadget-ids", "64"}};

// A word as a shell reads it: as it is when it holds only characters no shell treats
// specially, else in single quotes (a path with a space in a suggested command).
std::string shell_word(const std::string& w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](unsigned char c) {
    return std::isalnum(c) || std::strchr("_./-+=:,@%", c) != nullptr;
  });
  if (plain) return w;
  std::string out = "'";
  for (const char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// ---- signals: finish the step, checkpoint, exit ------------------------------------------

volatile std::sig_atomic_t g_stop_signal = 0;

// The signals that stop a run at the end of its step with a checkpoint: Ctrl-C, a batch
// system's warning, a closed terminal (SIGHUP) and a closed log pipe (SIGPIPE: `hoshi run | tee
// log` over a dropped ssh session, `| head`), which ended the run without a checkpoint.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

// Which of kStopSignals the run caught (one ignored when the run started stays ignored:
// SIGHUP under nohup, SIGINT of a background job; catching it stopped `nohup hoshi run &` at
// logout).
volatile std::sig_atomic_t g_caught[std::size(kStopSignals)] = {};

extern "C" void on_stop_signal(int sig) {
  // Said at once (a step of a large run may take minutes, and nothing showed the signal had
  // been taken): write(2) is async-signal-safe. Not for a closed pipe, which nothing reads.
  if (g_stop_signal == 0 && sig != SIGPIPE) {
    const int saved_errno = errno;  // the interrupted code may read it next
    constexpr char kSaid[] =
        "\nhoshi run: stopping after this step, with a checkpoint (a second signal stops at "
        "once, without one)\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
    errno = saved_errno;
  }
  if (g_stop_signal == 0) g_stop_signal = sig;
  // A second signal ends the process at once, whichever of them it is (an INT after a TERM
  // was caught again; the handler blocks the others while it runs, so two sent back to back
  // cannot both be caught). A closed pipe stays ignored: the run's next lines to it, before
  // the step ends, fail as writes (nothing reads them).
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i)
    if (g_caught[i]) std::signal(kStopSignals[i], kStopSignals[i] == SIGPIPE ? SIG_IGN : SIG_DFL);
}

// Catches the stop signals for as long as it lives (until the run's last line is written: a
// stop on a closed pipe restored SIGPIPE's default before its message, and ended with 141).
class SignalGuard {
 public:
  SignalGuard() {
    g_stop_signal = 0;
    struct sigaction act {};
    act.sa_handler = on_stop_signal;
    act.sa_flags = SA_RESTART;  // a console write blocked on a full pipe goes on (EINTR lost it)
    sigemptyset(&act.sa_mask);
    for (int s : kStopSignals) sigaddset(&act.sa_mask, s);
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
      g_caught[i] = 0;
      if (sigaction(kStopSignals[i], nullptr, &old_[i]) != 0) continue;
      if (old_[i].sa_handler == SIG_IGN) continue;  // nohup's, a background job's
      if (sigaction(kStopSignals[i], &act, nullptr) == 0) g_caught[i] = 1;
    }
  }
  ~SignalGuard() {
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i)
      if (g_caught[i]) sigaction(kStopSignals[i], &old_[i], nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
  // SIGINT was ignored when the run started (a background job of a script inherits that), so
  // Ctrl-C or kill -INT does nothing.
  bool interrupt_ignored() const { return !g_caught[0] && old_[0].sa_handler == SIG_IGN; }
  bool terminate_caught() const { return g_caught[1] != 0; }  // SIGTERM

 private:
  struct sigaction old_[std::size(kStopSignals)]{};
};

// ---- options ----------------------------------------------------------------------------

void add_run_options(cxxopts::Options& o) {
  o.add_options("run")("t-end", "simulated end time (a number or a fraction A/B, as --dt)",
                       cxxopts::value<std::string>()->default_value("10"))(
      "dt",
      "fixed time step (a number or a fraction A/B such as 1/1024), or auto: 1/128, or where the "
      "initial state's limits (a quarter of the shortest dynamical time, 0.3 sqrt(eps/max|a|); "
      "with --levels, the smallest level's step within --eta of it) "
      "reject it the power of two the warning "
      "for a given --dt would suggest, stored as chosen for --restart (not with --eta > 0, "
      "which sets every step; a last step that would pass --t-end is shortened to end there)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "eta",
      "> 0: global adaptive step dt = eta sqrt(eps/max|a|) instead of --dt (not symplectic); "
      "with --levels > 1, each particle's criterion instead (0: 0.2)",
      cxxopts::value<std::string>()->default_value("0"))(
      "levels",
      "block time steps: > 1 gives each particle the largest step dt/2^k, k < levels, within "
      "eta sqrt(eps/|a|) of its own acceleration; a substep computes the forces of the "
      "particles whose steps end there (needs --softening > 0; dt: the base step)",
      cxxopts::value<std::string>()->default_value("1"))(
      "level-scheme",
      "with --levels > 1: individual (a particle's force from every particle at the end of each "
      "of its steps) or hierarchical (each pair at the longer of its two steps, as Gadget-4: "
      "direct summation conserves momentum; more force evaluations, on smaller sets)",
      cxxopts::value<std::string>()->default_value("individual"))(
      "out", "output directory (energy.csv, snapshots, checkpoint)",
      cxxopts::value<std::string>()->default_value("hoshi_out"))(
      "output-every",
      "diagnostics interval in simulated time, a number or a fraction A/B (at the first step at "
      "or after each multiple; "
      "with --eta the step is shortened to land on it)",
      cxxopts::value<std::string>()->default_value("0.25"))(
      "overwrite",
      "reuse an existing non-empty output directory, first removing an earlier run's outputs "
      "there (energy.csv, checkpoint, snapshot_NNN.*, snapshot.param, frame_NNN.png; nothing "
      "else)")(
      "quiet",
      "no parameter list, progress display, per-output lines or timing table (notes about the "
      "input and output and the closing two-line summary stay)")(
      "units", "unit system: henon (G = 1) or galaxy (kpc, km/s, 1e10 Msun, G = 43007.1)",
      cxxopts::value<std::string>()->default_value("henon"));
  o.add_options("output")(
      "snapshot-every",
      "write OUT/snapshot_NNN at the first step at or after each multiple of this time (a number "
      "or a fraction A/B; 0: off)",
      cxxopts::value<std::string>()->default_value("0"))(
      "snapshot-format",
      "snapshot format: hdf5, tipsy (their units in OUT/snapshot.param), gadget or csv (no "
      "time, units or G: snapshot_NNN.csv is at the first step at or after NNN times "
      "--snapshot-every)",
      cxxopts::value<std::string>()->default_value("hdf5"))(
      "checkpoint-every",
      "write OUT/checkpoint.hdf5 at the first step at or after each multiple of this time "
      "(a number or a fraction A/B; 0: off)",
      cxxopts::value<std::string>()->default_value("0"))(
      "checkpoint-minutes", "also write a checkpoint every this many wall-clock minutes (0: off)",
      cxxopts::value<std::string>()->default_value("0"))(
      "render-every",
      "write OUT/frame_NNN.png at the first step at or after each multiple of this time (a number "
      "or a fraction A/B; 0: off)",
      cxxopts::value<std::string>()->default_value("0"))(
      "render-axis", "projection axis of the frames: x, y or z",
      cxxopts::value<std::string>()->default_value("z"))(
      "render-extent", "field of view of the frames (0: automatic, fixed by the first frame)",
      cxxopts::value<std::string>()->default_value("0"))(
      "render-resolution", "frame size in pixels",
      cxxopts::value<std::string>()->default_value("512"))(
      "restart", "continue the run in this output directory from its checkpoint",
      cxxopts::value<std::string>())(
      "params", "parameter file (YAML: option: value), overridden by the command line",
      cxxopts::value<std::string>());
  add_write_options(o, "output");
  add_ic_options(o);
  add_solver_options(o, "0.01");
  add_threads_option(o);
  o.parse_positional({"params"});
  o.positional_help("[PARAMS.yml]");
  o.show_positional_help();  // --params in the help, as the positional PARAMS.yml
}

// Options that are not run parameters (never read from or written to parameter sets).
bool is_control_option(const std::string& name) {
  return name == "help" || name == "params" || name == "restart" || name == "overwrite";
}

struct OptionInfo {
  std::string name;
  std::string default_value;
  bool boolean;
  std::string short_name;  // "n" for particles; "" if none
};

std::vector<OptionInfo> option_infos(const cxxopts::Options& o) {
  std::vector<OptionInfo> out;
  for (const auto& group : o.groups())
    for (const auto& d : o.group_help(group).options) {
      std::string name;
      for (const auto& l : d.l)
        if (l.size() > name.size()) name = l;  // the long name ("particles", not "n")
      if (name.empty()) name = d.s;            // an option with a short name only: -G
      if (name.empty() || is_control_option(name)) continue;
      out.push_back({name, d.has_default ? d.default_value : "", d.is_boolean, d.s});
    }
  return out;
}

std::vector<std::string> option_names(const std::vector<OptionInfo>& infos) {
  std::vector<std::string> names;
  for (const auto& i : infos) names.push_back(i.name);
  return names;
}

// Appends "--key=value" (or "--key" for a true flag) for each parameter to `args`.
void append_params(std::vector<std::string>& args, const std::string& source,
                   const std::vector<std::pair<std::string, std::string>>& params,
                   const std::vector<OptionInfo>& infos) {
  const auto names = option_names(infos);
  for (const auto& [key, value] : params) {
    if (is_control_option(key))
      throw std::invalid_argument(source + ": '" + key +
                                  "' is a command-line option only, not a parameter (give --" +
                                  key + " on the command line)");
    for (const auto& i : infos)
      if (key == i.short_name && key != i.name)
        throw std::invalid_argument(source + ": unknown parameter '" + key +
                                    "' (parameter files use the long option names: '" + i.name +
                                    "')");
    io::require_known_key(source, key, names);
    const auto it = std::find_if(infos.begin(), infos.end(),
                                 [&](const OptionInfo& i) { return i.name == key; });
    // A one-letter name is a short option (G): "-G" "value", not "--G=value".
    const std::string flag = (key.size() == 1 ? "-" : "--") + key;
    if (it->boolean) {
      // YAML's booleans in any case (True, off, ...); an empty value (quiet:, ~, "") is an error
      // (it turned the flag on, and False was refused).
      std::string v = value;
      for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (v == "true" || v == "1" || v == "yes" || v == "on")
        args.push_back(flag);
      else if (!(v == "false" || v == "0" || v == "no" || v == "off"))
        throw std::invalid_argument(source + ": field " + key + ": value '" + value +
                                    "' (expected true or false)");
    } else if (key.size() == 1) {
      args.push_back(flag);
      args.push_back(value);
    } else {
      args.push_back(flag + "=" + value);
    }
  }
}

// The power of two at or below t: a step to suggest, or --dt auto's.
double power_of_two_at_or_below(double t) {
  return std::exp2(std::floor(std::log2(t)));
}

// The power of two at or below t, written as 1/2^k too when below 1.
std::string power_of_two_step(double t) {
  const double suggest = power_of_two_at_or_below(t);
  std::ostringstream s;
  s << number_text(suggest);
  if (suggest < 1 && suggest >= 0x1p-60)
    s << " = 1/" << static_cast<std::uint64_t>(std::llround(1 / suggest));
  return s.str();
}

// The time scale of a two-body orbit's pericentre passage, sqrt(r_p^3 / (G M)) with r_p =
// L^2 / (G M (1 + e)) of the relative orbit (any energy) and at least eps: a kepler pair
// starts at apocentre, where shortest_dynamical_time sees the orbit's slow part (e = 0.99 at
// the default step came out unbound without a warning). 0 when it has none, or none ahead (an
// unbound pair moving apart); NaN for a collision ahead, a pericentre at 0 (no angular
// momentum and no softening: no step follows it).
double pericentre_time(const ParticleSet& p, double G, double eps) {
  if (p.size() != 2) return 0;
  const double M = p.m[0] + p.m[1];
  if (!(G > 0) || !(M > 0)) return 0;
  const Vec3 r{p.x[1] - p.x[0], p.y[1] - p.y[0], p.z[1] - p.z[0]};
  const Vec3 v{p.vx[1] - p.vx[0], p.vy[1] - p.vy[0], p.vz[1] - p.vz[0]};
  const double rr = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
  if (!(rr > 0)) return 0;
  const double gm = G * M, v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  const double lx = r[1] * v[2] - r[2] * v[1], ly = r[2] * v[0] - r[0] * v[2],
               lz = r[0] * v[1] - r[1] * v[0];
  const double l2 = lx * lx + ly * ly + lz * lz, energy = 0.5 * v2 - gm / rr;
  const double e = std::sqrt(std::max(0.0, 1 + 2 * energy * l2 / (gm * gm)));
  // Past it for good: unbound and moving apart (a bound pair has one ahead: two bodies at rest,
  // L = 0 and e = 1, were taken to be past it, and a head-on fall at 1/128 gained 82 times its
  // energy).
  if (!(e < 1) && energy >= 0 && r[0] * v[0] + r[1] * v[1] + r[2] * v[2] >= 0) return 0;
  const double rp = std::max(std::min(l2 / (gm * (1 + e)), rr), eps);
  if (!(rp > 0)) return std::nan("");
  return std::sqrt(rp * rp * rp / gm);
}

// The limits a fixed step must meet at the start, and the step that meets them (two limits):
//  * a quarter of the shortest dynamical time (shortest_dynamical_time: the densest
//    component's; for two bodies the pericentre passage's, pericentre_time): a longer step does
//    not follow the orbits (the default 1/128 is ~1/60 of it for a Plummer sphere and ~1/13
//    for the default disk; in --units galaxy, or with a large -G, these times are 1/sqrt(G) as
//    long); the step for it, the power of two at or below a sixteenth of that time (models.md's
//    Jaffe example conserves energy to 2e-5 at ~1/12);
//  * 0.3 of the --eta step's measure sqrt(eps / max|a|) at the start (p holds the initial
//    forces): a longer step does not resolve the encounters within the softening, a particle
//    crosses another's softening length in a step or two, and the energy climbs steadily (an
//    audit, 2026-12-01: Plummer 4096, eps 0.01, to t = 28, direct: dt 1/16, 1/32 gained
//    6.5e-2, 1.5e-2 without a warning). Gadget's per-particle criterion sqrt(2 0.025 eps / |a|)
//    is 0.22 of it; the default 1/128 is 0.10 of it for a Plummer sphere (energy error ~1e-4 to
//    t = 10), 0.21 for a Hernquist sphere (6.5e-4), 0.48 for the Jaffe model; Plummer 4096 at
//    1/32: 0.46; Hernquist 4096 at 1/64: 0.43, 4.2e-3. The step for it, the power of two at or
//    below 0.2 of it.
// The fraction of the softening's measure a suggested step keeps to, a margin below the limit
// `factor` of it: two thirds, written out as 0.2 for kSofteningStepLimit's 0.3 (2 / 3 * 0.3 is
// 0.19999999999999998, which could take the power of two below a suggestion of before).
// e > 0 rounded down to one significant digit, as the decimal it reads: 0.009, where
// floor(e / 0.001) * 0.001 printed 0.009000000000000001 (a review), and 0.3 for 0.3, whose
// 0.3 / 0.1 is 2.9999999999999996.
double one_digit_below(double e) {
  const double digit = std::pow(10.0, std::floor(std::log10(e)));
  std::ostringstream s;
  s << std::setprecision(1) << std::floor(e / digit * (1 + 1e-12)) * digit;
  return std::stod(s.str());
}

double suggested_fraction(double factor) {
  return factor == kSofteningStepLimit ? 0.2 : factor * 2 / 3;
}

struct StepLimits {
  DynamicalTime d;          // d.t: the orbits' time (0: none)
  bool pericentre = false;  // d.t is the two bodies' pericentre passage's
  bool collision = false;   // two bodies fall head-on, unsoftened (pericentre_time's NaN)
  double eps = 0, max_a = 0;
  double scale = 0;         // sqrt(eps / max|a|) (0: none)
  bool orbits = false;      // dt passes the orbits' limit
  bool softening = false;   // dt passes the softening's
  double limit = HUGE_VAL;  // the longest step both allow
  double suggest = 0;       // the step that meets them with a margin (dt when it passes)
  int levels = 1;           // block steps: the softening's limit is on dt / 2^(levels - 1)
  double factor = kSofteningStepLimit;  // the softening's limit (softening_limit)
  // Block steps: the longest step of the particles within d's radius (both bodies for a
  // pericentre), dt / 2^inner_level by their own |a|: what must follow the orbits there.
  double inner_step = 0;
  int inner_level = 0;
};

StepLimits step_limits(double dt, const RunConfig& cfg, const ParticleSet& p) {
  StepLimits l;
  l.suggest = dt;  // no limit: one particle (--dt auto took inf)
  if (p.size() < 2) return l;
  const std::vector<DynamicalTime> times = dynamical_times(p, cfg.solver.G, cfg.solver.eps);
  for (const DynamicalTime& d : times)
    if (l.d.t == 0 || d.t < l.d.t) l.d = d;
  const double t_peri = pericentre_time(p, cfg.solver.G, cfg.solver.eps);
  l.collision = std::isnan(t_peri);
  if (l.collision) return l;
  l.pericentre = t_peri > 0 && !(l.d.t > 0 && l.d.t <= t_peri);
  if (l.pericentre) l.d.t = t_peri;
  const double t_orbit = l.d.t;  // the shortest: the base step's limit
  l.inner_step = dt;
  if (cfg.levels > 1 && l.d.t > 0 && cfg.solver.eps > 0) {
    // Block steps: the orbits within each radius are followed by the steps its particles take
    // by their accelerations (the Milky-Way recipe's 1/128 is 0.7 of the inner 1%'s dynamical
    // time, whose particles take 1/1024 to 1/4096); the radius whose particles' longest step
    // is the largest part of its time is the one said.
    const auto level_within = [&](const DynamicalTime& d, bool all) {
      int k = cfg.levels - 1;
      const double r2 = d.radius * d.radius;
      for (std::size_t i = 0; i < p.size() && k > 0; ++i) {
        const double dx = p.x[i] - d.centre[0], dy = p.y[i] - d.centre[1],
                     dz = p.z[i] - d.centre[2];
        if (!all && dx * dx + dy * dy + dz * dz > r2) continue;
        const double a2 = p.ax[i] * p.ax[i] + p.ay[i] * p.ay[i] + p.az[i] * p.az[i];
        k = std::min(k, block_level(a2, dt, cfg.levels, cfg.level_eta, cfg.solver.eps));
      }
      return k;
    };
    if (l.pericentre) {
      l.inner_level = level_within(l.d, true);  // both bodies
      l.inner_step = std::ldexp(dt, -l.inner_level);
    } else {
      double worst = -1;
      for (const DynamicalTime& d : times) {
        const int k = level_within(d, false);
        if (std::ldexp(dt, -k) / d.t > worst) {
          worst = std::ldexp(dt, -k) / d.t;
          l.d = d;
          l.inner_level = k;
          l.inner_step = std::ldexp(dt, -k);
        }
      }
    }
  }
  l.orbits = l.d.t > 0 && l.inner_step > 0.25 * l.d.t;
  l.eps = cfg.solver.eps;
  const double a2 = max_acceleration2(p);
  l.max_a = std::sqrt(a2);
  l.scale = softening_step_scale(l.eps, a2);
  // Block steps (--levels > 1): the smallest level's step, dt / 2^(levels - 1), which the
  // particle of max|a| takes (the others take what their own |a| allows).
  l.levels = cfg.levels;
  const double depth = std::ldexp(1.0, cfg.levels - 1);
  l.factor = softening_limit(cfg);
  l.softening = l.scale > 0 && dt / depth > l.factor * l.scale;
  // The longest step both limits allow, said with the suggestion, which keeps a margin below
  // it (a user took the suggestion for the limit: 1/2048 where 1/1024 passes).
  // (With block steps whose particles follow their orbits, the orbits set no limit on dt.)
  l.limit = std::min(t_orbit > 0 && (cfg.levels == 1 || l.orbits) ? 0.25 * t_orbit : HUGE_VAL,
                     l.scale > 0 ? l.factor * l.scale * depth : HUGE_VAL);
  l.suggest = !l.orbits && !l.softening
                  ? dt
                  : power_of_two_at_or_below(std::min(
                        l.orbits ? t_orbit / 16 : HUGE_VAL,
                        l.softening ? suggested_fraction(l.factor) * l.scale * depth : HUGE_VAL));
  return l;
}

// "1.3 dynamical times ... (eps 0.01, max|a| 37.7 at the start)": how far dt passes the limits.
std::string step_excess(const StepLimits& l, double dt) {
  std::ostringstream s;
  // With block steps and the softening's limit alone: "0.0625: its smallest level's step ...
  // is" (it read "0.0625 is its smallest level's step ... is").
  const bool inner = l.orbits && l.inner_level > 0;  // block steps' own steps there
  s << dt << ((l.levels > 1 && l.softening && !l.orbits) || inner ? ": " : " is ");
  if (inner) {
    // "0.0625: the particles within the radius holding 1% of these particles step up to
    // dt / 2^2 = 0.015625 by their accelerations, 1.3 dynamical times ... there"
    if (l.pericentre)
      s << "the two bodies";
    else
      s << "the particles within the radius holding " << 100 * l.d.fraction
        << "% of these particles";
    s << " step up to dt / 2^" << l.inner_level << " = " << l.inner_step
      << " by their accelerations, " << l.inner_step / l.d.t << " dynamical times ";
    if (l.pericentre)
      s << "sqrt(r_p^3 / (G M)) = " << l.d.t << " of their pericentre passage";
    else
      s << "sqrt(r^3 / (G M(<r))) = " << l.d.t << " there";
  } else if (l.orbits) {
    s << dt / l.d.t << " dynamical times ";
    if (l.pericentre)
      s << "sqrt(r_p^3 / (G M)) = " << l.d.t << " of the two bodies' pericentre passage";
    else
      s << "sqrt(r^3 / (G M(<r))) = " << l.d.t << " at the radius holding " << 100 * l.d.fraction
        << "% of these particles";
  }
  if (l.softening) {
    const double finest = std::ldexp(dt, -(l.levels - 1));
    s << (l.orbits ? ", and " : "");
    if (l.levels > 1)
      s << "its smallest level's step dt / 2^" << l.levels - 1 << " = " << finest << " is ";
    s << finest / l.scale << " sqrt(eps / max|a|) = " << l.scale << " (eps " << l.eps << ", max|a| "
      << l.max_a << " at the start)";
  }
  return s.str();
}

// The levels that take a smallest step of `finest` (with `levels` levels) down to
// suggested_fraction of the softening's limit, `factor` of its measure `scale`.
int levels_for(double finest, double scale, int levels, double factor) {
  int more = 0;
  while (std::ldexp(finest, -more) > suggested_fraction(factor) * scale &&
         levels + more < kMaxLevels)
    ++more;
  return levels + more;
}

inline constexpr const char* kHeadOn =
    "the two bodies fall head-on without softening (no angular momentum): no fixed step follows "
    "their collision, at r = 0 (give --softening)";

// Block steps: the --levels, or --eta and --levels, with which the start's limits pass at this
// --dt ("" when none is found in a few tries): more levels for the softening's limit or for
// orbits whose particles sit on the smallest level; a smaller eta (and the levels it then
// needs) for orbits whose particles' criterion sets their steps. Each try is checked again
// (--levels alone was suggested where it left the orbits failing, and the suggestion was
// warned of in turn).
std::string block_alternative(const RunConfig& cfg, const ParticleSet& p) {
  RunConfig c = cfg;
  for (int tries = 0; tries < 4; ++tries) {
    const StepLimits t = step_limits(c.dt, c, p);
    if (!t.orbits && !t.softening) {
      if (c.levels == cfg.levels && c.level_eta == cfg.level_eta) return "";
      return std::string(", or") +
             (c.level_eta != cfg.level_eta ? " --eta " + number_text(c.level_eta) : "") +
             (c.levels != cfg.levels ? " --levels " + std::to_string(c.levels) : "");
    }
    int levels = c.levels;
    if (t.softening)
      levels = levels_for(std::ldexp(c.dt, -(c.levels - 1)), t.scale, c.levels, t.factor);
    if (t.orbits && t.inner_level == c.levels - 1) {
      // On the smallest level already (their criterion wants less): levels down to a
      // sixteenth of the dynamical time.
      int k = t.inner_level;
      while (std::ldexp(c.dt, -k) > t.d.t / 16 && k < kMaxLevels - 1) ++k;
      levels = std::max(levels, k + 1);
    } else if (t.orbits && t.inner_level > 0) {
      // Their steps are at most eta sqrt(eps / |a|) and more than half of it: eta scaled to
      // take the longest to a sixteenth of the dynamical time keeps it below an eighth.
      c.level_eta = one_digit_below(c.level_eta * (t.d.t / 16) / t.inner_step);
    } else if (t.orbits) {
      return "";  // on the base step by their criterion (|a| ~ 0 at a cored centre): --dt
    }
    levels = std::min(levels, kMaxLevels);
    if (levels == c.levels && c.level_eta == cfg.level_eta && tries > 0) return "";
    c.levels = levels;
  }
  return "";
}

// A fixed step that the run cannot follow (step_limits), said once before the run with one
// --dt that meets each limit it passes (a step past both named the orbits' alone, and the step
// it suggested was warned of for the softening in turn). A warning, not an error: a short test
// run may want it. Returns whether it warned.
// An --eta past the softening's limit (global, or each particle's with --levels) sets steps
// that the step checks, measured against eta itself, would pass: --eta 3 ran with an energy
// error of 4e-2 unsaid. Checked with --dt auto too (--levels 3 --eta 0.5 went unsaid there).
// Returns whether it warned.
bool warn_eta(const RunConfig& cfg) {
  const double eta = cfg.levels > 1 ? cfg.level_eta : cfg.eta;
  if (!(eta > kSofteningStepLimit && cfg.solver.eps > 0)) return false;
  std::cerr << "hoshi run: warning: --eta " << number_text(eta) << " takes "
            << (cfg.levels > 1 ? "each particle's step" : "steps") << " up to " << number_text(eta)
            << " sqrt(eps / " << (cfg.levels > 1 ? "|a|" : "max|a|") << "): steps beyond "
            << kSofteningStepLimit
            << " of that scale do not resolve encounters within the softening and the energy "
               "drifts (try --eta 0.2; Gadget's default is 0.22)\n";
  return true;
}

bool warn_step(const RunConfig& cfg, const ParticleSet& p) {
  const bool warned = warn_eta(cfg);
  if (cfg.eta > 0) return warned;
  const StepLimits l = step_limits(cfg.dt, cfg, p);
  if (l.collision) {
    std::cerr << "hoshi run: warning: " << kHeadOn << "\n";
    return true;
  }
  if (!l.orbits && !l.softening) return warned;
  // What else meets the limits: with block steps, more levels for the softening's (where the
  // orbits pass: --levels alone was suggested where it left them failing), a smaller --eta
  // for the orbits where their particles' criterion sets their steps (a shorter --dt alone
  // puts every particle on the base step).
  std::string other;
  if (l.levels > 1) {
    other = block_alternative(cfg, p);
  } else if (l.softening) {
    other = ", or --eta 0.1";
  } else if (l.eps > 0 && l.scale > 0) {
    // The orbits alone: the --eta whose step at the start is within the suggested one (it said
    // ", or --eta" with no value; an audit), one significant digit, at most 0.2.
    other = ", or --eta " + number_text(one_digit_below(std::min(0.2, l.suggest / l.scale)));
  }
  std::ostringstream s;
  s << "hoshi run: warning: --dt " << step_excess(l, cfg.dt) << "; ";
  if (l.levels > 1 && l.softening)
    // Block steps: the limit is the particles' own criterion (eta), not the fixed steps' 0.3.
    s << (l.orbits ? "steps this long do not follow their orbits, and " : "")
      << "the particle of max|a| wants a shorter step than the smallest level's (--eta "
      << number_text(l.factor) << " of that scale)";
  else
    s << "steps this long "
      << (l.orbits && l.softening ? "neither follow their orbits nor resolve encounters within "
                                    "the softening"
          : l.orbits              ? "do not follow their orbits"
                                  : "do not resolve encounters within the softening and the "
                                    "energy drifts");
  s << " (the limits allow --dt up to " << l.limit
    << (l.levels > 1 && l.orbits ? " with the particles on any level" : "")
    << "; with a margin, try --dt " << power_of_two_step(l.suggest) << other << ")\n";
  std::cerr << s.str();
  return true;
}

// A particle file whose kinetic energy is far beyond its binding at the start, 2K/|W| > 100 (an
// equilibrium has 1): a file in other units than the run's, most often a galaxy-units Gadget
// or CSV file run in Henon units (G 43007 times too small: 2K/|W| = 4.3e4, which started
// without a word and flew apart). A warning: an unbound set may be meant (two bodies are
// left to the step checks).
void warn_unbound_file(const ParticleSet& p, const std::string& file, const io::UnitSystem& units,
                       double G) {
  if (p.size() < 3) return;
  const Diagnostics d = diagnostics(p);
  if (!(d.virial_ratio > 100)) return;
  std::cerr << "hoshi run: warning: " << file << ": 2K/|W| = " << std::setprecision(3)
            << d.virial_ratio << std::setprecision(6)
            << " at the start (1 in equilibrium): the particles fly apart; if the file is in "
               "other units than the run's ("
            << units.name << ", G = " << number_text(G)
            << "), give them (--units galaxy: kpc, km/s, 1e10 Msun; or -G)\n";
}

// --dt auto: kAutoStep, or where the start's limits (step_limits) reject it the step the
// warning would suggest (a galaxy-units run, G = 43007, at 1/128 gained an energy error of 1.3
// by t = 0.05; the Jaffe model's cusp). Said when shortened, with --quiet too (the run takes
// more steps than the default's); otherwise, without --quiet, the step taken.
inline constexpr double kAutoStep = 1.0 / 128;
double auto_step(const RunConfig& cfg, const ParticleSet& p, double time_left) {
  const StepLimits l = step_limits(kAutoStep, cfg, p);
  if (l.collision) throw std::invalid_argument(std::string("--dt auto: ") + kHeadOn);
  double dt = l.suggest;
  // Block steps: the smallest level's step within the suggestion's fraction of the particles'
  // criterion, not at its edge (a galaxy-units Plummer sphere took 1/128 at 0.198 of
  // sqrt(eps / max|a|) against eta 0.2, and soon had 232 particles that wanted a shorter step
  // than the smallest level's, at an energy error of 2e-3).
  bool margin = false;
  if (cfg.levels > 1 && l.scale > 0 && !l.softening) {
    const double within = power_of_two_at_or_below(suggested_fraction(l.factor) * l.scale *
                                                   std::ldexp(1.0, cfg.levels - 1));
    if (within < dt) {
      dt = within;
      margin = !l.orbits;
    }
  }
  if (time_left / dt > 1e12) {
    std::ostringstream m;
    m << "--dt auto: " << power_of_two_step(dt) << ", for the start's limits ("
      << step_excess(l, kAutoStep) << "), leaves more than 1e12 steps to --t-end " << cfg.t_end
      << "; give --dt or --eta";
    throw std::invalid_argument(m.str());
  }
  if (dt < kAutoStep) {
    const double steps = std::ceil(time_left / dt);
    std::ostringstream s;
    s << "hoshi run: --dt auto: " << power_of_two_step(dt) << " (the default ";
    if (margin)
      s << kAutoStep << ": its smallest level's step dt / 2^" << cfg.levels - 1 << " = "
        << std::ldexp(kAutoStep, -(cfg.levels - 1)) << " is "
        << std::ldexp(kAutoStep, -(cfg.levels - 1)) / l.scale << " sqrt(eps / max|a|) = " << l.scale
        << ", too near the particles' criterion " << number_text(l.factor) << " of it";
    else
      s << step_excess(l, kAutoStep);
    // Block steps: the softening's limit is the particles' criterion, not 0.3 (a review: 0.07
    // of the scale read as no reason at all).
    if (!margin && l.levels > 1 && l.softening)
      s << ", above the particles' criterion --eta " << number_text(l.factor) << " of it";
    s << "), " << number_text(steps) << (steps == 1 ? " step" : " steps") << " to --t-end "
      << number_text(cfg.t_end) << "\n";
    std::cout << s.str();
  } else if (!cfg.quiet) {
    std::cout << "--dt auto: " << power_of_two_step(dt) << "\n";
  }
  return dt;
}

// The softening's limit passed later in the run (RunConfig::step_outgrown: a cold collapse, whose
// start was within it), said once, after the step that passed it, with the step that meets it
// there (the start's warning's suggestion).
void warn_step_outgrown(const RunConfig& cfg, const StepOutgrown& o) {
  std::ostringstream s;
  s << "hoshi run: warning: at t = " << o.time << " (step " << o.step << ") ";
  if (cfg.levels > 1)
    s << "the smallest level's step " << number_text(o.dt) << " (--dt / 2^" << cfg.levels - 1
      << ")";
  else
    s << "--dt " << number_text(o.dt);
  s << " is " << o.dt / o.scale << " sqrt(eps / max|a|) = " << o.scale << " (eps " << cfg.solver.eps
    << ", max|a| " << o.max_acceleration << "; at the start ";
  if (o.scale_at_start > 0)
    s << "the step was " << o.dt / o.scale_at_start << " of it";
  else
    s << "there were no forces";
  if (cfg.levels > 1)  // the particles' criterion, not 0.3 (a review)
    s << "): the particle of max|a| now wants a shorter step than the smallest level's (--eta "
      << number_text(softening_limit(cfg)) << " of that scale; the limit allows the smallest "
      << "step up to " << softening_limit(cfg) * o.scale << "; try ";
  else
    s << "): steps this long no longer resolve encounters within the softening and the energy "
         "drifts (the limit allows --dt up to "
      << softening_limit(cfg) * o.scale << "; try ";
  if (cfg.levels > 1)
    s << "--levels " << levels_for(o.dt, o.scale, cfg.levels, softening_limit(cfg)) << ")\n";
  else
    s << "--dt " << power_of_two_step(suggested_fraction(kSofteningStepLimit) * o.scale)
      << ", or --eta 0.1)\n";
  std::cerr << s.str();
}

// --model-param lists merged key by key as the model takes them (a later list's key replaces an
// earlier one's: checkpoint, parameter file, command line); `order`: the keys in the order
// first given. nullopt when an item does not parse (its error comes from the model's own
// parse). The occurrences were comma-joined: a restart that repeated the run's a=0.5 compared
// "a=0.5,a=0.5" with "a=0.5" and was refused, and a run stored "a=0.5,a=1", a list it refuses
// ("key a given twice").
std::optional<ModelParams> merge_model_params(const std::vector<std::string>& lists,
                                              std::vector<std::string>* order = nullptr) {
  ModelParams merged;
  try {
    for (const std::string& list : lists) {
      std::stringstream items(list);
      for (std::string item; std::getline(items, item, ',');) {
        ModelParams one;
        parse_model_params(item, one);
        for (auto& [k, v] : one) {
          if (order && !merged.count(k)) order->push_back(k);
          merged[k] = std::move(v);
        }
      }
    }
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  return merged;
}

// The merged list as text, in the order the keys were first given, with the numbers' shortest
// texts ("mass_ratio=0.5,model2=hernquist,g2.a=0.2"); the lists comma-joined if one does not
// parse.
std::string merged_model_params(const std::vector<std::string>& lists) {
  std::vector<std::string> order;
  const auto merged = merge_model_params(lists, &order);
  std::string out;
  if (!merged) {
    for (const std::string& list : lists) out += (out.empty() ? "" : ",") + list;
    return out;
  }
  for (const std::string& k : order)
    out += (out.empty() ? "" : ",") + k + "=" + to_string(merged->at(k));
  return out;
}

// The effective value of every run option: defaults overlaid with what was given.
std::vector<std::pair<std::string, std::string>> effective_parameters(
    const cxxopts::ParseResult& r, const std::vector<OptionInfo>& infos) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& info : infos) {
    std::string v = info.default_value;
    if (info.boolean) v = flag(r, info.name) ? "true" : "false";
    std::vector<std::string> lists;  // --model-param's occurrences
    for (const auto& kv : r.arguments())
      if (kv.key() == info.name && !info.boolean) {
        v = kv.value();
        lists.push_back(kv.value());
      }
    if (info.name == "model-param" && !lists.empty()) v = merged_model_params(lists);
    if (!info.boolean && v.empty() && !r.count(info.name)) continue;
    out.emplace_back(info.name, v);
  }
  return out;
}

// A stored parameter and its value now, as texts: equal as numbers where both are numbers
// (a stored 0.1 reads back as 0.1 but may print with more digits), else as texts.
bool same_parameter_value(const std::string& stored, const std::string& now) {
  if (stored == now) return true;
  char* end1 = nullptr;
  char* end2 = nullptr;
  const double a = std::strtod(stored.c_str(), &end1);
  const double b = std::strtod(now.c_str(), &end2);
  return !stored.empty() && !now.empty() && *end1 == '\0' && *end2 == '\0' && a == b;
}

// Parameter `key` as the checkpoint stored it and as it is now (`now`: effective_parameters),
// when both exist and differ in value.
std::optional<std::pair<std::string, std::string>> parameter_change(
    const io::ParamList& stored, const std::vector<std::pair<std::string, std::string>>& now,
    const char* key) {
  const io::ParamValue* was = io::find_param(stored, key);
  const auto it =
      std::find_if(now.begin(), now.end(), [&](const auto& kv) { return kv.first == key; });
  if (!was || it == now.end()) return std::nullopt;
  std::string before = io::to_string(*was);
  if (same_parameter_value(before, it->second)) return std::nullopt;
  return std::make_pair(std::move(before), it->second);
}

// A directory option without its trailing slashes: "pb/" and "pb" name one directory, which
// the messages then name once (pb//checkpoint.hdf5, "pb//: energy.csv").
std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// The extensions of a run's numbered outputs (snapshot_NNN.EXT in each --snapshot-format;
// frame_NNN.png).
constexpr const char* kSnapshotExtensions[] = {".hdf5", ".csv", ".tipsy", ".gadget"};

// Whether `dir` holds a numbered output of the series PREFIX (io::numbered_output_name): of the
// run's own formats, so that a stray snapshot_1000000.bak does not count.
bool has_numbered_files(const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (prefix == "frame_" ? io::numbered_output_name(name, prefix, ".png")
                           : std::any_of(std::begin(kSnapshotExtensions),
                                         std::end(kSnapshotExtensions), [&](const char* ext) {
                                           return io::numbered_output_name(name, prefix, ext);
                                         }))
      return true;
  }
  return false;
}

// The numbered outputs a run wrote after its checkpoint: snapshot_NNN (any format, with a tipsy
// file's .param) and frame_NNN.png numbered at or past the checkpoint's next_snapshot and
// next_frame (snapshots and frames of a step come before its checkpoint). A restart replaced the
// killed run's only in part: one that ended sooner, turned the series off or changed the forces
// left them beside its own, a series of two trajectories. Another code's HDF5 file stays, and
// so does the run's own input (`--ic OUT/snapshot_008.hdf5 --overwrite`, which --overwrite
// keeps: the restart removed it, the earlier run's only copy of that state) with its tipsy
// .param. Returns how many it removed.
// The run's input where it lies in the run's directory, as its checkpoints record it
// (RunState/input_name, input_inode): by name and file, so that a restart from any working
// directory knows it (the stored --ic text is relative to the first run's), and a file that a
// later run wrote over it (a new inode: written by rename) is not taken for it.
struct RunInput {
  std::string name;
  std::int64_t inode = -1;
};

std::int64_t inode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_ino) : -1;
}

// `ic` when it is a file of `dir`; none otherwise.
RunInput input_in(const std::string& ic, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(ic, ec)) return {};
  const fs::path target = io::output_target(ic);
  if (!fs::equivalent(target.parent_path().empty() ? fs::path(".") : target.parent_path(), dir, ec))
    return {};
  return {target.filename().string(), inode_of(target.string())};
}

std::size_t remove_outputs_after_checkpoint(const std::string& dir, std::int64_t next_snapshot,
                                            std::int64_t next_frame, const RunInput& input,
                                            const std::string& input_path) {
  namespace fs = std::filesystem;
  // Checkpoints before 2026-12-02 record no input: the --ic text, from this directory.
  std::vector<fs::path> inputs;
  if (input.name.empty() && !input_path.empty())
    for (const std::string& path : {input_path, io::tipsy_param_path(input_path)}) {
      std::error_code ex;
      if (fs::exists(path, ex)) inputs.emplace_back(path);
    }
  const bool input_kept = !input.name.empty() && inode_of(dir + "/" + input.name) == input.inode;
  const auto number_at_least = [](const std::string& name, std::size_t skip, std::size_t rest,
                                  std::int64_t next) {
    std::int64_t k = 0;
    const char* first = name.data() + skip;
    const char* last = name.data() + name.size() - rest;
    const auto [end, ec] = std::from_chars(first, last, k);
    return ec == std::errc::result_out_of_range || (ec == std::errc() && end == last && k >= next);
  };
  std::vector<fs::path> later;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    bool after =
        io::numbered_output_name(name, "frame_", ".png") && number_at_least(name, 6, 4, next_frame);
    for (const char* ext : kSnapshotExtensions)
      for (const std::string& rest : {std::string(ext), std::string(ext) + ".param"})
        after = after || (io::numbered_output_name(name, "snapshot_", rest) &&
                          number_at_least(name, 9, rest.size(), next_snapshot));
    if (after && name.ends_with(".hdf5")) after = io::hdf5_code(e.path().string()) == "hoshi";
    if (after && std::any_of(inputs.begin(), inputs.end(), [&](const fs::path& in) {
          std::error_code eq;
          return fs::equivalent(e.path(), in, eq);
        }))
      after = false;
    if (after && input_kept && (name == input.name || name == input.name + ".param")) after = false;
    if (after) later.push_back(e.path());
  }
  for (const auto& f : later)
    if (!fs::remove(f, ec) && ec)
      throw std::runtime_error("--restart " + dir + ": cannot remove " + f.string() +
                               " (written after the checkpoint): " + ec.message());
  return later.size();
}

// Whether two describe_forces records name the same forces: the same words (solver, backend,
// precision, kernel) and the same value for every KEY=VALUE both hold. A record of a version
// that also listed settings its walk does not use (n_group and local_ratio of a per-particle
// walk, before 2026-12-02) is the same forces (its restart recomputed them for nothing and was
// no longer bit for bit).
bool same_forces(const std::string& a, const std::string& b) {
  const auto split = [](const std::string& s) {
    std::vector<std::string> words;
    std::map<std::string, std::string> values;
    std::istringstream in(s);
    for (std::string w; in >> w;)
      if (const auto eq = w.find('='); eq == std::string::npos)
        words.push_back(w);
      else
        values[w.substr(0, eq)] = w.substr(eq + 1);
    return std::pair{words, values};
  };
  const auto [wa, va] = split(a);
  const auto [wb, vb] = split(b);
  if (wa != wb) return false;
  for (const auto& [key, value] : va)
    if (const auto it = vb.find(key); it != vb.end() && it->second != value) return false;
  return true;
}

// Whether `name` is one of a run's outputs: energy.csv, the checkpoint, the tipsy units file,
// snapshot_NNN.* in any format (with a tipsy file's own .param) and frame_NNN.png.
bool is_run_output_name(const std::string& name) {
  bool ours = name == "energy.csv" || name == kCheckpointName || name == kTipsyUnitsName ||
              io::numbered_output_name(name, "frame_", ".png") ||
              io::numbered_output_name(name, "snapshot_", ".tipsy.param");
  for (const char* ext : kSnapshotExtensions)
    ours = ours || io::numbered_output_name(name, "snapshot_", ext);
  return ours;
}

// The temporaries a killed run left in `dir`: of dead processes, and, where this run holds the
// directory (`held`: DirectoryLock), those of the run's own output names whatever process id
// they carry (a live process of another node, or this one's as PID 1 in a new container: a
// checkpoint-sized temporary stayed through every restart). Returns how many it removed.
int remove_run_temporaries(const std::string& dir, bool held) {
  return held ? io::remove_stale_temporaries(dir, is_run_output_name)
              : io::remove_stale_temporaries(dir);
}

// What an earlier run wrote into a directory that --overwrite reuses: its energy.csv,
// checkpoint, snapshots and frames, which this run would replace only in part (a shorter run
// left the earlier run's later snapshots beside its own, one series made of two runs).
// Nothing else in the directory is touched, nor the run's own input (`--ic OUT/snapshot_004.hdf5`
// or `--ic OUT/checkpoint.hdf5 --overwrite`, which the restart error suggests, and a tipsy
// file's .param). Says how many it removed. Only where an earlier hoshi run was (its
// energy.csv or checkpoint): Gadget-4, AREPO and SWIFT also name their outputs
// snapshot_NNN.hdf5, and a directory of theirs keeps them.
void remove_earlier_run_outputs(const std::string& dir, const std::string& input, bool held) {
  namespace fs = std::filesystem;
  {
    std::ifstream log(dir + "/energy.csv");
    std::string header;
    std::getline(log, header);
    std::error_code ec;
    if (header.rfind("step,time,dt,kinetic,", 0) != 0 &&
        !fs::exists(dir + "/" + kCheckpointName, ec))
      return;
  }
  // The input file and a tipsy file's units file (OUT/snapshot.param for a snapshot of OUT).
  std::vector<fs::path> inputs;
  std::error_code ei;
  if (!input.empty() && fs::is_regular_file(input, ei)) {
    std::string units = io::tipsy_units_file(input);
    // A snapshot of the earlier run kept as this run's input (--ic OUT/snapshot_004.tipsy):
    // its units go beside it, input.param, since this run's tipsy snapshots rewrite the shared
    // OUT/snapshot.param in their units (a galaxy-units file was then read in Henon units).
    std::error_code eq;
    if (!units.empty() && fs::equivalent(units, dir + "/" + kTipsyUnitsName, eq)) {
      std::ifstream in(units, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      // Beside the file itself (a link's target: the link reads it there too).
      const std::string own = io::tipsy_param_path(input);
      io::write_stream_atomically(own, [&](std::ostream& out) {
        out << "# units of " << fs::path(io::output_target(input)).filename().string()
            << ", copied from " << kTipsyUnitsName << " by hoshi run --overwrite\n"
            << text.str();
      });
      std::cout << "hoshi run: --overwrite: the units of the input " << input << " are now in "
                << own << "\n";
      units = own;
    }
    for (const std::string& path : {input, input + ".param", units}) {
      std::error_code ex;
      if (!path.empty() && fs::exists(path, ex)) inputs.emplace_back(path);
    }
  }
  std::vector<fs::path> old;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    bool ours = is_run_output_name(name);
    const bool is_input = std::any_of(inputs.begin(), inputs.end(), [&](const fs::path& in) {
      std::error_code eq;
      return fs::equivalent(e.path(), in, eq);
    });
    // An HDF5 file says who wrote it: another code's snapshot_NNN.hdf5 stays.
    if (ours && name.size() > 5 && name.compare(name.size() - 5, 5, ".hdf5") == 0)
      ours = io::hdf5_code(e.path().string()) == "hoshi";
    if (ours && !is_input) old.push_back(e.path());
  }
  for (const auto& f : old)
    if (!fs::remove(f, ec) && ec)
      throw std::runtime_error("--overwrite " + dir + ": cannot remove " + f.string() + ": " +
                               ec.message());
  // And the temporaries of a run that was killed (a restart removes them; a run killed before
  // its first checkpoint cannot be restarted, and its half-written snapshot stayed).
  const std::size_t stale = static_cast<std::size_t>(remove_run_temporaries(dir, held));
  if (!old.empty() || stale > 0)  // said with --quiet too: files were deleted
    std::cout << "hoshi run: --overwrite: removed " << old.size() + stale
              << " output file(s) of an earlier run from " << dir << "/\n";
}

// ---- energy.csv on restart ------------------------------------------------------------------

// Keeps the header and the rows with step <= `step` (rows written after the checkpoint by the
// interrupted run are dropped; the continued run writes them again), except a row at `step`
// itself that was only the earlier run's closing row (its --t-end, off the output schedule):
// an uninterrupted run has no row there. A row is on the schedule when its step passed a
// multiple of `every` (the interval the rows were written with, the checkpoint's), i.e. a
// multiple lies in (t - dt, t] (within `tiny`, as the run loop tests it): with a fixed step
// the rows are at the first step at or after each multiple, not on the multiples (such a row
// was dropped when the run stopped there, whether by a signal, a crash after a checkpoint, or
// its --t-end). A restart that changes the interval also keeps a closing row on a multiple
// of the new one, `every_now` (the continued run's schedule has a row there).
void truncate_energy_log(const std::string& path, std::size_t step, double every, double every_now,
                         double tiny) {
  std::ifstream in(path);
  if (!in) return;
  std::string line, kept;
  bool header = true;
  std::size_t number = 0, columns = 0;
  while (std::getline(in, line)) {
    ++number;
    // A last row cut short (a full disk or a kill mid-write: no newline) ends the log; it was
    // kept when its cut step field read as an earlier step. A row with fewer fields than the
    // header (such a cut row that an earlier version kept, with rows after it) is dropped.
    const std::size_t fields = static_cast<std::size_t>(std::count(line.begin(), line.end(), ','));
    // Another first line (a log damaged or edited by hand) kept nothing but itself: the rows
    // of other widths were dropped and the continued run's appended under it (an audit).
    if (header && line != kEnergyLogHeader && !(line.empty() && in.eof()))
      throw std::invalid_argument(
          path + ": line 1: field header: value '" + line.substr(0, 60) +
          (line.size() > 60 ? "...'" : "'") + " (not hoshi's " + kEnergyLogHeader +
          ": the energy log is damaged; move it aside to continue, and the restart writes a new "
          "one from here)");
    if (header) columns = fields;
    if (!header && in.eof()) break;
    if (!header && fields != columns) continue;
    if (!header) {
      const std::string field = line.substr(0, line.find(','));
      std::size_t s = 0;
      const auto res = std::from_chars(field.data(), field.data() + field.size(), s);
      if (res.ec != std::errc() || res.ptr != field.data() + field.size())
        throw std::invalid_argument(path + ": line " + std::to_string(number) +
                                    ": field step: value '" + field +
                                    "' (not a step number; the energy log is damaged)");
      if (s > step) break;
      if (s == step && s > 0) {  // step 0's row is the start's, never written again
        const std::size_t c1 = line.find(','), c2 = line.find(',', c1 + 1),
                          c3 = line.find(',', c2 + 1);
        const double t = std::strtod(line.substr(c1 + 1, c2 - c1 - 1).c_str(), nullptr);
        const double dt = std::strtod(line.substr(c2 + 1, c3 - c2 - 1).c_str(), nullptr);
        const double last_multiple = std::floor((t + tiny) / every) * every;
        const bool scheduled = last_multiple > t - dt + tiny;
        const bool on_new_grid = std::abs(t - std::round(t / every_now) * every_now) <= tiny;
        if (!scheduled && !on_new_grid) break;
      }
    }
    kept += line + "\n";
    header = false;
  }
  in.close();
  io::write_stream_atomically(path, [&](std::ostream& s) { s << kept; });
}

// ---- the observer: snapshots, checkpoints, frames, progress, signals ------------------------

struct Schedule {
  double every = 0;       // 0: off
  std::int64_t next = 0;  // index of the next event (at time next * every)
  // Snapshots and frames: the interval that numbers the series' files in the output directory
  // (this run's, or, when a restart turned the series off, the run's that wrote them; 0: none
  // yet). Checkpoints store it, so that a later restart may turn the series on again.
  double files_every = 0;
  bool due(double t, double tiny) const { return every > 0 && t >= next * every - tiny; }
  // The first multiple after t: from the quotient, then exact in the products (a loop over
  // the multiples took forever for an interval of 1e-300).
  void advance(double t, double tiny) {
    const std::int64_t from = next;
    const double q = std::floor((t + tiny) / every) + 1;
    if (q > static_cast<double>(next)) next = static_cast<std::int64_t>(q);
    while (next > from && (next - 1) * every > t + tiny) --next;
    while (next * every <= t + tiny) ++next;
  }
};

class RunOutputs : public RunObserver {
 public:
  std::string out_dir;
  io::UnitSystem units;
  double G = 0;        // the run's (the unit system's, or -G)
  std::string forces;  // describe_forces of the run: stored in checkpoints, compared on restart
  io::ParamList parameters;
  io::SnapshotFormat snapshot_format = io::SnapshotFormat::hdf5;
  io::WriteOptions write;  // --gadget-precision, --gadget-ids
  Schedule snapshots, checkpoints, frames;
  double checkpoint_minutes = 0;
  io::RenderOptions render;
  bool progress_bar = false;
  double io_seconds = 0;
  std::size_t snapshots_written = 0, frames_written = 0;
  RunInput input;  // the run's input where it is a file of out_dir (checkpoints record it)

  // Reads the particles (state.particles(): a download with device-resident stepping) only
  // for what it writes or draws in this step.
  bool after_step(StepState& state, const RunProgress& s) override {
    const double tiny = time_tolerance(s.t_end);
    Stopwatch io;
    if (snapshots.due(s.time, tiny)) {
      write_snapshot(state.particles(), s);
      snapshots.advance(s.time, tiny);
    }
    if (frames.due(s.time, tiny)) {
      char name[64];
      std::snprintf(name, sizeof name, "/frame_%03lld.png", static_cast<long long>(frames.next));
      const ParticleSet& p = state.particles();
      if (!(render.extent > 0)) {
        render.extent = io::auto_extent(p, render.axis);
        io::check_auto_extent(render.extent, render.resolution, "--render-extent");
      }
      const io::Image im = io::render_surface_density(p, render);
      io::write_png(out_dir + name, im);
      ++frames_written;
      frames.advance(s.time, tiny);
    }
    bool checkpoint = false;
    if (checkpoints.due(s.time, tiny) && s.step > 0) {
      checkpoints.advance(s.time, tiny);
      checkpoint = true;
    }
    if (checkpoint_minutes > 0 && since_checkpoint_.seconds() >= 60 * checkpoint_minutes)
      checkpoint = true;
    const bool stop = g_stop_signal != 0;
    if (checkpoint || stop) write_checkpoint(state.particles(), s);
    io_seconds += io.seconds();
    if (progress_bar) draw(state, s, stop);
    return !stop;
  }

  void write_snapshot(const ParticleSet& p, const RunProgress& s) {
    char name[64];
    const std::string ext =
        snapshot_format == io::SnapshotFormat::tipsy ? "tipsy" : io::to_string(snapshot_format);
    std::snprintf(name, sizeof name, "/snapshot_%03lld.%s", static_cast<long long>(snapshots.next),
                  ext.c_str());
    io::save_snapshot(out_dir + name, snapshot_format, p, info(s.time), write);
    ++snapshots_written;
  }

  void write_checkpoint(const ParticleSet& p, const RunProgress& s) {
    io::SnapshotInfo i = info(s.time);
    i.state = {{"step", static_cast<std::int64_t>(s.step)},
               {"time", s.time},
               {"e0", s.e0},
               {"next_output", s.next_output},

               {"next_snapshot", snapshots.next},
               {"next_checkpoint", checkpoints.next},
               {"next_frame", frames.next},
               {"snapshot_files_every", snapshots.files_every},
               {"frame_files_every", frames.files_every},
               {"render_extent", render.extent},
               {"forces", forces}};
    if (!input.name.empty()) {
      i.state.emplace_back("input_name", input.name);
      i.state.emplace_back("input_inode", input.inode);
    }
    if (std::isfinite(s.time_base)) {  // a fixed step's grid (adaptive steps have none)
      i.state.emplace_back("time_base", s.time_base);
      i.state.emplace_back("step_base", static_cast<std::int64_t>(s.step_base));
    }
    // The outgrown-step check's state (RunStart::step_scale_at_start), where it has one.
    if (std::isfinite(s.step_scale_at_start)) {
      i.state.emplace_back("step_scale_at_start", s.step_scale_at_start);
      i.state.emplace_back("step_outgrown_dt", s.step_outgrown_dt);
    }
    io::write_hdf5_snapshot(out_dir + "/" + kCheckpointName, p, i);
    since_checkpoint_.restart();
  }

  void finish_display() {
    if (progress_bar && drew_) std::cout << "\n" << std::flush;
  }
  // A line for the terminal during the run (a warning on stderr): the bar's line is cleared
  // first, and drawn again below it at the next step.
  void clear_display() {
    if (progress_bar && drew_) std::cout << "\r\x1b[K" << std::flush;
  }

 private:
  io::SnapshotInfo info(double t) const {
    io::SnapshotInfo i;
    i.time = t;
    i.units = units;
    i.G = G;
    i.parameters = parameters;
    return i;
  }

  // One terminal line, redrawn in place: bar, simulated time, steps/s, ETA, energy error.
  void draw(StepState& state, const RunProgress& s, bool force) {
    const double w = wall_.seconds();
    const bool last = s.time >= s.t_end - time_tolerance(s.t_end);
    if (!force && !last && drew_ && w - last_draw_ < 0.2) return;
    if (!started_) {
      started_ = true;
      t0_ = s.time;
      step0_ = s.step;
      w0_ = w;
    }
    last_draw_ = w;
    drew_ = true;
    const Diagnostics d = diagnostics(state.particles());
    const double err = s.e0 != 0 ? (d.total - s.e0) / std::abs(s.e0) : 0.0;
    const double frac = s.t_end > 0 ? std::clamp(s.time / s.t_end, 0.0, 1.0) : 1.0;
    const double elapsed = w - w0_;
    const double rate = elapsed > 0 ? (s.step - step0_) / elapsed : 0.0;
    const double sim_rate = elapsed > 0 ? (s.time - t0_) / elapsed : 0.0;
    const double eta = sim_rate > 0 ? (s.t_end - s.time) / sim_rate : 0.0;
    constexpr int width = 24;
    const int filled = static_cast<int>(frac * width);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "\r[%s%s] t = %.4g / %.4g  %.1f steps/s  ETA %d:%02d:%02d  dE/E0 = %+.2e\x1b[K",
                  std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                  s.time, s.t_end, rate, static_cast<int>(eta / 3600),
                  static_cast<int>(std::fmod(eta / 60, 60)), static_cast<int>(std::fmod(eta, 60)),
                  err);
    std::cout << buf << std::flush;
  }

  Stopwatch wall_, since_checkpoint_;
  double last_draw_ = 0, t0_ = 0, w0_ = 0;
  std::size_t step0_ = 0;
  bool drew_ = false, started_ = false;
};

// What a RunState value must be: finite; finite and >= 0 (a time); > 0 (an extent); a whole
// number >= 0 (a step or an output counter). A damaged checkpoint ran on: next_snapshot -4
// wrote snapshot_-04, step -5 wrapped the step count, e0 nan gave nan energy errors.
enum class StateValue { finite, non_negative, positive, count };

double state_number(const io::ParamList& state, const std::string& key, const std::string& file,
                    StateValue kind = StateValue::finite) {
  const io::ParamValue* v = io::find_param(state, key);
  if (!v)
    throw std::invalid_argument(file + ": field RunState/" + key +
                                ": value missing (not a hoshi checkpoint)");
  const auto x = io::to_number(*v);
  if (!x) throw std::invalid_argument(file + ": field RunState/" + key + ": value is text");
  const char* why = nullptr;
  if (!std::isfinite(*x))
    why = "must be finite";
  else if (kind == StateValue::non_negative && *x < 0)
    why = "must be >= 0";
  else if (kind == StateValue::positive && !(*x > 0))
    why = "must be > 0";
  else if (kind == StateValue::count && !(*x >= 0 && *x <= 0x1p53 && *x == std::floor(*x)))
    why = "must be a whole number >= 0";
  if (why)
    throw std::invalid_argument(file + ": field RunState/" + key + ": value " + io::to_string(*v) +
                                " (" + why + "; a damaged checkpoint?)");
  return *x;
}

void print_timing(const RunResult& res) {
  double total = 0;
  if (auto it = res.seconds.find("total"); it != res.seconds.end()) total = it->second;
  std::cout << "time by phase:\n";
  char buf[120];
  for (const auto& [k, v] : res.seconds) {
    if (k == "total") continue;
    std::snprintf(buf, sizeof buf, "  %-12s %10.3f s  %5.1f%%\n", k.c_str(), v,
                  total > 0 ? 100 * v / total : 0.0);
    std::cout << buf;
  }
  std::snprintf(buf, sizeof buf, "  %-12s %10.3f s\n", "total (wall)", total);
  std::cout << buf;
}

// Block steps: the force evaluations per particle and base step against a leapfrog at the
// smallest level's step, the levels at the last base step, and the choices that wanted a step
// below the smallest (said with --quiet too: the run's accuracy depends on it).
void print_block_summary(const RunResult& res, const RunConfig& cfg, std::size_t steps,
                         bool restart) {
  const BlockStats& b = res.block;
  if (steps == 0 || b.level.empty()) return;
  std::uint64_t n = 0;
  for (const auto c : b.level) n += c;
  if (n == 0) return;
  const double per = static_cast<double>(b.forces) / (static_cast<double>(n) * steps);
  std::ostringstream s;
  s << std::setprecision(3) << "block steps: " << per << " force evaluations per particle and step"
    << (restart ? " since the restart" : "") << " (a leapfrog at the smallest step, dt / 2^"
    << cfg.levels - 1 << ": " << number_text(std::ldexp(1.0, cfg.levels - 1)) << ")"
    << (res.backend_name == "cuda" && cfg.level_scheme == LevelScheme::individual
            ? "; on CUDA a substep computes every particle's forces"
            : "")
    << (cfg.level_scheme == LevelScheme::hierarchical
            ? "; hierarchical: each set of levels >= m counts its particles"
            : "")
    << "; particles per level at the last step's start:";
  for (std::size_t k = 0; k < b.level.size(); ++k)
    if (b.level[k] > 0) s << " " << k << ":" << b.level[k];
  s << "\n";
  std::cout << s.str();
  if (b.floor > 0)
    std::cerr << "hoshi run: warning: up to " << b.floor
              << (b.floor == 1 ? " particle" : " particles")
              << " at a step's start wanted a step below the smallest level's, dt / 2^"
              << cfg.levels - 1 << " = " << std::ldexp(res.fixed_dt, -(cfg.levels - 1)) << " ("
              << number_text(cfg.level_eta)
              << " sqrt(eps / |a|)), and took that one; give more --levels\n";
}

// Whether an error message names option k ("--k 5", "--k: ...", "-n 5" for particles).
bool mentions(const std::string& msg, const std::string& k) {
  for (const std::string& name : {"--" + k, "-" + std::string(k == "particles" ? "n" : k)})
    if (msg.find(name + " ") != std::string::npos || msg.find(name + ":") != std::string::npos)
      return true;
  // "invalid radius -1 (must be > 0)", "invalid eccentricity 2 (...)": the models' words.
  if (msg.find("invalid " + k + " ") != std::string::npos) return true;
  // A model's own messages name the model, not the option ("unknown parameter 'foo' for model
  // plummer", "model disk: invalid disk_z0 0.2"), unless they name another option ("model
  // disk: -n 3 too small for a galaxy").
  return k == "model-param" && msg.find(" -n ") == std::string::npos &&
         msg.find("--") == std::string::npos &&
         (msg.find("for model ") != std::string::npos ||
          msg.find("model parameter") != std::string::npos || msg.rfind("model ", 0) == 0);
}

// Where a refused value came from: a value from the parameter file, not the command line, was
// reported as if the user had typed it (the file's name and field now lead the message). Kept
// by value, so that cmd_run can say it for any error of the run's setup, wherever thrown.
struct ValueSources {
  std::string file;               // the parameter file ("" without one)
  std::vector<std::string> keys;  // its fields that the command line does not override
  bool active = true;             // false once the run has started: then errors are its own
  std::string annotate(const std::string& msg) const {
    if (!active || file.empty() || msg.rfind(file + ": field ", 0) == 0) return msg;
    for (const auto& k : keys)
      if (mentions(msg, k)) return file + ": field " + k + ": " + msg;
    return msg;
  }
};

int run_command(int argc, char** argv, ValueSources& sources);

}  // namespace

int cmd_run(int argc, char** argv) {
  ValueSources sources;
  try {
    return run_command(argc, argv, sources);
  } catch (const std::invalid_argument& e) {
    const std::string msg = sources.annotate(e.what());
    if (msg == e.what()) throw;
    throw std::invalid_argument(msg);
  }
}

namespace {

int run_command(int argc, char** argv, ValueSources& sources) {
  // First pass: find a parameter file and --restart; both become option layers below the
  // command line (later layers override earlier ones: checkpoint, file, command line).
  const char* description =
      "Run a collisionless N-body simulation with the leapfrog (kick-drift-kick) integrator. "
      "Defaults: an 8192-particle Plummer sphere in Henon units (G = M = 1, E = -1/4) for 10 "
      "time units (about 3.5 crossing times).\nOptions may also come from a YAML parameter "
      "file (hoshi run params.yml); the command line overrides it. See docs/io.md.";
  cxxopts::Options probe("hoshi run", description);  // its --help is the one shown
  add_run_options(probe);
  auto first = parse_options(probe, argc, argv);
  const auto infos = option_infos(probe);

  std::vector<std::string> args{argv[0]};
  const bool restart = first.count("restart") > 0;
  std::string restart_dir;
  io::SnapshotData checkpoint;
  // The output directory, claimed for the whole run (before anything in it is removed, trimmed
  // or written): where it exists, before the run's first force evaluation.
  io::DirectoryLock lock;
  bool start_warned = false;  // warn_step said something of the step before the run
  if (restart) {
    restart_dir = without_trailing_slashes(first["restart"].as<std::string>());
    const std::string file = restart_dir + "/" + kCheckpointName;
    // Not a run's directory: said so (it was "field file: value missing (no such file)").
    std::error_code ec;
    if (fs::is_regular_file(restart_dir, ec))
      throw std::invalid_argument("--restart " + restart_dir +
                                  ": is a file (give the run's output directory, which holds " +
                                  kCheckpointName + ")");
    if (!fs::is_directory(restart_dir, ec))
      throw std::invalid_argument("--restart " + restart_dir +
                                  ": no such directory (give a run's output directory, --out)");
    // A run still going there, before its first checkpoint: named, not taken for a directory
    // that is no run's (the claim is probed, not taken: no lock file is made or written).
    if (!fs::exists(file, ec)) io::require_directory_unclaimed(restart_dir, "--restart");
    if (!fs::exists(file, ec))
      throw std::invalid_argument("--restart " + restart_dir + ": no " + kCheckpointName +
                                  " there (a run writes it when it ends or stops, and with "
                                  "--checkpoint-every; is this a run's output directory?)");
    checkpoint = io::read_hdf5_snapshot(file);
    // Settings every checkpoint records (every version has stored each run option with a
    // default): one missing is a damaged file, whose run went on with the defaults unsaid (a
    // deleted dt and softening continued at 1/128 and 0.01, a deleted /Parameters with no
    // snapshots and t_end 10).
    for (const char* key : {"ic", "solver", "softening", "t-end", "dt", "eta", "output-every",
                            "snapshot-every", "checkpoint-every", "render-every"})
      if (!io::find_param(checkpoint.info.parameters, key))
        throw std::invalid_argument(file + ": field /Parameters/" + key +
                                    ": missing (every checkpoint records it; a damaged file?)");
    // Before the forces are computed again: the run writes there (it failed at its first
    // energy.csv row, after the solver was built).
    io::check_writable_dir(restart_dir, "--restart");
    lock = io::DirectoryLock(restart_dir, "--restart");
    std::vector<std::pair<std::string, std::string>> stored;
    const auto names = option_names(infos);
    // Presentation options (quiet, threads) are not inherited; everything else is.
    for (const auto& [k, v] : checkpoint.info.parameters)
      if (k != "quiet" && k != "threads" && std::find(names.begin(), names.end(), k) != names.end())
        stored.emplace_back(k, io::to_string(v));
    // Checkpoints from before --gadget-precision and --gadget-ids (2026-11-30) are of runs that
    // wrote Gadget snapshots in double with 64-bit ids: their series continues so.
    for (const auto& [k, v] : kGadgetLayoutBefore)
      if (!io::find_param(checkpoint.info.parameters, k)) stored.emplace_back(k, v);
    append_params(args, file, stored, infos);
  }
  // A checkpoint's block steps (its --levels): its eta is their criterion.
  const io::ParamValue* stored_levels =
      restart ? io::find_param(checkpoint.info.parameters, "levels") : nullptr;
  std::vector<std::pair<std::string, std::string>> file_params;
  if (first.count("params")) {
    const std::string file = first["params"].as<std::string>();
    file_params = io::read_param_file(file);
    for (const auto& [k, v] : file_params)
      if (k == "model-param") check_model_param_list(v, file + ": field model-param:");
    // The command line's choice of step overrides the file's: --eta (> 0) typed with dt: in
    // the file, or --dt typed with eta: in it, was an error ("give one of them") that only an
    // edit of the file could clear.
    const auto drop = [&](const char* key) {
      std::erase_if(file_params, [&](const auto& kv) { return kv.first == key; });
    };
    // With block steps (--levels > 1, typed, in the file or the checkpoint's) --eta is the
    // particles' criterion and goes with dt.
    const auto in_file = std::find_if(file_params.begin(), file_params.end(),
                                      [](const auto& kv) { return kv.first == "levels"; });
    const std::string levels = first.count("levels")          ? first["levels"].as<std::string>()
                               : in_file != file_params.end() ? in_file->second
                               : stored_levels                ? io::to_string(*stored_levels)
                                                              : "1";
    const bool blocks = std::strtod(levels.c_str(), nullptr) > 1;
    if (!blocks && first.count("eta") && !first.count("dt") && number(first, "eta") > 0) drop("dt");
    if (!blocks && first.count("dt") && !first.count("eta")) drop("eta");
    append_params(args, file, file_params, infos);
    sources.file = file;
    for (const auto& [k, v] : file_params)
      if (!first.count(k)) sources.keys.push_back(k);
  }
  // Given on the command line or in the parameter file (not inherited from a checkpoint).
  const auto given = [&](const std::string& name) {
    return first.count(name) > 0 || std::any_of(file_params.begin(), file_params.end(),
                                                [&](const auto& kv) { return kv.first == name; });
  };
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  if (restart) args.push_back("--out=" + restart_dir);

  cxxopts::Options o("hoshi run", description);
  add_run_options(o);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  auto r = parse_options(o, static_cast<int>(cargs.size()), cargs.data(), false);
  std::string force_changes;  // on restart: the force settings that differ from the checkpoint's
  if (restart) {
    // What made the particles (and the G their velocities were scaled to) cannot change: the
    // checkpoint's particles continue. Such options were stored as given but ignored (-n, --ic,
    // --seed), or relabelled the data (--units), or mixed two G's (-G). --out is the restart
    // directory (another one was silently dropped).
    // The same directory however written (pb/ for pb, ./pb, a link).
    const auto same_path = [](const std::string& a, const std::string& b) {
      std::error_code ec;
      return a == b || fs::equivalent(a, b, ec);
    };
    if (first.count("out") && !same_path(first["out"].as<std::string>(), restart_dir))
      throw std::invalid_argument("--out " + first["out"].as<std::string>() + " with --restart " +
                                  restart_dir + ": a continued run writes into its own directory");
    const auto now = effective_parameters(r, infos);
    // Model parameters, key by key, against the values the particles were made with: the
    // checkpoint's model.KEY (every effective parameter of a registry model, defaults
    // included), else its stored list. A run with the defaults stores no list, and a restart's
    // --model-param a=5 was taken and stored while the particles stayed those of a = 1/3.
    if (const auto it = std::find_if(now.begin(), now.end(),
                                     [](const auto& kv) { return kv.first == "model-param"; });
        it != now.end() && !it->second.empty()) {
      const io::ParamValue* list = io::find_param(checkpoint.info.parameters, "model-param");
      const auto stored = list ? merge_model_params({io::to_string(*list)}) : ModelParams{};
      const auto given = merge_model_params({it->second});
      bool same = given.has_value();
      for (const auto& [k, v] : given.value_or(ModelParams{})) {
        const io::ParamValue* was = io::find_param(checkpoint.info.parameters, "model." + k);
        const std::optional<ModelValue> before =
            was                          ? (std::holds_alternative<std::string>(*was)
                                                ? std::optional<ModelValue>(io::to_string(*was))
                                                : std::optional<ModelValue>(io::to_number(*was).value_or(NAN)))
            : stored && stored->count(k) ? std::optional<ModelValue>(stored->at(k))
                                         : std::nullopt;
        if (!before || !(*before == v)) same = false;
      }
      if (!same)
        throw std::invalid_argument(
            "--model-param " + it->second + " with --restart " + restart_dir +
            ": the checkpoint's particles continue (it was " +
            (list ? io::to_string(*list) : std::string("made with the model's defaults")) +
            "); start a new run to change it");
    }
    for (const char* key : {"ic", "particles", "seed", "eccentricity", "radius", "units", "G"})
      if (const auto change = parameter_change(checkpoint.info.parameters, now, key);
          change && !(std::strcmp(key, "G") == 0 && !given_G(r)) &&  // -G auto: the stored G
          !(std::strcmp(key, "ic") == 0 && same_path(change->first, change->second)))
        throw std::invalid_argument(std::string(std::strlen(key) == 1 ? "-" : "--") + key + " " +
                                    change->second + " with --restart " + restart_dir +
                                    ": the checkpoint's particles continue (it was " +
                                    change->first + "); start a new run to change it");
    // Options that shaped no particle of the checkpoint's (a file run's --seed, --radius of
    // another model than uniform): nothing stored to compare with, and as ignored.
    const std::string ic_was = r["ic"].as<std::string>();
    for (const auto& [key, applies] : {std::pair<const char*, bool>{"seed", is_model(ic_was)},
                                       {"radius", ic_was == "uniform"},
                                       {"eccentricity", ic_was == "kepler"}})
      if (first.count(key) && !applies && !io::find_param(checkpoint.info.parameters, key))
        throw std::invalid_argument("--" + std::string(key) + " " +
                                    (std::string(key) == "seed" ? std::to_string(seed_option(first))
                                                                : first[key].as<std::string>()) +
                                    " with --restart " + restart_dir +
                                    ": the checkpoint's particles continue (--ic " + ic_was +
                                    "); start a new run to change them");
    // The force settings may change; the checkpoint's accelerations are then those of the old
    // ones, and the restored state's forces are computed again (RunStart::recompute_forces).
    for (const char* key :
         {"solver", "backend", "precision", "softening", "kernel", "theta", "criterion", "order",
          "alpha", "n-leaf", "n-group", "local-ratio", "walk"})
      if (const auto change = parameter_change(checkpoint.info.parameters, now, key))
        force_changes += std::string(force_changes.empty() ? "" : ", ") + "--" + key + " " +
                         change->second + " (was " + change->first + ")";
  }

  // A value that came from the checkpoint or the parameter file, not the command line, was
  // reported as if the user had typed it: the error now says where it came from (for the
  // checkpoint, a value refused since it was written, such as --n-group > 65536, with how to
  // override it).
  const auto with_source = [&](const std::invalid_argument& e) {
    std::string msg = e.what();
    if (std::string from_file = sources.annotate(msg); from_file != msg) return from_file;
    if (!restart) return msg;
    const auto names = option_names(infos);
    for (const auto& [k, v] : checkpoint.info.parameters) {
      const std::string dash = k.size() == 1 ? "-" : "--";
      // "--dt -1 (must be > 0)", and a value that does not parse: "option --dt: value 'abc'".
      if ((msg.find(dash + k + " ") != std::string::npos ||
           msg.find(dash + k + ":") != std::string::npos) &&
          std::find(names.begin(), names.end(), k) != names.end() && !given(k)) {
        msg += " [" + dash + k + " " + io::to_string(v) + " is stored in " + restart_dir + "/" +
               kCheckpointName + "; give " + dash + k + " to continue with another value]";
        break;
      }
    }
    return msg;
  };

  RunConfig cfg;
  bool dt_auto = false;         // --dt auto: the step is chosen once the initial forces are known
  bool eta_was_levels = false;  // a restart's --levels 1 dropped the block steps' stored eta
  io::UnitSystem units;
  bool g_given = false;  // G follows the unit system unless -G is given
  try {
    cfg.t_end = number_or_fraction(r, "t-end");
    if (!(cfg.t_end >= 0))  // as given, as --dt's (-1/8 was "invalid --t-end -0.125")
      throw std::invalid_argument("invalid --t-end " + r["t-end"].as<std::string>() +
                                  " (must be >= 0)");
    dt_auto = r["dt"].as<std::string>() == "auto";
    // auto: at most kAutoStep (auto_step); 1/1024 as the messages write steps.
    cfg.dt = dt_auto ? kAutoStep : number_or_fraction(r, "dt", true);
    if (!dt_auto && !(cfg.dt > 0))  // as given (-1/128 was "invalid --dt -0.0078125")
      throw std::invalid_argument("invalid --dt " + r["dt"].as<std::string>() + " (must be > 0)");
    cfg.eta = number(r, "eta");
    // Block steps: --eta is each particle's criterion (RunConfig::level_eta), dt the base step.
    cfg.levels = integer(r, "levels");  // its range: validate(cfg) below
    if (!(cfg.eta >= 0))                // before 0 is read as the default below (-1 ran with 0.2)
      throw std::invalid_argument("invalid --eta " + r["eta"].as<std::string>() +
                                  " (must be >= 0)");
    const bool stored_blocks = stored_levels && io::to_number(*stored_levels).value_or(1) > 1;
    const std::string scheme = r["level-scheme"].as<std::string>();
    if (scheme == "hierarchical")
      cfg.level_scheme = LevelScheme::hierarchical;
    else if (scheme != "individual")
      throw std::invalid_argument("--level-scheme: value '" + scheme +
                                  "' is not one of individual, hierarchical");
    // Typed with one level it would do nothing (a checkpoint's is kept silently).
    if (cfg.levels == 1 && given("level-scheme") && cfg.level_scheme == LevelScheme::hierarchical)
      throw std::invalid_argument(
          "--level-scheme hierarchical: block steps only (give --levels > 1)");
    if (cfg.levels > 1) {
      // A checkpoint's eta of one level was a global adaptive step (measured against max|a|),
      // not a criterion per particle: block steps added on its restart take their own default
      // (they took it as the criterion, "block steps: 4 levels, eta 0.05").
      const bool adaptive_eta = restart && !given("eta") && !stored_blocks && cfg.eta > 0;
      if (adaptive_eta)
        std::cout << "hoshi run: note: the checkpoint's --eta " << number_text(cfg.eta)
                  << " was its adaptive step; the block steps take eta " << number_text(kLevelEta)
                  << " (give --eta with --levels to set it)\n";
      cfg.level_eta = cfg.eta > 0 && !adaptive_eta ? cfg.eta : kLevelEta;
      cfg.eta = 0;
    } else if (restart && !given("eta") && stored_blocks) {
      // The checkpoint's eta was its block steps' criterion, not an adaptive step: --levels 1
      // on its restart continues with fixed steps of its dt (it went on with "adaptive dt, eta
      // 0.1" instead).
      cfg.eta = 0;
      eta_was_levels = true;
    }
    // Named as given (validate's "invalid --dt 0.0078125" named a value nobody typed).
    if (dt_auto && cfg.eta == 0 && cfg.t_end / kAutoStep > 1e12)
      throw std::invalid_argument("--dt auto: at most " + power_of_two_step(kAutoStep) +
                                  ", leaves more than 1e12 steps to --t-end " +
                                  r["t-end"].as<std::string>() + "; give --dt or --eta");
    // The adaptive step sets every step: a --dt given with it was ignored.
    if (cfg.eta > 0 && given("dt"))
      throw std::invalid_argument("--dt " + r["dt"].as<std::string>() + " with --eta " +
                                  r["eta"].as<std::string>() +
                                  ": the adaptive step sets every step and --dt would be "
                                  "ignored; give one of them (--eta 0: fixed steps of --dt)");
    cfg.output_every = number_or_fraction(r, "output-every");
    if (!(cfg.output_every > 0))
      throw std::invalid_argument("invalid --output-every " + r["output-every"].as<std::string>() +
                                  " (must be > 0)");
    cfg.out_dir = without_trailing_slashes(r["out"].as<std::string>());
    cfg.quiet = flag(r, "quiet");
    units = io::parse_units(r["units"].as<std::string>());
    g_given = given_G(r).has_value();
    cfg.solver = solver_config(r);
    if (!g_given) cfg.solver.G = units.G();
    // A restart whose -G is auto (typed, or in the parameter file the run began with): the G
    // the checkpoint's particles were made with (it refused to continue, "it was 43007.1").
    if (const io::ParamValue* stored =
            restart && !g_given ? io::find_param(checkpoint.info.parameters, "G") : nullptr)
      if (const auto g = io::to_number(*stored)) {
        cfg.solver.G = *g;
        g_given = true;
      }
    // Said as given (1/1e13 was "invalid --dt 1e-13"; a review); validate(cfg) says numbers.
    if (!dt_auto && cfg.eta == 0 && cfg.t_end / cfg.dt > 1e12)
      throw std::invalid_argument("invalid --dt " + r["dt"].as<std::string>() +
                                  " (more than 1e12 steps to --t-end)");
    if (cfg.t_end / cfg.output_every > 1e9)
      throw std::invalid_argument("invalid --output-every " + r["output-every"].as<std::string>() +
                                  " (more than 1e9 outputs to --t-end)");
    validate(cfg);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(with_source(e));
  }

  RunOutputs outputs;
  outputs.out_dir = cfg.out_dir;
  outputs.units = units;
  outputs.G = cfg.solver.G;
  // Snapshots the format cannot hold (Gadget binary: 32-bit ids) fail before the run starts,
  // not at its first snapshot.
  const auto require_snapshots_writable = [&](const ParticleSet& q) {
    if (outputs.snapshots.every > 0) try {
        io::require_writable(outputs.snapshot_format, q, outputs.write);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("--snapshot-format " + io::to_string(outputs.snapshot_format) +
                                    ": " + e.what());
      }
  };
  try {
    outputs.snapshot_format = io::parse_snapshot_format(r["snapshot-format"].as<std::string>());
    outputs.write = write_options(r);
    outputs.write.tipsy_units_file = cfg.out_dir + "/" + kTipsyUnitsName;
    outputs.snapshots.every = number_or_fraction(r, "snapshot-every");
    outputs.checkpoints.every = number_or_fraction(r, "checkpoint-every");
    outputs.checkpoint_minutes = number(r, "checkpoint-minutes");
    outputs.frames.every = number_or_fraction(r, "render-every");
    outputs.snapshots.files_every = outputs.snapshots.every;
    outputs.frames.files_every = outputs.frames.every;
    outputs.render.axis = io::parse_axis(r["render-axis"].as<std::string>(), "--render-axis");
    outputs.render.extent = number(r, "render-extent");
    outputs.render.resolution = integer(r, "render-resolution");
    outputs.render.units = units;
    for (const char* name : {"snapshot-every", "checkpoint-every", "checkpoint-minutes",
                             "render-every", "render-extent"})
      if (number_or_fraction(r, name) < 0)
        throw std::invalid_argument(std::string("option --") + name + ": value " +
                                    r[name].as<std::string>() + " (must be >= 0)");
    // Also without frames (--render-every 0): a bad value was stored in the checkpoint, and a
    // restart that turned the frames on failed on it (an audit).
    io::check_render_options(outputs.render, "--render-");
    for (const char* name : {"snapshot-every", "checkpoint-every", "render-every"})
      if (number_or_fraction(r, name) > 0 && cfg.t_end / number_or_fraction(r, name) > 1e9)
        throw std::invalid_argument(std::string("option --") + name + ": value " +
                                    r[name].as<std::string>() +
                                    " (more than 1e9 outputs to --t-end)");
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(with_source(e));
  }
  outputs.checkpoints.next = 1;

  auto effective = effective_parameters(r, infos);
  // The two model options outside --model-param belong to one model each: another model's run
  // listed and stored their defaults (a merger run showed eccentricity=0.5 beside its own
  // model.eccentricity=1).
  const std::string ic_name = r["ic"].as<std::string>();
  // Nor does a run from a particle file take a seed (--seed is refused there): seed=1 was listed.
  std::erase_if(effective, [&](const auto& kv) {
    return (kv.first == "eccentricity" && ic_name != "kepler") ||
           (kv.first == "radius" && ic_name != "uniform") ||
           (kv.first == "seed" && !is_model(ic_name));
  });
  // Their values as the model takes them: --model-param radius=2 printed and stored radius=1.
  if (is_model(ic_name)) {
    ModelParams mp;
    try {
      mp = model_params_with_options(r);  // radius: abc in a parameter file names the file
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(with_source(e));
    }
    for (auto& [k, v] : effective)
      if (const auto it = mp.find(k == "eccentricity" ? "e" : k);
          (k == "eccentricity" || k == "radius") && it != mp.end())
        v = number_text(std::get<double>(it->second));
  }
  // G as used (the unit system's unless -G is given), not the option's default 1: a restart
  // passes the stored parameters back as options, and there a stored G = 1 would be -G 1.
  for (auto& [k, v] : effective) {
    if (k == "G") v = number_text(cfg.solver.G);
    if (k == "seed") v = std::to_string(seed_option(r));  // +5 as 5
  }
  // Real-valued parameters are doubles also when given as whole numbers (--t-end 1 was stored
  // as int64 and --t-end 0.5 as double: a reader of /Parameters got either type).
  static const std::set<std::string> real_valued = {"softening",
                                                    "theta",
                                                    "alpha",
                                                    "local-ratio",
                                                    "G",
                                                    "t-end",
                                                    "dt",
                                                    "eta",
                                                    "output-every",
                                                    "snapshot-every",
                                                    "checkpoint-every",
                                                    "checkpoint-minutes",
                                                    "render-every",
                                                    "render-extent",
                                                    "radius",
                                                    "eccentricity"};
  for (const auto& [k, v] : effective) {
    io::ParamValue value = io::param_value_from_text(v);
    if (const auto* i = std::get_if<std::int64_t>(&value); i && real_valued.count(k))
      value = static_cast<double>(*i);
    outputs.parameters.emplace_back(k, value);
  }
  // A parameter the run finds out after the options were recorded: printed and stored as found.
  const auto record = [&](const std::string& key, const io::ParamValue& value) {
    for (auto& [k, v] : effective)
      if (k == key) v = io::to_string(value);
    for (auto& [k, v] : outputs.parameters)
      if (k == key) v = value;
  };
  // A step given as a fraction (1/1024) as the number it is (a reader of /Parameters/dt expects
  // a double).
  if (!dt_auto && cfg.eta == 0) record("dt", cfg.dt);
  // So are the times and intervals given as fractions (--t-end 1/16).
  for (const char* key :
       {"t-end", "output-every", "snapshot-every", "checkpoint-every", "render-every"})
    if (r[key].as<std::string>().find('/') != std::string::npos)
      record(key, number_or_fraction(r, key));
  // Block steps store the criterion they use (0 given: kLevelEta); a restart's --levels 1
  // stores the fixed steps it takes.
  if (cfg.levels > 1) record("eta", cfg.level_eta);
  if (eta_was_levels) record("eta", 0.0);
  // Each effective model parameter (defaults included) as its own attribute "model.KEY". A
  // restart keeps the checkpoint's (its particles continue; resolving them again would refuse
  // a key a later version no longer takes, and the run could not be continued at all).
  if (restart) {
    for (const auto& [k, v] : checkpoint.info.parameters)
      if (k.rfind("model.", 0) == 0) outputs.parameters.emplace_back(k, v);
  } else {
    std::vector<std::pair<std::string, ModelValue>> model;
    try {
      model = model_parameters(r);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(with_source(e));
    }
    for (const auto& [k, v] : model) {
      if (const auto* d = std::get_if<double>(&v))
        outputs.parameters.emplace_back(k, *d);
      else
        outputs.parameters.emplace_back(k, std::get<std::string>(v));
    }
  }

  const int threads = apply_threads(r);
  ParticleSet p;
  RunStart start;
  std::pair<std::int64_t, std::int64_t> after_checkpoint{0, 0};  // next_snapshot, next_frame
  if (restart) {
    const std::string file = restart_dir + "/" + kCheckpointName;
    const io::ParamList& st = checkpoint.info.state;
    start.step = static_cast<std::size_t>(state_number(st, "step", file, StateValue::count));
    start.time = state_number(st, "time", file, StateValue::non_negative);
    // Before anything in the run directory is touched: a restart must have time left to run,
    // beyond the run loop's tolerance (11 steps of 0.03 end an ulp short of 0.33: that restart
    // took no step and rewrote the checkpoint).
    if (!(cfg.t_end - time_tolerance(cfg.t_end) > start.time)) {
      std::ostringstream m;
      // A fraction as given, and the number it is (1/3: 0.3333333333).
      const std::string given_end = r["t-end"].as<std::string>();
      m << std::setprecision(10) << "--t-end " << given_end;
      if (given_end.find('/') != std::string::npos) m << " = " << cfg.t_end;
      m << " is not after the time " << start.time << " of " << file
        << (cfg.t_end > start.time ? " by more than the run's time tolerance, 1e-12 of --t-end"
                                   : "")
        << " (nothing to continue)";
      throw std::invalid_argument(m.str());
    }
    start.e0 = state_number(st, "e0", file);
    start.next_output = state_number(st, "next_output", file, StateValue::positive);
    // The step grid (absent from checkpoints before 2026-11-30: the run then counts from
    // the checkpoint's time where that is off the grid from 0).
    // A value that is no grid of this checkpoint's step is ignored (run_simulation also
    // checks that the checkpoint's time lies on it).
    // The run's input in its directory (absent before 2026-12-02, or when the input is
    // elsewhere).
    if (const io::ParamValue* name = io::find_param(st, "input_name"))
      if (const io::ParamValue* inode = io::find_param(st, "input_inode"))
        if (const auto n = io::to_number(*inode))
          outputs.input = {io::to_string(*name), static_cast<std::int64_t>(*n)};
    // The outgrown-step check's state (absent before 2026-12-02: measured from the restored
    // state then).
    if (io::find_param(st, "step_scale_at_start") && io::find_param(st, "step_outgrown_dt")) {
      start.step_scale_at_start =
          state_number(st, "step_scale_at_start", file, StateValue::non_negative);
      start.step_outgrown_dt = state_number(st, "step_outgrown_dt", file, StateValue::non_negative);
    }
    if (io::find_param(st, "time_base") && io::find_param(st, "step_base")) {
      const double sb = state_number(st, "step_base", file);
      if (sb >= 0 && sb <= static_cast<double>(start.step)) {
        start.time_base = state_number(st, "time_base", file);
        start.step_base = static_cast<std::size_t>(sb);
      }
    }
    for (const auto& [key, next] :
         {std::pair<const char*, std::int64_t*>{"next_snapshot", &outputs.snapshots.next},
          {"next_checkpoint", &outputs.checkpoints.next},
          {"next_frame", &outputs.frames.next}})
      *next = static_cast<std::int64_t>(state_number(st, key, file, StateValue::count));
    // The numbers of the files written after the checkpoint (a killed run's), as stored.
    after_checkpoint = {outputs.snapshots.next, outputs.frames.next};
    // An interval changed on restart: its next event is the first multiple of the new interval
    // after the checkpoint's time (the stored counters count the old one's multiples: a
    // snapshot interval 0.0625 -> 0.25 wrote none, -> 0.015625 misnamed and skipped them).
    const double tiny = time_tolerance(cfg.t_end);
    // An interval as the checkpoint's run had it (nullopt: not stored).
    const auto stored_every = [&](const char* key) -> std::optional<double> {
      const io::ParamValue* was = io::find_param(checkpoint.info.parameters, key);
      if (!was) return std::nullopt;
      // Named with the file and field (a damaged value was "error: stod").
      const std::optional<double> x = io::to_number(*was);
      if (!x || !std::isfinite(*x) || *x < 0)
        throw std::invalid_argument(file + ": field /Parameters/" + key + ": value '" +
                                    io::to_string(*was) + "' (a number >= 0; a damaged file?)");
      return *x;
    };
    const auto changed = [&](const char* key) {  // numerically: 0.1 is stored as 0.1000...01
      const std::optional<double> was = stored_every(key);
      return !was || *was != number_or_fraction(r, key);
    };
    const auto first_after = [&](double every) {
      return static_cast<std::int64_t>(std::floor((start.time + tiny) / every)) + 1;
    };
    if (changed("output-every"))
      start.next_output = static_cast<double>(first_after(cfg.output_every)) * cfg.output_every;
    if (outputs.checkpoints.every > 0 && changed("checkpoint-every"))
      outputs.checkpoints.next = first_after(outputs.checkpoints.every);
    // Snapshots and frames are named by the multiple k of their interval: another interval
    // would reuse the names of the files already there (0.0625 -> 0.25 replaced snapshot_001).
    // A series with no file yet starts at the first multiple at or after the checkpoint's
    // time, as a run with that interval from the start would have it. One turned off writes
    // nothing and keeps the interval of its files (RunState/snapshot_files_every,
    // frame_files_every; before 2026-12-02 not stored: the checkpoint's interval), which a
    // later restart may take up again: from that multiple too (files after it, written after
    // the checkpoint, are written again from this trajectory, as a restart of a series that
    // was on writes them).
    for (const auto& [key, state_key, prefix, schedule] :
         {std::tuple<const char*, const char*, const char*, Schedule*>{
              "snapshot-every", "snapshot_files_every", "snapshot_", &outputs.snapshots},
          {"render-every", "frame_files_every", "frame_", &outputs.frames}}) {
      const double files_every = io::find_param(st, state_key)
                                     ? state_number(st, state_key, file, StateValue::non_negative)
                                     : stored_every(key).value_or(0.0);
      schedule->files_every = schedule->every > 0 ? schedule->every : files_every;
      if (!changed(key) || schedule->every == 0) continue;
      if (files_every == schedule->every || !has_numbered_files(restart_dir, prefix)) {
        schedule->next = static_cast<std::int64_t>(
            std::max(0.0, std::ceil((start.time - tiny) / schedule->every)));
        continue;
      }
      std::ostringstream m;
      m << "--" << key << " " << r[key].as<std::string>() << " with --restart " << restart_dir
        << ": the files there are numbered by "
        << (files_every > 0 ? "the interval " + number_text(files_every)
                            : std::string("the run's interval"))
        << "; to change it, continue a copy of the checkpoint in a directory of its own, which "
           "keeps the run's time and settings (mkdir NEW && cp "
        << shell_word(restart_dir + "/" + kCheckpointName) << " NEW/ && hoshi run --restart NEW"
        << (r.count("t-end") ? " --t-end " + shell_word(r["t-end"].as<std::string>()) : "") << " --"
        << key << " " << shell_word(r[key].as<std::string>()) << ")";
      // (The advice was a new run from the checkpoint, --ic: it starts at t = 0 with the default
      // softening and step, and into this directory only with --overwrite, which removes the
      // run's outputs; an audit.)
      throw std::invalid_argument(m.str());
    }
    // One layout per series of Gadget snapshots (a reader built or told for one layout reads
    // them all): a restart that would switch it mid-series is refused.
    const io::ParamValue* format_was =
        io::find_param(checkpoint.info.parameters, "snapshot-format");
    if (outputs.snapshots.every > 0 && outputs.snapshot_format == io::SnapshotFormat::gadget &&
        format_was && io::to_string(*format_was) == "gadget")
      for (const auto& [key, before_options] : kGadgetLayoutBefore) {
        const io::ParamValue* was = io::find_param(checkpoint.info.parameters, key);
        const std::string before = was ? io::to_string(*was) : before_options;
        const std::string now = r[key].as<std::string>();
        if (now != before)
          throw std::invalid_argument("--" + std::string(key) + " " + now + " with --restart " +
                                      restart_dir + ": the Gadget snapshots there are " + key +
                                      " " + before +
                                      "; start a new run from the checkpoint (--ic " + restart_dir +
                                      "/" + kCheckpointName + ") to change it");
      }
    if (!(number(r, "render-extent") > 0))
      outputs.render.extent = state_number(st, "render_extent", file, StateValue::non_negative);
    p = std::move(checkpoint.particles);
    // The forces as resolved (an "auto" backend is CUDA on a machine with a device, and the
    // tree defaults follow it; --theta does not apply to direct summation): recomputed when
    // they differ from those the checkpoint was made with, whatever the option texts say.
    // Checkpoints without the record (before 2026-11-30) compare the option texts.
    if (const io::ParamValue* was = io::find_param(st, "forces")) {
      const std::string before = io::to_string(*was), now = describe_forces(cfg.solver, p.size());
      start.recompute_forces = !same_forces(before, now);
      if (start.recompute_forces)
        force_changes += std::string(force_changes.empty() ? "" : "; ") + "forces " + now +
                         " (were " + before + ")";
      else
        force_changes.clear();  // e.g. --theta on a direct run: the same forces
    } else {
      start.recompute_forces = !force_changes.empty();
    }
    cfg.start = &start;
    make_solver(cfg.solver, p.size());  // a changed setting: fail before the directory is touched
    require_snapshots_writable(p);
    // The rows so far were written with the checkpoint's interval (a restart may change it).
    // Trimmed once the restored state's forces are known (a changed setting may fail there).
    const double log_every = stored_every("output-every").value_or(cfg.output_every);
    // Typed or in the parameter file, not the checkpoint's own (a stored --dt is an option
    // layer too, and every restart repeated the first part's warnings).
    // So does one that sets --levels, --eta or --level-scheme (--levels 1 on a block run's
    // restart went on at its base step unsaid, to an energy error of 0.44).
    const bool dt_given = given("dt") || given("levels") || given("eta") || given("level-scheme");
    const std::string input = r["ic"].as<std::string>();  // the run's, a file of OUT perhaps
    cfg.prepare_output = [&cfg, &start, &p, log_every, tiny, dt_given, dt_auto, after_checkpoint,
                          &lock, input, &start_warned, &outputs] {
      // A restart that sets the step: the warning of a new run (it went unsaid; the run's
      // first part was warned of its own step, if at all).
      // So does one whose forces changed (another softening: another measure; it kept the
      // stored step unsaid, which --dt auto had chosen for the old one).
      if (dt_given || start.recompute_forces)
        start_warned = !dt_auto || cfg.eta > 0 ? warn_step(cfg, p) : warn_eta(cfg);
      truncate_energy_log(cfg.out_dir + "/energy.csv", start.step, log_every, cfg.output_every,
                          tiny);
      remove_run_temporaries(cfg.out_dir, lock.held());  // half-written files of a killed run
      // And its whole files written after the checkpoint, as its energy.csv rows (said with
      // --quiet too: files were deleted).
      if (const std::size_t n = remove_outputs_after_checkpoint(
              cfg.out_dir, after_checkpoint.first, after_checkpoint.second, outputs.input, input))
        std::cout << "hoshi run: --restart: removed " << n
                  << " snapshot(s) and frame(s) written after the checkpoint (by the run that was "
                     "stopped)\n";
    };
  } else {
    const std::string ic = r["ic"].as<std::string>();
    if (is_model(ic)) {
      try {
        if (ic != "kepler")  // before the model is made
          require_run_memory(parse_size(r["particles"].as<std::string>(), "-n"),
                             "-n " + r["particles"].as<std::string>());
        p = initial_conditions(r);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(with_source(e));  // "particles: many" in a parameter file
      }
      scale_velocities_to_G(p, cfg.solver.G);  // the unit system's G, or -G
    } else {
      check_ic_file(r);
      io::LoadedSnapshot s = io::load_snapshot(ic);
      require_run_memory(s.particles.size(), "--ic " + ic);
      if (!s.note.empty()) std::cout << "hoshi run: " << ic << ": " << s.note << "\n";
      const double file_time = s.time;  // in the file's units (converted below)
      // A file without units is taken to be in the run's units (a tipsy file's are G = 1 ones:
      // the run's length and mass units); one with units is converted from them.
      const bool file_units = s.units_known;  // recorded in the file (tipsy: its units file)
      // The run's units as a tipsy file holds them: G = 1 ones of its length and mass.
      const io::UnitSystem tipsy_units = io::units_g1(units.length_cm, units.mass_g);
      if (s.format == io::SnapshotFormat::tipsy && !s.units_known)
        s.units = tipsy_units, s.units_known = true;
      if (s.units_known) {
        // Said even with --quiet: a file in galaxy units run without --units galaxy has every
        // number changed (masses x 43007 in Henon units).
        const auto differs = [](double a, double b) {
          return std::abs(a - b) > 1e-6 * std::abs(b);
        };
        // A tipsy file's units file, compared with the run's as a tipsy file would hold them
        // (a galaxy-units tipsy file run in Henon units was converted unsaid; an audit).
        const io::UnitSystem& as = s.format == io::SnapshotFormat::tipsy ? tipsy_units : units;
        if (file_units &&
            (differs(s.units.length_cm, as.length_cm) || differs(s.units.mass_g, as.mass_g) ||
             differs(s.units.velocity_cm_s, as.velocity_cm_s)))
          std::cout << "hoshi run: " << ic << ": note: converted from the file's units ("
                    << s.units.name << ": " << number_text(s.units.length_cm) << " cm, "
                    << number_text(s.units.mass_g) << " g, " << number_text(s.units.velocity_cm_s)
                    << " cm/s) to the run's (" << units.name << ", --units)\n";
        io::convert_units(s.particles, s.units, units);
      }
      // A new run's clock starts at 0 (its output times are multiples from there); only
      // --restart continues a run's own time. The file's time in the run's units (a tipsy
      // file's G = 1 time of a galaxy-units run was printed 207 times the run's).
      if (file_time != 0)  // said with --quiet too, as the other notes about the input
        std::cout << "hoshi run: " << ic << ": note: the file is at t = "
                  << (s.units_known ? file_time * (s.units.time_s() / units.time_s()) : file_time)
                  << "; this run starts at t = 0 (--restart DIR continues a run in its own time)\n";
      // The G the file records (a -G run's snapshot, hoshi ic -G), in the run's units: its
      // velocities were made with it, so the run takes it unless -G is given (with the unit
      // system's G such a file started far from equilibrium). tipsy files are G = 1 ones.
      if (!g_given && s.format != io::SnapshotFormat::tipsy) {
        const double recorded = io::snapshot_G(s, 0.0);
        const double g = s.units_known ? io::convert_G(recorded, s.units, units) : recorded;
        if (g > 0) require_G_in_range(g, ic + ": G = " + number_text(g) + " in the run's units");
        if (g > 0 && std::abs(g - cfg.solver.G) > 1e-9 * g) {
          cfg.solver.G = outputs.G = g;
          record("G", g);
          if (!cfg.quiet)
            std::cout << "hoshi run: " << ic << ": G = " << number_text(g)
                      << ", as the file records it (-G overrides)\n";
        }
      }
      // tipsy files are in G = 1 units (write_tipsy converts with the run's G): with -G other
      // than the unit system's, the velocities go back to that G (the file's system unchanged).
      if (s.format == io::SnapshotFormat::tipsy)
        scale_velocities_to_G(s.particles, cfg.solver.G, units.G());
      p = std::move(s.particles);
      // A new run starts from positions, velocities and masses alone: a file's accelerations
      // (another run's, with its G, softening and solver) would be the relative criterion's
      // |a_old| for the first forces, so that the same particles from a CSV file and from a
      // snapshot began differently. Only --restart continues from its stored accelerations.
      for (auto* a : {&p.ax, &p.ay, &p.az, &p.pot}) std::fill(a->begin(), a->end(), 0.0);
      require_distinct_positions_in(p, cfg.solver.eps, ic);  // before --out is touched
    }
    make_solver(cfg.solver, p.size());  // fail on an impossible solver before touching --out
    require_valid_particles(p, ic);     // after unit conversion, before --out is touched
    // The number of particles the run has (kepler: 2, a file: its own), not -n's default.
    record("particles", static_cast<std::int64_t>(p.size()));
    require_snapshots_writable(p);
    io::check_output_dir(cfg.out_dir, flag(r, "overwrite"));
    std::error_code exists_ec;
    if (fs::is_directory(cfg.out_dir, exists_ec)) lock = io::DirectoryLock(cfg.out_dir, "--out");
    // Once the initial forces are known (a setting may fail there): nothing in --out is
    // created or removed before.
    cfg.prepare_output = [&cfg, &r, &p, ic_name, &lock, &start_warned, &outputs, dt_auto, &units] {
      // p holds the initial forces now (on the device stepper, too). --dt auto chose its step.
      // --eta: its own check; --dt auto: eta's alone (the step is chosen within the limits).
      start_warned = !dt_auto || cfg.eta > 0 ? warn_step(cfg, p) : warn_eta(cfg);
      if (!is_model(ic_name)) warn_unbound_file(p, ic_name, units, cfg.solver.G);
      io::prepare_output_dir(cfg.out_dir, flag(r, "overwrite"));
      if (!lock.held()) lock = io::DirectoryLock(cfg.out_dir, "--out");  // a new directory
      remove_earlier_run_outputs(cfg.out_dir, ic_name, lock.held());
      outputs.input = input_in(ic_name, cfg.out_dir);  // after the directory is made
    };
  }
  outputs.forces = describe_forces(cfg.solver, p.size());
  // The forces as resolved ("auto" settings filled in for this N and backend) beside the
  // options as given: a snapshot's /Parameters then says what computed it (not a run option:
  // a restart takes only option names from the checkpoint).
  outputs.parameters.emplace_back("forces", outputs.forces);
  // Tree settings with --solver auto below the crossover, where the direct sum is used.
  const std::string unused = restart ? "" : unused_tree_options(r, cfg.solver, p.size());

  // --dt auto: chosen from the forces of the run's start (a restart's typed --dt auto: from the
  // restored state), and stored as chosen (a restart continues with it).
  if (dt_auto)
    cfg.choose_dt = [&cfg, &p, &record, time_left = cfg.t_end - (restart ? start.time : 0.0)] {
      const double dt = auto_step(cfg, p, time_left);
      record("dt", dt);
      return dt;
    };

  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  outputs.progress_bar = tty && !cfg.quiet;
  cfg.observer = &outputs;

  // Said with --quiet too (after the header otherwise): it explains the jump in the energies.
  const auto say_force_changes = [&] {
    if (start.recompute_forces)
      std::cout << "force settings changed: " << force_changes
                << "; the forces of the restored state are computed again (energies from here "
                   "on are those of the new settings)\n";
  };
  if (cfg.quiet) say_force_changes();
  if (!cfg.quiet) {
    std::cout << "hoshi run: " << p.size() << " particles, t_end " << cfg.t_end << ", "
              << (cfg.eta > 0 ? "adaptive dt, eta " : "dt ")
              << (cfg.eta > 0 ? number_text(cfg.eta)
                  : dt_auto   ? std::string("auto")
                              : number_text(cfg.dt))
              << (cfg.levels > 1
                      ? ", block steps: " + std::to_string(cfg.levels) + " levels, eta " +
                            number_text(cfg.level_eta) +
                            (cfg.level_scheme == LevelScheme::hierarchical ? ", hierarchical" : "")
                      : std::string())
              << ", softening " << cfg.solver.eps << " (" << to_string(cfg.solver.softening)
              << "), units " << units.name << " (G = " << cfg.solver.G << "), " << threads
              << (threads == 1 ? " thread" : " threads") << ", output " << cfg.out_dir << "/\n";
    if (restart)
      std::cout << "continuing from " << restart_dir << "/" << kCheckpointName << " at step "
                << start.step << ", t = " << start.time << "\n";
    // Said (an audit: the grid moved without a word, and an extended run was no longer the
    // uninterrupted one).
    if (restart && !(cfg.eta > 0) && !dt_auto && cfg.dt > 0 && start_off_grid(start, cfg.dt))
      std::cout << "note: t = " << number_text(start.time) << " is off the step grid of the run "
                << "(--dt " << number_text(cfg.dt)
                << "; it ended between two steps at its --t-end, or --dt changed): the steps go on "
                   "from here, t = "
                << number_text(start.time)
                << " + k dt, so times and states differ from a run that never stopped\n";
    say_force_changes();
    std::cout << "parameters:";
    int col = 11;
    for (const auto& [k, v] : effective) {
      const std::string item = " " + k + "=" + v;
      if (col + item.size() > 100) std::cout << "\n ", col = 1;
      std::cout << item;
      col += static_cast<int>(item.size());
    }
    std::cout << "\n";
    std::cout << "forces: " << outputs.forces << "\n";
    if (!unused.empty()) std::cout << "note: " << unused << "\n";
    if (!(outputs.snapshots.every > 0 && outputs.snapshot_format == io::SnapshotFormat::gadget))
      for (const char* key : {"gadget-precision", "gadget-ids"})
        if (given(key))
          std::cout << "note: --" << key
                    << " unused: it applies to snapshots in Gadget binary (--snapshot-format "
                       "gadget with --snapshot-every)\n";
    // The series they shape are off (--snapshot-format tipsy alone wrote nothing unsaid).
    if (!(outputs.snapshots.every > 0) && given("snapshot-format"))
      std::cout << "note: --snapshot-format unused: snapshots are off (give --snapshot-every)\n";
    if (!(outputs.frames.every > 0))
      for (const char* key : {"render-axis", "render-extent", "render-resolution"})
        if (given(key))
          std::cout << "note: --" << key << " unused: frames are off (give --render-every)\n";
    // An interval shorter than a fixed step: one output per step, which the interval's numbers
    // skip (snapshot_000, 001, 003, ... with every 1/256 and dt 1/128: an audit found no word
    // of it).
    if (!(cfg.eta > 0) && !dt_auto && cfg.dt > 0) {
      const std::pair<const char*, double> series[] = {{"output-every", cfg.output_every},
                                                       {"snapshot-every", outputs.snapshots.every},
                                                       {"render-every", outputs.frames.every}};
      for (const auto& [key, every] : series)
        if (every > 0 && every < cfg.dt * (1 - 1e-12))
          std::cout << "note: --" << key << " " << number_text(every) << " is shorter than the "
                    << (cfg.levels > 1 ? "base step" : "step") << " " << number_text(cfg.dt) << ": "
                    << (std::string_view(key) == "output-every"
                            ? "energy.csv gets one row per step"
                            : std::string("one ") +
                                  (std::string_view(key) == "snapshot-every" ? "snapshot"
                                                                             : "frame") +
                                  " per step, numbered by the first multiple of the interval "
                                  "it reached (the others' numbers are skipped)")
                    << "\n";
    }
  }

  {
    // Said with --quiet too: how to read the snapshots back.
    io::SnapshotInfo written;
    written.units = units;
    written.G = cfg.solver.G;
    const std::string lost = io::unrecorded_units(outputs.snapshot_format, written);
    if (outputs.snapshots.every > 0 && !lost.empty())
      std::cout << "hoshi run: note: a " << io::to_string(outputs.snapshot_format)
                << " snapshot cannot record units or G: " << lost << "\n";
    // Checkpoints are HDF5 whatever the snapshot format (and one may be written on a signal).
    const std::string other_G = io::units_imply_another_G(io::SnapshotFormat::hdf5, written);
    const bool hdf5_snapshots =
        outputs.snapshots.every > 0 && outputs.snapshot_format == io::SnapshotFormat::hdf5;
    if (!other_G.empty())
      std::cout << "hoshi run: note: HDF5 output ("
                << (hdf5_snapshots ? "checkpoints, snapshots" : "checkpoints") << "): " << other_G
                << "\n";
  }

  // Not for two bodies, whose orbit the start's check follows to its pericentre (an eccentric
  // pair's max|a| grows 361-fold from apocentre, its orbit resolved), nor after a warning at
  // the start, whose suggestion a later one contradicted.
  if (p.size() > 2)
    cfg.step_outgrown = [&cfg, &outputs, &start_warned](const StepOutgrown& o) {
      if (start_warned) return;
      outputs.clear_display();
      warn_step_outgrown(cfg, o);
    };
  sources.active = false;  // the run's own errors from here
  RunResult res;
  SignalGuard signals;  // to the end: the closing lines too
  if (signals.interrupt_ignored() && !cfg.quiet)
    std::cout << (signals.terminate_caught()
                      ? "note: SIGINT is ignored (inherited, as by a script's background job): "
                        "stop the run with SIGTERM (kill PID), which also ends it after a step "
                        "with a checkpoint\n"
                      : "note: SIGINT and SIGTERM are ignored (inherited): the run stops at its "
                        "--t-end, or at once by SIGKILL (kill -9 PID) without a checkpoint "
                        "(--checkpoint-every keeps one)\n");
  {
    res = run_simulation(p, cfg, outputs.progress_bar ? nullptr : &std::cout);
    outputs.finish_display();
    // A final checkpoint, so that the run can be extended with --restart OUT --t-end T
    // (an interrupted run has just written one).
    if (!res.interrupted) {
      Stopwatch io;
      RunProgress last{res.steps, res.time,        0.0,           cfg.t_end,
                       res.e0,    res.next_output, res.time_base, res.step_base};
      last.step_scale_at_start = res.step_scale_at_start;
      last.step_outgrown_dt = res.step_outgrown_dt;
      outputs.write_checkpoint(p, last);
      outputs.io_seconds += io.seconds();
      res.seconds["total"] += io.seconds();
    }
  }
  res.seconds["io"] += outputs.io_seconds;

  if (res.interrupted) {
    // A batch job stopped at its time limit is told of its particles below the smallest level.
    if (cfg.levels > 1)
      print_block_summary(res, cfg, restart ? res.steps - start.step : res.steps, restart);
    // On the console, or where it is gone (a closed pipe), on stderr.
    std::cout << "\nhoshi run: stopped by signal " << g_stop_signal << " after step " << res.steps
              << " at t = " << res.time << "; checkpoint written to " << cfg.out_dir << "/"
              << kCheckpointName << "\ncontinue with: hoshi run --restart " << cfg.out_dir << "\n"
              << std::flush;
    std::fflush(stdout);
    if (!std::cout || std::ferror(stdout))
      std::cerr << "hoshi run: stopped by signal " << g_stop_signal << " after step " << res.steps
                << " at t = " << res.time << "; checkpoint written to " << cfg.out_dir << "/"
                << kCheckpointName << "; continue with: hoshi run --restart " << cfg.out_dir
                << "\n";
    return 0;
  }
  {  // the closing summary, also with --quiet (which drops only the timing table)
    const auto count = [](std::size_t n, const char* what) {
      return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
    };
    std::cout << (cfg.quiet ? "" : "\n") << "solver " << res.solver_name << " (" << res.backend_name
              << (res.device_resident ? ", device-resident" : "") << "), "
              << count(res.steps, "step") << " to t = " << res.time;
    // A restart's step count is the run's; its files, this part's (both read as the run's).
    if (restart) std::cout << " (" << res.steps - start.step << " from the checkpoint)";
    std::cout << "; " << cfg.out_dir << "/: energy.csv, " << kCheckpointName << ", "
              << count(outputs.snapshots_written, restart ? "new snapshot" : "snapshot") << ", "
              << count(outputs.frames_written, restart ? "new frame" : "frame") << "\n";
    std::cout << "relative energy error " << res.rel_energy_error;
    if (res.energy_jump != 0)  // measured from E0 plus the jump of the new force settings
      std::cout << " (not counting the jump "
                << res.energy_jump / std::abs(res.e0 - res.energy_jump)
                << " of E0 at the restart's new force settings)";
    std::cout << "\n";
    if (cfg.levels > 1)
      print_block_summary(res, cfg, restart ? res.steps - start.step : res.steps, restart);
    if (!cfg.quiet) print_timing(res);
  }
  // Written while the signals are caught: flushed later, on a closed pipe, it ended a finished
  // run with SIGPIPE (status 141).
  std::cout << std::flush;
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace hoshi::cli
