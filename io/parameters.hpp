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

// The softening a Gadget-4 or AREPO run recorded for the particle types a file holds
// (io::gadget_softening): `eps` where every type has the same one, and where it came from
// ("Gadget-4's SofteningComovingClass1 for PartType1") or, without `eps`, the softenings by
// type ("PartType1 0.044, PartType2 0.1"). Gadget's kernel is its cubic spline.
struct GadgetSoftening {
  std::string code;  // "Gadget-4" or "AREPO"
  std::optional<double> eps;
  std::string text;
  // A value that is not a number >= 0 (a class not an integer 0..63): the one-line error
  // "FILE: field F: value V (why)", raised where the softening would be taken (a bad value
  // blocked every command on the file, --softening given or not); then no eps.
  std::string error;
};

// "1000", "0.5", "plummer": the value as text, doubles with 17 significant digits.
std::string to_string(const ParamValue& v);

// The value as a number (an integer or a double), or nullopt for text.
std::optional<double> to_number(const ParamValue& v);

// The entry named `key`, or nullptr.
const ParamValue* find_param(const ParamList& params, const std::string& key);

}  // namespace hoshi::io
