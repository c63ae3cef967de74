// libFuzzer target: the tipsy reader (standard XDR and Bonsai little-endian) on arbitrary bytes.
// Bad input may only ever raise std::invalid_argument; anything else (a crash, an
// out-of-bounds read caught by ASan, undefined behaviour, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "io/tipsy.hpp"
#include "io/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const hoshi::io::TipsyData d = hoshi::io::parse_tipsy(data, size, "fuzz.tipsy");
    hoshi::io::validate_loaded(d.particles, "fuzz.tipsy");
    (void)hoshi::io::looks_like_tipsy(data, size, size);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
