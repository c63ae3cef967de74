// libFuzzer target: the particle CSV reader (header, "#" comments, numpy's "# id,..." header and
// float ids, a byte order mark) and its content signature, on arbitrary bytes. Bad input may only
// ever raise std::invalid_argument; anything else (a crash, an out-of-bounds read caught by
// ASan, undefined behaviour, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "io/csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)hoshi::io::looks_like_csv(data, size);
  try {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    (void)hoshi::io::parse_csv(in, "fuzz.csv");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
