// hoshi forces INPUT --out FILE.csv: one force evaluation, written in input order.
#include <cctype>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_guard.hpp"
#include "core/checks.hpp"
#include "io/csv.hpp"
#include "io/particle_io.hpp"
#include "io/snapshot_io.hpp"

namespace hoshi::cli {

int cmd_forces(int argc, char** argv) {
  cxxopts::Options o("hoshi forces",
                     "One force evaluation on the particles in INPUT, written as CSV with header "
                     "id,ax,ay,az,pot in input order (G included: the file's, as hoshi records "
                     "it, unless -G is given; the softening and kernel likewise, else 0; pot "
                     "excludes the self term). The relative "
                     "criterion takes |a_old| from the file's accelerations when it has them, "
                     "else from a barnes94 pass.");
  o.positional_help("INPUT --out FILE.csv");
  o.add_options()(
      "input",
      "particle file: HDF5, tipsy, Gadget binary or CSV (header id,x,y,z,vx,vy,vz,m, any order)",
      cxxopts::value<std::string>())("out", "output CSV file", cxxopts::value<std::string>())(
      "overwrite", "replace an existing output file");
  add_solver_options(o, "auto", true,
                     "; auto: the softening and kernel INPUT records (a hoshi, Gadget-4 or AREPO "
                     "run's), else 0; a "
                     "length given keeps the recorded kernel unless --kernel is given");
  add_threads_option(o);
  o.parse_positional({"input"});
  auto r = parse_options(o, argc, argv);
  if (!r.count("input"))
    throw std::invalid_argument("missing INPUT file (see hoshi forces --help)");
  if (!r.count("out")) throw std::invalid_argument("missing --out FILE.csv");
  const std::string out = r["out"].as<std::string>();
  require_csv_name(out, "--out", "forces are");
  require_new_output(out, flag(r, "overwrite"), "--out", {r["input"].as<std::string>()});
  SolverConfig cfg = solver_config(r, /*softening_auto=*/true);
  apply_threads(r);
  io::LoadedSnapshot meta;
  ParticleSet p = io::read_particles(r["input"].as<std::string>(), &meta);
  const std::string& note = meta.note;
  if (!note.empty())
    std::cerr << "hoshi forces: " << r["input"].as<std::string>() << ": " << note << "\n";
  // The G the particles were made with, unless -G is given. The relative criterion takes
  // |a_old| from the file's accelerations when it has them (a hoshi snapshot): they were
  // computed with the file's G, so another -G scales them (they misjudged every cell by the
  // ratio of the two).
  const double file_G = io::snapshot_G(meta);
  if (!given_G(r)) cfg.G = file_G;
  // The softening and kernel the run recorded, unless --softening is given, as accuracy and
  // analyze --bound take them (forces took the file's G but eps 0: a run's snapshot got
  // unsoftened forces unless its --softening was passed again).
  const std::string& input = r["input"].as<std::string>();
  take_recorded_softening_and_say("forces", r, meta.parameters, input, cfg, meta.gadget_softening);
  if (cfg.G != file_G && file_G > 0)
    for (auto* a : {&p.ax, &p.ay, &p.az})
      for (double& v : *a) v *= cfg.G / file_G;
  auto solver = make_solver(cfg, p.size());
  if (const std::string unused = unused_tree_options(r, cfg, p.size()); !unused.empty())
    std::cerr << "hoshi forces: note: " << unused << "\n";
  ForceStats st;
  try {
    st = solver->compute(p);
  } catch (const std::invalid_argument& e) {
    // Coincident particles with --softening 0, a force beyond float32: about INPUT's particles.
    throw std::invalid_argument(r["input"].as<std::string>() + ": " + e.what());
  }
  io::write_forces_csv(out, p);
  std::cerr << "hoshi forces: " << p.size() << " particles, solver " << solver->name() << " ("
            << solver->backend() << "), " << st.total_seconds << " s, wrote " << out << "\n";
  return 0;
}

}  // namespace hoshi::cli
