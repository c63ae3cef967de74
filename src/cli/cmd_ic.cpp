// hoshi ic: write initial conditions to a file.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_guard.hpp"
#include "io/particle_io.hpp"

namespace hoshi::cli {

int cmd_ic(int argc, char** argv) {
  cxxopts::Options o("hoshi ic", "Write initial conditions (centre-of-mass frame) to a file.");
  o.add_options()(
      "out",
      "output file, format from the extension: .hdf5 (.h5 .hdf), .tipsy (.std .bin), .gadget "
      "(.g1 .g2 .dat) or .csv",
      cxxopts::value<std::string>())("overwrite", "replace an existing output file");
  add_ic_options(o);
  auto r = parse_options(o, argc, argv);
  if (!r.count("out")) throw std::invalid_argument("missing --out FILE");
  const std::string out = r["out"].as<std::string>();
  require_new_output(out, flag(r, "overwrite"));
  // A particle file keeps its time and units (a conversion between formats relabelled them
  // as henon at t = 0 without converting the values).
  io::SnapshotInfo info;
  const ParticleSet p = initial_conditions(r, &info);
  io::write_particles(out, p, info);
  std::cerr << "hoshi ic: wrote " << p.size() << " particles to " << out << "\n";
  return 0;
}

}  // namespace hoshi::cli
