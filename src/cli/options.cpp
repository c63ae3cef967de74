#include "cli/options.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include "core/checks.hpp"
#include "core/number_text.hpp"
#include "direct/simd.hpp"
#include "ic/ic.hpp"
#include "ic/models.hpp"
#include "io/param_file.hpp"
#include "io/particle_io.hpp"
#include "io/validate.hpp"

namespace hoshi::cli {

void check_model_param_list(const std::string& list, const std::string& where) {
  ModelParams scratch;
  try {
    parse_model_params(list, scratch);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + " " + list + ": " + e.what());
  }
}

namespace {

// How the user writes an option: -G, --dt.
std::string dashed(const std::string& name) {
  return (name.size() == 1 ? "-" : "--") + name;
}

// The k-th text between cxxopts's quotes (U+2018, U+2019) in one of its messages ("Option
// \u2018dt\u2019 is missing an argument"); "" when there is none.
std::string quoted(const std::string& msg, int k) {
  const std::string open = "\xE2\x80\x98", close = "\xE2\x80\x99";
  std::size_t at = 0;
  for (int i = 0;; ++i) {
    const std::size_t a = msg.find(open, at);
    if (a == std::string::npos) return "";
    const std::size_t b = msg.find(close, a + open.size());
    if (b == std::string::npos) return "";
    if (i == k) return msg.substr(a + open.size(), b - a - open.size());
    at = b + close.size();
  }
}

// The option a mistyped name meant, as typed: one of that name with other dashes (--G: -G,
// -dt: --dt), else the long option nearest to it by the parameter files' rule (--thetaa:
// --theta; io::nearest_key: at most a third of the name edited); "" when none is that near.
std::string closest_option(const cxxopts::Options& options, const std::string& name) {
  std::vector<std::string> names;
  for (const std::string& g : options.groups())
    for (const auto& o : options.group_help(g).options) {
      if (o.s == name) return "-" + name;
      for (const std::string& l : o.l)
        if (l != "input" && l != "snapshot" && l != "snapshots") {  // positional slots
          if (l == name) return "--" + name;
          names.push_back(l);
        }
    }
  const std::string near = io::nearest_key(name, names);
  return near.empty() ? "" : "--" + near;
}

// "; did you mean --dt?" for a mistyped option, "" when nothing is near.
std::string did_you_mean(const cxxopts::Options& options, const std::string& name) {
  const std::string near = closest_option(options, name);
  return near.empty() ? "" : "; did you mean " + near + "?";
}

}  // namespace

cxxopts::ParseResult parse_options(cxxopts::Options& options, int argc, char** argv, bool typed) {
  options.add_options("help")("h,help", "print this help");
  try {
    auto r = options.parse(argc, argv);
    if (flag(r, "help")) {  // not --help=false
      std::cout << options.help();
      throw HelpShown{};
    }
    // Arguments that no option or positional slot took (a second input file, a value whose
    // option was mistyped away): an error, not silently dropped.
    if (!r.unmatched().empty()) {
      std::string list;
      for (const std::string& a : r.unmatched()) list += (list.empty() ? "'" : ", '") + a + "'";
      throw std::invalid_argument("unexpected argument" +
                                  std::string(r.unmatched().size() > 1 ? "s " : " ") + list +
                                  " (see --help)");
    }
    // An option typed twice takes its last value (scripts override their defaults so), except
    // a parameter file: PARAMS.yml and --params both given, one of them was silently ignored.
    // A --model-param list naming a key twice is refused as a parameter file's is.
    if (typed) {
      std::string file;
      for (const auto& kv : r.arguments()) {
        if (kv.key() == "params" && !file.empty())
          throw std::invalid_argument("two parameter files (" + file + " and " + kv.value() +
                                      "; as PARAMS.yml or --params): give one");
        if (kv.key() == "params") file = kv.value();
        if (kv.key() == "model-param") check_model_param_list(kv.value(), "--model-param");
      }
    }
    return r;
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    // cxxopts names the value but not the option. The flags are the only options it parses
    // itself (the others are read as text and checked by number()/integer()/seed_option()):
    // name them.
    const std::string msg = e.what();
    // A flag given a value that is not true or false (--overwrite=x).
    const std::string value = quoted(msg, 0);
    for (int i = argc - 1; i >= 1; --i) {
      const std::string a = argv[i];
      const auto eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos && a.substr(eq + 1) == value)
        throw std::invalid_argument("option " + a.substr(0, eq) + ": value '" + value +
                                    "' is not valid (a flag takes no value, or true or false)");
    }
    throw std::invalid_argument("value '" + value + "' is not valid (see --help)");
  } catch (const cxxopts::exceptions::no_such_option& e) {
    const std::string name = quoted(e.what(), 0);
    // A long option typed with one dash (-dt) reaches cxxopts as a group of short ones (-d -t):
    // the argument it came from is named with the long option it meant.
    if (name.size() == 1)
      for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.size() > 2 && a[0] == '-' && a[1] == name[0]) {
          const std::string word = a.substr(1, a.find('=') - 1);
          const std::string near = closest_option(options, word);
          if (near.rfind("--", 0) == 0)
            throw std::invalid_argument("unknown option " + dashed(name) + " (in " + a +
                                        "; did you mean " + near + "?) (see --help)");
        }
      }
    throw std::invalid_argument("unknown option " + dashed(name) + did_you_mean(options, name) +
                                " (see --help)");
  } catch (const cxxopts::exceptions::invalid_option_syntax& e) {
    // --G, ---dt: an option with the wrong number of dashes.
    const std::string text = quoted(e.what(), 0);
    const std::string word = text.substr(std::min(text.find_first_not_of('-'), text.size()));
    throw std::invalid_argument("malformed option " + text +
                                did_you_mean(options, word.substr(0, word.find('='))) +
                                " (see --help)");
  } catch (const cxxopts::exceptions::missing_argument& e) {
    throw std::invalid_argument("option " + dashed(quoted(e.what(), 0)) + " needs a value");
  } catch (const cxxopts::exceptions::option_requires_argument& e) {
    throw std::invalid_argument("option " + dashed(quoted(e.what(), 0)) + " needs a value");
  } catch (const cxxopts::exceptions::gratuitous_argument_for_option& e) {
    throw std::invalid_argument("option " + dashed(quoted(e.what(), 0)) +
                                " takes no value (given '" + quoted(e.what(), 1) + "')");
  } catch (const cxxopts::exceptions::exception& e) {
    std::string msg = e.what();  // the rest, with plain quotes
    for (const char* q : {"\xE2\x80\x98", "\xE2\x80\x99"})
      for (auto at = msg.find(q); at != std::string::npos; at = msg.find(q))
        msg.replace(at, 3, "'");
    throw std::invalid_argument(msg);
  }
}

