// hoshi run: a simulation from initial conditions to --t-end.
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "io/atomic_file.hpp"
#include "run/simulation.hpp"

namespace hoshi::cli {

int cmd_run(int argc, char** argv) {
  cxxopts::Options o("hoshi run",
                     "Run a collisionless N-body simulation with the leapfrog (kick-drift-kick) "
                     "integrator. Defaults: a 16384-particle Plummer sphere in Henon units "
                     "(G = M = 1, E = -1/4) for 10 time units (about 3.5 crossing times).");
  o.add_options("run")("t-end", "simulated end time",
                       cxxopts::value<std::string>()->default_value("10"))(
      "dt", "fixed time step", cxxopts::value<std::string>()->default_value("0.0078125"))(
      "eta", "> 0: global adaptive step dt = eta sqrt(eps/max|a|) (not symplectic)",
      cxxopts::value<std::string>()->default_value("0"))(
      "out", "output directory (energy.csv)",
      cxxopts::value<std::string>()->default_value("hoshi_out"))(
      "output-every", "diagnostics interval in simulated time",
      cxxopts::value<std::string>()->default_value("0.25"))(
      "overwrite", "reuse an existing non-empty output directory")(
      "quiet", "no per-output lines on the terminal");
  add_ic_options(o);
  add_solver_options(o, "0.01");
  add_threads_option(o);
  auto r = parse_options(o, argc, argv);

  RunConfig cfg;
  cfg.t_end = number(r, "t-end");
  cfg.dt = number(r, "dt");
  cfg.eta = number(r, "eta");
  cfg.output_every = number(r, "output-every");
  cfg.out_dir = r["out"].as<std::string>();
  cfg.quiet = r.count("quiet") > 0;
  cfg.solver = solver_config(r);
  validate(cfg);
  const int threads = apply_threads(r);
  ParticleSet p = initial_conditions(r);
  make_solver(cfg.solver, p.size());  // fail on an impossible solver before touching --out
  io::prepare_output_dir(cfg.out_dir, r.count("overwrite") > 0);

  std::cout << "hoshi run: " << p.size() << " particles, t_end " << cfg.t_end << ", "
            << (cfg.eta > 0 ? "adaptive dt, eta " + std::to_string(cfg.eta)
                            : "dt " + std::to_string(cfg.dt))
            << ", softening " << cfg.solver.eps << " (" << to_string(cfg.solver.softening) << "), "
            << threads << " threads, output " << cfg.out_dir << "/\n";
  const RunResult res = run_simulation(p, cfg, &std::cout);

  std::cout << "\nsolver " << res.solver_name << " (" << res.backend_name << "), " << res.steps
            << " steps to t = " << res.time << "\n";
  std::cout << "relative energy error " << res.rel_energy_error << "\n";
  std::cout << "time by phase (s):\n";
  for (const auto& [k, v] : res.seconds) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "  %-10s %10.3f\n", k.c_str(), v);
    std::cout << buf;
  }
  return 0;
}

}  // namespace hoshi::cli
