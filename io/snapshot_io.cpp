#include "io/snapshot_io.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "core/number_text.hpp"
#include "io/csv.hpp"
#include "io/gadget_binary.hpp"
#include "io/tipsy.hpp"
#include "io/validate.hpp"

namespace hoshi::io {

std::string to_string(SnapshotFormat f) {
  switch (f) {
    case SnapshotFormat::csv:
      return "csv";
    case SnapshotFormat::hdf5:
      return "hdf5";
    case SnapshotFormat::tipsy:
      return "tipsy";
    case SnapshotFormat::gadget:
      return "gadget";
  }
  return "?";
}

SnapshotFormat parse_snapshot_format(const std::string& name) {
  for (auto f :
       {SnapshotFormat::csv, SnapshotFormat::hdf5, SnapshotFormat::tipsy, SnapshotFormat::gadget})
    if (name == to_string(f)) return f;
  throw std::invalid_argument("--snapshot-format: value '" + name +
                              "' is not one of csv, hdf5, tipsy, gadget");
}

std::optional<SnapshotFormat> format_from_extension(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::regex member(R"((.*)\.\d+$)");
  std::smatch m;
  if (std::regex_match(name, m, member)) name = m[1].str();
  const std::string ext = std::filesystem::path(name).extension().string();
  if (ext == ".csv") return SnapshotFormat::csv;
  if (ext == ".hdf5" || ext == ".h5" || ext == ".hdf") return SnapshotFormat::hdf5;
  if (ext == ".tipsy" || ext == ".std" || ext == ".bin") return SnapshotFormat::tipsy;
  if (ext == ".gadget" || ext == ".g1" || ext == ".g2" || ext == ".dat")
    return SnapshotFormat::gadget;
  return std::nullopt;
}

std::optional<SnapshotFormat> detect_snapshot_format(const std::string& path) {
  if (is_hdf5_file(path)) return SnapshotFormat::hdf5;
  std::ifstream in(path, std::ios::binary);
  std::vector<unsigned char> head(4096);  // a CSV's comment lines may precede its header
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && looks_like_tipsy(head.data(), head.size(), size)) return SnapshotFormat::tipsy;
  if (looks_like_gadget_binary(head.data(), head.size())) return SnapshotFormat::gadget;
  if (looks_like_csv(head.data(), head.size())) return SnapshotFormat::csv;
  return format_from_extension(path);
}