namespace {
// `expected`: what the value should have been, for the error ("a number").
double number_of(const std::string& s, const std::string& name, const std::string& expected) {
  const char* first = number_start(s);
  double v = 0;
  auto res = std::from_chars(first, s.data() + s.size(), v);
  if (res.ec == std::errc::result_out_of_range && res.ptr == s.data() + s.size())
    throw std::invalid_argument("option " + dashed(name) + ": value '" + s +
                                "' is out of the range of a double (about 1e-308 to 1e308)");
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || std::isnan(v))
    throw std::invalid_argument("option " + dashed(name) + ": value '" + s + "' is not " +
                                expected);
  if (!std::isfinite(v))
    throw std::invalid_argument("option " + dashed(name) + ": value '" + s +
                                "' is not a finite number");
  return v;
}
}  // namespace

double number(const cxxopts::ParseResult& r, const std::string& name, bool or_auto) {
  return number_of(r[name].as<std::string>(), name, or_auto ? "a number (nor auto)" : "a number");
}

double number_or_fraction(const cxxopts::ParseResult& r, const std::string& name, bool or_auto) {
  const std::string s = r[name].as<std::string>();
  const std::string expected =
      or_auto ? "a number, a fraction A/B or auto" : "a number or a fraction A/B";
  const auto slash = s.find('/');
  if (slash == std::string::npos) return number_of(s, name, expected);
  const auto part = [&](const std::string& t) {
    try {
      return number_of(t, name, "a number");
    } catch (const std::invalid_argument& e) {
      // A part out of double's range is said so (1e999/2 was "not a number, a fraction A/B").
      const bool range = std::string(e.what()).find("out of the range") != std::string::npos;
      throw std::invalid_argument("option " + dashed(name) + ": value '" + s + "' " +
                                  (range ? "has a part out of the range of a double (about "
                                           "1e-308 to 1e308)"
                                         : "is not " + expected));
    }
  };
  const double a = part(s.substr(0, slash)), b = part(s.substr(slash + 1));
  if (b == 0 || !std::isfinite(a / b))
    throw std::invalid_argument("option " + dashed(name) + ": value '" + s +
                                "' is not a finite number");
  return a / b;
}

bool flag(const cxxopts::ParseResult& r, const std::string& name) {
  return r.count(name) > 0 && r[name].as<bool>();
}

std::optional<double> given_G(const cxxopts::ParseResult& r) {
  // The last -G given (a parameter file's and the command line's are both arguments); the
  // option's default is "auto".
  std::optional<std::string> text;
  for (const auto& kv : r.arguments())
    if (kv.key() == "G") text = kv.value();
  if (!text || *text == "auto") return std::nullopt;
  const double g = number(r, "G", true);
  if (!(g > 0)) throw std::invalid_argument("invalid -G " + *text + " (must be > 0)");
  require_G_in_range(g, "-G " + *text);
  return g;
}

void require_G_in_range(double g, const std::string& what) {
  // As the model parameters' range: -G 1e308 in galaxy units was G = inf in the file written,
  // which could not be read back; 1e-320 scaled the velocities by 1e-160.
  if (!(g >= kMinG && g <= kMaxG))
    throw std::invalid_argument("invalid " + what +
                                " (from 1e-30 to 1e30; rescale the units instead)");
}

