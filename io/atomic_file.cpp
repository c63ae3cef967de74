#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <regex>
#include <stdexcept>

namespace hoshi::io {

namespace fs = std::filesystem;

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

void fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw std::runtime_error(path + ": cannot open for fsync: " + errno_text());
  const int rc = ::fsync(fd);
  const std::string err = rc != 0 ? errno_text() : "";
  ::close(fd);
  // Some file systems do not support fsync on directories (EINVAL): not an error.
  if (rc != 0 && !(directory && (err == std::strerror(EINVAL))))
    throw std::runtime_error(path + ": fsync failed: " + err);
}

}  // namespace

std::string temporary_path(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  const fs::path p(path);
  std::string name(1, '.');
  name += p.filename().string();
  name += ".tmp.";
  name += std::to_string(::getpid());
  name += '.';
  name += std::to_string(counter++);
  return (p.parent_path() / name).string();
}

std::string output_target(const std::string& path) {
  fs::path p(path);
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(p, ec); ++hops) {
    if (hops == 40) throw std::runtime_error(path + ": too many levels of symbolic links");
    const fs::path t = fs::read_symlink(p, ec);
    if (ec)
      throw std::runtime_error(path + ": cannot read the link " + p.string() + ": " + ec.message());
    p = t.is_absolute() ? t : p.parent_path() / t;
  }
  return p.string();
}

namespace {

// The descriptor (1 or 2) whose open file `path` is (after links), or -1: /dev/stdout when a
// shell redirected it to a regular file names that file.
int own_descriptor(const std::string& path) {
  struct stat a {};
  if (::stat(path.c_str(), &a) != 0) return -1;
  for (int fd : {1, 2}) {
    struct stat b {};
    if (::fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) return fd;
  }
  return -1;
}

// The bytes of `tmp` appended to the in-place output `path`: through this process's own
// descriptor when `path` is its stdout or stderr (at the descriptor's offset, after what
// std::cout and stdio hold: opening /dev/stdout again started at offset 0, and truncated),
// else through a descriptor opened without truncation (a device, a FIFO).
void copy_in_place(const std::string& tmp, const std::string& path) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  int fd = own_descriptor(path);
  const bool own = fd < 0;
  if (own) fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
  if (fd < 0) throw std::runtime_error(path + ": cannot open: " + errno_text());
  std::ifstream in(tmp, std::ios::binary);
  char buf[1 << 16];
  bool failed = !in;
  while (!failed && in) {
    in.read(buf, sizeof buf);
    for (std::streamsize done = 0, n = in.gcount(); done < n && !failed;) {
      const ssize_t w = ::write(fd, buf + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        failed = true;
      else
        done += w;
    }
  }
  const std::string err = failed ? errno_text() : "";
  if (own) ::close(fd);
  if (failed) throw std::runtime_error(path + ": write failed: " + err);
}

// A temporary in the system's temporary directory for an in-place output (a FIFO or device
// cannot hold one beside it, and HDF5 cannot write a pipe directly).
std::string staging_path(const std::string& path) {
  return temporary_path((fs::temp_directory_path() / fs::path(path).filename()).string());
}

}  // namespace

bool written_in_place(const std::string& path) {
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);  // follows links
  if (ec || !fs::exists(s) || fs::is_directory(s)) return false;
  // A regular file only when it is this process's stdout or stderr (--csv /dev/stdout with
  // stdout redirected to a file): a temporary renamed over it would leave the shell's
  // descriptor on the replaced file. Other regular files (/dev/shm's too) are replaced.
  return !fs::is_regular_file(s) || own_descriptor(path) >= 0;
}

void commit_file(const std::string& tmp, const std::string& path) {
  fsync_path(tmp, false);
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error(path + ": cannot rename " + tmp + " into place: " + errno_text());
  fs::path dir = fs::path(path).parent_path();
  fsync_path(dir.empty() ? "." : dir.string(), true);
}

namespace {

// Puts the finished temporary `tmp` in place at `target`: copied into it (in place) and
// removed, or renamed over it.
void place(const std::string& tmp, const std::string& target, bool in_place) {
  if (!in_place) return commit_file(tmp, target);
  copy_in_place(tmp, target);
  std::error_code ec;
  fs::remove(tmp, ec);
}

}  // namespace

void write_atomically(const std::string& path,
                      const std::function<void(const std::string&)>& write) {
  const bool in_place = written_in_place(path);
  const std::string target = in_place ? path : output_target(path);
  const std::string tmp = in_place ? staging_path(path) : temporary_path(target);
  try {
    write(tmp);
    place(tmp, target, in_place);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

void write_stream_atomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write) {
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot create " + tmp + ": " + errno_text());
    write(out);
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed (disk full?)");
    out.close();
    if (out.fail()) throw std::runtime_error(path + ": close failed (disk full?)");
  });
}

TemporaryOutput::TemporaryOutput(const std::string& path, const std::string& what)
    : path_(path), what_(what) {
  in_place_ = written_in_place(path_);
  if (!in_place_) path_ = output_target(path);
  tmp_ = in_place_ ? staging_path(path_) : temporary_path(path_);
  remove_stale_temporaries_of(path_);  // left by an earlier writer of this file that was killed
  out.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error(what_ + " " + path_ + ": cannot create " + tmp_ + ": " + errno_text());
}

