#include "run/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <stdexcept>

#include "core/checks.hpp"
#include "integrator/leapfrog.hpp"

namespace hoshi {

void validate(const RunConfig& c) {
  auto bad = [](const char* name, double v, const char* rule) {
    throw std::invalid_argument(std::string("invalid ") + name + " " + std::to_string(v) + " (" +
                                rule + ")");
  };
  if (!(c.t_end >= 0) || !std::isfinite(c.t_end)) bad("--t-end", c.t_end, "must be >= 0");
  if (!(c.dt > 0) || !std::isfinite(c.dt)) bad("--dt", c.dt, "must be > 0");
  if (!(c.eta >= 0) || !std::isfinite(c.eta)) bad("--eta", c.eta, "must be >= 0");
  if (c.eta > 0 && !(c.solver.eps > 0))
    bad("--softening", c.solver.eps, "the adaptive step --eta needs > 0");
  if (!(c.output_every > 0) || !std::isfinite(c.output_every))
    bad("--output-every", c.output_every, "must be > 0");
  validate(c.solver);
}

namespace {

void accumulate(PhaseTimes& into, const ForceStats& st) {
  for (const auto& [k, v] : st.seconds) into[k] += v;
}

class EnergyLog {
 public:
  explicit EnergyLog(const std::string& dir) {
    if (dir.empty()) return;
    path_ = dir + "/energy.csv";
    out_.open(path_, std::ios::trunc);
    if (!out_) throw std::runtime_error("cannot write " + path_);
    out_
        << "step,time,dt,kinetic,potential,total,rel_energy_error,px,py,pz,lx,ly,lz,virial_ratio\n";
  }
  void row(std::size_t step, double t, double dt, const Diagnostics& d, double err) {
    if (!out_.is_open()) return;
    out_ << step << ',' << std::setprecision(17) << t << ',' << dt << ',' << d.kinetic << ','
         << d.potential << ',' << d.total << ',' << err << ',' << d.momentum[0] << ','
         << d.momentum[1] << ',' << d.momentum[2] << ',' << d.angular_momentum[0] << ','
         << d.angular_momentum[1] << ',' << d.angular_momentum[2] << ',' << d.virial_ratio << '\n';
    out_.flush();
    if (!out_) throw std::runtime_error("write to " + path_ + " failed (disk full?)");
  }

 private:
  std::string path_;
  std::ofstream out_;
};

void log_line(std::ostream* log, std::size_t step, double t, const Diagnostics& d, double err,
              double steps_per_s) {
  if (!log) return;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "t = %9.4f  step %7zu  E = %+.8e  dE/E0 = %+.2e  2K/|W| = %.3f  %.1f steps/s", t,
                step, d.total, err, d.virial_ratio, steps_per_s);
  *log << buf << "\n" << std::flush;
}

}  // namespace

RunResult run_simulation(ParticleSet& p, const RunConfig& cfg, std::ostream* log) {
  validate(cfg);
  require_valid_particles(p, "initial conditions");
  auto solver = make_solver(cfg.solver, p.size());
  RunResult res;
  res.solver_name = solver->name();
  res.backend_name = solver->backend();
  Leapfrog lf(*solver);
  EnergyLog elog(cfg.out_dir);
  std::ostream* line = cfg.quiet ? nullptr : log;
  Stopwatch wall;

  accumulate(res.seconds, lf.initialise(p));
  res.initial = diagnostics(p);
  const double e0 = res.initial.total;
  auto rel_err = [&](const Diagnostics& d) {
    return e0 != 0 ? (d.total - e0) / std::abs(e0) : d.total;
  };
  elog.row(0, 0.0, 0.0, res.initial, 0.0);
  log_line(line, 0, 0.0, res.initial, 0.0, 0.0);

  // Fixed step: t = step * dt exactly (no accumulated round-off); output every
  // round(output_every / dt) steps. Adaptive step: clamp to the next output time.
  const double tiny = 1e-12 * std::max(1.0, cfg.t_end);
  double t = 0, next_output = cfg.output_every;
  std::size_t step = 0, steps_at_last_line = 0;
  double wall_at_last_line = 0;
  while (t < cfg.t_end - tiny) {
    double dt;
    if (cfg.eta > 0) {
      dt = adaptive_dt(p, cfg.eta, cfg.solver.eps);
      dt = std::min({dt, next_output - t, cfg.t_end - t});
    } else {
      dt = std::min(cfg.dt, cfg.t_end - t);
    }
    accumulate(res.seconds, lf.step(p, dt));
    ++step;
    t = (cfg.eta > 0 || dt < cfg.dt) ? t + dt : static_cast<double>(step) * cfg.dt;
    if (t >= next_output - tiny || t >= cfg.t_end - tiny) {
      while (next_output <= t + tiny) next_output += cfg.output_every;
      Stopwatch io;
      const Diagnostics d = diagnostics(p);
      elog.row(step, t, dt, d, rel_err(d));
      const double w = wall.seconds();
      log_line(line, step, t, d, rel_err(d),
               (step - steps_at_last_line) / std::max(1e-9, w - wall_at_last_line));
      steps_at_last_line = step;
      wall_at_last_line = w;
      res.seconds["io"] += io.seconds();
    }
  }
  res.steps = step;
  res.time = t;
  res.final = diagnostics(p);
  res.rel_energy_error = rel_err(res.final);
  res.seconds["integrate"] += lf.integrate_seconds();
  res.seconds["total"] = wall.seconds();
  return res;
}

}  // namespace hoshi
