#include "lab/lab.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "regionstore/store_info.h"

namespace regionstore::bench {
namespace {

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// fdatasync, retried on EINTR.
bool DataSyncFd(int fd) {
  int rc;
  do {
    rc = ::fdatasync(fd);
  } while (rc != 0 && errno == EINTR);
  return rc == 0;
}

// Touches every 4 KiB page of [offset, offset + length) through a
// read-only mapping (with MADV_HUGEPAGE when `huge`).
std::string ReadThroughMapping(int fd, uint64_t offset, uint64_t length, bool huge) {
  void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (map == MAP_FAILED) return ErrnoText("mmap");
  std::string error;
  if (huge && ::madvise(map, length, MADV_HUGEPAGE) != 0) {
    error = ErrnoText("madvise(MADV_HUGEPAGE)");
  } else {
    const auto* bytes = static_cast<const volatile unsigned char*>(map);
    for (uint64_t at = 0; at < length; at += 4096) (void)bytes[at];
  }
  ::munmap(map, length);
  return error;
}

}  // namespace

const char* const kFolioRegimesText =
    "large_folios: slice written into the page cache by one 1 MiB pwrite (store created by "
    "Store::Create's 8 MiB zero-fill pwrites); small_folios: slice faulted in through a "
    "mapping (4 KiB folios)";

Status CreateLabStore(const std::string& path, const CreateOptions& options) {
  return Store::Create(path, kLabStoreSize, options);
}

Result<uint64_t> LabSliceFileOffset(const std::string& path) {
  Result<StoreInfo> info = ReadStoreInfo(path);
  if (!info.ok()) return info.status();
  return info->data_offset + kLabSliceOffset;
}

std::string RefillPageCache(const std::string& path, uint64_t offset, uint64_t length, Refill how) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return ErrnoText("open " + path);
  std::string error;
  if (!DataSyncFd(fd)) {
    error = ErrnoText("fdatasync");
  } else if (int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); rc != 0) {
    error = "posix_fadvise(DONTNEED): " + std::string(std::strerror(rc));
  } else if (how == Refill::kPwrite) {
    const std::vector<std::byte> zeros(length);
    if (::pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(offset)) !=
        static_cast<ssize_t>(zeros.size())) {
      error = ErrnoText("pwrite");
    } else if (!DataSyncFd(fd)) {
      error = ErrnoText("fdatasync");
    }
  } else {
    error = ReadThroughMapping(fd, offset, length, how == Refill::kHugeMappedRead);
  }
  ::close(fd);
  return error;
}

const char* FolioRegimeName(FolioRegime regime) {
  return regime == FolioRegime::kLargeFolios ? "large_folios" : "small_folios";
}

std::string PrepareFolioRegime(const std::string& path, uint64_t slice_file_offset,
                               FolioRegime regime) {
  return RefillPageCache(
      path, slice_file_offset, kLabSliceSize,
      regime == FolioRegime::kLargeFolios ? Refill::kPwrite : Refill::kMappedRead);
}

}  // namespace regionstore::bench