TemporaryOutput::~TemporaryOutput() {
  if (committed_) return;
  out.close();
  std::error_code ec;
  fs::remove(tmp_, ec);
}

void TemporaryOutput::check() {
  out.flush();
  if (!out) throw std::runtime_error(what_ + " " + path_ + ": write failed (disk full?)");
}

void TemporaryOutput::commit() {
  check();
  out.close();
  if (out.fail()) throw std::runtime_error(what_ + " " + path_ + ": close failed (disk full?)");
  place(tmp_, path_, in_place_);
  committed_ = true;
}

namespace {

// True when process `pid` exists (kill with signal 0 sends nothing; EPERM: it exists and is
// another user's).
bool process_alive(long pid) {
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// Removes the temporaries .NAME.tmp.PID.K in `dir` (for every NAME, or `only` NAME if given)
// whose writer is neither this process nor alive.
// `any_writer`: the temporaries of the names it accepts are removed whatever process id they
// carry (the caller holds the directory: no writer of them is alive).
int remove_dead_temporaries(const std::string& dir, const std::string& only,
                            const std::function<bool(const std::string&)>& any_writer = {}) {
  static const std::regex temp(R"(\.(.+)\.tmp\.(\d{1,18})\.\d+)");
  int removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
    const std::string name = e.path().filename().string();
    std::smatch m;
    if (!e.is_regular_file(ec) || !std::regex_match(name, m, temp)) continue;
    if (!only.empty() && m[1].str() != only) continue;
    const long pid = std::stol(m[2].str());
    if (!(any_writer && any_writer(m[1].str())) &&
        (pid == static_cast<long>(::getpid()) || process_alive(pid)))
      continue;
    if (fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace

int remove_stale_temporaries(const std::string& dir) {
  return remove_dead_temporaries(dir, "");
}

int remove_stale_temporaries(const std::string& dir,
                             const std::function<bool(const std::string&)>& held) {
  return remove_dead_temporaries(dir, "", held);
}

int remove_stale_temporaries_of(const std::string& path) {
  const fs::path p(path);
  return remove_dead_temporaries(p.parent_path().string(), p.filename().string());
}

void check_writable_dir(const std::string& dir, const std::string& option) {
  if (dir.empty()) throw std::invalid_argument(option + ": empty directory name");
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw std::invalid_argument(option + " " + dir + ": exists and is not a directory");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      throw std::invalid_argument(option + " " + dir + ": the directory is not writable");
    return;
  }
  // It will be created: below the nearest path above that exists, a writable directory.
  fs::path up = fs::absolute(dir, ec).parent_path();
  while (!fs::exists(up, ec) && up != up.parent_path()) up = up.parent_path();
  if (!fs::is_directory(up, ec))
    throw std::invalid_argument(option + " " + dir + ": cannot be created: " + up.string() +
                                " is not a directory");
  if (::access(up.c_str(), W_OK | X_OK) != 0)
    throw std::invalid_argument(option + " " + dir + ": cannot be created: " + up.string() +
                                " is not writable");
}

void check_output_dir(const std::string& dir, bool overwrite) {
  check_writable_dir(dir, "--out");
  std::error_code ec;
  if (!fs::exists(dir, ec) || overwrite) return;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename() != kDirectoryLockName)
      throw std::invalid_argument("--out " + dir +
                                  ": exists and is not empty (use --overwrite to reuse it)");
}

namespace {
// The refusal of a claim that another process holds on `fd` (its lock file `path`), naming the
// process id the file records; closes fd.
[[noreturn]] void throw_in_use(int fd, const std::string& dir, const std::string& path,
                               const std::string& option) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  ::close(fd);
  std::string pid = n > 0 ? std::string(text, static_cast<std::size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  throw std::invalid_argument(option + " " + dir + ": in use by another hoshi run" +
                              (pid.empty() ? "" : " (process " + pid + ")") + ", which holds " +
                              path + "; wait for it or stop it");
}
}  // namespace

void require_directory_unclaimed(const std::string& dir, const std::string& option) {
  const std::string path = dir + "/" + kDirectoryLockName;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  // A shared lock conflicts with a held exclusive one only; released by close.
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
    throw_in_use(fd, dir, path, option);
  ::close(fd);
}

DirectoryLock::DirectoryLock(const std::string& dir, const std::string& option) {
  const std::string path = dir + "/" + kDirectoryLockName;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  // Another user's lock file in a shared directory: flock needs no write access.
  if (fd_ < 0 && errno == EACCES) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return;  // unwritable: the run's own writes will say so
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      const int fd = fd_;
      fd_ = -1;
      throw_in_use(fd, dir, path, option);
    }
    ::close(fd_);  // no flock here (ENOLCK, EINVAL on some network file systems)
    fd_ = -1;
    return;
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t w = ::pwrite(fd_, pid.data(), pid.size(), 0);
  }
}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

void prepare_output_dir(const std::string& dir, bool overwrite) {
  check_output_dir(dir, overwrite);
  std::error_code ec;
  if (fs::exists(dir, ec)) return;
  fs::create_directories(dir, ec);
  if (ec) throw std::invalid_argument("--out " + dir + ": cannot create: " + ec.message());
}

}  // namespace hoshi::io
