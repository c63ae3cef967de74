#include "io/byte_reader.hpp"

#include <filesystem>
#include <fstream>

namespace hoshi::io {

std::vector<unsigned char> read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw_bad_field(path, "file", "missing", "no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_bad_field(path, "file", "unreadable", "cannot open");
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (in.bad()) throw_bad_field(path, "file", "unreadable", "read error");
  return bytes;
}

}  // namespace hoshi::io