LoadedSnapshot load_snapshot(const std::string& path) {
  require_input_file(path);
  const auto format = detect_snapshot_format(path);
  if (!format)
    throw_bad_field(path, "format", "unknown",
                    "not HDF5, tipsy, Gadget binary or CSV (by content or extension)");
  LoadedSnapshot out;
  out.format = *format;
  auto gas_note = [](std::uint64_t gas) {
    return gas ? std::to_string(gas) + " gas particles skipped (hoshi is collisionless)"
               : std::string();
  };
  // A cosmological run's snapshot holds comoving positions, Gadget's velocities are v / sqrt(a)
  // and its time is the scale factor: hoshi, which is not cosmological, takes them as they are.
  auto cosmology_note = [&](double omega0, double time) {
    if (!(omega0 > 0)) return;
    std::ostringstream n;
    n << (out.note.empty() ? "" : "; ") << "a cosmological snapshot (Omega0 " << omega0 << ", Time "
      << time
      << " is a scale factor): positions, velocities and time are taken as they are, as "
         "physical, without a or h factors";
    out.note += n.str();
  };
  switch (*format) {
    case SnapshotFormat::hdf5: {
      SnapshotData d = read_hdf5_snapshot(path);
      out.particles = std::move(d.particles);
      out.time = d.info.time;
      out.units = d.info.units;
      out.units_known = d.info.units_known;
      out.parameters = std::move(d.info.parameters);
      // A Gadget-4 or AREPO run's softening, by the types it holds (hoshi's own files keep
      // theirs as softening and kernel: their particles are all PartType1, whatever their type).
      if (hdf5_code(path) != "hoshi")
        out.gadget_softening = gadget_softening(out.parameters, d.loaded, out.time, path);
      // The recorded G (snapshot_G): one that is not a number > 0 was skipped without a word,
      // and a -G 2 run's particles were taken with G = 1. Gadget-4's GravityConstantInternal 0
      // means "from the units".
      for (const char* key : {"GravityConstantInternal", "G"})
        if (const ParamValue* v = find_param(out.parameters, key)) {
          const auto g = to_number(*v);
          const bool zero_ok = std::string_view(key) == "GravityConstantInternal";
          if (!g || !std::isfinite(*g) || *g < 0 || (*g == 0 && !zero_ok))
            throw_bad_field(path, std::string("/Parameters/") + key, to_string(*v),
                            zero_ok ? "the gravitational constant: must be >= 0 (0: from the "
                                      "units) and finite"
                                    : "the gravitational constant: must be > 0 and finite");
          // The range hoshi run and ic take -G in (forces took 1e308 and failed on its
          // non-finite forces, blaming the softening; 1e-320 gave denormal forces).
          if (*g != 0 && !(*g >= 1e-30 && *g <= 1e30))
            throw_bad_field(path, std::string("/Parameters/") + key, to_string(*v),
                            "the gravitational constant: from 1e-30 to 1e30 (rescale the units "
                            "instead)");
        }
      out.note = gas_note(d.skipped[0]);
      if (!d.mass_table_ignored.empty()) {
        std::string types;
        for (const auto& t : d.mass_table_ignored) types += (types.empty() ? "" : ", ") + t;
        out.note += (out.note.empty() ? "" : "; ") + std::string("masses from the Masses ") +
                    "dataset, which differs from a nonzero MassTable entry: " + types;
      }
      if (!d.ids_assigned.empty()) {
        std::string types;
        for (const auto& t : d.ids_assigned) types += (types.empty() ? "" : ", ") + t;
        const std::string from = std::to_string(d.assigned_from);
        out.note += (out.note.empty() ? "" : "; ") + std::string("no ParticleIDs dataset in ") +
                    types + ": ids assigned in load order (" +
                    (d.assigned_from == 0 ? std::string("0, 1, ...)")
                                          : from + ", ... after the largest stored id)");
      }
      cosmology_note(d.info.omega0, d.info.time);
      break;
    }
    case SnapshotFormat::tipsy: {
      TipsyData d = read_tipsy(path);
      out.particles = std::move(d.particles);
      out.time = d.time;
      out.units = d.units;
      out.units_known = d.units_known;
      out.note = gas_note(d.skipped_gas);
      if (!d.units_note.empty()) out.note += (out.note.empty() ? "" : "; ") + d.units_note;
      // A units file named after the stem (d.param for d.tipsy) is not this file's (a ChaNGa
      // RUN.param is a whole run's settings); said, as its units were silently not taken (an
      // audit: masses 43007 times off after a conversion).
      if (!d.units_known && d.units_note.empty()) {  // (a units file found says its own note)
        const std::filesystem::path stem = std::filesystem::path(path).replace_extension(".param");
        std::error_code ec;
        if (stem.string() != path + ".param" && std::filesystem::is_regular_file(stem, ec))
          out.note += (out.note.empty() ? "" : "; ") + std::string("no units file ") + path +
                      ".param; " + stem.string() +
                      " is not read (copy it there if it holds this file's units)";
      }
      break;
    }
    case SnapshotFormat::gadget: {
      GadgetBinaryData d = read_gadget_binary(path);
      out.particles = std::move(d.particles);
      out.time = d.time;
      out.units = units_henon();  // none in the file: the run's (code) units
      out.note = gas_note(d.skipped[0]);
      cosmology_note(d.omega0, d.time);
      break;
    }
    case SnapshotFormat::csv:
      out.particles = read_csv(path);
      break;
  }
  // The readers return an empty set (a valid file); the commands need particles.
  if (out.particles.empty())
    throw_bad_field(path, "particles", 0,
                    "nothing to load: no collisionless particles" +
                        (out.note.empty() ? std::string() : " (" + out.note + ")"));
  return out;
}

namespace {
// "A", "A and B", "A, B and C".
std::string spoken_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t k = 0; k < items.size(); ++k)
    out += (k == 0 ? "" : k + 1 == items.size() ? " and " : ", ") + items[k];
  return out;
}
// Appends `item` to the list of `key` in `groups` (in first-seen order), or a new group.
template <class K>
void add_to(std::vector<std::pair<K, std::vector<std::string>>>& groups, const K& key,
            const std::string& item) {
  const auto g =
      std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == key; });
  if (g == groups.end())
    groups.push_back({key, {item}});
  else
    g->second.push_back(item);
}

// "A, B, C".
std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}
}  // namespace

