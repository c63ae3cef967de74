// Parameter files: a flat YAML mapping whose keys are the long option names of the command
// (`t-end: 10`, `solver: tree`, `quiet: true`; `t_end` is accepted for `t-end`).
//
//   # params.yml
//   ic: plummer
//   particles: 4096
//   t-end: 20
//   snapshot-every: 1
//
// Values are scalars; command-line options override the file. Unknown keys are an error that
// names the nearest valid key, if one is near.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "io/parameters.hpp"

namespace hoshi::io {

// (key, value text) in file order; keys normalised ('_' -> '-'). Throws std::invalid_argument
// "FILE: line L: field KEY: value V (why)" for YAML errors, non-scalar values or repeated keys.
std::vector<std::pair<std::string, std::string>> read_param_file(const std::string& path);

// Levenshtein distance (insertions, deletions, substitutions).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The entry of `valid` nearest to `key` by edit distance, case ignored (first of equals), if
// at most a third of the longer of the two is edited; "" if none is that near.
std::string nearest_key(const std::string& key, const std::vector<std::string>& valid);

// Throws std::invalid_argument "FILE: unknown parameter 'KEY' (did you mean 'NEAREST'?)" when
// `key` is not in `valid` (without the suggestion when none is near).
void require_known_key(const std::string& file, const std::string& key,
                       const std::vector<std::string>& valid);

// "12" -> int64 12, "0.5" / "1e-3" -> double, anything else (also "true") -> string.
ParamValue param_value_from_text(const std::string& text);

}  // namespace hoshi::io
