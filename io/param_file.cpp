#include "io/param_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "io/validate.hpp"

namespace hoshi::io {

std::vector<std::pair<std::string, std::string>> read_param_file(const std::string& path) {
  require_input_file(path, "no such parameter file");
  {
    // A particle file where the parameter file goes (hoshi run snapshot.hdf5): binary data, not
    // YAML ("unknown escape character" with the raw byte in the message).
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument(path + ": cannot open the parameter file");
    char head[4096];
    in.read(head, sizeof head);
    const auto n = in.gcount();
    const auto byte = [&](int k) { return k < n ? static_cast<unsigned char>(head[k]) : 0x100; };
    // UTF-16 and UTF-32 (with their byte order mark), which yaml-cpp reads, hold zero bytes.
    const bool wide = (byte(0) == 0xFF && byte(1) == 0xFE) ||
                      (byte(0) == 0xFE && byte(1) == 0xFF) ||
                      (byte(0) == 0 && byte(1) == 0 && byte(2) == 0xFE && byte(3) == 0xFF);
    if (!wide && std::find(head, head + n, '\0') != head + n)
      throw std::invalid_argument(path +
                                  ": binary data, not a YAML parameter file (a particle file? "
                                  "give it as --ic " +
                                  path + ")");
  }
  YAML::Node root;
  try {
    // One document: a second (after ---) was silently ignored.
    const std::vector<YAML::Node> docs = YAML::LoadAllFromFile(path);
    if (docs.size() > 1)
      throw std::invalid_argument(path + ": " + std::to_string(docs.size()) +
                                  " YAML documents (---); a parameter file is one mapping");
    if (!docs.empty()) root = docs[0];
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(path + ": line " + std::to_string(e.mark.line + 1) +
                                ": YAML error: " + e.msg);
  }
  std::vector<std::pair<std::string, std::string>> out;
  if (root.IsNull()) return out;
  if (!root.IsMap())
    throw std::invalid_argument(path + ": the parameter file must be a mapping of key: value");
  std::set<std::string> seen;
  for (const auto& kv : root) {
    const std::string line = std::to_string(kv.first.Mark().line + 1);
    if (!kv.first.IsScalar())
      throw std::invalid_argument(path + ": line " + line + ": keys must be plain names");
    std::string key = kv.first.as<std::string>();
    // A line without its ':' ("dt 0.01" as the last line) reaches here as a key with spaces
    // and no value (it was "unknown parameter 'dt 0.01'", without its line).
    if (const auto blank = key.find_first_of(" \t"); blank != std::string::npos)
      throw std::invalid_argument(
          path + ": line " + line + ": '" + key + "' is not a parameter name" +
          (kv.second.IsNull() ? " (a line key: value without its ':'?)" : ""));
    std::replace(key.begin(), key.end(), '_', '-');
    if (!kv.second.IsScalar() && !kv.second.IsNull())
      throw std::invalid_argument(path + ": line " + line + ": field " + key +
                                  ": value is a list or mapping (only single values are allowed)");
    if (!seen.insert(key).second)
      throw std::invalid_argument(path + ": line " + line + ": field " + key +
                                  ": given more than once");
    out.emplace_back(key, kv.second.IsNull() ? std::string() : kv.second.as<std::string>());
  }
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest_key(const std::string& key, const std::vector<std::string>& valid) {
  const auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  std::string best;
  std::size_t best_d = static_cast<std::size_t>(-1);
  for (const auto& v : valid) {
    const std::size_t d = edit_distance(lower(key), lower(v));
    // Near only: at most a third of the longer name edited ('n' suggested 'G', and 'overwrite'
    // 'solver').
    if (d < best_d && 3 * d <= std::max(key.size(), v.size())) best_d = d, best = v;
  }
  return best;
}

void require_known_key(const std::string& file, const std::string& key,
                       const std::vector<std::string>& valid) {
  if (std::find(valid.begin(), valid.end(), key) != valid.end()) return;
  const std::string near = nearest_key(key, valid);
  throw std::invalid_argument(file + ": unknown parameter '" + key + "'" +
                              (near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

ParamValue param_value_from_text(const std::string& text) {
  if (text.empty()) return text;
  // Decimal only (from_chars): strtod read "0x40" as 64, and a whole number beyond int64 (a
  // seed up to 2^64 - 1) became an inexact double that a restart could not pass back. Such
  // texts stay text.
  std::int64_t i = 0;
  const char* b = text.data();
  const char* e = text.data() + text.size();
  auto ri = std::from_chars(b, e, i);
  if (ri.ec == std::errc() && ri.ptr == e) return i;
  if (ri.ec == std::errc::result_out_of_range) return text;
  double d = 0;
  auto rd = std::from_chars(b, e, d);
  if (rd.ec == std::errc() && rd.ptr == e && std::isfinite(d)) return d;
  return text;
}

}  // namespace hoshi::io
