// A number in messages: the shortest text that reads back as the value (1.0000001 stays
// 1.0000001; std::to_string printed 1.000000 and a stream's default precision 1).
#pragma once

#include <charconv>
#include <string>

namespace hoshi {

inline std::string number_text(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace hoshi
