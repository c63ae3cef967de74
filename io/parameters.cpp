#include "io/parameters.hpp"

#include "core/number_text.hpp"

namespace hoshi::io {

std::string to_string(const ParamValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return number_text(std::get<double>(v));  // the shortest text that reads back exactly
}

std::optional<double> to_number(const ParamValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

const ParamValue* find_param(const ParamList& params, const std::string& key) {
  for (const auto& [k, v] : params)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace hoshi::io
