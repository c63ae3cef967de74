#include "io/parameters.hpp"

#include <iomanip>
#include <sstream>

namespace hoshi::io {

std::string to_string(const ParamValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  std::ostringstream o;
  o << std::setprecision(17) << std::get<double>(v);
  return o.str();
}

const ParamValue* find_param(const ParamList& params, const std::string& key) {
  for (const auto& [k, v] : params)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace hoshi::io
