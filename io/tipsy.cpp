#include "io/tipsy.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include "core/number_text.hpp"
#include "io/atomic_file.hpp"
#include "io/byte_reader.hpp"
#include "io/validate.hpp"

namespace hoshi::io {

namespace {

constexpr std::size_t kHeader = 32, kGas = 48, kDark = 36, kStar = 44;

struct Header {
  double time;
  std::int32_t nbodies, ndim, nsph, ndark, nstar, version;
};

// The 28 header bytes, plus the 4 padding bytes (the Bonsai version field) if `with_pad`.
Header read_header(ByteReader& r, bool with_pad = true) {
  Header h{};
  h.time = r.get<double>("header.time");
  h.nbodies = r.get<std::int32_t>("header.nbodies");
  h.ndim = r.get<std::int32_t>("header.ndim");
  h.nsph = r.get<std::int32_t>("header.nsph");
  h.ndark = r.get<std::int32_t>("header.ndark");
  h.nstar = r.get<std::int32_t>("header.nstar");
  if (with_pad) h.version = r.get<std::int32_t>("header.pad");
  return h;
}

bool plausible(const Header& h) {
  return h.ndim == 3 && h.nsph >= 0 && h.ndark >= 0 && h.nstar >= 0 &&
         static_cast<std::int64_t>(h.nsph) + h.ndark + h.nstar == h.nbodies;
}

// Byte order from the header: ndim == 3 is read correctly in exactly one order.
bool detect_big_endian(const unsigned char* data, std::size_t size, const std::string& name) {
  ByteReader be(data, size, name, true), le(data, size, name, false);
  const Header hb = read_header(be), hl = read_header(le);
  if (hb.ndim == 3) return true;
  if (hl.ndim == 3) return false;
  throw_bad_field(name, "header.ndim", hb.ndim,
                  "not a tipsy file: ndim must be 3 in either byte order");
}

}  // namespace

bool looks_like_tipsy(const unsigned char* data, std::size_t header_size, std::uint64_t size) {
  if (header_size < kHeader) return false;
  for (bool big : {true, false}) {
    ByteReader r(data, header_size, "", big);
    const Header h = read_header(r);
    if (!plausible(h)) continue;
    const std::uint64_t need = kHeader + std::uint64_t(h.nsph) * kGas +
                               std::uint64_t(h.ndark) * kDark + std::uint64_t(h.nstar) * kStar;
    // Some writers omit the 4-byte pad: accept both sizes.
    if (need == size || need - 4 == size) return true;
  }
  return false;
}

TipsyData parse_tipsy(const unsigned char* data, std::size_t size, const std::string& name) {
  TipsyData out;
  if (size < 28)
    throw_bad_field(name, "header", size,
                    "truncated: a tipsy header has 28 bytes (32 with padding)");
  out.big_endian = detect_big_endian(data, size, name);
  ByteReader r(data, size, name, out.big_endian);
  Header h = read_header(r, false);  // the padding is read below, once the size is checked
  if (!std::isfinite(h.time)) throw_bad_field(name, "header.time", h.time, "must be finite");
  for (auto [field, v] :
       {std::pair{"header.nsph", h.nsph}, std::pair{"header.ndark", h.ndark},
        std::pair{"header.nstar", h.nstar}, std::pair{"header.nbodies", h.nbodies}})
    if (v < 0) throw_bad_field(name, field, v, "negative particle count");
  if (static_cast<std::int64_t>(h.nsph) + h.ndark + h.nstar != h.nbodies)
    throw_bad_field(name, "header.nbodies", h.nbodies,
                    "differs from nsph + ndark + nstar = " +
                        std::to_string(static_cast<std::int64_t>(h.nsph) + h.ndark + h.nstar));
  // The header is padded to 32 bytes by most writers; a few write 28.
  const std::uint64_t body = std::uint64_t(h.nsph) * kGas + std::uint64_t(h.ndark) * kDark +
                             std::uint64_t(h.nstar) * kStar;
  std::size_t start = kHeader;
  if (size >= 32) h.version = r.get<std::int32_t>("header.pad");
  if (size == 28 + body) {
    // A 28-byte header, or a padded file 4 bytes short (truncated): then bytes 28..31 are the
    // pad (0, or Bonsai's version 2) where the 28-byte layout has the first record's mass,
    // which is a normal positive float.
    if (body > 0) {
      r.seek(28, "first record");
      const float first_mass = r.get<float>("first record");
      if (!(std::isnormal(first_mass) && first_mass > 0))
        throw_bad_field(name, "header.nbodies", h.nbodies,
                        "the counts need " + std::to_string(kHeader + body) +
                            " bytes but the file has " + std::to_string(size) +
                            " (truncated; as an unpadded 28-byte header the first mass would be " +
                            std::to_string(first_mass) + ")");
    }
    start = 28;
    h.version = 0;
  } else if (size != kHeader + body) {
    throw_bad_field(name, "header.nbodies", h.nbodies,
                    "the counts (nsph " + std::to_string(h.nsph) + ", ndark " +
                        std::to_string(h.ndark) + ", nstar " + std::to_string(h.nstar) + ") need " +
                        std::to_string(kHeader + body) + " bytes but the file has " +
                        std::to_string(size) + (size < kHeader + body ? " (truncated)" : ""));
  }
  out.bonsai_ids = !out.big_endian && h.version == 2;
  out.time = h.time;
  out.skipped_gas = static_cast<std::uint64_t>(h.nsph);
  out.n_dark = static_cast<std::uint64_t>(h.ndark);
  out.n_star = static_cast<std::uint64_t>(h.nstar);
  r.seek(start, "gas records");
  r.skip(std::size_t(h.nsph) * kGas, "gas records");

  ParticleSet& p = out.particles;
  const std::size_t n = std::size_t(h.ndark) + std::size_t(h.nstar);
  p.reserve(n);
  // Without ids in the file, a particle's id is its position in the file, gas counted (ChaNGa's
  // iOrder): the dark particles of a file with gas are numbered from nsph.
  std::uint64_t index = static_cast<std::uint64_t>(h.nsph);
  for (int kind = 0; kind < 2; ++kind) {
    const std::int32_t count = kind == 0 ? h.ndark : h.nstar;
    const char* rec = kind == 0 ? "dark record" : "star record";
    for (std::int32_t i = 0; i < count; ++i, ++index) {
      float f[7];
      for (float& v : f) v = r.get<float>(rec);
      if (kind == 1) r.skip(8, rec);  // metals, tform
      std::uint64_t id = index;
      float phi = 0;
      if (out.bonsai_ids) {
        id = r.get<std::uint64_t>(rec);
      } else {
        r.get<float>(rec);  // eps
        phi = r.get<float>(rec);
      }
      p.push_back(f[1], f[2], f[3], f[4], f[5], f[6], f[0], id);
      p.pot.back() = phi;
    }
  }
  return out;
}

std::string tipsy_param_path(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_symlink(path, ec) ? output_target(path) + ".param" : path + ".param";
}

std::string tipsy_units_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const std::string& own : {path + ".param", tipsy_param_path(path)})
    if (fs::is_regular_file(own, ec)) return own;
  // A run's snapshot (snapshot_NNN.tipsy, or a link to one): its directory's snapshot.param.
  // No wider rule: a directory's only *.param gave a converted file without units (written
  // without FILE.param so that no reader takes another file's units) a run's units.
  const auto run_units = [&](const fs::path& file) -> std::string {
    if (!numbered_output_name(file.filename().string(), "snapshot_", ".tipsy")) return "";
    const fs::path shared = file.parent_path() / kTipsyRunUnitsName;
    std::error_code eq;
    return fs::is_regular_file(shared, eq) ? shared.string() : "";
  };
  if (std::string u = run_units(fs::path(path)); !u.empty()) return u;
  try {
    return run_units(fs::path(output_target(path)));
  } catch (const std::runtime_error&) {  // a loop of links: reading it fails with its message
    return "";
  }
}

