#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>

namespace hoshi::io {

namespace fs = std::filesystem;

void write_atomically(const std::string& path,
                      const std::function<void(const std::string&)>& write) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  std::string name = ".";
  name.append(target.filename().string()).append(".tmp").append(std::to_string(rd() % 1000000));
  const std::string tmp = (dir / name).string();
  try {
    write(tmp);
    const int fd = ::open(tmp.c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

void prepare_output_dir(const std::string& dir, bool overwrite) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw std::invalid_argument("--out " + dir + ": exists and is not a directory");
    if (!fs::is_empty(dir, ec) && !overwrite)
      throw std::invalid_argument(
          "--out " + dir + ": directory exists and is not empty (use --overwrite to reuse it)");
    return;
  }
  fs::create_directories(dir, ec);
  if (ec)
    throw std::invalid_argument("--out " + dir + ": cannot create directory: " + ec.message());
}

}  // namespace hoshi::io
