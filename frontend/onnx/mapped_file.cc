#include "frontend/onnx/mapped_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/file_util.h"

namespace dlc::onnx::detail {

Expected<std::shared_ptr<MappedFile>> MappedFile::open(const std::string &path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return notFound("{}", std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return invalidArgument("{}", std::strerror(err));
  }
  if (Status regular = checkRegularFd(fd); !regular.isOk()) {
    ::close(fd);
    return regular;
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  if (st.st_size > 0) {
    void *p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return invalidArgument("cannot map: {}", std::strerror(err));
    }
    file->data_ = static_cast<const uint8_t *>(p);
    file->size_ = static_cast<size_t>(st.st_size);
  }
  ::close(fd); // the mapping stays valid without the descriptor
  return file;
}

MappedFile::~MappedFile() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
}

} // namespace dlc::onnx::detail