std::uint64_t seed_option(const cxxopts::ParseResult& r) {
  // Decimal digits alone, with the leading '+' every number takes (cxxopts' own parser took
  // 0x10 as 16 and refused +5).
  const std::string s = r["seed"].as<std::string>();
  const char* first = number_start(s);
  std::uint64_t v = 0;
  const auto res = std::from_chars(first, s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size())
    throw std::invalid_argument("option --seed: value '" + s +
                                "' is not valid (expected a whole number from 0 to 2^64 - 1)");
  return v;
}

int integer(const cxxopts::ParseResult& r, const std::string& name) {
  const std::string s = r[name].as<std::string>();
  const char* first = number_start(s);
  int v = 0;
  auto res = std::from_chars(first, s.data() + s.size(), v);
  if (res.ec == std::errc::result_out_of_range && res.ptr == s.data() + s.size())
    throw std::invalid_argument("option " + dashed(name) + ": value '" + s +
                                "' is out of range (at most 2147483647 in magnitude)");
  if (res.ec != std::errc() || res.ptr != s.data() + s.size())
    throw std::invalid_argument("option " + dashed(name) + ": value '" + s + "' is not an integer");
  return v;
}

void add_solver_options(cxxopts::Options& o, const std::string& default_eps, bool choose_solver,
                        const std::string& softening_note) {
  if (choose_solver)
    o.add_options("force")(
        "solver",
        "force solver: direct, tree or auto (direct below the measured crossover: N = " +
            std::to_string(direct_tree_crossover_n(Backend::cpu)) + " on this build's CPU (" +
            simd::kName + "), " + std::to_string(direct_tree_crossover_n(Backend::cuda)) +
            " with CUDA; and at every N with --precision double)",
        cxxopts::value<std::string>()->default_value("auto"));
  o.add_options("force")("backend", "cpu, cuda or auto (cuda when a device is present)",
                         cxxopts::value<std::string>()->default_value("auto"))(
      "softening", "softening length eps (Plummer-equivalent)" + softening_note,
      cxxopts::value<std::string>()->default_value(default_eps))(
      "kernel",
      std::string("softening kernel: plummer or spline (Gadget cubic spline, Newtonian beyond "
                  "2.8 eps)") +
          (default_eps == "auto" ? "; for a particle file that records one (a hoshi run's; "
                                   "Gadget-4's and AREPO's: spline), that kernel unless "
                                   "--kernel is given"
                                 : ""),
      cxxopts::value<std::string>()->default_value("plummer"))(
      "theta",
      "tree opening angle; auto: 0.65 for the CPU group walk, 0.5 for the per-particle walks, "
      "0.6 for the CUDA group mode (each near a 99th-percentile error of 1e-3 with barnes94)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "criterion",
      "opening criterion: bh, barnes94, bmax or relative (Gadget's, with the previous "
      "evaluation's |a|; a first evaluation bootstraps it with a barnes94 pass); auto: relative "
      "(with --alpha auto)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "order", "particle-cell multipole order: 1 (monopole) or 2 (quadrupole)",
      cxxopts::value<std::string>()->default_value("2"))(
      "alpha",
      "relative criterion tolerance (Gadget's ErrTolForceAcc); auto: 0.02 for the CPU group "
      "walk (p99 error 1.0e-3 at N = 1e6), 0.0015 for the per-particle walks (p99 7e-4), 0.004 "
      "for the CUDA group mode (p99 6e-4)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "n-leaf", "tree: at most this many particles per leaf",
      cxxopts::value<std::string>()->default_value("16"))(
      "n-group",
      "tree: at most this many particles per group of the CPU group walk (the CUDA group mode's "
      "groups are a warp: 32)",
      cxxopts::value<std::string>()->default_value("128"))(
      "local-ratio",
      "tree group walk: cells farther than 1 / (R theta^((order+1)/5)) radii from a group (or "
      "a larger target above it; relative criterion: theta^3 -> 13.7 alpha) enter its local "
      "Taylor expansion of degree 5 instead of a term per particle; 0 turns this off",
      cxxopts::value<std::string>()->default_value("0.37"))(
      "walk",
      "tree walk: group (criterion per group box; CPU: SIMD list x group, the fast path; CUDA: "
      "a warp per group of <= 32, every lane on the box's path) or particle (criterion per "
      "particle; CUDA: a thread per particle; CPU: its mirror); auto: group on both (on an "
      "H200 the group mode is 2.8x faster than a thread per particle at N = 2^20)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "G",
      "gravitational constant, 1e-30 to 1e30 (hoshi run: the unit system's unless given, "
      "43007.1 for --units "
      "galaxy; built-in models scale their velocities to it; a particle file's recorded G, in "
      "the run's units, for a run from it, and for hoshi forces and accuracy, unless given; "
      "1 without either)",
      cxxopts::value<std::string>()->default_value("auto"));
  if (choose_solver)
    o.add_options("force")("precision",
                           "direct solver arithmetic: float (fast SIMD) or double (reference; "
                           "CPU direct summation only, which --solver auto then picks)",
                           cxxopts::value<std::string>()->default_value("float"));
}

std::string given_options(const cxxopts::ParseResult& r, std::initializer_list<const char*> keys) {
  std::string given;
  for (const char* key : keys)
    if (r.count(key) && r[key].as<std::string>() != "auto")
      given += std::string(given.empty() ? "" : ", ") + "--" + key;
  return given;
}

