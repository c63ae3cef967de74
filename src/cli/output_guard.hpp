// Refuses to replace an existing output file unless --overwrite was given.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace hoshi::cli {

inline void require_new_output(const std::string& path, bool overwrite,
                               const char* option = "--out") {
  std::error_code ec;
  if (!overwrite && std::filesystem::exists(path, ec))
    throw std::invalid_argument(std::string(option) + " " + path +
                                ": file exists (use --overwrite to replace it)");
}

}  // namespace hoshi::cli
