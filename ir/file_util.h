// Files a user names (models, external data, inputs, packages, caches) are read only when they
// are regular files: a FIFO would block the read forever, a device could stream without end, a
// directory or socket cannot be read at all. The check is a stat() before any open.
#pragma once

#include <string>

#include "ir/status.h"

namespace dlc {

/// Ok for a regular file (symlinks followed); else an error that says what the path is ("is
/// a directory", "is a FIFO", "is a character device", ...) or why it cannot be looked at.
/// The message does not name the path: callers add it as context.
Status checkRegularFile(const std::string &path);

/// The same for an open descriptor (fstat).
Status checkRegularFd(int fd);

} // namespace dlc
