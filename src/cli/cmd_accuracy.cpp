// hoshi accuracy: tree force errors against the double direct sum, over a grid of settings.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/analysis.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_guard.hpp"
#include "core/number_text.hpp"
#include "direct/direct.hpp"
#include "io/atomic_file.hpp"
#include "solver/accuracy.hpp"
#include "solver/solver.hpp"

namespace hoshi::cli {

int cmd_accuracy(int argc, char** argv) {
  cxxopts::Options o(
      "hoshi accuracy",
      "Errors of the float32 tree forces (solver and precision are fixed) against "
      "double-precision direct summation on K random targets "
      "(reproducible for --seed), one row per combination of the listed settings. --theta, "
      "--criterion, --alpha, --order and --walk take comma-separated lists (--alpha applies to "
      "the relative criterion's rows only, --theta to the geometric criteria's). The relative "
      "criterion's rows are those of a run's steps: evaluated with the accelerations of an "
      "earlier relative evaluation as |a_old| (the first call has none: it runs barnes94 at the "
      "walk's default theta, then the relative criterion, and the row is the call after). For "
      "a study of the "
      "error against theta, give a geometric criterion (the default, auto, is relative, whose "
      "error follows --alpha). Columns: err_* are percentiles (nearest rank: with fewer than "
      "1000 targets err_p999 is the largest, below 100 err_p99 too) of each target's "
      "|a - a_ref| / |a_ref| (|a_ref| at least 1e-6 of the targets' median), pot_err_* of "
      "|phi - phi_ref| / |phi_ref|; pp and pc are the particle-particle and particle-cell terms "
      "divided by N; seconds is that one evaluation's wall time, tree build included (for cost "
      "comparisons use hoshi bench, which repeats). --seed draws a model and the targets: to "
      "draw other targets of one realisation, write it with hoshi ic and give --ic FILE. A "
      "particle file's recorded softening and kernel (a run's snapshot) are used unless "
      "--softening is given.");
  o.add_options()("targets",
                  "number of random targets for the reference (0, or N or more: all particles)",
                  cxxopts::value<std::string>()->default_value("2000"))(
      "csv",
      "also write the table to this CSV file, each row followed by the settings every row shares "
      "(n, targets, softening, kernel, G, n_leaf, n_group, local_ratio, backend)",
      cxxopts::value<std::string>())(
      "errors",
      "write every target's errors to this CSV file, one row per setting and target "
      "(criterion,order,walk,theta,alpha,id,r,a_ref,acc_err,pot_err; r from the centre of "
      "mass): the distributions behind the percentiles",
      cxxopts::value<std::string>())("overwrite", "replace an existing --csv or --errors file");
  add_ic_options(o, "100000");
  // Without --solver and --precision: the float32 tree is measured, against the double direct
  // sum (they were listed, and any value was refused).
  add_solver_options(o, "auto", /*choose_solver=*/false,
                     "; auto: 0 for a model; with --ic FILE the softening and kernel the file "
                     "records (a hoshi, Gadget-4 or AREPO run's), else 0; a length given keeps the "
                     "recorded kernel "
                     "unless --kernel is given");
  add_threads_option(o);
  // Said why, rather than cxxopts's "does not exist".
  for (int i = 1; i < argc; ++i)
    for (const std::string name : {"--solver", "--precision"})
      if (argv[i] == name || std::string(argv[i]).rfind(name + "=", 0) == 0)
        throw std::invalid_argument(name +
                                    ": not an option of hoshi accuracy, which measures the float32 "
                                    "tree against the double-precision direct sum");
  auto r = parse_options(o, argc, argv);

  // The single-valued settings, as solver_config reads them; the lists separately.
  SolverConfig base;
  base.solver = SolverKind::tree;
  base.backend = parse_backend(r["backend"].as<std::string>());
  base.eps = softening_option(r, /*softening_auto=*/true);
  base.softening = parse_softening(r["kernel"].as<std::string>());
  base.G = given_G(r).value_or(1.0);
  base.tree.n_leaf = integer(r, "n-leaf");
  base.tree.n_group = integer(r, "n-group");
  base.tree.local_ratio = number(r, "local-ratio");
  // --backend cuda without a device (or a build without CUDA): said before the model, the
  // reference sums and the table's header (the header came first).
  if (base.backend == Backend::cuda) make_solver(base, 2);
  // "auto" in the list: the walk's default (default_theta), written as NaN until then.
  std::vector<double> thetas;
  for (const auto& s : parse_string_list(r["theta"].as<std::string>(), "--theta"))
    thetas.push_back(s == "auto" ? std::nan("") : parse_double_list(s, "--theta")[0]);
  if (thetas.empty()) throw std::invalid_argument("--theta needs at least one value");
  // Likewise "auto" in the --alpha list: the walk's default (default_alpha).
  std::vector<double> alphas;
  for (const auto& s : parse_string_list(r["alpha"].as<std::string>(), "--alpha"))
    alphas.push_back(s == "auto" ? std::nan("") : parse_double_list(s, "--alpha")[0]);
  if (alphas.empty()) throw std::invalid_argument("--alpha needs at least one value");
  // "auto" in the criterion list: the walk's default (default_criterion), as std::nullopt.
  std::vector<std::optional<Criterion>> criteria;
  for (const auto& s : parse_string_list(r["criterion"].as<std::string>(), "--criterion"))
    criteria.push_back(s == "auto" ? std::nullopt : std::optional(parse_criterion(s)));
  // The values first: a bad one is the one line said (a note on an unused --theta -0.5 came
  // before its error).
  for (double t : thetas) {
    SolverConfig c = base;
    c.tree.theta = std::isnan(t) ? kThetaParticleWalk : t;
    validate(c);
  }
  for (double a : alphas) {
    SolverConfig c = base;
    c.tree.alpha = std::isnan(a) ? kAlphaParticleWalk : a;
    validate(c);
  }
  // One warning per large theta, if a geometric criterion of the list uses it.
  const auto geometric = std::find_if(criteria.begin(), criteria.end(),
                                      [](const auto& c) { return c && *c != Criterion::relative; });
  for (double t : thetas)
    if (!std::isnan(t) && geometric != criteria.end()) warn_large_theta(t, **geometric);
  // A theta list without a geometric criterion gives no theta scan (the default criterion is
  // the relative one, whose rows do not depend on theta beyond its first pass): say so.
  if (geometric == criteria.end() && r.count("theta") &&
      std::any_of(thetas.begin(), thetas.end(), [](double t) { return !std::isnan(t); }))
    std::cerr << "hoshi accuracy: note: --theta " << r["theta"].as<std::string>()
              << " is unused here ("
              << (std::any_of(criteria.begin(), criteria.end(), [](const auto& c) { return !c; })
                      ? "--criterion auto is relative"
                      : "--criterion relative")
              << ", whose rows follow --alpha; its bootstrap pass runs at the walk's default "
                 "theta); for a theta scan add --criterion barnes94 (or bh, bmax)\n";
  // Likewise --alpha without the relative criterion (auto is relative): it was ignored unsaid.
  const bool relative = std::any_of(criteria.begin(), criteria.end(),
                                    [](const auto& c) { return !c || *c == Criterion::relative; });
  if (!relative && r.count("alpha") &&
      std::any_of(alphas.begin(), alphas.end(), [](double a) { return !std::isnan(a); }))
    std::cerr << "hoshi accuracy: note: --alpha " << r["alpha"].as<std::string>()
              << " is unused here (it is the relative criterion's tolerance); add --criterion "
                 "relative to the list for its rows\n";
  std::vector<int> orders;
  for (const auto& s : parse_string_list(r["order"].as<std::string>(), "--order")) {
    if (s != "1" && s != "2")
      throw std::invalid_argument("invalid --order value '" + s + "' (expected 1 or 2)");
    orders.push_back(s[0] - '0');
  }
  // "auto" in the walk list: the backend's default walk (resolve_auto), as std::nullopt.
  std::vector<std::optional<WalkKind>> walks;
  for (const auto& s : parse_string_list(r["walk"].as<std::string>(), "--walk"))
    walks.push_back(s == "auto" ? std::nullopt : std::optional(parse_walk(s)));
  if (criteria.empty() || orders.empty() || walks.empty())
    throw std::invalid_argument("--criterion, --order and --walk need at least one value");
  const std::string targets_text = r["targets"].as<std::string>();
  const std::size_t k = parse_size(targets_text, "--targets", 0);  // 0 (or 00, 0e3): all
  std::string csv_path;
  if (r.count("csv")) {
    csv_path = r["csv"].as<std::string>();
    require_new_output(csv_path, flag(r, "overwrite"), "--csv", {r["ic"].as<std::string>()});
  }
  std::string errors_path;
  if (r.count("errors")) {
    errors_path = r["errors"].as<std::string>();
    require_new_output(errors_path, flag(r, "overwrite"), "--errors", {r["ic"].as<std::string>()});
    // Absolute first: weakly_canonical of names that do not exist yet kept "x.csv" relative
    // and made "./x.csv" absolute, so the two spellings of one file passed.
    if (!csv_path.empty() &&
        std::filesystem::weakly_canonical(std::filesystem::absolute(errors_path)) ==
            std::filesystem::weakly_canonical(std::filesystem::absolute(csv_path)))
      throw std::invalid_argument("--errors " + errors_path + ": the same file as --csv");
  }
  apply_threads(r);
  // --errors: rows streamed into a temporary beside the file (created now, so that an
  // unwritable place fails before the work), renamed into place at the end, removed if
  // anything fails before.
  std::unique_ptr<io::TemporaryOutput> errors;
  if (!errors_path.empty()) {
    errors = std::make_unique<io::TemporaryOutput>(errors_path, "--errors");
    errors->out << "criterion,order,walk,theta,alpha,id,r,a_ref,acc_err,pot_err\n";
  }

  io::SnapshotInfo info;
  // --seed also draws the targets: with a particle file too.
  ParticleSet p = initial_conditions(r, &info, /*seed_beyond_models=*/true);
  // A file's recorded G (as hoshi forces takes it), unless -G is given: the relative errors do
  // not depend on it, --errors' a_ref does (it came out 43007 times small for galaxy units).
  if (!given_G(r) && info.G > 0) base.G = info.G;
  const std::string ic = r["ic"].as<std::string>();
  // A run's snapshot: the softening it ran with (the default 0 measured other forces than the
  // run's: a spline eps 0.05 checkpoint's p999 4.4e-4 instead of 5.5e-4), as analyze --bound.
  if (!is_model(ic))
    take_recorded_softening_and_say("accuracy", r, info.parameters, ic, base,
                                    info.gadget_softening);
  if (!is_model(ic)) require_distinct_positions_in(p, base.eps, ic);  // before the table's header
  const auto targets = sample_targets(p.size(), k, seed_option(r));
  if (targets.size() < 1000)
    std::cerr << "hoshi accuracy: note: " << targets.size() << " targets: err_p999"
              << (targets.size() < 100 ? " and err_p99 are" : " is")
              << " the largest error (nearest rank; 1000 targets resolve p999, 100 p99)\n";
  ForceArrays ref;
  direct_reference(p, base.G, base.softening, base.eps, targets, ref);
  std::vector<double> target_r, target_a;  // --errors: r from the centre of mass, |a_ref|
  if (errors) {
    const Vec3 com = centre_of_mass(p);
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const std::size_t i = targets[t];
      target_r.push_back(std::hypot(p.x[i] - com[0], p.y[i] - com[1], p.z[i] - com[2]));
      target_a.push_back(std::hypot(ref.ax[t], ref.ay[t], ref.az[t]));
    }
  }

