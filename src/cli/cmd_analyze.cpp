// hoshi analyze SNAPSHOT...: Lagrangian radii, bound mass and profiles of particle snapshots.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>
#include <variant>
#include <vector>

#include "analysis/analysis.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/output_guard.hpp"
#include "core/number_text.hpp"
#include "io/atomic_file.hpp"
#include "io/render.hpp"
#include "io/snapshot_io.hpp"
#include "io/tipsy.hpp"
#include "io/units.hpp"

namespace hoshi::cli {

namespace {
// A snapshot's units for analyze's table, with the G its vcirc and bound mass use (the file's,
// or -G): "1 kpc, 1 km/s, 1e+10 Msun; time unit 0.9778 Gyr; G = 43007.1", "Henon (G = 2)".
std::string units_text(const io::LoadedSnapshot& s, double G) {
  const auto g = [](double v, const char* format) {
    char b[32];
    std::snprintf(b, sizeof b, format, v);
    return std::string(b);
  };
  const std::string G_text = "G = " + g(G, "%.6g");
  if (!s.units_known) return "the file's own (it records none); " + G_text;
  if (!s.units.physical) return "Henon (" + G_text + ")";
  return g(s.units.length_cm / io::kKpcInCm, "%.4g") + " kpc, " +
         g(s.units.velocity_cm_s / 1e5, "%.4g") + " km/s, " +
         g(s.units.mass_g / io::kSolarMassInG, "%.4g") + " Msun; time unit " +
         g(s.units.time_s() / io::kGyrInS, "%.4g") + " Gyr; " + G_text;
}

// The profile files' base name of each snapshot: its stem (run/snapshot_010.hdf5:
// snapshot_010), and where two snapshots share a stem, as many of their parent directories as
// tell them apart, joined by '_' (run1_snapshot_010, run2_snapshot_010); files of one
// directory and stem by their whole names, all of them (run/s.tipsy, run/s.gadget, run/s.csv:
// s_tipsy, s_gadget, s_csv; the third was named run_s once the first two differed), with
// their directories as above where another directory has the stem too (pa_s_csv, pa_s_tipsy,
// pb_s). The same file given twice is refused.
std::vector<std::string> profile_names(const std::vector<std::string>& files) {
  namespace fs = std::filesystem;
  std::vector<std::vector<std::string>> parts(files.size());  // stem, parent, grandparent, ...
  std::vector<fs::path> paths;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const fs::path p = fs::absolute(fs::path(files[i])).lexically_normal();
    paths.push_back(p);
    parts[i].push_back(p.stem().string());
    for (fs::path d = p.parent_path(); d.has_relative_path(); d = d.parent_path())
      parts[i].push_back(d.filename().string());
  }
  const auto whole = [&](std::size_t k) {
    std::string s = paths[k].filename().string();
    std::replace(s.begin(), s.end(), '.', '_');
    return s;
  };
  std::vector<std::string> stems;
  for (const auto& q : parts) stems.push_back(q[0]);
  // (Not one file under two names, run/s.hdf5 and a link run/s.h5 to it: refused below as
  // given twice.)
  for (std::size_t i = 0; i < files.size(); ++i)
    for (std::size_t j = 0; j < files.size(); ++j) {
      std::error_code ec;
      if (i != j && stems[i] == stems[j] && paths[i].parent_path() == paths[j].parent_path() &&
          paths[i] != paths[j] && !fs::equivalent(paths[i], paths[j], ec))
        parts[i][0] = whole(i);
    }
  std::vector<std::size_t> depth(files.size(), 1);
  // Every snapshot whose stem one in another directory shares (or whose name another one has)
  // gets its parent directory at least (with three snapshot_000 of three runs, the third kept
  // the bare stem once the first two differed; pb/s.tipsy beside pa/s.csv and pa/s.tipsy kept
  // it once those two had their whole names).
  for (std::size_t i = 0; i < files.size(); ++i)
    for (std::size_t j = 0; j < files.size(); ++j)
      if (i != j && parts[i].size() > 1 &&
          ((stems[i] == stems[j] && paths[i].parent_path() != paths[j].parent_path()) ||
           parts[i][0] == parts[j][0]))
        depth[i] = 2;
  const auto name = [&](std::size_t i) {
    std::string s = parts[i][0];
    for (std::size_t k = 1; k < depth[i]; ++k) s = parts[i][k] + "_" + s;
    return s;
  };
  for (bool again = true; again;) {
    again = false;
    for (std::size_t i = 0; i < files.size(); ++i)
      for (std::size_t j = i + 1; j < files.size(); ++j) {
        if (name(i) != name(j)) continue;
        const bool more_i = depth[i] < parts[i].size(), more_j = depth[j] < parts[j].size();
        if (!more_i && !more_j) {
          std::error_code ec;
          if (paths[i] == paths[j] || fs::equivalent(paths[i], paths[j], ec) ||
              whole(i) == whole(j) || parts[i][0] == whole(i))
            throw std::invalid_argument(
                "--profiles: snapshot " + files[j] +
                (paths[i] == paths[j] || fs::equivalent(paths[i], paths[j], ec)
                     ? " is given twice (its profiles would overwrite each other)"
                     : " and " + files[i] + " would write profiles under one name"));
          parts[i][0] = whole(i);
          parts[j][0] = whole(j);
          depth[i] = depth[j] = 1;  // the whole names may tell them apart alone
          again = true;
          continue;
        }
        depth[i] += more_i;
        depth[j] += more_j;
        again = true;
      }
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < files.size(); ++i) names.push_back(name(i));
  return names;
}

void write_text(const std::string& path, const std::string& text) {
  io::write_atomically(path, [&](const std::string& tmp) {
    std::ofstream f(tmp);
    f << text;
    f.flush();
    if (!f) throw std::runtime_error("write to " + path + " failed (disk full?)");
  });
}

void write_radial(const std::string& path, const RadialProfile& pr) {
  std::ostringstream f;
  f << std::setprecision(10)
    << "r_lo,r_hi,r_mid,count,density,enclosed_mass,sigma_r,sigma_t,vcirc\n";
  for (std::size_t b = 0; b < pr.r_mid.size(); ++b)
    f << pr.r_lo[b] << "," << pr.r_hi[b] << "," << pr.r_mid[b] << "," << pr.count[b] << ","
      << pr.density[b] << "," << pr.enclosed_mass[b] << "," << pr.sigma_r[b] << "," << pr.sigma_t[b]
      << "," << pr.vcirc[b] << "\n";
  write_text(path, f.str());
}

void write_disk(const std::string& path, const DiskProfile& d) {
  std::ostringstream f;
  f << std::setprecision(10)
    << "R_lo,R_hi,R_mid,count,surface_density,z_rms,mean_vphi,sigma_R,sigma_z\n";
  for (std::size_t b = 0; b < d.R_mid.size(); ++b)
    f << d.R_lo[b] << "," << d.R_hi[b] << "," << d.R_mid[b] << "," << d.count[b] << ","
      << d.surface_density[b] << "," << d.z_rms[b] << "," << d.mean_vphi[b] << "," << d.sigma_R[b]
      << "," << d.sigma_z[b] << "\n";
  write_text(path, f.str());
}

}  // namespace