std::string unused_tree_options(const cxxopts::ParseResult& r, const SolverConfig& c,
                                std::size_t n) {
  const std::string forces = describe_forces(c, n);  // "direct cpu float32 ..."
  if (forces.rfind("direct", 0) != 0) {
    // A tree: the settings its criterion or walk does not read (an audit: --alpha with
    // barnes94, --n-group with the per-particle walk gave the same forces, unsaid), which are
    // those describe_forces leaves out: alpha (the relative criterion's), local_ratio (the CPU
    // group walk's, with its n_group; the CUDA group mode's groups are fixed warps).
    const auto field = [&](const std::string& key) {  // "criterion=relative" -> "relative"
      const std::size_t at = forces.find(" " + key + "=");
      if (at == std::string::npos) return std::string();
      const std::size_t from = at + key.size() + 2;
      return forces.substr(from, forces.find(' ', from) - from);
    };
    std::string notes;
    const auto add = [&](const std::string& note) { notes += (notes.empty() ? "" : "; ") + note; };
    if (field("alpha").empty() && !given_options(r, {"alpha"}).empty())
      add("--alpha unused: it is the relative criterion's (the forces' is " + field("criterion") +
          ")");
    if (const std::string g = given_options(r, {"n-group", "local-ratio"});
        field("local_ratio").empty() && !g.empty())
      add(g + " unused: the group walk's (the forces' walk is " + field("walk") +
          (field("walk") == "group" ? " on CUDA, whose groups are warps)" : ")"));
    return notes;
  }
  const std::size_t crossover =
      direct_tree_crossover_n(forces.rfind("direct cuda", 0) == 0 ? Backend::cuda : Backend::cpu);
  const std::string unused = given_options(
      r, {"theta", "criterion", "alpha", "order", "n-leaf", "n-group", "local-ratio", "walk"});
  if (unused.empty()) return "";
  return unused + " unused: the forces are a direct sum (" +
         (c.solver != SolverKind::automatic ? std::string("--solver direct")
          : n < crossover                   ? "--solver auto below N = " + std::to_string(crossover)
                          : std::string("--solver auto with --precision double")) +
         ")";
}

double softening_option(const cxxopts::ParseResult& r, bool softening_auto) {
  if (softening_auto && r["softening"].as<std::string>() == "auto") return 0.0;
  return number(r, "softening", softening_auto);
}

bool softening_given(const cxxopts::ParseResult& r) {
  return r.count("softening") > 0 && r["softening"].as<std::string>() != "auto";
}

SolverConfig solver_config(const cxxopts::ParseResult& r, bool softening_auto) {
  SolverConfig c;
  c.solver = parse_solver_kind(r["solver"].as<std::string>());
  c.backend = parse_backend(r["backend"].as<std::string>());
  c.precision = parse_precision(r["precision"].as<std::string>());
  c.eps = softening_option(r, softening_auto);
  c.softening = parse_softening(r["kernel"].as<std::string>());
  c.G = given_G(r).value_or(1.0);
  const std::string walk = r["walk"].as<std::string>();
  c.tree.walk_auto = walk == "auto";
  c.tree.walk = c.tree.walk_auto ? WalkKind::group : parse_walk(walk);
  // "auto" values are resolved by make_solver once the backend is known; until then the CPU's.
  c.tree.criterion_auto = r["criterion"].as<std::string>() == "auto";
  c.tree.criterion = c.tree.criterion_auto ? default_criterion(c.backend, c.tree.walk)
                                           : parse_criterion(r["criterion"].as<std::string>());
  c.tree.order = integer(r, "order");
  c.tree.alpha_auto = r["alpha"].as<std::string>() == "auto";
  c.tree.alpha =
      c.tree.alpha_auto ? default_alpha(c.backend, c.tree.walk) : number(r, "alpha", true);
  c.tree.n_leaf = integer(r, "n-leaf");
  c.tree.n_group = integer(r, "n-group");
  c.tree.local_ratio = number(r, "local-ratio");
  c.tree.theta_auto = r["theta"].as<std::string>() == "auto";
  // "auto" is resolved by make_solver once the backend is known; until then the CPU value.
  c.tree.theta =
      c.tree.theta_auto ? default_theta(c.backend, c.tree.walk) : number(r, "theta", true);
  validate(c);
  if (!c.tree.theta_auto && !c.tree.criterion_auto)
    warn_large_theta(c.tree.theta, c.tree.criterion);
  return c;
}

void warn_large_theta(double theta, Criterion criterion) {
  // The relative criterion uses theta only for its first, barnes94, pass, whose |a| sets the
  // tolerance alpha |a_old|: not the forces' accuracy.
  if (theta > 1 && criterion != Criterion::relative)
    std::cerr << "hoshi: warning: --theta " << theta
              << " is above 1, where the tree force errors grow large (hoshi accuracy measures "
                 "them); nodes are still never used from inside their b_max sphere\n";
}

std::vector<std::string> model_names() {
  return hoshi::model_names();  // the registry (ic/models.hpp) includes plummer, uniform, kepler
}

bool is_model(const std::string& ic) {
  const auto names = model_names();
  return std::find(names.begin(), names.end(), ic) != names.end();
}