TipsyData read_tipsy(const std::string& path) {
  TipsyData out;
  {
    const MappedFile file(path);
    out = parse_tipsy(file.data(), file.size(), path);
  }
  // Units from the parameter file (tipsy_units_file), if any: both of dKpcUnit and dMsolUnit,
  // finite and > 0, or neither (a bad or partial pair was ignored, and the file read in the
  // run's units without a word).
  // A units file that cannot be read, a unit's name in another case or without "=", a unit
  // given twice or in hexadecimal are errors: each was skipped, and the file read in the run's
  // units with exit 0 (an audit: kinetic energy 11179.6 instead of 6e-6 in galaxy units).
  const std::string units_file = tipsy_units_file(path);
  std::ifstream param;
  if (!units_file.empty()) {
    param.open(units_file, std::ios::binary);
    if (!param)
      throw_bad_field(units_file, "file", "unreadable",
                      "the units file of " + path + " cannot be opened: " + std::strerror(errno));
  }
  std::optional<double> kpc, msol;
  std::string line;
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  while (std::getline(param, line)) {
    line = line.substr(0, line.find('#'));
    const auto eq = line.find('=');
    std::istringstream key(line.substr(0, eq));
    std::string k;
    key >> k;
    const std::string unit = lower(k).starts_with("dkpcunit")    ? "dKpcUnit"
                             : lower(k).starts_with("dmsolunit") ? "dMsolUnit"
                                                                 : "";
    if (unit.empty()) continue;  // another parameter (a ChaNGa .param holds many)
    if (k != unit || eq == std::string::npos)
      throw_bad_field(units_file, unit, "'" + line + "'",
                      "a unit is given as " + unit + " = VALUE");
    std::string text = line.substr(eq + 1);
    text.erase(0, text.find_first_not_of(" \t\r"));
    text.erase(text.find_last_not_of(" \t\r") + 1);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || !(v > 0) ||
        text.find_first_of("xX") != std::string::npos)
      throw_bad_field(units_file, k, "'" + text + "'",
                      "the tipsy units must be finite decimal numbers > 0");
    std::optional<double>& slot = k == "dKpcUnit" ? kpc : msol;
    if (slot)
      throw_bad_field(units_file, k, "'" + text + "'", "given twice: also " + number_text(*slot));
    slot = v;
  }
  if (param.bad())
    throw_bad_field(units_file, "file", "unreadable",
                    "the units file of " + path + " could not be read");
  if (!units_file.empty() && !kpc && !msol)
    out.units_note = units_file + " names neither dKpcUnit nor dMsolUnit: no units taken";
  if (kpc.has_value() != msol.has_value())
    throw_bad_field(units_file, kpc ? "dMsolUnit" : "dKpcUnit", "missing",
                    std::string("the tipsy units need both dKpcUnit and dMsolUnit; ") +
                        (kpc ? "dKpcUnit" : "dMsolUnit") + " is given");
  if (kpc && msol) {
    out.units = units_g1(*kpc * kKpcInCm, *msol * kSolarMassInG);
    out.units_known = true;
  }
  validate_loaded(out.particles, path);
  return out;
}