std::optional<GadgetSoftening> gadget_softening(const ParamList& params,
                                                const std::vector<std::uint64_t>& loaded,
                                                double time, const std::string& path) {
  struct Scheme {
    const char* code;
    const char* of_type;   // the class of particle type t
    const char* comoving;  // a class's (comoving) softening
    const char* max_phys;  // its physical limit in a comoving run
  };
  constexpr Scheme kSchemes[] = {
      {"Gadget-4", "SofteningClassOfPartType", "SofteningComovingClass", "SofteningMaxPhysClass"},
      {"AREPO", "SofteningTypeOfPartType", "SofteningComovingType", "SofteningMaxPhysType"}};
  constexpr int kMaxTypes = 8, kMaxClasses = 64;
  for (const Scheme& sc : kSchemes) {
    bool named = false;
    for (int t = 0; t < kMaxTypes && !named; ++t)
      named = find_param(params, sc.of_type + std::to_string(t)) != nullptr;
    if (!named) continue;
    const auto number = [&](const std::string& key, bool integer) -> std::optional<double> {
      const ParamValue* v = find_param(params, key);
      if (!v) return std::nullopt;
      const std::optional<double> x = to_number(*v);
      if (!x || !std::isfinite(*x) || *x < 0 ||
          (integer && (*x != std::floor(*x) || *x >= kMaxClasses)))
        throw_bad_field(path, "/Parameters/" + key, to_string(*v),
                        integer ? std::string("a softening class: an integer 0 to ") +
                                      std::to_string(kMaxClasses - 1)
                                : std::string("a softening: must be a number >= 0; give "
                                              "--softening"));
      return x;
    };
    const ParamValue* on = find_param(params, "ComovingIntegrationOn");
    const bool comoving = on && to_number(*on).value_or(0) != 0;
    GadgetSoftening out;
    out.code = sc.code;
    try {
      std::vector<std::pair<double, std::vector<std::string>>> by_eps;  // in type order
      std::vector<std::pair<std::string, std::vector<std::string>>> from;
      for (std::size_t t = 0; t < loaded.size(); ++t) {
        if (loaded[t] == 0) continue;
        const std::string type = "PartType" + std::to_string(t);
        const std::string of_type = sc.of_type + std::to_string(t);
        const std::optional<double> c = number(of_type, true);
        if (!c) {
          out.text = std::string(sc.code) + " softening classes without " + of_type +
                     " for the particles of " + type;
          return out;
        }
        const std::string cls = std::to_string(static_cast<int>(*c));
        const std::string key = sc.comoving + cls;
        const std::optional<double> eps_c = number(key, false);
        if (!eps_c) {
          out.text = std::string(sc.code) + " softening classes without " + key + " for " + type;
          return out;
        }
        double eps = *eps_c;
        std::string source = std::string(sc.code) + "'s " + key;
        if (comoving) {  // Gadget-4 (set_softenings): comoving, at most max_phys physical
          const std::string max_key = sc.max_phys + cls;
          const std::optional<double> max_phys = number(max_key, false);
          if (!max_phys || !(time > 0)) {
            out.text = std::string(sc.code) + " comoving run without " +
                       (max_phys ? "a scale factor > 0 (Time " + number_text(time) + ")"
                                 : max_key + " for " + type);
            return out;
          }
          if (eps * time > *max_phys) {
            eps = *max_phys / time;
            source = std::string(sc.code) + "'s " + max_key + " / a (" + number_text(*max_phys) +
                     " / " + number_text(time) + ")";
          }
        }
        add_to(by_eps, eps, type);
        add_to(from, source, type);
      }
      if (by_eps.empty()) return std::nullopt;  // no particles (the loader refuses the file)
      if (by_eps.size() == 1) {
        out.eps = by_eps.front().first;
        std::vector<std::string> said;
        for (const auto& [source, types] : from)
          said.push_back(source + " for " + spoken_list(types));
        out.text = spoken_list(said);
      } else {
        std::vector<std::string> said;
        for (const auto& [eps, types] : by_eps)
          said.push_back(spoken_list(types) + " " + number_text(eps));
        out.text = std::string(sc.code) + " softenings by type: " + joined(said);
      }
    } catch (const std::invalid_argument& e) {  // raised where the softening would be taken
      out.eps.reset();
      out.error = e.what();
      out.text = std::string(sc.code) + " softening classes with a bad value";
    }
    return out;
  }
  return std::nullopt;
}