void scale_velocities_to_G(ParticleSet& p, double G, double G_made) {
  if (G == G_made) return;
  const double s = std::sqrt(G / G_made);
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.vx[i] *= s;
    p.vy[i] *= s;
    p.vz[i] *= s;
  }
}

void add_ic_options(cxxopts::Options& o, const std::string& default_n) {
  o.add_options("initial conditions")(
      "ic",
      "initial conditions: plummer, uniform (cold sphere), kepler (two-body), hernquist, "
      "eddington-hernquist, eddington-plummer, jaffe, nfw, disk, disk-nfw, merger, or a particle "
      "file",
      cxxopts::value<std::string>()->default_value("plummer"))(
      "n,particles", "number of particles",
      cxxopts::value<std::string>()->default_value(default_n))(
      "seed", "random seed", cxxopts::value<std::string>()->default_value("1"))(
      "eccentricity", "kepler: orbital eccentricity",
      cxxopts::value<std::string>()->default_value("0.5"))(
      "radius", "uniform: sphere radius", cxxopts::value<std::string>()->default_value("1"))(
      "model-param",
      "model parameters key=value[,key=value...] (repeatable) for --ic hernquist, nfw, jaffe, "
      "eddington-hernquist, eddington-plummer, disk, disk-nfw, merger, uniform (radius) and "
      "kepler (e); plummer takes none (keys: docs/models.md); "
      "merger: model2=NAME (disk, disk-nfw, hernquist, nfw, jaffe, plummer, ...; default copy: "
      "the primary scaled) and g2.KEY=VALUE for the second galaxy's own keys",
      cxxopts::value<std::vector<std::string>>());
}

namespace {

ModelParams given_model_params(const cxxopts::ParseResult& r) {
  ModelParams params;
  if (r.count("model-param"))
    for (const auto& item : r["model-param"].as<std::vector<std::string>>())
      parse_model_params(item, params);
  return params;
}

// Registry models (ic/models.hpp); with --model-param also plummer/uniform/kepler.
bool from_registry(const std::string& ic, const ModelParams& params) {
  const bool basic = ic == "plummer" || ic == "uniform" || ic == "kepler";
  return is_model(ic) && (!basic || !params.empty());
}

}  // namespace

ModelParams model_params_with_options(const cxxopts::ParseResult& r) {
  const std::string ic = r["ic"].as<std::string>();
  ModelParams params = given_model_params(r);
  // --radius and --eccentricity are the uniform and kepler models' keys under another name
  // (initial_conditions refuses one given both ways).
  // A key given both ways is refused for a new run; a restart of a checkpoint from before
  // 2026-12-01 passes back both its stored radius=1 and model-param radius=2, of which the
  // second made the particles.
  if (ic == "uniform" && r.count("radius") && !params.count("radius"))
    params["radius"] = number(r, "radius");
  if (ic == "kepler" && r.count("eccentricity") && !params.count("e"))
    params["e"] = number(r, "eccentricity");
  return params;
}

std::vector<std::pair<std::string, ModelValue>> model_parameters(const cxxopts::ParseResult& r) {
  const std::string ic = r["ic"].as<std::string>();
  std::vector<std::pair<std::string, ModelValue>> out;
  if (!is_model(ic)) return out;
  // Every model's, the basic ones' too: --radius 2 recorded no model.radius, and
  // --model-param radius=2 recorded radius=1 beside model.radius=2.
  for (auto& [k, v] : effective_model_params(ic, model_params_with_options(r)))
    out.emplace_back("model." + k, v);
  return out;
}

void check_ic_file(const cxxopts::ParseResult& r, bool seed_beyond_models) {
  const std::string ic = r["ic"].as<std::string>();
  std::error_code ec;
  if (!std::filesystem::exists(ic, ec) && ec && ec != std::errc::no_such_file_or_directory)
    throw std::invalid_argument("--ic " + ic + ": cannot access the file: " + ec.message());
  if (!std::filesystem::exists(ic, ec)) {
    std::string models;
    for (const auto& m : model_names()) models += (models.empty() ? "" : ", ") + m;
    if (const std::string member = io::multi_file_member(ic); !member.empty())
      throw std::invalid_argument("--ic " + ic + ": no such file (" + member + ")");
    throw std::invalid_argument("--ic " + ic + ": no such file, and not a model (" + models + ")");
  }
  if (r.count("particles"))
    throw std::invalid_argument("-n " + r["particles"].as<std::string>() + " with --ic " + ic +
                                ": a file brings its own particles (-n sizes the models)");
  if (r.count("model-param"))
    throw std::invalid_argument("--model-param with --ic " + ic +
                                ": a file brings its own particles (the parameters shape the "
                                "models)");
  if (r.count("seed") && !seed_beyond_models)
    throw std::invalid_argument("--seed " + std::to_string(seed_option(r)) + " with --ic " + ic +
                                ": a file brings its own particles (--seed draws the models)");
  // hoshi run reads a file itself (keeping its time and units) and comes here directly.
  for (const char* option : {"eccentricity", "radius"})
    if (r.count(option))
      throw std::invalid_argument(
          "--" + std::string(option) + " " + r[option].as<std::string>() + " with --ic " + ic +
          ": a file brings its own particles (--" + option + " shapes the " +
          (std::string(option) == "radius" ? "uniform" : "kepler") + " model)");
}

