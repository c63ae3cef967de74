// Files appear whole or not at all: every writer in hoshi writes to a temporary file in the
// destination's directory and renames it into place (rename(2) is atomic within a file system),
// so a crash, a full disk or a bad value never leaves a half-written file and never destroys
// the previous version.
#pragma once

#include <functional>
#include <string>

namespace hoshi::io {

// Calls write(tmp_path) to produce the file under a temporary name next to `path`, flushes it
// to disk and renames it to `path`. If write throws, the temporary file is removed and the
// exception propagates; `path` is untouched.
void write_atomically(const std::string& path,
                      const std::function<void(const std::string&)>& write);

// Creates the output directory `dir`. If it exists and is not empty, throws
// std::invalid_argument unless overwrite is true.
void prepare_output_dir(const std::string& dir, bool overwrite);

}  // namespace hoshi::io
