#include "lab/raw_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "lab/die.h"

namespace regionstore::bench {

Fd::Fd(const std::string& path, int flags) : path_(path), fd_(::open(path.c_str(), flags, 0644)) {
  if (fd_ < 0) Die(Errno("open", path));
}

Fd::~Fd() { ::close(fd_); }

FileMapping::FileMapping(int fd, uint64_t offset, uint64_t length, bool writable,
                         const std::string& path)
    : length_(length) {
  void* address = ::mmap(nullptr, length, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd,
                         static_cast<off_t>(offset));
  if (address == MAP_FAILED) Die(Errno("mmap", path));
  base_ = static_cast<std::byte*>(address);
}

FileMapping::~FileMapping() { ::munmap(base_, length_); }

std::string WriteParts(int fd, std::span<const iovec> parts, uint64_t offset, int flags) {
  size_t total = 0;
  for (const iovec& part : parts) total += part.iov_len;
  ssize_t n;
  do {
    n = ::pwritev2(fd, parts.data(), static_cast<int>(parts.size()), static_cast<off_t>(offset),
                   flags);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return std::string("pwritev2: ") + std::strerror(errno);
  if (static_cast<size_t>(n) != total) return "pwritev2: short write";
  return {};
}

std::string WriteOne(int fd, std::span<const std::byte> data, uint64_t offset, int flags) {
  const iovec part{const_cast<std::byte*>(data.data()), data.size()};
  return WriteParts(fd, std::span(&part, 1), offset, flags);
}

std::string DataSync(int fd) {
  int rc;
  do {
    rc = ::fdatasync(fd);
  } while (rc != 0 && errno == EINTR);
  return rc == 0 ? std::string() : std::string("fdatasync: ") + std::strerror(errno);
}

std::string PwriteFdatasync(int fd, std::span<const std::byte> data, uint64_t offset) {
  if (std::string error = WriteOne(fd, data, offset, 0); !error.empty()) return error;
  return DataSync(fd);
}

std::string SteppedPwriteFdatasync(int fd, std::span<const std::byte> data, uint64_t offset,
                                   uint64_t step) {
  for (uint64_t at = 0; at < data.size(); at += step) {
    const std::span<const std::byte> part =
        data.subspan(at, std::min<uint64_t>(step, data.size() - at));
    if (std::string error = WriteOne(fd, part, offset + at, 0); !error.empty()) return error;
    if (::sync_file_range(fd, static_cast<off_t>(offset + at), static_cast<off_t>(part.size()),
                          SYNC_FILE_RANGE_WRITE) != 0) {
      return Errno("sync_file_range", "");
    }
  }
  return DataSync(fd);
}

void CreatePlainFile(const std::string& path, uint64_t size) {
  std::filesystem::remove(path);
  const Fd fd(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC);
  const std::vector<std::byte> zeros(size);
  if (std::string error = PwriteFdatasync(fd.get(), zeros, 0); !error.empty()) Die(error);
}

bool WriteAll(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace regionstore::bench
