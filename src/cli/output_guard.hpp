// Refuses to replace an existing output file unless --overwrite was given, an output file that
// is the command's input, and one whose directory does not exist or cannot be written.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/atomic_file.hpp"

namespace hoshi::cli {

// `inputs`: the files the command reads; an output that is one of them (by path or by link)
// is refused even with --overwrite (the input would be gone, its contents replaced).
inline void require_new_output(const std::string& path, bool overwrite,
                               const char* option = "--out",
                               const std::vector<std::string>& inputs = {}) {
  std::error_code ec;
  if (path.empty()) throw std::invalid_argument(std::string(option) + ": empty file name");
  // An impossible path is refused before any work is done (not after minutes of it).
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(std::string(option) + " " + path +
                                ": is a directory (give a file name)");
  for (const std::string& in : inputs)
    if (std::filesystem::equivalent(path, in, ec))
      throw std::invalid_argument(std::string(option) + " " + path + ": is the input file " + in +
                                  " (give another name; it would replace the input)");
  // A device or FIFO (/dev/stdout, /dev/null) is written in place: nothing is replaced.
  if (io::written_in_place(path)) return;
  if (!overwrite && std::filesystem::exists(path, ec))
    throw std::invalid_argument(std::string(option) + " " + path +
                                ": file exists (use --overwrite to replace it)");
  // The temporary goes beside the file a symbolic link names (io::write_atomically).
  const std::filesystem::path dir = std::filesystem::path(io::output_target(path)).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
    throw std::invalid_argument(
        std::string(option) + " " + path + ": directory " + dir.string() +
        (std::filesystem::exists(dir, ec) ? " is not a directory" : " does not exist"));
  if (::access(dir.empty() ? "." : dir.c_str(), W_OK) != 0)
    throw std::invalid_argument(std::string(option) + " " + path + ": directory " +
                                (dir.empty() ? std::string(".") : dir.string()) +
                                " is not writable");
}

}  // namespace hoshi::cli
