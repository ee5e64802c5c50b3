#include "ir/file_util.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace dlc {

namespace {

Status kindError(mode_t mode) {
  if (S_ISREG(mode))
    return Status::ok();
  const char *what = S_ISDIR(mode)    ? "a directory"
                     : S_ISFIFO(mode) ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "not a regular file";
  return invalidArgument("is {}{}", what,
                         S_ISDIR(mode) ? ""
                                       : "; dlc reads only regular files (it would block or "
                                         "never end)");
}

} // namespace

Status checkRegularFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return notFound("cannot open file: {}", std::strerror(errno));
  return kindError(st.st_mode);
}

Status checkRegularFd(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return invalidArgument("{}", std::strerror(errno));
  return kindError(st.st_mode);
}

} // namespace dlc
