// libFuzzer target: the Gadget format 1/2 binary reader on arbitrary bytes. Bad input may
// only ever raise std::invalid_argument.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "io/gadget_binary.hpp"
#include "io/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const hoshi::io::GadgetBinaryData d = hoshi::io::parse_gadget_binary(data, size, "fuzz.gadget");
    hoshi::io::validate_loaded(d.particles, "fuzz.gadget");
    (void)hoshi::io::looks_like_gadget_binary(data, size);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