std::optional<IdRange> id_range_option(const cxxopts::ParseResult& r) {
  if (!r.count("ids")) return std::nullopt;
  IdRange ids;
  ids.text = r["ids"].as<std::string>();
  const std::string& t = ids.text;
  const auto colon = t.find(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("invalid --ids " + t + " (expected BEGIN:END)");
  // Ids are 64-bit and start at 0 (hoshi ic numbers from 0).
  const auto parse_id = [&](const std::string& v) {
    std::uint64_t id = 0;
    const auto res = std::from_chars(number_start(v), v.data() + v.size(), id);
    if (v.empty() || res.ec != std::errc() || res.ptr != v.data() + v.size())
      throw std::invalid_argument("invalid --ids " + t + ": '" + v +
                                  "' is not an id (a whole number from 0 to 2^64 - 1)");
    return id;
  };
  ids.lo = parse_id(t.substr(0, colon));
  ids.hi = parse_id(t.substr(colon + 1));
  if (ids.hi <= ids.lo) throw std::invalid_argument("invalid --ids " + t + " (need BEGIN < END)");
  return ids;
}

ParticleSet select_ids(const ParticleSet& p, const IdRange& ids, const std::string& file) {
  ParticleSet selected;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p.id[i] >= ids.lo && p.id[i] < ids.hi)
      selected.push_back(p.x[i], p.y[i], p.z[i], p.vx[i], p.vy[i], p.vz[i], p.m[i], p.id[i]);
  if (selected.empty())
    throw std::invalid_argument(file + ": no particle with an id in --ids " + ids.text);
  return selected;
}

double physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

void require_run_memory(std::size_t n, const std::string& what) {
  const double need = kRunBytesPerParticle * static_cast<double>(n);
  const double have = physical_memory();
  if (have == 0 || need <= have) return;
  std::ostringstream m;
  m << std::fixed << std::setprecision(1) << what << ": a run of " << n << " particles needs about "
    << need / 1e9 << " GB (" << static_cast<int>(kRunBytesPerParticle)
    << " B each: the particles and the tree), this machine has " << have / 1e9 << " GB";
  throw std::invalid_argument(m.str());
}

namespace {
// -n of a model, refused when the particles alone (11 doubles and a 64-bit id: 96 B each) would not
// fit in the machine's memory: the model was sampled until std::bad_alloc or the OOM killer
// ended it (-n 5e9: 480 GB). A run needs ~2x that with the tree solver (docs/perf-tree.md).
std::size_t model_particles(const cxxopts::ParseResult& r) {
  const std::string text = r["particles"].as<std::string>();
  const std::size_t n = parse_size(text, "-n");
  const double need = 96.0 * static_cast<double>(n);
  const double have = physical_memory();
  if (have > 0 && need > have) {
    std::ostringstream m;
    m << std::fixed << std::setprecision(1) << "invalid -n " << text
      << ": the particles alone need " << need / 1e9 << " GB (96 B each), this machine has "
      << have / 1e9 << " GB";
    throw std::invalid_argument(m.str());
  }
  return n;
}
}  // namespace

ParticleSet initial_conditions(const cxxopts::ParseResult& r, io::SnapshotInfo* info,
                               bool seed_beyond_models) {
  const std::string ic = r["ic"].as<std::string>();
  const auto seed = seed_option(r);
  const ModelParams params = given_model_params(r);
  // The two model options that are not --model-param: refused where they would be ignored.
  for (const auto& [option, model, key] :
       {std::tuple<const char*, const char*, const char*>{"eccentricity", "kepler", "e"},
        {"radius", "uniform", "radius"}}) {
    if (!r.count(option)) continue;
    const std::string given = "--" + std::string(option) + " " + r[option].as<std::string>();
    if (ic != model)
      throw std::invalid_argument(given + " with --ic " + ic + ": it applies to --ic " + model +
                                  " only (the other models take --model-param KEY=VALUE)");
    if (params.count(key))
      throw std::invalid_argument(given + " and --model-param " + key + "=...: give one of them");
  }
  if (ic == "kepler" && r.count("particles") &&
      parse_size(r["particles"].as<std::string>(), "-n") != 2)
    throw std::invalid_argument("-n " + r["particles"].as<std::string>() +
                                " with --ic kepler: a two-body model (2 particles)");
  if (from_registry(ic, params))
    return make_model(ic, model_particles(r), seed, params,
                      [](const std::string& w) { std::cerr << "hoshi: warning: " << w << "\n"; });
  if (ic == "plummer") return make_plummer(model_particles(r), seed);
  if (ic == "uniform") return make_uniform_sphere(model_particles(r), seed, number(r, "radius"));
  if (ic == "kepler") return make_kepler(number(r, "eccentricity"));
  check_ic_file(r, seed_beyond_models);
  io::LoadedSnapshot meta;
  ParticleSet p = io::read_particles(ic, &meta);
  if (!meta.note.empty()) std::cerr << "hoshi: " << ic << ": " << meta.note << "\n";
  // A tipsy file without its .param is in G = 1 units: with --units, those of its length and
  // mass units, as hoshi run reads it (hoshi ic --units galaxy took the velocities for galaxy
  // units', 207 times too small); without, units unknown and G = 1 recorded, so that a run in
  // any units reads it with that G.
  bool tipsy_g1 = false;
  if (meta.format == io::SnapshotFormat::tipsy && !meta.units_known) {
    if (r.count("units")) {
      const io::UnitSystem u = io::parse_units(r["units"].as<std::string>());
      meta.units = io::units_g1(u.length_cm, u.mass_g);
      meta.units_known = true;
    } else {
      tipsy_g1 = true;
      // -G: the velocities go to that G, as hoshi run takes such a file with -G (the units of
      // length and mass unchanged); the output records it.
      if (const auto g = given_G(r)) {
        const double s = std::sqrt(*g);
        for (auto* v : {&p.vx, &p.vy, &p.vz})
          for (double& x : *v) x *= s;
      }
    }
  }
  if (info) {
    info->time = meta.time;
    info->units = meta.units;
    info->units_known = meta.units_known;
    info->parameters = meta.parameters;  // the run's settings and its G, where hoshi wrote them
    info->gadget_softening = meta.gadget_softening;
    info->G = tipsy_g1 ? given_G(r).value_or(1.0)
                       : io::snapshot_G(meta, 0.0);  // 0: none recorded, none written
  }
  return p;
}

