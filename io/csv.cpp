#include "io/csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <istream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "core/checks.hpp"
#include "io/atomic_file.hpp"
#include "io/validate.hpp"

namespace hoshi::io {

namespace {

constexpr std::string_view kHeader = "id,x,y,z,vx,vy,vz,m";
constexpr const char* kFields[] = {"id", "x", "y", "z", "vx", "vy", "vz", "m"};

[[noreturn]] void fail(const std::string& path, std::size_t line, const std::string& msg) {
  throw std::invalid_argument(path + ":" + std::to_string(line) + ": " + msg);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

void append_double(std::string& out, double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// The names of a header line: comma-separated, spaces and tabs ignored.
std::vector<std::string> header_names(std::string_view line) {
  std::vector<std::string> names(1);
  for (char c : line)
    if (c == ',')
      names.emplace_back();
    else if (c != ' ' && c != '\t')
      names.back() += c;
  return names;
}

// Column of each of the 8 fields (id, x, y, z, vx, vy, vz, m) in a header's names, -1 where
// absent; other names are columns that are skipped.
struct Columns {
  int of[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  int count = 0;            // columns of a row
  std::string missing;      // the first of x..m that the header lacks ("" when none)
  std::string repeated;     // a field that the header names twice
  bool all_numbers = true;  // every name parses as a number: a data row, not a header
};

Columns columns_of(std::string_view line) {
  Columns c;
  const auto names = header_names(line);
  c.count = static_cast<int>(names.size());
  for (int k = 0; k < c.count; ++k) {
    double v = 0;
    const auto& n = names[static_cast<std::size_t>(k)];
    const auto r = std::from_chars(n.data(), n.data() + n.size(), v);
    if (n.empty() || r.ec != std::errc() || r.ptr != n.data() + n.size()) c.all_numbers = false;
    for (int f = 0; f < 8; ++f)
      if (n == kFields[f]) {
        if (c.of[f] >= 0 && c.repeated.empty()) c.repeated = n;
        c.of[f] = k;
      }
  }
  for (int f = 1; f < 8 && c.missing.empty(); ++f)
    if (c.of[f] < 0) c.missing = kFields[f];
  return c;
}

// A line before the particles: blank, a comment ("# ..."), the header (plain, or behind "#" as
// numpy.savetxt(..., header=...) writes it; spaces and tabs ignored; its columns x, y, z, vx,
// vy, vz, m and optionally id in any order, among others), or something else.
enum class Lead { blank, comment, header, other };

Lead classify(std::string_view line) {
  line = trim(line);
  if (line.empty()) return Lead::blank;
  const bool hash = line.front() == '#';
  if (hash) line.remove_prefix(1);
  const Columns c = columns_of(line);
  if (c.missing.empty() && c.repeated.empty()) return Lead::header;
  return hash ? Lead::comment : Lead::other;
}

// A field as the messages show it: quoted, control bytes escaped, a long one cut.
std::string quoted(std::string_view field) {
  // Appended piece by piece: GCC 12's "'" + std::string(...) warned of a memcpy overlap that
  // cannot happen (-Wrestrict, GCC bug 105329).
  std::string text;
  text.reserve(field.size() + 2);
  text += '\'';
  text.append(field);
  text += '\'';
  return shown_value(text);
}

constexpr std::string_view kBom = "\xEF\xBB\xBF";  // UTF-8 byte order mark (spreadsheets write it)

}  // namespace

bool looks_like_csv(const unsigned char* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  while (!text.empty()) {
    const auto eol = text.find('\n');
    switch (classify(text.substr(0, eol))) {
      case Lead::header:
        return true;
      case Lead::other:
        return false;
      default:
        break;
    }
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return false;
}

ParticleSet read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot open file");
  return parse_csv(in, path);
}

ParticleSet parse_csv(std::istream& in, const std::string& path) {
  std::string line;
  std::size_t lineno = 0;
  // Blank and comment lines may precede the header, which may follow a "#" (numpy.savetxt).
  bool comments = false;
  for (bool header = false; !header;) {
    if (!std::getline(in, line))
      fail(path, comments ? lineno : 1,
           comments ? "no header " + std::string(kHeader) + " (only blank and # lines)"
                    : "empty file (expected header " + std::string(kHeader) + ")");
    if (++lineno == 1 && line.compare(0, kBom.size(), kBom) == 0) line.erase(0, kBom.size());
    switch (classify(line)) {
      case Lead::header:
        header = true;
        break;
      case Lead::comment:
        comments = true;
        break;
      case Lead::other: {
        const Columns c = columns_of(trim(line));
        const std::string text(trim(line).substr(0, 60));
        if (c.all_numbers)
          fail(path, lineno,
               "no header line before the data ('" + text +
                   "'): the first line names the columns, e.g. " + std::string(kHeader));
        fail(path, lineno,
             "header is '" + text + "': " +
                 (c.repeated.empty() ? "no column " + c.missing
                                     : "column " + c.repeated + " named twice") +
                 " (the columns x,y,z,vx,vy,vz,m in any order, id optional, others skipped; "
                 "blank and # lines may come before it)");
      }
      default:
        break;
    }
  }
  const Columns columns = columns_of(trim(line).front() == '#' ? trim(line).substr(1) : trim(line));
  const int ncol = columns.count;
  ParticleSet p;
  std::vector<std::size_t> line_of;  // each particle's line, for the duplicate-id error
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty() || trim(line).front() == '#') continue;  // blank, or a comment
    std::string_view rest(line);
    std::string_view f[8];  // the fields id, x, ..., m of this row, in that order
    int nf = 0;
    while (true) {
      const auto comma = rest.find(',');
      for (int k = 0; k < 8; ++k)
        if (columns.of[k] == nf) f[k] = trim(rest.substr(0, comma));
      ++nf;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (nf != ncol)
      fail(path, lineno,
           "expected " + std::to_string(ncol) + " fields (the header's columns), found " +
               std::to_string(nf));
    // A leading '+' (C's %+e, strtod and numpy take it; from_chars does not) is skipped; the
    // messages show the field as written.
    const auto number = [](std::string_view s) {
      if (s.size() > 1 && s[0] == '+' && s[1] != '+' && s[1] != '-') s.remove_prefix(1);
      return s;
    };
    // Without an id column, particles are numbered in file order.
    std::uint64_t id = p.size();
    if (columns.of[0] >= 0) {
      const std::string_view digits = number(f[0]);
      const char* const end = digits.data() + digits.size();
      auto r = std::from_chars(digits.data(), end, id);
      if (r.ec == std::errc::result_out_of_range)
        fail(path, lineno,
             "field id: value " + quoted(f[0]) + " (out of range: ids are 0 to 2^64 - 1)");
      if (r.ec != std::errc() || r.ptr != end) {
        // A whole number written as a float, as numpy.savetxt's default "%.18e" writes every
        // column: exact up to 2^53.
        double v = 0;
        const auto d = std::from_chars(digits.data(), end, v);
        if (d.ec != std::errc() || d.ptr != end || f[0].empty() || !(v >= 0) ||
            v != std::floor(v) || v > 0x1p53)
          fail(path, lineno,
               "field id: value " + quoted(f[0]) +
                   " (not a non-negative integer, nor a whole number up to 2^53 written as a "
                   "float)");
        id = static_cast<std::uint64_t>(v);
      }
    }
    double v[7];
    for (int k = 0; k < 7; ++k) {
      const std::string_view s = f[k + 1], digits = number(s);
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v[k]);
      if (r.ec == std::errc::result_out_of_range && r.ptr == digits.data() + digits.size())
        fail(path, lineno,
             std::string("field ") + kFields[k + 1] + ": value " + quoted(s) +
                 " (outside the range of a double)");
      if (r.ec != std::errc() || r.ptr != digits.data() + digits.size() || s.empty())
        fail(path, lineno,
             std::string("field ") + kFields[k + 1] + ": value " + quoted(s) + " (not a number)");
      if (!std::isfinite(v[k]))
        fail(path, lineno,
             std::string("field ") + kFields[k + 1] + ": value " + quoted(s) + " (not finite)");
    }
    if (v[6] < 0)
      fail(path, lineno, "field m: value " + quoted(f[7]) + " (negative: masses must be >= 0)");
    p.push_back(v[0], v[1], v[2], v[3], v[4], v[5], v[6], id);
    line_of.push_back(lineno);
  }
  if (p.empty()) fail(path, lineno, "no particles after the header");
  // Duplicate ids: the later line is named, with the first one that has the id.
  if (const auto d = first_shared_id(p))
    fail(path, line_of[d->second],
         "field id: value " + std::to_string(p.id[d->second]) + " (duplicate of line " +
             std::to_string(line_of[d->first]) + ": ids must be unique)");
  require_valid_particles(p, path);
  return p;
}

namespace {
// `header`, then one row per particle: its id and `columns`, written through a buffer of about
// 1 MiB (the whole text of 1e8 particles would be ~16 GB in memory).
void write_rows(const std::string& path, std::string_view header, const ParticleSet& p,
                std::initializer_list<const std::vector<double>*> columns) {
  write_stream_atomically(path, [&](std::ostream& s) {
    std::string out(header);
    out += '\n';
    for (std::size_t i = 0; i < p.size(); ++i) {
      out += std::to_string(p.id[i]);
      for (const auto* c : columns) {
        out += ',';
        append_double(out, (*c)[i]);
      }
      out += '\n';
      if (out.size() >= (std::size_t{1} << 20)) {
        s.write(out.data(), static_cast<std::streamsize>(out.size()));
        if (!s) throw std::runtime_error(path + ": write failed (disk full?)");  // stop early
        out.clear();
      }
    }
    s.write(out.data(), static_cast<std::streamsize>(out.size()));
  });
}
}  // namespace

void write_csv(const std::string& path, const ParticleSet& p) {
  write_rows(path, kHeader, p, {&p.x, &p.y, &p.z, &p.vx, &p.vy, &p.vz, &p.m});
}

void write_forces_csv(const std::string& path, const ParticleSet& p) {
  write_rows(path, "id,ax,ay,az,pot", p, {&p.ax, &p.ay, &p.az, &p.pot});
}

}  // namespace hoshi::io
