// hoshi render: a PNG of a snapshot's projected surface density.
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_guard.hpp"
#include "core/number_text.hpp"
#include "io/render.hpp"
#include "io/snapshot_io.hpp"
#include "io/units.hpp"

namespace hoshi::cli {

int cmd_render(int argc, char** argv) {
  cxxopts::Options o("hoshi render",
                     "Draw the projected surface density of a snapshot (HDF5, tipsy, Gadget or "
                     "CSV) on a log scale with a colour map and a scale bar, as PNG, centred on "
                     "the centre of mass. Colours are relative to the brightest pixel.");
  o.add_options()("snapshot", "snapshot file", cxxopts::value<std::string>())(
      "out", "output PNG file", cxxopts::value<std::string>())(
      "axis", "projection axis: x, y or z; the image shows (right, up) = (y, z), (z, x) or (x, y)",
      cxxopts::value<std::string>()->default_value("z"))(
      "extent",
      "side of the field of view in code units (0: automatic, 1.1 x twice the projected "
      "half-side that holds 98% of the particles)",
      cxxopts::value<std::string>()->default_value("0"))(
      "resolution", "pixels per side", cxxopts::value<std::string>()->default_value("1024"))(
      "decades", "dynamic range of the log scale",
      cxxopts::value<std::string>()->default_value("4"))(
      "ids",
      "draw only particles with BEGIN <= id < END, given as BEGIN:END (e.g. a galaxy model's "
      "disk: halo, then disk, then bulge ids; the field and centre are theirs)",
      cxxopts::value<std::string>())("overwrite", "replace an existing output file");
  o.parse_positional({"snapshot"});
  o.positional_help("SNAPSHOT");
  auto r = parse_options(o, argc, argv);
  if (!r.count("snapshot"))
    throw std::invalid_argument("missing SNAPSHOT (see hoshi render --help)");
  if (!r.count("out")) throw std::invalid_argument("missing --out IMAGE.png");
  const std::string out = r["out"].as<std::string>();
  const std::string ext = std::filesystem::path(out).extension().string();
  if (ext != ".png" && ext != ".PNG")
    throw std::invalid_argument("--out " + out + ": the image is a PNG (name it *.png)");
  require_new_output(out, flag(r, "overwrite"), "--out", {r["snapshot"].as<std::string>()});
  io::RenderOptions ro;
  ro.axis = io::parse_axis(r["axis"].as<std::string>());
  ro.extent = number(r, "extent");
  ro.resolution = integer(r, "resolution");
  ro.decades = number(r, "decades");
  if (ro.extent < 0)
    throw std::invalid_argument("option --extent: value " + number_text(ro.extent) +
                                " (must be >= 0)");
  if (!(ro.decades > 0))
    throw std::invalid_argument("option --decades: value " + number_text(ro.decades) +
                                " (must be > 0)");
  io::check_render_options(ro, "--");  // before the snapshot is read
  const std::optional<IdRange> ids = id_range_option(r);
  io::LoadedSnapshot s = io::load_snapshot(r["snapshot"].as<std::string>());
  if (!s.note.empty())
    std::cerr << "hoshi render: " << r["snapshot"].as<std::string>() << ": " << s.note << "\n";
  ro.units = s.units;
  // One component (a galaxy's disk, whose field the halo's made 4000 kpc wide).
  if (ids) s.particles = select_ids(s.particles, *ids, r["snapshot"].as<std::string>());
  // The automatic field is render_surface_density's (its errors name it, not a given --extent).
  const io::Image im = io::render_surface_density(s.particles, ro);
  io::write_png(out, im);
  ro.extent = im.extent;
  // In kpc where the file's units are physical (galaxy units: it said "(code units)").
  std::cerr << "hoshi render: " << s.particles.size() << " particles, field "
            << (ro.units.physical ? ro.extent * ro.units.length_cm / io::kKpcInCm : ro.extent)
            << (ro.units.physical ? " kpc, " : " (code units), ") << ro.resolution << "x"
            << ro.resolution << " -> " << out << "\n";
  return 0;
}

}  // namespace hoshi::cli
