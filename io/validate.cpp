#include "io/validate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <numeric>
#include <vector>

#include "core/checks.hpp"
#include "core/number_text.hpp"
#include "core/parallel_sort.hpp"

namespace hoshi::io {

std::string shown_value(std::string_view text, std::size_t max) {
  const bool quoted = text.size() >= 2 && text.front() == '\'' && text.back() == '\'';
  if (quoted) text = text.substr(1, text.size() - 2);
  std::string out = quoted ? "'" : "";
  const std::size_t n = std::min(text.size(), max);
  for (std::size_t k = 0; k < n; ++k) {
    const unsigned char c = static_cast<unsigned char>(text[k]);
    if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > max) out += "...";
  if (quoted) out += "'";
  if (text.size() > max) out += " (" + std::to_string(text.size()) + " bytes)";
  return out;
}

void require_input_file(const std::string& path, const std::string& why) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    // Unreadable (permissions): said with the reason, not as a format error later.
    if (::access(path.c_str(), R_OK) != 0)
      throw std::invalid_argument(path + ": cannot read the file: " + std::strerror(errno));
    return;
  }
  // A directory on the way that cannot be searched: not "missing".
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw std::invalid_argument(path + ": cannot access the file: " + ec.message());
  // A directory was reported as missing (hoshi forces /tmp: "no such file").
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(path + ": is a directory, not a file");
  // A pipe, a device, a socket (hoshi forces <(cat p.csv)) was "missing" too: the readers map
  // or seek their files.
  if (std::filesystem::exists(path, ec))
    throw std::invalid_argument(path +
                                ": is not a regular file (a pipe, device or socket: hoshi reads "
                                "its inputs from files; copy it to one)");
  const std::string member = multi_file_member(path);
  throw_bad_field(path, "file", "missing", member.empty() ? why : why + "; " + member);
}

std::string multi_file_member(const std::string& path) {
  const std::filesystem::path p(path);
  if (!p.has_extension()) return "";
  const std::filesystem::path member =
      p.parent_path() / (p.stem().string() + ".0" + p.extension().string());
  std::error_code ec;
  if (!std::filesystem::exists(member, ec)) return "";
  return member.string() + " is there: a multi-file set is read from any of its files";
}

std::optional<std::pair<std::size_t, std::size_t>> first_shared_id(const ParticleSet& p) {
  // Increasing ids (every file hoshi writes, most others' too): none shared, in one pass instead
  // of a sort (an indirect sort of 1e8 ids on one thread takes tens of seconds at every load).
  if (std::adjacent_find(p.id.begin(), p.id.end(), std::greater_equal<>()) == p.id.end())
    return std::nullopt;
  // The ids themselves sorted (not indices by id: ~5x faster, the same memory), on every
  // thread; then the first two particles with the smallest shared id.
  std::vector<std::uint64_t> ids(p.id);
  parallel_sort(ids.begin(), ids.end(), std::less<>());
  const auto shared = std::adjacent_find(ids.begin(), ids.end());
  if (shared == ids.end()) return std::nullopt;
  const auto first = std::find(p.id.begin(), p.id.end(), *shared);
  const auto second = std::find(first + 1, p.id.end(), *shared);
  return std::pair{static_cast<std::size_t>(first - p.id.begin()),
                   static_cast<std::size_t>(second - p.id.begin())};
}

void require_unique_ids(const ParticleSet& p, const std::string& file) {
  if (const auto d = first_shared_id(p))
    throw_bad_field(file, "id", p.id[d->second],
                    "duplicate particle id: particles " + std::to_string(d->first) + " and " +
                        std::to_string(d->second) + " share it");
}

void require_valid_rows(const ParticleSet& p, std::size_t begin, std::size_t end,
                        const std::string& file, const FileColumns& columns) {
  auto fail = [&](std::size_t i, const std::string& field, double v, const char* why) {
    std::ostringstream s;
    s << "particle id " << p.id[i] << ": " << why;
    throw_bad_field(file, field, v, s.str());
  };
  auto vector_entry = [&](const std::string& name, std::size_t i, int k) {
    return name + "[" + std::to_string(columns.row0 + (i - begin)) + ", " + std::to_string(k) + "]";
  };
  for (std::size_t i = begin; i < end; ++i) {
    const double pos[3] = {p.x[i], p.y[i], p.z[i]}, vel[3] = {p.vx[i], p.vy[i], p.vz[i]};
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(pos[k]))
        fail(i, vector_entry(columns.position, i, k), pos[k], "must be finite");
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(vel[k]))
        fail(i, vector_entry(columns.velocity, i, k), vel[k], "must be finite");
    if (!std::isfinite(p.m[i]) || p.m[i] < 0)
      fail(i,
           columns.mass_row0
               ? columns.mass + "[" + std::to_string(*columns.mass_row0 + (i - begin)) + "]"
               : columns.mass,
           p.m[i], std::isfinite(p.m[i]) ? "masses must be >= 0" : "must be finite");
  }
}

void require_float32_field(const ParticleSet& p,
                           std::initializer_list<const std::vector<double>*> columns, double scale,
                           const std::string& file, const std::string& field, bool positive,
                           const std::string& advice) {
  int column = 0;
  for (const std::vector<double>* v : columns) {
    for (std::size_t i = 0; i < v->size(); ++i) {
      const double x = (*v)[i] * scale;
      const float f = static_cast<float>(x);
      const bool overflow = std::isfinite(x) && !std::isfinite(f);
      if (!overflow && !(positive && x > 0 && f == 0)) continue;
      throw_bad_field(file,
                      field + "[" + std::to_string(i) +
                          (columns.size() > 1 ? ", " + std::to_string(column) : std::string()) +
                          "]",
                      number_text(x),
                      "particle id " + std::to_string(p.id[i]) + ": " +
                          (overflow ? "beyond float32's range of +-3.4e38"
                                    : "a mass that rounds to 0 in float32") +
                          "; " + advice);
    }
    ++column;
  }
}

void validate_loaded(const ParticleSet& p, const std::string& file) {
  require_valid_particles(p, file);
  require_unique_ids(p, file);
}

}  // namespace hoshi::io
