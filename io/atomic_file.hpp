// Crash-safe output: every file hoshi writes is first written under a temporary name in the
// same directory, flushed to disk (fsync) and then renamed over the final name (rename(2) is
// atomic within a file system). A crash or a full disk therefore leaves either the previous
// complete file or the new complete file, never a half-written one; the temporary is removed
// when writing fails.
//
// An output path that is a symbolic link is written through: the temporary goes beside the
// link's final target and is renamed over it (renaming over the link replaced the link with a
// regular file and left its target as it was; a dangling link's target is created). A path
// that is, after its links, an existing file other than a regular one or a directory (a
// character device such as /dev/null or a terminal, a FIFO), or this process's own stdout or
// stderr (--csv /dev/stdout, a pipe or a redirected file), is written in place: staged in the
// system's temporary directory and then copied there (through the process's own descriptor,
// at its offset, for stdout and stderr). Such a path cannot be renamed over, and renaming over
// it replaced the device (as root: /dev/stdout for every process).
#pragma once

#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace hoshi::io {

// Whether a file name is one of a run's numbered outputs: PREFIX + three or more digits +
// REST (snapshot_004.hdf5, frame_012.png; hoshi run names them PREFIX%03lld REST).
inline bool numbered_output_name(std::string_view name, std::string_view prefix,
                                 std::string_view rest) {
  if (name.size() < prefix.size() + 3 + rest.size() || !name.starts_with(prefix) ||
      !name.ends_with(rest))
    return false;
  for (std::size_t i = prefix.size(); i < name.size() - rest.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return false;
  return true;
}

// A fresh temporary name beside `path`: DIR/.NAME.tmp.PID.COUNTER.
std::string temporary_path(const std::string& path);

// The file an output to `path` replaces: `path` with its symbolic links followed to the last
// target (relative targets from their link's directory). Throws std::runtime_error for a loop
// of links.
std::string output_target(const std::string& path);

// True when `path` (its links followed) exists and is neither a regular file nor a directory
// (a device, a FIFO), or is the file this process's stdout or stderr is (a shell's
// redirection): written in place instead of renamed into place.
bool written_in_place(const std::string& path);

// fsyncs `tmp`, renames it to `path` and fsyncs the directory. Throws std::runtime_error.
void commit_file(const std::string& tmp, const std::string& path);

// Calls write(tmp) for a temporary name `tmp` beside output_target(path), then commit_file
// over that target. If write throws, the temporary is removed, `path` is untouched and the
// exception propagates. A path written_in_place is passed to write itself.
void write_atomically(const std::string& path,
                      const std::function<void(const std::string&)>& write);

// Same, for writers that produce a stream (binary mode).
void write_stream_atomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write);

// A file written as a stream over a longer computation: the rows go to a temporary beside
// `path` (opened by the constructor), commit() renames it into place; destroyed without
// commit() (an exception), the temporary is removed and `path` is untouched. `what` names the
// file in error messages (an option such as "--errors").
class TemporaryOutput {
 public:
  TemporaryOutput(const std::string& path, const std::string& what);
  ~TemporaryOutput();
  TemporaryOutput(const TemporaryOutput&) = delete;
  TemporaryOutput& operator=(const TemporaryOutput&) = delete;
  // Flushes the rows written so far; throws std::runtime_error if a write failed (a full disk).
  // Outputs committed together check first, so that none replaces its file when another fails.
  void check();
  void commit();  // check(), then closes and renames into place
  std::ofstream out;

 private:
  std::string path_, what_, tmp_;
  bool in_place_ = false;  // tmp_ is staged in the temporary directory, copied at commit()
  bool committed_ = false;
};

// Removes temporaries left in `dir` by writers that were killed (names .NAME.tmp.PID.K whose
// process PID is neither this one nor alive: a concurrent writer's are kept); returns how
// many. Nothing else is touched.
int remove_stale_temporaries(const std::string& dir);
// The same, and the temporaries of the names `held` accepts whatever process id they carry: for
// a run that holds the directory (DirectoryLock), whose outputs no other live process writes
// (the id of a killed run's temporary may be a live process of another node or container, or
// this one's: PID 1 in a container, again after a restart).
int remove_stale_temporaries(const std::string& dir,
                             const std::function<bool(const std::string&)>& held);
// The same for the temporaries of one file (.NAME.tmp.PID.K beside `path`, NAME its file
// name). TemporaryOutput calls it when it opens, so that an interrupted streamed output (a
// killed `hoshi accuracy --errors`) leaves nothing behind once the file is written again.
int remove_stale_temporaries_of(const std::string& path);

// Makes `dir` ready to receive a run's output. A directory that does not exist is created
// (with parents). An existing non-empty directory is an error unless `overwrite` is set
// (std::invalid_argument naming the directory and --overwrite).
void prepare_output_dir(const std::string& dir, bool overwrite);
// A directory an output goes to: an existing one writable, a new one creatable (the nearest
// existing path above it a writable directory); std::invalid_argument naming `option` otherwise.
void check_writable_dir(const std::string& dir, const std::string& option);
// prepare_output_dir's refusals alone (exists and is not a directory; not empty without
// `overwrite`), creating and changing nothing: checked before a run computes anything. A
// directory that holds only a run's lock file (kDirectoryLockName) is empty.
void check_output_dir(const std::string& dir, bool overwrite);

// The file in a run's output directory that DirectoryLock locks.
inline constexpr const char* kDirectoryLockName = ".hoshi.lock";

// Throws DirectoryLock's std::invalid_argument when another process holds dir's claim; takes
// nothing, and creates and writes nothing (no lock file, or one nobody holds: returns).
void require_directory_unclaimed(const std::string& dir, const std::string& option);

// An exclusive claim on a run's output directory, held while the object lives: flock of
// DIR/.hoshi.lock, which records the owner's process id. Two runs writing into one directory at
// once (a batch job submitted twice, a new --overwrite run beside a restarted one) mixed their
// energy.csv, checkpoint and snapshots. A file system without flock (some network mounts) gives
// no claim and no error. The lock file stays (removing it would race a waiting claimant).
class DirectoryLock {
 public:
  DirectoryLock() = default;
  // Throws std::invalid_argument "OPTION DIR: in use by another hoshi run (process PID) ..."
  // when another process holds the claim.
  DirectoryLock(const std::string& dir, const std::string& option);
  DirectoryLock(DirectoryLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DirectoryLock& operator=(DirectoryLock&& o) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace hoshi::io
