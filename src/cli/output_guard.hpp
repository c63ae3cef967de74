// Refuses to replace an existing output file unless --overwrite was given, and an output file
// whose directory does not exist.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace hoshi::cli {

inline void require_new_output(const std::string& path, bool overwrite,
                               const char* option = "--out") {
  std::error_code ec;
  if (path.empty()) throw std::invalid_argument(std::string(option) + ": empty file name");
  if (!overwrite && std::filesystem::exists(path, ec))
    throw std::invalid_argument(std::string(option) + " " + path +
                                ": file exists (use --overwrite to replace it)");
  // An impossible path is refused before any work is done (not after minutes of it).
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(std::string(option) + " " + path +
                                ": is a directory (give a file name)");
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
    throw std::invalid_argument(
        std::string(option) + " " + path + ": directory " + dir.string() +
        (std::filesystem::exists(dir, ec) ? " is not a directory" : " does not exist"));
}

}  // namespace hoshi::cli