double snapshot_G(const LoadedSnapshot& s, double fallback) {
  for (const char* key : {"GravityConstantInternal", "G"})
    if (const ParamValue* v = find_param(s.parameters, key)) {
      const double g = to_number(*v).value_or(0.0);
      if (g > 0 && std::isfinite(g)) return g;
    }
  return s.units_known ? s.units.G() : fallback;
}

std::string unrecorded_units(SnapshotFormat format, const SnapshotInfo& info) {
  if (format == SnapshotFormat::hdf5 || format == SnapshotFormat::tipsy) return "";
  if (info.units_known && info.units.name == "custom")
    return "its units (" + number_text(info.units.length_cm) + " cm, " +
           number_text(info.units.mass_g) + " g, " + number_text(info.units.velocity_cm_s) +
           " cm/s) are not a system hoshi's --units names: write HDF5 to keep them";
  std::string options;
  UnitSystem reader = units_henon();  // what a reader assumes without --units
  if (info.units_known && info.units.name != "henon") {
    options = "--units " + info.units.name;
    reader = info.units;
  }
  const double G = info.G > 0 ? info.G : info.units_known ? info.units.G() : 0.0;
  if (G > 0 && std::abs(G - reader.G()) > 1e-9 * reader.G())
    options += (options.empty() ? "-G " : " -G ") + number_text(G);
  // hoshi forces and analyze take -G (the unit names only scale a run's or a conversion's
  // output), so the G is named for them whenever it is not 1.
  if (options.empty()) return "";
  std::string text = "read it with " + options;
  if (options.rfind("--units", 0) == 0 && !(std::abs(G - 1) <= 1e-9))
    text += " (hoshi run, ic; -G " + number_text(G > 0 ? G : reader.G()) + " for forces, analyze)";
  return text;
}

std::string units_imply_another_G(SnapshotFormat format, const SnapshotInfo& info) {
  if (format != SnapshotFormat::hdf5 || !info.units_known || !(info.G > 0)) return "";
  const double G_units = info.units.G();
  if (std::abs(info.G - G_units) <= 1e-9 * G_units) return "";
  return "its /Units imply G = " + number_text(G_units) + " and its G = " + number_text(info.G) +
         " is in /Parameters/GravityConstantInternal, which hoshi reads; yt and pynbody read "
         "masses from /Units alone: multiply theirs by " +
         number_text(info.G / G_units) +
         " for the masses that give these dynamics with the physical G";
}

namespace {
GadgetWriteOptions gadget_options(const std::string& path, const WriteOptions& options,
                                  const ParticleSet& p) {
  GadgetWriteOptions o;
  // .g1: format 1 (no block labels); otherwise format 2.
  std::string name = std::filesystem::path(path).extension().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  o.format = name == ".g1" ? 1 : 2;
  o.double_precision = options.gadget_double;
  o.long_ids = options.gadget_long_ids;
  // Equal masses go to the header's MassTable, without a MASS block, as Gadget's own initial
  // conditions have them (a Gadget-4 built with LEAN has no per-particle mass to read); not
  // equal zero masses, since a MassTable entry of 0 means "in the MASS block".
  o.mass_table = !p.m.empty() && p.m[0] != 0 &&
                 std::all_of(p.m.begin(), p.m.end(), [&](double v) { return v == p.m[0]; });
  return o;
}
}  // namespace

void require_writable(SnapshotFormat format, const ParticleSet& p, const WriteOptions& options) {
  if (format == SnapshotFormat::gadget) require_gadget_writable(p, gadget_options("", options, p));
  if (format == SnapshotFormat::tipsy &&
      p.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("tipsy: field nbodies: value " + std::to_string(p.size()) +
                                " (tipsy counts are 32-bit; use HDF5)");
}

void save_snapshot(const std::string& path, SnapshotFormat format, const ParticleSet& p,
                   const SnapshotInfo& info, const WriteOptions& options) {
  switch (format) {
    case SnapshotFormat::hdf5:
      write_hdf5_snapshot(path, p, info);
      return;
    case SnapshotFormat::tipsy:
      write_tipsy(path, p, info.time, info.units, 0, info.G, info.units_known,
                  options.tipsy_units_file);
      return;
    case SnapshotFormat::gadget:
      write_gadget_binary(path, p, info.time, gadget_options(path, options, p));
      return;
    case SnapshotFormat::csv:
      write_csv(path, p);
      return;
  }
}

}  // namespace hoshi::io
