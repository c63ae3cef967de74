// Bounds-checked reading of binary files held in memory (tipsy, Gadget binary). Every read
// past the end throws std::invalid_argument naming the file and the field being read, so a
// truncated or corrupt file can never be read out of bounds (the fuzz targets check this).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "io/validate.hpp"

namespace hoshi::io {

// A file mapped read-only into memory (mmap), so that readers parse multi-gigabyte files
// without copying them. Throws std::invalid_argument "FILE: field file: value missing (...)".
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_ = nullptr;
};

class ByteReader {
 public:
  ByteReader(const unsigned char* data, std::size_t size, std::string file, bool big_endian)
      : data_(data), size_(size), file_(std::move(file)), big_(big_endian) {}

  std::size_t pos() const { return pos_; }
  std::size_t size() const { return size_; }
  std::size_t remaining() const { return size_ - pos_; }
  const std::string& file() const { return file_; }
  bool big_endian() const { return big_; }
  void set_big_endian(bool b) { big_ = b; }

  void seek(std::size_t p, const char* field) {
    if (p > size_) truncated(field, p - pos_);
    pos_ = p;
  }
  void skip(std::size_t n, const char* field) {
    require(n, field);
    pos_ += n;
  }
  void require(std::size_t n, const char* field) const {
    if (n > size_ - pos_) truncated(field, n);
  }

  template <class T>
  T get(const char* field) {
    require(sizeof(T), field);
    unsigned char b[sizeof(T)];
    std::memcpy(b, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    if (big_ != host_big()) {
      for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
    }
    T v;
    std::memcpy(&v, b, sizeof(T));
    return v;
  }

  [[noreturn]] void truncated(const char* field, std::size_t wanted) const {
    throw_bad_field(file_, field, "truncated",
                    "file ends at byte " + std::to_string(size_) + ", needed " +
                        std::to_string(wanted) + " more bytes at byte " + std::to_string(pos_));
  }

  static bool host_big() {
    const std::uint16_t one = 1;
    unsigned char c;
    std::memcpy(&c, &one, 1);
    return c == 0;
  }

 private:
  const unsigned char* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  std::string file_;
  bool big_;
};

// Appends the bytes of v in the given byte order.
template <class T>
void put_bytes(std::string& out, T v, bool big_endian) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  if (big_endian != ByteReader::host_big())
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
  out.append(reinterpret_cast<const char*>(b), sizeof(T));
}

}  // namespace hoshi::io