namespace {

// The kernel a file records, unless --kernel is given: whether it was taken. A Gadget-4 or
// AREPO run's is its cubic spline.
bool take_kernel(const cxxopts::ParseResult& r, const io::ParamList& params,
                 const std::string& path, SolverConfig& c,
                 const std::optional<io::GadgetSoftening>& gadget) {
  if (r.count("kernel")) return false;
  const io::ParamValue* k = io::find_param(params, "kernel");
  if (!k && gadget) {
    c.softening = Softening::spline;
    return true;
  }
  if (!k) return false;
  try {
    c.softening = parse_softening(io::to_string(*k));
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(path + ": field /Parameters/kernel: value '" + io::to_string(*k) +
                                "' (give --kernel)");
  }
  return true;
}

}  // namespace

std::string take_recorded_softening(const cxxopts::ParseResult& r, const io::ParamList& params,
                                    const std::string& path, SolverConfig& c,
                                    const std::optional<io::GadgetSoftening>& gadget) {
  if (softening_given(r)) return "";
  const io::ParamValue* e = io::find_param(params, "softening");
  const std::optional<double> eps = e ? io::to_number(*e) : std::nullopt;
  if (!e && gadget && !gadget->error.empty()) throw std::invalid_argument(gadget->error);
  if (e && !eps)  // text ("0.05x"): it read as none, and the forces were unsoftened (an audit)
    throw std::invalid_argument(path + ": field /Parameters/softening: value '" +
                                io::to_string(*e) + "' (not a number; give --softening)");
  if (!eps && gadget && gadget->eps) {  // a Gadget-4 or AREPO run's: its spline kernel
    c.eps = *gadget->eps;
    take_kernel(r, params, path, c, gadget);
    if (c.softening != Softening::spline)
      return number_text(c.eps) + " (spline kernel, " + gadget->text + "; --kernel " +
             to_string(c.softening) + " taken";
    return number_text(c.eps) + " (spline kernel, " + gadget->text;
  }
  if (!eps) return "";
  if (!(*eps >= 0) || !std::isfinite(*eps))
    throw std::invalid_argument(path + ": field /Parameters/softening: value " + io::to_string(*e) +
                                " (must be >= 0; give --softening)");
  c.eps = *eps;
  take_kernel(r, params, path, c, std::nullopt);
  // What the file records, and the --kernel taken instead where it differs (the note said the
  // given kernel as the file's; an audit).
  const io::ParamValue* k = io::find_param(params, "kernel");
  const std::string recorded = k ? io::to_string(*k) : "";
  if (!recorded.empty() && recorded != to_string(c.softening))
    return number_text(*eps) + " (" + recorded + " kernel; --kernel " + to_string(c.softening) +
           " taken";
  return number_text(*eps) + " (" + to_string(c.softening);
}

std::string no_recorded_softening(const std::string& path,
                                  const std::optional<io::GadgetSoftening>& gadget) {
  if (gadget && !gadget->eps)
    return path + " records no one softening for all its particles (" + gadget->text + ")";
  return path + " records no softening";
}

void take_recorded_softening_and_say(const std::string& command, const cxxopts::ParseResult& r,
                                     const io::ParamList& params, const std::string& path,
                                     SolverConfig& c,
                                     const std::optional<io::GadgetSoftening>& gadget) {
  const std::string note = "hoshi " + command + ": note: ";
  if (const std::string said = take_recorded_softening(r, params, path, c, gadget); !said.empty())
    std::cerr << note << "the softening " << path << " records: " << said
              << "; --softening overrides)\n";
  else if (!softening_given(r))  // the fallback to 0 went unsaid
    std::cerr << note << no_recorded_softening(path, gadget)
              << ": the forces are unsoftened (--softening sets one)\n";
  else if (const std::string kernel = take_recorded_kernel(r, params, path, c, gadget);
           !kernel.empty())
    std::cerr << note << kernel << "\n";
}

