// Named run parameters: what a parameter file holds, what the command line overrides, and
// what every snapshot stores as attributes of /Parameters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace hoshi::io {

// A parameter value: integer, real or text (booleans are integers 0/1).
using ParamValue = std::variant<std::int64_t, double, std::string>;

// Parameters in a fixed order (the order they are printed and written).
using ParamList = std::vector<std::pair<std::string, ParamValue>>;

// "1000", "0.5", "plummer": the value as text, doubles with 17 significant digits.
std::string to_string(const ParamValue& v);

// The value as a number (an integer or a double), or nullopt for text.
std::optional<double> to_number(const ParamValue& v);

// The entry named `key`, or nullptr.
const ParamValue* find_param(const ParamList& params, const std::string& key);

}  // namespace hoshi::io