  std::ostringstream csv;
  // alpha: the relative criterion's tolerance; empty for the geometric criteria.
  // The settings shared by every row last, so that tables of several runs (a softening scan)
  // can be concatenated and told apart.
  csv << "criterion,order,walk,theta,alpha,err_p50,err_p90,err_p99,err_p999,err_max,pot_err_p50,"
         "pot_err_p99,pp_per_particle,pc_per_particle,seconds,n,targets,softening,kernel,G,"
         "n_leaf,n_group,local_ratio,backend\n";
  std::printf("%-9s %5s %-8s %6s %7s %10s %10s %10s %10s %10s %11s %11s %9s %9s %9s\n", "criterion",
              "order", "walk", "theta", "alpha", "err_p50", "err_p90", "err_p99", "err_p999",
              "err_max", "pot_err_p50", "pot_err_p99", "pp/part", "pc/part", "seconds");
  const double n = static_cast<double>(p.size());
  // The settings measured so far, "auto" resolved: a list naming one setting twice ("--alpha
  // auto,0.02", "--walk auto,group") gives one row, and a note (the rows were repeated).
  std::set<std::tuple<Criterion, int, WalkKind, double>> done;
  for (const std::optional<Criterion>& crit_opt : criteria)
    for (int order : orders)
      for (const std::optional<WalkKind>& walk_opt : walks)
        for (std::size_t kt = 0; kt < thetas.size(); ++kt) {
          // Until make_solver resolves "auto" for the backend: the CPU's choice.
          const WalkKind walk = walk_opt ? *walk_opt : WalkKind::group;
          const Criterion crit = crit_opt ? *crit_opt : default_criterion(base.backend, walk);
          // The relative criterion does not use theta beyond its bootstrap pass, which runs at
          // the walk's default theta: one row per alpha, not one per theta (the rows repeated).
          const bool relative = crit == Criterion::relative;
          if (relative && kt > 0) continue;
          const double theta = relative ? std::nan("") : thetas[kt];
          // --alpha varies the relative criterion's rows only.
          const std::size_t n_alpha = crit == Criterion::relative ? alphas.size() : 1;
          for (std::size_t ka = 0; ka < n_alpha; ++ka) {
            SolverConfig c = base;
            c.tree.criterion = crit;
            c.tree.criterion_auto = !crit_opt;  // make_solver resolves it for the backend
            c.tree.alpha_auto = std::isnan(alphas[ka]);
            c.tree.alpha = c.tree.alpha_auto ? default_alpha(base.backend, walk) : alphas[ka];
            c.tree.order = order;
            c.tree.walk = walk;
            c.tree.walk_auto = !walk_opt;           // make_solver resolves it for the backend
            c.tree.theta_auto = std::isnan(theta);  // make_solver resolves it for the backend
            c.tree.theta = std::isnan(theta) ? default_theta(base.backend, walk) : theta;
            auto solver = make_solver(c, p.size());
            // The settings the solver uses ("auto" resolved for the backend it runs on).
            const SolverConfig used =
                resolve_auto(c, solver->backend() == "cuda" ? Backend::cuda : Backend::cpu);
            const bool rel = used.tree.criterion == Criterion::relative;
            if (!done.emplace(used.tree.criterion, order, used.tree.walk,
                              rel ? used.tree.alpha : used.tree.theta)
                     .second) {
              std::cerr << "hoshi accuracy: note: " << to_string(used.tree.criterion) << ", order "
                        << order << ", walk " << to_string(used.tree.walk) << ", "
                        << (rel ? "alpha " : "theta ")
                        << number_text(rel ? used.tree.alpha : used.tree.theta)
                        << " is in the table already (named twice, or an 'auto' resolved to it): "
                           "one row\n";
              continue;
            }
            ParticleSet q = p;
            ForceStats st;
            try {
              st = solver->compute(q);
              // The first call bootstraps |a_old| (barnes94, then relative); the row is the
              // next, with the relative evaluation's |a_old|, as in a run's steps.
              if (crit == Criterion::relative) st = solver->compute(q);
            } catch (const std::invalid_argument& e) {
              // A force beyond float32, coincident particles: about the file's particles, and
              // this row's settings. accuracy measures the float32 tree: the solvers' advice of
              // --solver direct --precision double is no option here (an audit).
              std::string what = e.what();
              const std::string other = " or --solver direct --precision double";
              if (const auto at = what.find(other); at != std::string::npos)
                what.erase(at, other.size());
              what += " [the row " + to_string(used.tree.criterion) + ", order " +
                      std::to_string(order) + ", walk " + to_string(used.tree.walk) + ", " +
                      (rel ? "alpha " : "theta ") +
                      number_text(rel ? used.tree.alpha : used.tree.theta) + "]";
              throw std::invalid_argument(is_model(ic) ? what : ic + ": " + what);
            }
            TargetErrors te = target_errors(q, targets, ref);
            // The shortest exact text: "%g" gave 0.1234567 and 0.1234568 one label, whose
            // --errors rows then merged.
            const std::string alpha_text = relative ? number_text(used.tree.alpha) : "";
            const std::string theta_string = relative ? "" : number_text(used.tree.theta);
            const char* alpha = alpha_text.c_str();
            const char* theta_text = theta_string.c_str();
            if (errors) {
              char setting[160];
              std::snprintf(setting, sizeof setting, "%s,%d,%s,%s,%s", to_string(crit).c_str(),
                            order, to_string(used.tree.walk).c_str(), theta_text, alpha);
              for (std::size_t t = 0; t < targets.size(); ++t) {
                char row[256];
                std::snprintf(row, sizeof row, "%s,%llu,%.6e,%.6e,%.4e,%.4e\n", setting,
                              static_cast<unsigned long long>(p.id[targets[t]]), target_r[t],
                              target_a[t], te.acc[t], te.pot[t]);
                errors->out << row;
              }
            }
            const ForceErrors e = error_percentiles(std::move(te));
            char line[512];
            std::snprintf(line, sizeof line,
                          "%s,%d,%s,%s,%s,%.4e,%.4e,%.4e,%.4e,%.4e,%.4e,%.4e,%.1f,%.1f,%.4f",
                          to_string(crit).c_str(), order, to_string(used.tree.walk).c_str(),
                          theta_text, alpha, e.p50, e.p90, e.p99, e.p999, e.max, e.pot_p50,
                          e.pot_p99, st.pp / n, st.pc / n, st.total_seconds);
            csv << line << "," << p.size() << "," << targets.size() << "," << number_text(used.eps)
                << "," << to_string(used.softening) << "," << number_text(used.G) << ","
                << used.tree.n_leaf << "," << used.tree.n_group << ","
                << number_text(used.tree.local_ratio) << "," << solver->backend() << "\n";
            std::printf(
                "%-9s %5d %-8s %6s %7s %10.3e %10.3e %10.3e %10.3e %10.3e %11.3e %11.3e %9.1f "
                "%9.1f %9.4f\n",
                to_string(crit).c_str(), order, to_string(used.tree.walk).c_str(),
                *theta_text ? theta_text : "-", *alpha ? alpha : "-", e.p50, e.p90, e.p99, e.p999,
                e.max, e.pot_p50, e.pot_p99, st.pp / n, st.pc / n, st.total_seconds);
            std::fflush(stdout);
          }
        }
  // Both files written and flushed before either replaces its file: on a full disk the table
  // came out empty with status 0 (checked before its stream was flushed), and a failing
  // --errors left a new --csv behind.
  std::unique_ptr<io::TemporaryOutput> table;
  if (!csv_path.empty()) {
    table = std::make_unique<io::TemporaryOutput>(csv_path, "--csv");
    table->out << csv.str();
  }
  for (io::TemporaryOutput* t : {table.get(), errors.get()})
    if (t) t->check();
  if (errors) errors->commit();
  if (table) table->commit();
  return 0;
}

}  // namespace hoshi::cli
