#include "io/byte_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace hoshi::io {

MappedFile::MappedFile(const std::string& path) {
  require_input_file(path);
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw_bad_field(path, "file", "unreadable", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw_bad_field(path, "file", "unreadable", "cannot stat");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map_ == MAP_FAILED) {
      map_ = nullptr;
      ::close(fd);
      throw_bad_field(path, "file", "unreadable", "cannot map into memory");
    }
    data_ = static_cast<const unsigned char*>(map_);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (map_) ::munmap(map_, size_);
}

}  // namespace hoshi::io