int cmd_analyze(int argc, char** argv) {
  cxxopts::Options o(
      "hoshi analyze",
      "Lagrangian radii (10, 50, 90% of the mass, about the centre of mass; --csv adds those "
      "about the shrinking-sphere density centre), optional bound mass, and spherical and disk "
      "profiles of particle snapshots. The time column is the time the file records (HDF5 /Header "
      "Time, "
      "Gadget header, tipsy header in its G = 1 units), 0 for CSV files. vcirc and the bound "
      "mass use the snapshot's G (the run's, as hoshi records it, else its unit system's; "
      "tipsy, Gadget binary and CSV: 1) unless -G is given. The table is in the file's units, "
      "named with that G on the line above it.");
  o.positional_help("SNAPSHOT...");
  o.add_options()("snapshots", "particle files", cxxopts::value<std::vector<std::string>>())(
      "csv", "write one row per snapshot to this CSV file", cxxopts::value<std::string>())(
      "profiles",
      "write SNAPSHOT_radial.csv and SNAPSHOT_disk.csv into this directory (SNAPSHOT: the "
      "file's stem, with its parent directories where two snapshots share a stem: "
      "run1_snapshot_010); dispersions are nan in bins of fewer than two particles, an empty "
      "annulus's z_rms and mean_vphi too",
      cxxopts::value<std::string>())("bins", "profile bins",
                                     cxxopts::value<std::string>()->default_value("30"))(
      "axis",
      "disk axis: x, y or z, a vector X,Y,Z (e.g. 1,0,1), or spin (the angular momentum of the "
      "inner half mass)",
      cxxopts::value<std::string>()->default_value("z"))(
      "disk-rmax", "outer radius of the disk annuli (0: the 90% Lagrangian radius)",
      cxxopts::value<std::string>()->default_value("0"))(
      "ids",
      "analyse only particles with BEGIN <= id < END, given as BEGIN:END (e.g. one "
      "component of a galaxy model: halo, then disk, then bulge ids)",
      cxxopts::value<std::string>())(
      "bound", "compute the bound mass (iterative unbinding; uses --solver and --softening)")(
      "overwrite", "replace existing output files");
  add_solver_options(
      o, "auto", true,
      "; auto: the run's softening and kernel as the snapshot records them (a hoshi, "
      "Gadget-4 or AREPO run's), "
      "else 0; a length given keeps the recorded kernel unless --kernel is given");
  add_threads_option(o);
  o.parse_positional({"snapshots"});
  auto r = parse_options(o, argc, argv);
  if (!r.count("snapshots"))
    throw std::invalid_argument("missing SNAPSHOT (see hoshi analyze --help)");
  // Each argument as given: cxxopts splits a vector's values at commas, so that run,1.csv was
  // read as the two files "run" and "1.csv".
  std::vector<std::string> files;
  for (const auto& kv : r.arguments())
    if (kv.key() == "snapshots") files.push_back(kv.value());
  // run/snapshot* of a tipsy run names its units file too (run/snapshot.param; an older run's
  // snapshot_NNN.tipsy.param): the units files of given snapshots are left out, with a note
  // (the whole command failed on the first of them).
  std::vector<std::string> skipped;
  if (std::any_of(files.begin(), files.end(),
                  [](const std::string& f) { return f.ends_with(".param"); })) {
    namespace fs = std::filesystem;
    std::set<fs::path> units_files;
    for (const std::string& f : files) {
      std::error_code ec;
      if (f.ends_with(".param")) continue;
      const std::string u = io::tipsy_units_file(f);
      if (const fs::path c = fs::weakly_canonical(u, ec); !u.empty() && !ec) units_files.insert(c);
    }
    std::erase_if(files, [&](const std::string& f) {
      std::error_code ec;
      const fs::path c = f.ends_with(".param") ? fs::weakly_canonical(f, ec) : fs::path();
      const bool units_file = f.ends_with(".param") && !ec && units_files.count(c) > 0;
      if (units_file) skipped.push_back(f);
      return units_file;
    });
  }
  if (!skipped.empty())
    std::cerr << "hoshi analyze: note: " << skipped.size()
              << " tipsy units file(s) of the snapshots given left out (" << skipped.front()
              << (skipped.size() > 1 ? ", ..." : "") << ")\n";
  const bool overwrite = flag(r, "overwrite");
  const std::size_t bins = parse_size(r["bins"].as<std::string>(), "--bins");
  if (bins > 100000)  // more shells than most snapshots have particles (1e12 ran out of memory)
    throw std::invalid_argument("invalid --bins " + std::to_string(bins) + " (at most 100000)");
  const SolverConfig cfg = solver_config(r, /*softening_auto=*/true);
  apply_threads(r);
  Vec3 axis{0, 0, 1};
  const std::string axis_text = r["axis"].as<std::string>();
  const bool spin = axis_text == "spin";
  if (axis_text == "x" || axis_text == "y" || axis_text == "z") {  // as hoshi render --axis
    axis = {0, 0, 0};
    axis[static_cast<std::size_t>(io::parse_axis(axis_text))] = 1;
  } else if (!spin) {
    std::vector<double> v;
    try {
      v = parse_double_list(axis_text, "--axis");
    } catch (const std::invalid_argument&) {
      v.clear();  // a word: the message below lists what --axis takes
    }
    if (v.size() != 3 || (v[0] == 0 && v[1] == 0 && v[2] == 0))
      throw std::invalid_argument("invalid --axis '" + axis_text +
                                  "' (expected x, y, z, spin, or a vector X,Y,Z not all zero)");
    axis = {v[0], v[1], v[2]};
  }
  std::string csv_path, prof_dir;
  // The same file by two names: compared as absolute, normalised paths (they need not exist;
  // "prof/" is "prof": weakly_canonical keeps the slash of a path that does not exist).
  const auto same = [](const std::string& a, const std::string& b) {
    namespace fs = std::filesystem;
    const auto normal = [](const std::string& s) {
      fs::path q = fs::weakly_canonical(fs::absolute(s));
      return q.has_filename() || !q.has_parent_path() ? q : q.parent_path();
    };
    return normal(a) == normal(b);
  };
  if (r.count("csv")) {
    csv_path = r["csv"].as<std::string>();
    require_csv_name(csv_path, "--csv", "table is");
    // A table inside the --profiles directory this command creates ("--profiles prof --csv
    // prof/a.csv" was refused: "directory prof does not exist"): nothing there to replace.
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(csv_path).parent_path();
    const bool in_new_profiles =
        r.count("profiles") && !std::filesystem::exists(r["profiles"].as<std::string>(), ec) &&
        same(parent.empty() ? std::string(".") : parent.string(), r["profiles"].as<std::string>());
    if (!in_new_profiles) require_new_output(csv_path, overwrite, "--csv", files);
  }
  // Every output name is checked before any snapshot is read, and nothing is written until
  // every snapshot has been analysed: a bad input leaves no partial output behind.
  std::vector<std::string> prof_base;
  // Each snapshot's name, its profiles' and its table row's: two snapshot_010 rows of two runs
  // were indistinguishable.
  std::vector<std::string> names;
  if (r.count("profiles")) {
    prof_dir = r["profiles"].as<std::string>();
    io::check_writable_dir(prof_dir, "--profiles");  // before the snapshots are analysed
    std::error_code ec;
    if (std::filesystem::exists(prof_dir, ec) && !std::filesystem::is_directory(prof_dir, ec))
      throw std::invalid_argument("--profiles " + prof_dir + ": is not a directory");
    if (!csv_path.empty() && same(csv_path, prof_dir))
      throw std::invalid_argument("--csv " + csv_path + ": the --profiles directory");
    names = profile_names(files);
    for (const std::string& name : names) {
      prof_base.push_back((std::filesystem::path(prof_dir) / name).string());
      for (const char* suffix : {"_radial.csv", "_disk.csv"}) {
        const std::string out = prof_base.back() + suffix;
        if (!csv_path.empty() && same(csv_path, out))
          throw std::invalid_argument("--csv " + csv_path + ": also a profile of --profiles (" +
                                      out + ")");
        for (const std::string& in : files)
          if (same(in, out))
            throw std::invalid_argument("--profiles " + out + ": is the input file " + in +
                                        " (give another directory)");
        if (!overwrite && std::filesystem::exists(out, ec))
          throw std::invalid_argument("--profiles " + out +
                                      ": file exists (use --overwrite to replace it)");
      }
    }
  }
  const bool bound = flag(r, "bound");
  // Options that only --bound or --profiles read, given without it (as hoshi forces and run
  // name tree options a direct sum does not use).
  const auto say_unused = [&](std::initializer_list<const char*> keys, const char* without) {
    if (const std::string unused = given_options(r, keys); !unused.empty())
      std::cerr << "hoshi analyze: note: " << unused << " unused without " << without << "\n";
  };
  if (!bound)
    say_unused({"solver", "backend", "softening", "kernel", "theta", "criterion", "order", "alpha",
                "n-leaf", "n-group", "local-ratio", "walk", "precision"},
               "--bound");
  // Checked before the unused-option note (an error after "--disk-rmax unused" contradicted it).
  const double disk_rmax = number(r, "disk-rmax");
  if (!(disk_rmax >= 0))
    throw std::invalid_argument("option --disk-rmax: value " + r["disk-rmax"].as<std::string>() +
                                " (must be >= 0)");
  if (prof_dir.empty()) say_unused({"bins", "axis", "disk-rmax"}, "--profiles");
  const std::optional<IdRange> ids = id_range_option(r);

  std::ostringstream table;
  table << std::setprecision(10)
        << "snapshot,time,n,mass,r10,r50,r90,r10_dc,r50_dc,r90_dc,bound_mass\n";
  // The table's header with its first row: a first snapshot that cannot be read is one error
  // line, not a header followed by it.
  bool header_printed = false;
  std::string units_said;  // the units line last printed above the rows
  std::vector<RadialProfile> radial;
  std::vector<DiskProfile> disk;
  // Without --profiles a file may be given twice (two rows); its rows then share a name.
  if (prof_dir.empty()) try {
      names = profile_names(files);
    } catch (const std::invalid_argument&) {
      for (const auto& f : files) names.push_back(std::filesystem::path(f).stem().string());
    }
  int name_width = 24;  // the names' column, wide enough for the longest (it ran into the next)
  for (const auto& n : names) name_width = std::max(name_width, static_cast<int>(n.size()) + 2);
  std::string last_softening_note;        // the softening and kernel last named
  std::string last_kernel_note;           // and the kernel taken with a given --softening
  std::vector<std::string> without_G;     // snapshots with neither units nor G, for the note
  std::vector<std::string> without_time;  // CSV files: no time to show (their rows say 0)
  std::vector<std::string> without_eps;   // --bound: snapshots that record no softening
  std::string last_gadget_note;           // --bound: the softenings by type last said
  for (std::size_t file = 0; file < files.size(); ++file) {
    const std::string& path = files[file];
    // The snapshot's time as its file records it (HDF5, tipsy, Gadget; 0 for CSV), in the
    // file's units (tipsy: its G = 1 units).
    io::LoadedSnapshot s = io::load_snapshot(path);
    if (!s.note.empty()) std::cerr << "hoshi analyze: " << path << ": " << s.note << "\n";
    ParticleSet all = std::move(s.particles);
    const ParticleSet selected = ids ? select_ids(all, *ids, path) : ParticleSet{};
    const ParticleSet& p = ids ? selected : all;
    const double t = s.time;
    if (s.format == io::SnapshotFormat::csv) without_time.push_back(path);
    // G of the snapshot's units (vcirc and the bound mass), unless -G is given.
    SolverConfig snap_cfg = cfg;
    if (!given_G(r)) {
      snap_cfg.G = io::snapshot_G(s);
      // A file with neither units nor a recorded G (Gadget binary, CSV, HDF5 without /Units;
      // not tipsy, whose units are G = 1 by definition): G = 1 was assumed without a word, and
      // a galaxy-units halo came out unbound with circular speeds of 0.7 km/s. Said once,
      // after the results (an error stays the one line it is).
      const bool records_G =
          s.format == io::SnapshotFormat::tipsy || io::snapshot_G(s, /*fallback=*/0.0) > 0;
      if (!records_G && (bound || !prof_dir.empty())) without_G.push_back(path);
    }
    // The bound mass with the run's softening as the snapshot records it (/Parameters), unless
    // --softening is given: with the default 0 a softened run's remnant came out with another
    // potential than the one it was run in.
    if (bound) {
      // Said for the first snapshot and again whenever a later one records another.
      if (const std::string said =
              take_recorded_softening(r, s.parameters, path, snap_cfg, s.gadget_softening);
          !said.empty()) {
        if (said != last_softening_note)
          std::cerr << "hoshi analyze: --bound with the softening "
                    << (last_softening_note.empty() ? "the snapshot records: "
                                                    : path + " records: ")
                    << said << "; --softening overrides)\n";
        last_softening_note = said;
      } else if (!softening_given(r) && s.gadget_softening) {  // a softening per type
        // Said for the first snapshot and again whenever a later one records others.
        if (s.gadget_softening->text != last_gadget_note)
          std::cerr << "hoshi analyze: note: " << no_recorded_softening(path, s.gadget_softening)
                    << ": the bound mass is that of the unsoftened potential (--softening sets "
                       "one)\n";
        last_gadget_note = s.gadget_softening->text;
      } else if (!softening_given(r)) {
        without_eps.push_back(path);
      } else if (const std::string kernel =
                     take_recorded_kernel(r, s.parameters, path, snap_cfg, s.gadget_softening);
                 !kernel.empty() && kernel.substr(path.size()) != last_kernel_note) {
        std::cerr << "hoshi analyze: --bound: " << kernel << "\n";
        last_kernel_note = kernel.substr(path.size());
      }
    }
    double mass = 0;
    for (double m : p.m) mass += m;
    const Vec3 com = centre_of_mass(p), vcom = centre_of_mass_velocity(p);
    const Vec3 dc = shrinking_sphere_centre(p);
    const auto lr = lagrangian_radii(p, {0.1, 0.5, 0.9}, com);
    const auto ld = lagrangian_radii(p, {0.005, 0.1, 0.5, 0.9, 0.995}, dc);
    double mb = std::nan("");
    if (bound) {
      require_distinct_positions_in(p, snap_cfg.eps, path);
      const BoundResult b = bound_mass(p, snap_cfg);
      mb = b.mass;
      if (!b.converged)
        std::cerr << "hoshi analyze: warning: " << path << ": the bound set "
                  << (b.oscillating ? "alternates between two sets" : "still changed") << " after "
                  << b.iterations << " iterations of unbinding; bound_mass is the last one's ("
                  << b.count << " particles)\n";
    }
    table << path << "," << t << "," << p.size() << "," << mass << "," << lr[0] << "," << lr[1]
          << "," << lr[2] << "," << ld[1] << "," << ld[2] << "," << ld[3] << ",";
    if (bound) table << mb;
    table << "\n";
    // The rows' units, as the file records them: above the table, and again above a row
    // whose file has others (the table gave numbers without units).
    if (const std::string u = units_text(s, snap_cfg.G); u != units_said) {
      std::cout << (header_printed ? "units from " + names[file] + " on: " : "units: ") << u
                << "\n";
      units_said = u;
    }
    if (!header_printed) {
      std::cout << std::left << std::setw(name_width) << "snapshot" << std::setw(10) << "time"
                << std::setw(10) << "n" << std::setw(12) << "mass" << std::setw(12) << "r10"
                << std::setw(12) << "r50" << std::setw(bound ? 12 : 0) << "r90"
                << (bound ? "bound_mass" : "") << "\n";  // no trailing blanks
      header_printed = true;
    }
    // Each value padded to its column, and at least one blank after it: a value as wide as its
    // column (1.2e-110, a time 0.000123457) ran into the next one.
    const auto cell = [](const auto& v, int width) {
      std::ostringstream c;
      c << v;
      std::string text = c.str();
      text.resize(std::max<std::size_t>(text.size() + 1, static_cast<std::size_t>(width)), ' ');
      return text;
    };
    std::cout << cell(names[file], name_width) << cell(t, 10) << cell(p.size(), 10)
              << cell(mass, 12) << cell(lr[0], 12) << cell(lr[1], 12);
    if (bound)
      std::cout << cell(lr[2], 12) << mb;
    else
      std::cout << lr[2];
    std::cout << "\n";
    if (!prof_dir.empty()) {
      // Profiles about the density centre, in the frame of the particles within r50.
      ParticleSet inner;
      for (std::size_t i = 0; i < p.size(); ++i) {
        const double dx = p.x[i] - dc[0], dy = p.y[i] - dc[1], dz = p.z[i] - dc[2];
        if (dx * dx + dy * dy + dz * dz < ld[2] * ld[2])
          inner.push_back(p.x[i], p.y[i], p.z[i], p.vx[i], p.vy[i], p.vz[i], p.m[i], p.id[i]);
      }
      const Vec3 v = inner.empty() ? vcom : centre_of_mass_velocity(inner);
      bool no_spin = false;
      const Vec3 ax = spin ? angular_momentum_axis(inner, dc, v, &no_spin) : axis;
      // The axis spin found, which the profile does not show (a galaxy's inner half mass is
      // mostly halo, whose sampled angular momentum tilted it by 17 degrees from its disk's).
      if (spin) {
        std::ostringstream a;
        a << std::fixed << std::setprecision(4) << ax[0] << "," << ax[1] << "," << ax[2];
        std::cerr
            << "hoshi analyze: note: " << names[file] << ": --axis spin is " << a.str()
            << (no_spin ? " (the inner half mass has no angular momentum: z)\n"
                : ids ? " (the angular momentum of the inner half mass of the particles of --ids)\n"
                      : " (the angular momentum of the inner half mass of the particles "
                        "analysed; for a galaxy's disk give its --ids)\n");
      }
      // Log-spaced shells need r_lo > 0: where 0.5% of the mass sits at the centre, a millionth
      // of the outer radius (an absolute 1e-12 began every profile there for a system of
      // 1e-14 units, and put 98% of it inside the first shell).
      const double floor = ld[4] > 0 ? 1e-6 * ld[4] : 1e-12;
      const double r_lo = std::max(ld[0], floor), r_hi = std::max(ld[4], 2 * r_lo);
      radial.push_back(radial_profile(p, dc, v, r_lo, r_hi, bins, snap_cfg.G));
      const double R_max = disk_rmax > 0 ? disk_rmax : ld[3];
      if (!(R_max > 0))
        throw std::invalid_argument(path +
                                    ": the disk profile's outer radius, the 90% "
                                    "Lagrangian radius, is 0 (90% of the mass is at one "
                                    "point); give --disk-rmax");
      disk.push_back(disk_profile(p, dc, v, ax, R_max, bins));
    }
  }
  if (!prof_dir.empty()) {
    try {
      std::filesystem::create_directories(prof_dir);
    } catch (const std::filesystem::filesystem_error& e) {
      throw std::runtime_error("--profiles " + prof_dir + ": cannot create the directory (" +
                               e.code().message() + ")");
    }
    for (std::size_t k = 0; k < prof_base.size(); ++k) {
      write_radial(prof_base[k] + "_radial.csv", radial[k]);
      write_disk(prof_base[k] + "_disk.csv", disk[k]);
    }
  }
  if (!csv_path.empty()) write_text(csv_path, table.str());
  // "FILE records" or "FILE and N more snapshot(s) record": the notes below.
  const auto files_record = [](const std::vector<std::string>& files) {
    return files.front() + (files.size() > 1 ? " and " + std::to_string(files.size() - 1) +
                                                   " more snapshot(s) record"
                                             : std::string(" records"));
  };
  // The fallback to 0 went unsaid (a softened run's snapshot converted to CSV is then measured
  // in another potential than it ran in).
  if (!without_eps.empty())
    std::cerr << "hoshi analyze: note: " << files_record(without_eps)
              << " no softening: the bound mass is that of the unsoftened potential (--softening "
                 "sets one)\n";
  if (!without_time.empty())
    std::cerr << "hoshi analyze: note: " << files_record(without_time)
              << " no time (CSV): their time column is 0 (a run's snapshot_NNN.csv is at the first "
                 "step at or after NNN times its --snapshot-every; HDF5 snapshots record it)\n";
  if (!without_G.empty())
    std::cerr << "hoshi analyze: note: " << files_record(without_G)
              << " no units or G: G = 1 was assumed for "
              << (bound && !prof_dir.empty() ? "the bound mass and the circular speeds"
                  : bound                    ? "the bound mass"
                                             : "the circular speeds")
              << " (-G sets it: 43007.1 for kpc, km/s and 1e10 Msun)\n";
  return 0;
}

}  // namespace hoshi::cli
