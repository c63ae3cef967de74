// hoshi ic: write initial conditions to a file.
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_guard.hpp"
#include "io/particle_io.hpp"

namespace hoshi::cli {

int cmd_ic(int argc, char** argv) {
  cxxopts::Options o("hoshi ic",
                     "Write initial conditions to a file: a model (in its centre-of-mass frame) or "
                     "a particle file converted to another format (its time, units, G and "
                     "parameters kept; a file without units stays without them).");
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
  // A tipsy file's units go to OUT.param beside it, which must not be replaced silently either.
  std::error_code ec;
  if (io::format_from_extension(out) == io::SnapshotFormat::tipsy && !flag(r, "overwrite") &&
      std::filesystem::exists(out + ".param", ec))
    throw std::invalid_argument("--out " + out + ": " + out +
                                ".param exists (the tipsy file's units; use --overwrite to "
                                "replace it)");
  // A particle file keeps its time, units, G and parameters (a conversion between formats
  // relabelled them as henon at t = 0 without converting the values); one without units is
  // written without them (not as henon), so that a run takes it in its own units.
  io::SnapshotInfo info;
  const ParticleSet p = initial_conditions(r, &info);
  io::write_particles(out, p, info);
  std::cerr << "hoshi ic: wrote " << p.size() << " particles to " << out << "\n";
  return 0;
}

}  // namespace hoshi::cli
