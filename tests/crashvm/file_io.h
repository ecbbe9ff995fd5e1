// What the log reader and the state builder both need from a file
// descriptor: closing it on every path, and whole reads and writes at an
// offset (short transfers and EINTR retried).
#ifndef REGIONSTORE_TESTS_CRASHVM_FILE_IO_H_
#define REGIONSTORE_TESTS_CRASHVM_FILE_IO_H_

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace regionstore::testing {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// false with errno set (EIO for an end of file before `length` bytes).
inline bool PreadAll(int fd, void* out, size_t length, uint64_t offset) {
  auto* bytes = static_cast<unsigned char*>(out);
  while (length > 0) {
    const ssize_t n = ::pread(fd, bytes, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    bytes += n;
    length -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

inline bool PwriteAll(int fd, const void* data, size_t length, uint64_t offset) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  while (length > 0) {
    const ssize_t n = ::pwrite(fd, bytes, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    bytes += n;
    length -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_CRASHVM_FILE_IO_H_
