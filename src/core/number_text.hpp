// A number in messages: the shortest text that reads back as the value (1.0000001 stays
// 1.0000001; std::to_string printed 1.000000 and a stream's default precision 1).
#pragma once

#include <charconv>
#include <string>
#include <string_view>

namespace hoshi {

// Where std::from_chars should start reading a number typed by a user: past a leading '+',
// the number's own sign, which from_chars does not take ("+1" was "not a number"); "+-1",
// "++1" and a lone "+" stay refused.
inline const char* number_start(std::string_view s) {
  return s.size() > 1 && s[0] == '+' && s[1] != '+' && s[1] != '-' ? s.data() + 1 : s.data();
}

// Whole numbers below 2^53 are written with all their digits (100000, not 1e+05), so that
// an integral double (h5py writes float64) reads back through an integer option too.
inline std::string number_text(double v) {
  char buf[32];
  const bool whole = v == v && v > -9007199254740992.0 && v < 9007199254740992.0 &&
                     static_cast<double>(static_cast<long long>(v)) == v;
  const auto r = whole ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                       : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace hoshi
