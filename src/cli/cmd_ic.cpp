// hoshi ic: write initial conditions to a file.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <variant>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_guard.hpp"
#include "core/checks.hpp"
#include "core/number_text.hpp"
#include "io/particle_io.hpp"
#include "io/snapshot_io.hpp"
#include "io/tipsy.hpp"
#include "io/units.hpp"

namespace hoshi::cli {
namespace {

// Unit-dependent entries of a file's /Parameters, rewritten from the new units and G.
bool unit_parameter(const std::string& key) {
  for (const char* k : {"G", "units", "GravityConstantInternal", "UnitLength_in_cm",
                        "UnitMass_in_g", "UnitVelocity_in_cm_per_s", "Time_GYR"})
    if (key == k) return true;
  return false;
}

// --units and -G for a particle file: a file with units is converted to --units (its time and
// G with it); one without is declared to be in them. -G declares the G of a file that records
// none; a file's own G cannot be replaced (that would change its dynamics, not its labels).
void set_file_units(const cxxopts::ParseResult& r, ParticleSet& p, io::SnapshotInfo& info) {
  const std::string ic = r["ic"].as<std::string>();
  bool changed = false;
  if (r.count("units")) {
    const io::UnitSystem to = io::parse_units(r["units"].as<std::string>());
    if (info.units_known) {
      // The recorded softening is a length too (a Gadget-4 file's in Mpc, converted to kpc).
      const double l = info.units.length_cm / to.length_cm;
      for (auto& [key, value] : info.parameters)
        if (const auto eps = io::to_number(value); key == "softening" && eps) value = *eps * l;
      info.time *= io::convert_units(p, info.units, to);
      info.G = io::convert_G(info.G > 0 ? info.G : info.units.G(), info.units, to);
    }  // a file without units keeps the G it records, if any (else that of the units)
    info.units = to;
    info.units_known = true;
    changed = true;
  }
  if (const auto given = given_G(r)) {
    const double g = *given;
    if (info.G > 0 && std::abs(g - info.G) > 1e-9 * info.G)
      throw std::invalid_argument("-G " + r["G"].as<std::string>() + " with --ic " + ic +
                                  ": the file records G = " + number_text(info.G) +
                                  " (-G declares the G of a file that records none)");
    info.G = g;
    changed = true;
  }
  if (changed)
    info.parameters.erase(std::remove_if(info.parameters.begin(), info.parameters.end(),
                                         [](const auto& kv) { return unit_parameter(kv.first); }),
                          info.parameters.end());
}

}  // namespace

int cmd_ic(int argc, char** argv) {
  cxxopts::Options o("hoshi ic",
                     "Write initial conditions to a file: a model (in its centre-of-mass frame) or "
                     "a particle file converted to another format (its time, units, G and "
                     "parameters kept; a file without units stays without them; Gadget binary "
                     "and CSV cannot record units or G, and a note says how to read such a "
                     "file back).");
  o.add_options()(
      "out",
      "output file, format from the extension: .hdf5 (.h5 .hdf), .tipsy (.std .bin), .gadget "
      "(.g1 .g2 .dat) or .csv",
      cxxopts::value<std::string>())("overwrite", "replace an existing output file")(
      "renumber-ids",
      "give the particles ids 0 .. N-1 in file order, as the models have them (for a format or "
      "code that needs small ids: Gadget binary with 32-bit ids)")(
      "units",
      "unit system: henon (G = 1) or galaxy (kpc, km/s, 1e10 Msun, G = 43007.1). A model is "
      "made in it as hoshi run --units makes it; a file with units is converted to it, a file "
      "without units is declared to be in it (default: henon for a model, a file's own)",
      cxxopts::value<std::string>())(
      "G",
      "gravitational constant, 1e-30 to 1e30 (auto: a model's is the unit system's, a file's "
      "the one it "
      "records; given, a model's velocities are scaled to it as hoshi run does, and a file "
      "that records no G is declared to have it)",
      cxxopts::value<std::string>()->default_value("auto"));
  add_write_options(o);
  add_ic_options(o);
  auto r = parse_options(o, argc, argv);
  if (!r.count("out")) throw std::invalid_argument("missing --out FILE");
  given_G(r);                                                           // a bad -G before any work
  if (r.count("units")) io::parse_units(r["units"].as<std::string>());  // before any work
  const io::WriteOptions write = write_options(r);
  const std::string out = r["out"].as<std::string>();
  require_new_output(out, flag(r, "overwrite"));
  io::output_format(out);  // an unknown extension before the model is made
  // A tipsy file's units go to OUT.param beside it, which must not be replaced silently either.
  std::error_code ec;
  if (io::format_from_extension(out) == io::SnapshotFormat::tipsy) {
    // Replaced, or removed when the particles have no units (write_tipsy); never the input.
    const std::string ic = r["ic"].as<std::string>();
    for (const std::string& param : {out + ".param", io::tipsy_param_path(out)})
      if (std::filesystem::equivalent(param, ic, ec))
        throw std::invalid_argument("--out " + out + ": " + param +
                                    " (the tipsy file's units) is the input file " + ic +
                                    " (give another name; it would replace the input)");
    for (const std::string& param : {out + ".param", io::tipsy_param_path(out)})
      if (!flag(r, "overwrite") && std::filesystem::exists(param, ec))
        throw std::invalid_argument("--out " + out + ": " + param +
                                    " exists (the tipsy file's units; use --overwrite to "
                                    "replace it)");
  }
  // A particle file keeps its time, units, G and parameters (a conversion between formats
  // relabelled them as henon at t = 0 without converting the values); one without units is
  // written without them (not as henon), so that a run takes it in its own units.
  io::SnapshotInfo info;
  ParticleSet p = initial_conditions(r, &info);
  const bool model = is_model(r["ic"].as<std::string>());
  if (model) {
    info.units =
        r.count("units") ? io::parse_units(r["units"].as<std::string>()) : io::units_henon();
    info.G = given_G(r).value_or(info.units.G());
    scale_velocities_to_G(p, info.G);
    // What made the particles, as a run's snapshots record it (HDF5 /Parameters): the model,
    // its N and seed and every effective model parameter (model.KEY). It recorded none.
    info.parameters.emplace_back("ic", r["ic"].as<std::string>());
    info.parameters.emplace_back("particles", static_cast<std::int64_t>(p.size()));
    const std::uint64_t seed = seed_option(r);
    if (seed <= static_cast<std::uint64_t>(INT64_MAX))
      info.parameters.emplace_back("seed", static_cast<std::int64_t>(seed));
    else
      info.parameters.emplace_back("seed", std::to_string(seed));
    for (const auto& [k, v] : model_parameters(r)) {
      if (const auto* d = std::get_if<double>(&v))
        info.parameters.emplace_back(k, *d);
      else
        info.parameters.emplace_back(k, std::get<std::string>(v));
    }
  } else {
    // A Gadget-4 or AREPO run's one softening, recorded as hoshi records a run's (softening and
    // kernel): the converted file holds every type as PartType1, which its classes no longer
    // tell apart.
    if (const auto& g = info.gadget_softening;
        g && g->eps && !io::find_param(info.parameters, "softening")) {
      info.parameters.emplace_back("softening", *g->eps);
      if (!io::find_param(info.parameters, "kernel"))
        info.parameters.emplace_back("kernel", std::string("spline"));
    } else if (g && !g->eps) {
      std::cerr << "hoshi ic: note: "
                << no_recorded_softening(r["ic"].as<std::string>(), info.gadget_softening)
                << ": the converted file records none\n";
    }
    set_file_units(r, p, info);
  }
  if (flag(r, "renumber-ids"))
    for (std::size_t i = 0; i < p.size(); ++i) p.id[i] = i;
  // A conversion that leaves double's range (masses of 1e305 in galaxy units to henon: inf)
  // wrote a file that could not be read back: refused before anything is written.
  const std::string converted =
      r["ic"].as<std::string>() +
      (r.count("units") ? " in --units " + r["units"].as<std::string>() : std::string());
  require_valid_particles(p, converted);
  if (std::isfinite(info.G) && info.G > 0)
    require_G_in_range(info.G, converted + ": field G: value " + number_text(info.G));
  if (!std::isfinite(info.time) || !std::isfinite(info.G))
    throw std::invalid_argument(converted + ": field " +
                                (std::isfinite(info.time)
                                     ? "G: value " + number_text(info.G)
                                     : "time: value " + number_text(info.time)) +
                                " (beyond double's range)");
  io::write_particles(out, p, info, write);
  std::cerr << "hoshi ic: wrote " << p.size() << " particles to " << out << "\n";
  const auto format = io::format_from_extension(out);
  const std::string lost = format ? io::unrecorded_units(*format, info) : "";
  if (!lost.empty())
    std::cerr << "hoshi ic: note: " << out << " (" << io::to_string(*format)
              << ") cannot record units or G: " << lost << "\n";
  const std::string other_G = format ? io::units_imply_another_G(*format, info) : "";
  if (!other_G.empty()) std::cerr << "hoshi ic: note: " << out << ": " << other_G << "\n";
  if (format != io::SnapshotFormat::gadget)
    for (const char* key : {"gadget-precision", "gadget-ids"})
      if (r.count(key))
        std::cerr << "hoshi ic: note: --" << key << " unused: " << out << " is not Gadget binary\n";
  return 0;
}

}  // namespace hoshi::cli