std::string take_recorded_kernel(const cxxopts::ParseResult& r, const io::ParamList& params,
                                 const std::string& path, SolverConfig& c,
                                 const std::optional<io::GadgetSoftening>& gadget) {
  if (!softening_given(r) || !take_kernel(r, params, path, c, gadget)) return "";
  if (c.eps == 0) return "";  // unsoftened: no kernel to speak of
  const bool recorded = io::find_param(params, "kernel") != nullptr;
  return path +
         (recorded ? " records the kernel " + to_string(c.softening)
                   : " is a " + gadget->code + " run's, whose kernel is the spline") +
         ", which --softening " + number_text(c.eps) + " is taken with (--kernel overrides)";
}

void require_csv_name(const std::string& path, const std::string& option, const std::string& what) {
  // Only the names no text file has: .dat, .bin and .std (Gadget's and tipsy's too) are common
  // names of text tables.
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto format = io::format_from_extension(path);
  if ((format == io::SnapshotFormat::hdf5) ||
      (ext == ".png" || ext == ".tipsy" || ext == ".gadget" || ext == ".g1" || ext == ".g2"))
    throw std::invalid_argument(option + " " + path + ": the " + what +
                                " written as CSV (name the file *.csv)");
}

void require_distinct_positions_in(const ParticleSet& p, double eps, const std::string& file) {
  if (eps != 0) return;
  try {
    require_distinct_positions(p);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(file + ": " + e.what());
  }
}

void add_write_options(cxxopts::Options& o, const std::string& group) {
  o.add_options(group)(
      "gadget-precision",
      "Gadget binary output: float (positions, velocities and masses in float32, what Gadget-2 "
      "and GIZMO read unless built for double input; Gadget-4 reads either) or double",
      cxxopts::value<std::string>()->default_value("float"))(
      "gadget-ids",
      "Gadget binary output: 32- or 64-bit particle ids (64 for a Gadget built with LONGIDS; "
      "with 32, an id >= 2^31 is an error)",
      cxxopts::value<std::string>()->default_value("32"));
}

io::WriteOptions write_options(const cxxopts::ParseResult& r) {
  io::WriteOptions w;
  const std::string precision = r["gadget-precision"].as<std::string>();
  const std::string ids = r["gadget-ids"].as<std::string>();
  if (precision != "float" && precision != "double")
    throw std::invalid_argument("invalid --gadget-precision '" + precision +
                                "' (expected float or double)");
  if (ids != "32" && ids != "64")
    throw std::invalid_argument("invalid --gadget-ids '" + ids + "' (expected 32 or 64)");
  w.gadget_double = precision == "double";
  w.gadget_long_ids = ids == "64";
  return w;
}

void add_threads_option(cxxopts::Options& o) {
  o.add_options("force")("threads", "OpenMP threads (0: all cores)",
                         cxxopts::value<std::string>()->default_value("0"));
}

int apply_threads(const cxxopts::ParseResult& r) {
  const int k = integer(r, "threads");
  // An upper bound well above any node's cores (OpenMP died in thread creation at 1e5).
  if (k < 0 || k > 4096)
    throw std::invalid_argument("invalid --threads " + std::to_string(k) +
                                " (must be between 0 and 4096)");
  if (k > 0) omp_set_num_threads(k);
  return omp_get_max_threads();
}

std::vector<std::string> parse_string_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      throw std::invalid_argument("invalid " + option + " '" + text +
                                  "' (an empty item: values are separated by single commas)");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<double> parse_double_list(const std::string& text, const std::string& option) {
  std::vector<double> out;
  for (const auto& s : parse_string_list(text, option)) {
    double v = 0;
    auto res = std::from_chars(number_start(s), s.data() + s.size(), v);
    if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(v))
      throw std::invalid_argument("invalid " + option + " value '" + s + "' (expected a number)");
    out.push_back(v);
  }
  if (out.empty())
    throw std::invalid_argument("invalid " + option + " '" + text + "' (empty list)");
  return out;
}

std::size_t parse_size(const std::string& s, const std::string& option, std::size_t min) {
  double v = 0;
  auto res = std::from_chars(number_start(s), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(v) ||
      v != std::floor(v))
    throw std::invalid_argument("invalid " + option + " value '" + s +
                                "' (expected a whole number)");
  if (v < static_cast<double>(min))
    throw std::invalid_argument("invalid " + option + " " + s +
                                " (must be >= " + std::to_string(min) + ")");
  if (v > 1e12) throw std::invalid_argument("invalid " + option + " " + s + " (too large)");
  return static_cast<std::size_t>(v);
}

std::vector<std::size_t> parse_size_list(const std::string& text, const std::string& option) {
  std::vector<std::size_t> out;
  for (const auto& s : parse_string_list(text, option)) out.push_back(parse_size(s, option));
  if (out.empty())
    throw std::invalid_argument("invalid " + option + " '" + text + "' (empty list)");
  return out;
}

}  // namespace hoshi::cli
