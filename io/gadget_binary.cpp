#include "io/gadget_binary.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>

#include "io/atomic_file.hpp"
#include "io/byte_reader.hpp"
#include "io/validate.hpp"

namespace hoshi::io {

namespace {

struct Header {
  std::uint32_t npart[6];
  double mass[6];
  double time, redshift;
  std::uint32_t total[6], high[6];
  std::int32_t num_files;
  double box_size, omega0;
};

// One Fortran record: returns its payload offset and length and moves past it.
struct Record {
  std::size_t offset, length;
};

Record read_record(ByteReader& r, const std::string& block) {
  const std::string f = block + " record";
  const auto len = r.get<std::uint32_t>(f.c_str());
  const std::size_t offset = r.pos();
  r.skip(len, f.c_str());
  const auto tail = r.get<std::uint32_t>(f.c_str());
  if (tail != len)
    throw_bad_field(
        r.file(), block + " record marker", tail,
        "trailing marker differs from leading marker " + std::to_string(len) + " (corrupt file)");
  return {offset, len};
}

// Format 2: the 8-byte label record before a block. Returns the label.
std::string read_label(ByteReader& r) {
  const Record rec = read_record(r, "label");
  if (rec.length != 8)
    throw_bad_field(r.file(), "label record", rec.length, "format-2 label records have 8 bytes");
  const std::size_t save = r.pos();
  r.seek(rec.offset, "label");
  std::string label(4, ' ');
  for (char& c : label) c = static_cast<char>(r.get<std::uint8_t>("label"));
  r.seek(save, "label");
  return label;
}

Header parse_header(ByteReader& r, std::size_t offset) {
  Header h{};
  r.seek(offset, "HEAD");
  for (auto& n : h.npart) n = r.get<std::uint32_t>("HEAD.npart");
  for (auto& m : h.mass) m = r.get<double>("HEAD.mass");
  h.time = r.get<double>("HEAD.time");
  h.redshift = r.get<double>("HEAD.redshift");
  r.skip(8, "HEAD.flags");
  for (auto& n : h.total) n = r.get<std::uint32_t>("HEAD.npartTotal");
  r.skip(4, "HEAD.flag_cooling");
  h.num_files = r.get<std::int32_t>("HEAD.num_files");
  h.box_size = r.get<double>("HEAD.BoxSize");
  h.omega0 = r.get<double>("HEAD.Omega0");
  r.skip(8 * 2 + 8, "HEAD.cosmology");
  for (auto& n : h.high) n = r.get<std::uint32_t>("HEAD.npartTotalHighWord");
  return h;
}

}  // namespace

bool looks_like_gadget_binary(const unsigned char* data, std::size_t size) {
  if (size < 4) return false;
  for (bool big : {false, true}) {
    ByteReader r(data, size, "", big);
    const auto first = r.get<std::uint32_t>("");
    if (first == 256 && size >= 264) return true;
    if (first == 8 && size >= 12 && std::memcmp(data + 4, "HEAD", 4) == 0) return true;
  }
  return false;
}

GadgetBinaryData parse_gadget_binary(const unsigned char* data, std::size_t size,
                                     const std::string& name) {
  GadgetBinaryData out;
  if (size < 4)
    throw_bad_field(name, "HEAD record", size, "truncated: file shorter than a record marker");
  // Byte order and format from the first marker: 256 (format 1) or 8 (format 2).
  bool found = false;
  for (bool big : {false, true}) {
    ByteReader r(data, size, name, big);
    const auto first = r.get<std::uint32_t>("HEAD record");
    if (first == 256 || first == 8) {
      out.big_endian = big;
      out.format = first == 256 ? 1 : 2;
      found = true;
      break;
    }
  }
  if (!found) {
    ByteReader r(data, size, name, false);
    const std::uint32_t marker = r.get<std::uint32_t>("HEAD");
    // Gadget-4's own binary header (64-bit counts): a record of 176 bytes.
    throw_bad_field(name, "HEAD record marker", marker,
                    marker == 176 || __builtin_bswap32(marker) == 176
                        ? "a Gadget-4 binary header; hoshi reads Gadget binary files with "
                          "Gadget-2's 256-byte header (Gadget-4 with GADGET2_HEADER) and "
                          "Gadget-4's HDF5 snapshots"
                        : "not a Gadget binary file: expected 256 (format 1) or 8 (format 2)");
  }
  ByteReader r(data, size, name, out.big_endian);
  auto block = [&](const char* expected) {
    if (out.format == 2) {
      const std::string label = read_label(r);
      if (label != expected)
        throw_bad_field(name, "block label", "'" + label + "'",
                        std::string("expected '") + expected + "'");
    }
    return read_record(r, expected);
  };
  const Record head = block("HEAD");
  if (head.length != 256)
    throw_bad_field(name, "HEAD record", head.length, "the Gadget header has 256 bytes");
  const std::size_t after_head = r.pos();
  const Header h = parse_header(r, head.offset);
  r.seek(after_head, "HEAD");
  out.time = h.time;
  out.redshift = h.redshift;
  out.box_size = h.box_size;
  out.omega0 = h.omega0;
  out.num_files = h.num_files;
  if (h.num_files < 1) throw_bad_field(name, "HEAD.num_files", h.num_files, "must be >= 1");
  if (!std::isfinite(h.time)) throw_bad_field(name, "HEAD.time", h.time, "must be finite");

  std::uint64_t n_all = 0, n_mass = 0;
  for (int t = 0; t < 6; ++t) {
    n_all += h.npart[t];
    if (!(h.mass[t] >= 0) || !std::isfinite(h.mass[t]))
      throw_bad_field(name, "HEAD.mass[" + std::to_string(t) + "]", h.mass[t],
                      "MassTable entries must be finite and >= 0");
    if (h.mass[t] == 0) n_mass += h.npart[t];
    const std::uint64_t total = h.total[t] + (std::uint64_t(h.high[t]) << 32);
    out.total[t] = total;
    if (h.num_files == 1) {
      if (total != h.npart[t])
        throw_bad_field(
            name, "HEAD.npartTotal[" + std::to_string(t) + "]", total,
            "differs from npart = " + std::to_string(h.npart[t]) + " in a single-file snapshot");
    }
  }
  if (n_all == 0) return out;

  // Element size from the block length: float or double, 32- or 64-bit ids.
  auto element = [&](const Record& rec, std::uint64_t count, const char* field,
                     std::size_t per) -> std::size_t {
    for (std::size_t s : {std::size_t{4}, std::size_t{8}})
      if (rec.length == count * per * s) return s;
    throw_bad_field(name, std::string(field) + " record", rec.length,
                    "length is neither " + std::to_string(count * per * 4) + " (32-bit) nor " +
                        std::to_string(count * per * 8) + " (64-bit) bytes for " +
                        std::to_string(count) + " particles (header count mismatch?)");
  };
  auto real_at = [&](std::size_t offset, std::size_t s) {
    r.seek(offset, "data");
    return s == 4 ? double(r.get<float>("data")) : r.get<double>("data");
  };

  const Record pos = block("POS ");
  const std::size_t sp = element(pos, n_all, "POS", 3);
  const Record vel = block("VEL ");
  const std::size_t sv = element(vel, n_all, "VEL", 3);
  const Record ids = block("ID  ");
  const std::size_t si = element(ids, n_all, "ID", 1);
  Record mass{0, 0};
  std::size_t sm = 8;
  if (n_mass > 0) {
    mass = block("MASS");
    sm = element(mass, n_mass, "MASS", 1);
  }
  out.double_precision = sp == 8;
  out.long_ids = si == 8;

  ParticleSet& p = out.particles;
  std::size_t loaded = 0;
  for (int t = 1; t < 6; ++t) loaded += h.npart[t];
  p.reserve(loaded);
  std::uint64_t k = 0, km = 0;
  for (int t = 0; t < 6; ++t) {
    const std::size_t begin = p.size(), row0 = k, mass_row0 = km;
    for (std::uint32_t i = 0; i < h.npart[t]; ++i, ++k) {
      double m = h.mass[t];
      if (h.mass[t] == 0) m = real_at(mass.offset + km++ * sm, sm);
      if (t == 0) continue;
      const double x = real_at(pos.offset + (3 * k) * sp, sp);
      const double y = real_at(pos.offset + (3 * k + 1) * sp, sp);
      const double z = real_at(pos.offset + (3 * k + 2) * sp, sp);
      const double vx = real_at(vel.offset + (3 * k) * sv, sv);
      const double vy = real_at(vel.offset + (3 * k + 1) * sv, sv);
      const double vz = real_at(vel.offset + (3 * k + 2) * sv, sv);
      r.seek(ids.offset + k * si, "ID");
      const std::uint64_t id = si == 4 ? r.get<std::uint32_t>("ID") : r.get<std::uint64_t>("ID");
      p.push_back(x, y, z, vx, vy, vz, m, id);
    }
    if (t > 0)  // bad values named by block and row (of every type's particles, gas included)
      require_valid_rows(
          p, begin, p.size(), name,
          {"POS", "VEL", h.mass[t] == 0 ? "MASS" : "HEAD.mass[" + std::to_string(t) + "]", row0,
           h.mass[t] == 0 ? std::optional<std::size_t>(mass_row0) : std::nullopt});
    (t == 0 ? out.skipped : out.loaded)[t] += h.npart[t];
  }
  return out;
}

GadgetBinaryData read_gadget_binary(const std::string& path) {
  GadgetBinaryData out;
  {
    const MappedFile mapped(path);
    out = parse_gadget_binary(mapped.data(), mapped.size(), path);
  }
  if (out.num_files > 1) {
    static const std::regex member(R"((.*)\.(\d+)$)");
    std::smatch m;
    if (!std::regex_match(path, m, member))
      throw_bad_field(path, "HEAD.num_files", out.num_files,
                      "a multi-file snapshot must be named NAME.K");
    GadgetBinaryData all;
    for (int k = 0; k < out.num_files; ++k) {
      const std::string file = m[1].str() + "." + std::to_string(k);
      const MappedFile mapped(file);
      GadgetBinaryData part = parse_gadget_binary(mapped.data(), mapped.size(), file);
      if (k == 0) {
        all = part;
        continue;
      }
      all.particles.append(part.particles);
      for (int t = 0; t < 6; ++t) {
        all.loaded[t] += part.loaded[t];
        all.skipped[t] += part.skipped[t];
      }
    }
    all.particles.shrink_to_fit();
    // The first member's header totals against what the members hold.
    for (int t = 0; t < 6; ++t)
      if (all.total[t] != all.loaded[t] + all.skipped[t])
        throw_bad_field(m[1].str() + ".0", "HEAD.npartTotal[" + std::to_string(t) + "]",
                        all.total[t],
                        "differs from the members' npart sum = " +
                            std::to_string(all.loaded[t] + all.skipped[t]));
    out = std::move(all);
  }
  validate_loaded(out.particles, path);
  return out;
}

void require_gadget_writable(const ParticleSet& p, const GadgetWriteOptions& o) {
  // Fortran record lengths are 32-bit: the largest block (positions) must fit, and in format 2
  // its label record's length, 8 more.
  if (p.size() * 3 * (o.double_precision ? 8 : 4) + 8 > 0xffffffffull)
    throw std::invalid_argument("Gadget binary: field npart: value " + std::to_string(p.size()) +
                                " (a block would exceed the 4 GiB record limit; use HDF5)");
  // 32-bit ids (Gadget without LONGIDS): an id that does not fit is refused, not wrapped; so is
  // one from 2^31 on, since Gadget-4 keeps the top bit of its 32-bit ids for itself.
  if (!o.long_ids)
    for (std::size_t i = 0; i < p.size(); ++i)
      if (p.id[i] >= (std::uint64_t{1} << 31))
        throw std::invalid_argument("Gadget binary: field ID: value " + std::to_string(p.id[i]) +
                                    " (particle " + std::to_string(i) +
                                    ") is 2^31 or more, beyond 32-bit Gadget ids (Gadget-4 "
                                    "keeps their top bit); write 64-bit ids (--gadget-ids 64, "
                                    "for a Gadget built with LONGIDS or IDS_64BIT) or renumber "
                                    "them (hoshi ic --renumber-ids)");
  // Float32 blocks: a value beyond its range was written as inf (a file in cgs units: masses
  // of 1e43 g), which no reader takes back; a mass below it as 0.
  if (!o.double_precision) {
    const std::string advice = "write double precision (--gadget-precision double) or HDF5";
    require_float32_field(p, {&p.x, &p.y, &p.z}, 1.0, "Gadget binary", "POS", false, advice);
    require_float32_field(p, {&p.vx, &p.vy, &p.vz}, 1.0, "Gadget binary", "VEL", false, advice);
    const bool table = o.mass_table && !p.m.empty() && p.m[0] != 0;  // as emit_gadget_binary
    if (!table) require_float32_field(p, {&p.m}, 1.0, "Gadget binary", "MASS", true, advice);
  }
}

namespace {
// The file's bytes, handed to `flush` in pieces of about 1 MiB (the buffer is then emptied), so
// that a writer holds no copy of the whole file (1e8 particles: 3.2 GB in float32).
void emit_gadget_binary(const ParticleSet& p, double time, const GadgetWriteOptions& o,
                        const std::function<void(std::string&)>& flush) {
  const bool big = o.big_endian;
  std::string out;
  const auto maybe_flush = [&] {
    if (out.size() >= (std::size_t{1} << 20)) flush(out), out.clear();
  };
  auto marker = [&](std::uint32_t v) { put_bytes(out, v, big); };
  auto begin_block = [&](const char* label, std::uint32_t len) {
    if (o.format == 2) {
      marker(8);
      out.append(label, 4);
      marker(len + 8);
      marker(8);
    }
    marker(len);
  };
  const auto n = static_cast<std::uint32_t>(p.size());
  const bool table = o.mass_table && n > 0 && p.m[0] != 0;  // a MassTable 0 means "MASS block"
  // Header.
  begin_block("HEAD", 256);
  const std::size_t h0 = out.size();
  for (int t = 0; t < 6; ++t) put_bytes(out, t == 1 ? n : 0u, big);
  for (int t = 0; t < 6; ++t) put_bytes(out, (t == 1 && table) ? p.m[0] : 0.0, big);
  put_bytes(out, time, big);
  put_bytes(out, 0.0, big);                                          // redshift
  put_bytes(out, std::int32_t{0}, big);                              // flag_sfr
  put_bytes(out, std::int32_t{0}, big);                              // flag_feedback
  for (int t = 0; t < 6; ++t) put_bytes(out, t == 1 ? n : 0u, big);  // npartTotal
  put_bytes(out, std::int32_t{0}, big);                              // flag_cooling
  put_bytes(out, std::int32_t{1}, big);                              // num_files
  for (double v : {0.0, 0.0, 0.0, 1.0}) put_bytes(out, v, big);      // BoxSize, Omega0, OmegaL, h
  put_bytes(out, std::int32_t{0}, big);                              // flag_stellarage
  put_bytes(out, std::int32_t{0}, big);                              // flag_metals
  for (int t = 0; t < 6; ++t) put_bytes(out, 0u, big);               // npartTotalHighWord
  put_bytes(out, std::int32_t{0}, big);                              // flag_entropy_instead_u
  put_bytes(out, std::int32_t{o.double_precision ? 1 : 0}, big);     // flag_doubleprecision
  out.resize(h0 + 256, '\0');
  marker(256);
  const std::uint32_t rs = o.double_precision ? 8 : 4;
  auto reals = [&](const char* label, const std::vector<double>* a, const std::vector<double>* b,
                   const std::vector<double>* c) {
    const std::uint32_t len = n * (c ? 3 : 1) * rs;
    begin_block(label, len);
    for (std::uint32_t i = 0; i < n; ++i)
      for (const auto* v : {a, b, c}) {
        if (!v) continue;
        if (o.double_precision)
          put_bytes(out, (*v)[i], big);
        else
          put_bytes(out, static_cast<float>((*v)[i]), big);
        maybe_flush();
      }
    marker(len);
  };
  reals("POS ", &p.x, &p.y, &p.z);
  reals("VEL ", &p.vx, &p.vy, &p.vz);
  const std::uint32_t is = o.long_ids ? 8 : 4;
  begin_block("ID  ", n * is);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (o.long_ids)
      put_bytes(out, p.id[i], big);
    else
      put_bytes(out, static_cast<std::uint32_t>(p.id[i]), big);
    maybe_flush();
  }
  marker(n * is);
  if (!table && n > 0) reals("MASS", &p.m, nullptr, nullptr);
  flush(out);
}
}  // namespace

std::string gadget_binary_bytes(const ParticleSet& p, double time, const GadgetWriteOptions& o) {
  require_gadget_writable(p, o);
  std::string bytes;
  emit_gadget_binary(p, time, o, [&](std::string& piece) { bytes += piece; });
  return bytes;
}

void write_gadget_binary(const std::string& path, const ParticleSet& p, double time,
                         const GadgetWriteOptions& options) {
  try {
    require_gadget_writable(p, options);  // before a temporary exists
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());  // the file it was to be
  }
  write_stream_atomically(path, [&](std::ostream& s) {
    emit_gadget_binary(p, time, options, [&](std::string& piece) {
      s.write(piece.data(), static_cast<std::streamsize>(piece.size()));
      if (!s) throw std::runtime_error(path + ": write failed (disk full?)");  // stop early
    });
  });
}

}  // namespace hoshi::io