void write_tipsy(const std::string& path, const ParticleSet& p, double time,
                 const UnitSystem& units, double eps, double G_run, bool with_param,
                 const std::string& units_file) {
  if (p.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument(path + ": field nbodies: value " + std::to_string(p.size()) +
                                " (tipsy counts are 32-bit; use HDF5)");
  // G = 1 units with the same length and mass units: v' = v / sqrt(G), t' = t sqrt(G),
  // phi' = phi / G.
  const double G = G_run > 0 ? G_run : units.G(), sg = std::sqrt(G);
  const UnitSystem file_units = units_g1(units.length_cm, units.mass_g);
  const auto n = static_cast<std::int32_t>(p.size());
  {  // float32 records: inf (masses of 1e43 g) or a mass of 0 could not be read back
    const std::string advice = "tipsy is float32; write HDF5";
    require_float32_field(p, {&p.m}, 1.0, path, "mass", true, advice);
    require_float32_field(p, {&p.x, &p.y, &p.z}, 1.0, path, "pos", false, advice);
    require_float32_field(p, {&p.vx, &p.vy, &p.vz}, 1.0 / sg, path, "vel", false, advice);
    require_float32_field(p, {&p.pot}, 1.0 / G, path, "phi", false, advice);
  }
  // The units file is written to its temporary first and renamed after the particles': a
  // .param that cannot be written (a directory of that name) failed after the particles had
  // replaced the old file, which was then left with another file's units.
  // Beside the file the particles go to: a symbolic link's target (tipsy_param_path).
  std::unique_ptr<TemporaryOutput> param;
  // A shared units file serves the files of its own directory: through a symbolic link (a
  // run's snapshot_003.tipsy linked to a file elsewhere) the units go beside the target, which
  // read alone had none (its own .param was removed).
  std::error_code el;
  const bool shared = !units_file.empty() && !std::filesystem::is_symlink(path, el);
  const std::string param_path = shared ? units_file : tipsy_param_path(path);
  if (with_param) {
    std::error_code ec;
    if (std::filesystem::is_directory(param_path, ec))
      throw std::invalid_argument(param_path + ": is a directory (tipsy's units file goes there)");
    param = std::make_unique<TemporaryOutput>(param_path, "tipsy units file");
    param->out.precision(17);
    param->out << "# units of "
               << (shared ? std::string("the tipsy snapshots snapshot_NNN.tipsy beside it")
                          : std::filesystem::path(path).filename().string())
               << " (G = 1), written by hoshi\n"
               << "dKpcUnit = " << file_units.length_cm / kKpcInCm << "\n"
               << "dMsolUnit = " << file_units.mass_g / kSolarMassInG << "\n"
               << "bComove = 0\n"
               << "bPeriodic = 0\n";
  }
  write_stream_atomically(path, [&](std::ostream& s) {
    std::string buf;
    put_bytes(buf, time * sg, true);
    for (std::int32_t v : {n, 3, 0, n, 0, 0}) put_bytes(buf, v, true);
    // Records in chunks, so that memory stays small for large N.
    constexpr std::size_t chunk = 1 << 16;
    for (std::size_t i0 = 0; i0 < p.size(); i0 += chunk) {
      for (std::size_t i = i0; i < std::min(p.size(), i0 + chunk); ++i)
        for (double v : {p.m[i], p.x[i], p.y[i], p.z[i], p.vx[i] / sg, p.vy[i] / sg, p.vz[i] / sg,
                         eps, p.pot[i] / G})
          put_bytes(buf, static_cast<float>(v), true);
      s.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
    s.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  });
  if (param) param->commit();
  // A .param that is not the one just written (the replaced file's units) would be read as
  // these particles' (a CSV converted onto a galaxy-units file.tipsy came back with masses 4.3e4
  // times larger): without units both names go; with them, through a link, PATH.param, which
  // read_tipsy takes before the target's.
  for (const std::string& stale : {path + ".param", tipsy_param_path(path)}) {
    if (param && stale == param_path) continue;
    std::error_code ec;
    if (std::filesystem::is_regular_file(stale, ec) && !std::filesystem::remove(stale, ec) && ec)
      throw std::runtime_error(path + ": written, but " + stale +
                               " (another file's units, which a reader would take) cannot be "
                               "removed: " +
                               ec.message());
  }
}

}  // namespace hoshi::io
