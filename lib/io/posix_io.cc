// The POSIX implementation of the Io seam: the only code in regionstore that
// calls the operating system. Every call retries EINTR and keeps errno. The
// calls on an open file or mapping go through the table of posix_syscalls.h,
// so that tests can make them fail and the recovery code here is what runs.
#include <dirent.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <linux/falloc.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/futex.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/interprocess/detail/os_file_functions.hpp>
#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <ctime>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../bytes.h"
#include "posix_syscalls.h"
#include "regionstore/io.h"
#include "signal_safe.h"

static_assert(sizeof(off_t) == 8, "regionstore needs a 64-bit off_t");

namespace regionstore {
namespace internal {
namespace {

// libc's open is variadic; the table wants a plain signature.
int OpenWithMode(const char* path, int flags, mode_t mode) { return ::open(path, flags, mode); }
// ioctl is variadic; the table wants a plain function pointer.
int IoctlWithPointer(int fd, unsigned long request, void* arg) { return ::ioctl(fd, request, arg); }
// libc has no futex wrapper. A shared futex (no FUTEX_PRIVATE_FLAG); waits
// take an absolute CLOCK_MONOTONIC deadline, so a retry after EINTR keeps it.
long Futex(uint32_t* word, int op, uint32_t value, const struct timespec* deadline) {
  return op == FUTEX_WAKE
             ? ::syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0)
             : ::syscall(SYS_futex, word, op, value, deadline, nullptr, FUTEX_BITSET_MATCH_ANY);
}

int FcntlLock(int fd, int command, struct flock* lock) { return ::fcntl(fd, command, lock); }

constexpr PosixSyscalls kRealSyscalls = {
    .pread = ::pread,
    .pwrite = ::pwrite,
    .pwritev = ::pwritev,
    .pwritev2 = ::pwritev2,
    .fdatasync = ::fdatasync,
    .fsync = ::fsync,
    .msync = ::msync,
    .sync_file_range = ::sync_file_range,
    .posix_fallocate = ::posix_fallocate,
    .flock = ::flock,
    .madvise = ::madvise,
    .open = OpenWithMode,
    .linkat = ::linkat,
    .ioctl = IoctlWithPointer,
    .fallocate = ::fallocate,
    .futex = Futex,
    .fcntl_lock = FcntlLock,
};

// Constant-initialized, so it holds the real functions before any static
// constructor can open a store.
constinit PosixSyscalls installed_syscalls = kRealSyscalls;

}  // namespace

const PosixSyscalls& Syscalls() { return installed_syscalls; }

PosixSyscalls RealSyscalls() { return kRealSyscalls; }

PosixSyscalls InstallSyscalls(const PosixSyscalls& table) {
  return std::exchange(installed_syscalls, table);
}

int UnlinkForSignal(const char* path) noexcept {
  // unlink and errno access are async-signal-safe; errno is put back so the
  // interrupted code sees the value it had.
  const int saved = errno;
  const int rc = ::unlink(path);
  errno = saved;
  return rc;
}

}  // namespace internal

namespace {

namespace bip = boost::interprocess;
using internal::Syscalls;

// errno, read before any other expression of the caller's statement can
// allocate (argument evaluation order is unspecified).
inline int SavedErrno() { return errno; }

// The record lock a writer holds beside its flock (PosixFile::LockExclusive):
// one byte far past any store's end, where no other program that locks
// the file's real bytes would look.
struct flock WriterRecordLock(short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = off_t{1} << 62;
  lock.l_len = 1;
  return lock;
}

uint64_t ClockNanos(clockid_t clock) {
  struct timespec now {};
  ::clock_gettime(clock, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// Largest single pread/pwrite request: Linux transfers at most 0x7ffff000
// bytes per call anyway.
constexpr uint64_t kMaxIoChunk = uint64_t{1} << 30;

// Boost's file_mapping reopens the file by path; mapped_region accepts any
// object exposing a mapping handle, so give it the descriptor we opened and
// locked.
class DescriptorMappable {
 public:
  explicit DescriptorMappable(int fd) : fd_(fd) {}
  bip::mapping_handle_t get_mapping_handle() const {  // NOLINT: Boost's name
    return bip::ipcdetail::mapping_handle_from_file_handle(fd_);
  }

 private:
  int fd_;
};

class PosixMapping final : public Mapping {
 public:
  PosixMapping(bip::mapped_region region, std::string path)
      : region_(std::move(region)), path_(std::move(path)) {}

  std::byte* data() override { return static_cast<std::byte*>(region_.get_address()); }
  uint64_t size() const override { return region_.get_size(); }

  void PrepareWrite(uint64_t offset, uint64_t length) override {
#if defined(MADV_POPULATE_WRITE)
    if (offset <= size() && length <= size() - offset && length > 0) {
      static_cast<void>(Syscalls().madvise(data() + offset, length, MADV_POPULATE_WRITE));
    }
#else
    static_cast<void>(offset);
    static_cast<void>(length);
#endif
  }

  void ResetPageTables(uint64_t offset, uint64_t length) override {
    if (offset <= size() && length <= size() - offset && length > 0) {
      static_cast<void>(Syscalls().madvise(data() + offset, length, MADV_DONTNEED));
    }
  }

  Status Sync(uint64_t offset, uint64_t length, SyncKind kind) override {
    // mapped_region::flush returns a bool and drops errno; call msync directly.
    if (offset > size() || length > size() - offset) {
      return Status::Error(StatusCode::kInvalidArgument, "msync", path_,
                           "range outside the mapping");
    }
    const int flags = kind == SyncKind::kSync ? MS_SYNC : MS_ASYNC;
    if (Syscalls().msync(data() + offset, length, flags) != 0) {
      return Status::FromErrno(
          SavedErrno(), kind == SyncKind::kSync ? "msync(MS_SYNC)" : "msync(MS_ASYNC)", path_);
    }
    return Status::Ok();
  }

 private:
  bip::mapped_region region_;  // unmaps in its destructor, never flushes
  std::string path_;
};

class PosixFile final : public File {
 public:
  // How Link names a file made by CreateAnonymous: the route its probe found.
  enum class LinkRoute : uint8_t { kNone, kProcFd, kEmptyPath };

  PosixFile(int fd, std::string path, LinkRoute link_route = LinkRoute::kNone)
      : fd_(fd), path_(std::move(path)), link_route_(link_route) {}
  ~PosixFile() override {
    // close() errors cannot be acted on here; nothing is buffered in user
    // space, and durability comes only from explicit syncs.
    if (fd_ >= 0) ::close(fd_);
  }

  const std::string& path() const override { return path_; }

  Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    uint64_t done = 0;
    while (done < out.size()) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(out.size() - done, kMaxIoChunk));
      const ssize_t n =
          Syscalls().pread(fd_, out.data() + done, chunk, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno(SavedErrno(), "pread", path_);
      }
      if (n == 0) break;  // end of file
      done += static_cast<uint64_t>(n);
    }
    return done;
  }

  Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    uint64_t done = 0;
    while (done < data.size()) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(data.size() - done, kMaxIoChunk));
      const ssize_t n =
          Syscalls().pwrite(fd_, data.data() + done, chunk, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno(SavedErrno(), "pwrite", path_);
      }
      if (n == 0) return Status::FromErrno(EIO, "pwrite", path_, "wrote nothing");
      done += static_cast<uint64_t>(n);
    }
    return Status::Ok();
  }

  Status WriteGatherAt(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                       bool data_sync) override {
    std::vector<iovec> iov;
    iov.reserve(parts.size());
    uint64_t total = 0;
    for (std::span<const std::byte> part : parts) {
      if (part.empty()) continue;
      iov.push_back({const_cast<std::byte*>(part.data()), part.size()});
      total += part.size();
    }
    if (iov.size() > IOV_MAX) {
      return Status::Error(StatusCode::kInvalidArgument, "pwritev", path_, "too many parts");
    }
    // RWF_DSYNC makes the call durable only if it wrote everything: after a
    // short write the rest goes without the flag and one fdatasync follows.
    int flags = data_sync ? RWF_DSYNC : 0;
    bool need_datasync = false;
    uint64_t done = 0;
    size_t first = 0;
    while (done < total) {
      // Without the flag, plain pwritev: what a kernel or libc without
      // pwritev2 (or one that refused the flag) still has.
      const iovec* rest = iov.data() + first;
      const auto count = static_cast<int>(iov.size() - first);
      const auto at = static_cast<off_t>(offset + done);
      const ssize_t n = flags != 0 ? Syscalls().pwritev2(fd_, rest, count, at, flags)
                                   : Syscalls().pwritev(fd_, rest, count, at);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (flags != 0 && errno == EOPNOTSUPP) {
          // A kernel (before 4.7) or filesystem without RWF_DSYNC: write,
          // then fdatasync.
          flags = 0;
          need_datasync = true;
          continue;
        }
        return Status::FromErrno(SavedErrno(), flags != 0 ? "pwritev2(RWF_DSYNC)" : "pwritev",
                                 path_);
      }
      if (n == 0) return Status::FromErrno(EIO, "pwritev", path_, "wrote nothing");
      done += static_cast<uint64_t>(n);
      // Skip what was written: whole iovecs, then the start of the next.
      auto left = static_cast<uint64_t>(n);
      while (first < iov.size() && left >= iov[first].iov_len) {
        left -= iov[first].iov_len;
        ++first;
      }
      if (first < iov.size() && left > 0) {
        iov[first].iov_base = static_cast<std::byte*>(iov[first].iov_base) + left;
        iov[first].iov_len -= left;
      }
      if (done < total && flags != 0) {
        flags = 0;
        need_datasync = true;
      }
    }
    if (need_datasync || (data_sync && total == 0)) return DataSync();
    return Status::Ok();
  }

  Status Allocate(uint64_t offset, uint64_t length) override {
    int rc;
    do {
      // posix_fallocate returns the error instead of setting errno.
      rc = Syscalls().posix_fallocate(fd_, static_cast<off_t>(offset), static_cast<off_t>(length));
    } while (rc == EINTR);
    return rc == 0 ? Status::Ok() : Status::FromErrno(rc, "fallocate", path_);
  }

  void StartWriteback(uint64_t offset, uint64_t length) override {
    // A length of 0 would mean "to the end of the file": nothing to start.
    // Errors are dropped: the barrier that follows reports any I/O error,
    // and EINTR only means less writeback was started early.
    if (length == 0) return;
    static_cast<void>(Syscalls().sync_file_range(
        fd_, static_cast<off_t>(offset), static_cast<off_t>(length), SYNC_FILE_RANGE_WRITE));
  }

  Status WaitWriteback(uint64_t offset, uint64_t length) override {
    if (length == 0) return Status::Ok();
    constexpr unsigned int kWaitAll =
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
    for (;;) {
      if (Syscalls().sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(length),
                                     kWaitAll) == 0) {
        return Status::Ok();
      }
      // A kernel or a sandbox without the call (ENOSYS, EPERM), or a file it
      // does not apply to (EINVAL, ESPIPE): nothing can be waited for, and
      // the barrier that follows still makes the range durable.
      if (errno == ENOSYS || errno == EPERM || errno == EINVAL || errno == ESPIPE) {
        return Status::Ok();
      }
      if (errno != EINTR) return Status::FromErrno(errno, "sync_file_range (wait)", path_);
    }
  }

  Status DataSync() override { return Retry(Syscalls().fdatasync, "fdatasync"); }
  Status Sync() override { return Retry(Syscalls().fsync, "fsync"); }

  Status LockExclusive() override {
    // flock locks belong to the open file description: unlike fcntl record
    // locks they survive the close of another descriptor of the same file,
    // and a second open in the same process conflicts.
    int rc;
    do {
      rc = Syscalls().flock(fd_, LOCK_EX | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int error = errno;
      if (error == EWOULDBLOCK) {
        return Status::Error(StatusCode::kBusy, "lock", path_,
                             "another writer holds this store's lock (readers need no lock: "
                             "open read-only, or retry once the writer closes it)",
                             error);
      }
      return Status::FromErrno(error, "lock", path_);
    }
    // Beside the flock, an open-file-description record lock that readers
    // can test without taking (F_OFD_GETLK; flock has no test), so that a
    // reader can tell a dead writer's leftovers from a live writer's work
    // (HasWriter). Same owner and lifetime as the flock. Where the kernel
    // has no OFD locks (before 3.15) readers cannot tell, and say so.
    struct flock record = WriterRecordLock(F_WRLCK);
    do {
      rc = Syscalls().fcntl_lock(fd_, F_OFD_SETLK, &record);
    } while (rc != 0 && errno == EINTR);
    // EBADF: a read-only descriptor (Store::Create locks the store it
    // replaces through one), which cannot take a write lock and publishes
    // nothing, so needs none. EINVAL: no OFD locks in this kernel.
    if (rc != 0 && errno != EINVAL && errno != EBADF) {
      const int error = errno;
      if (error == EAGAIN || error == EACCES) {
        return Status::Error(StatusCode::kBusy, "lock", path_,
                             "another writer holds this store's record lock", error);
      }
      return Status::FromErrno(error, "lock (record lock)", path_);
    }
    return Status::Ok();
  }

  Result<bool> HasWriter() override {
    struct flock probe = WriterRecordLock(F_RDLCK);
    int rc;
    do {
      rc = Syscalls().fcntl_lock(fd_, F_OFD_GETLK, &probe);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return Status::FromErrno(errno, "test the writer's lock (F_OFD_GETLK)", path_);
    return probe.l_type != F_UNLCK;
  }

  Result<FileStat> Stat() override { return StatNoTimes(fd_, "", AT_EMPTY_PATH, "fstat", path_); }

  Status SetOwner(std::optional<uint32_t> uid, std::optional<uint32_t> gid) override {
    const auto id = [](std::optional<uint32_t> value) {
      return value ? static_cast<uid_t>(*value) : static_cast<uid_t>(-1);
    };
    if (::fchown(fd_, id(uid), static_cast<gid_t>(id(gid))) != 0) {
      return Status::FromErrno(SavedErrno(), "fchown", path_);
    }
    return Status::Ok();
  }

  Status SetPermissions(uint32_t mode) override {
    if (::fchmod(fd_, static_cast<mode_t>(mode & 07777)) != 0) {
      return Status::FromErrno(SavedErrno(), "fchmod", path_);
    }
    return Status::Ok();
  }

  // Gives up the descriptor: the destructor then closes nothing.
  int ReleaseFd() { return std::exchange(fd_, -1); }

  Status Link(const std::string& path) override {
    if (link_route_ == LinkRoute::kNone) {
      return Status::FromErrno(EOPNOTSUPP, "link", path, "not a file from CreateAnonymous");
    }
    int rc;
    do {
      rc = LinkVia(link_route_, path.c_str());
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return Status::FromErrno(SavedErrno(), "link", path);
    return Status::Ok();
  }

  // linkat of this descriptor onto `new_path` by `route`; -1 and errno.
  // linkat never replaces an existing name (EEXIST).
  int LinkVia(LinkRoute route, const char* new_path) const {
    if (route == LinkRoute::kProcFd) {
      // Any process may link a file it can open through /proc/self/fd (the
      // magic link is followed), whereas AT_EMPTY_PATH needed
      // CAP_DAC_READ_SEARCH before Linux 6.10.
      char proc_path[32];
      std::snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", fd_);
      return Syscalls().linkat(AT_FDCWD, proc_path, AT_FDCWD, new_path, AT_SYMLINK_FOLLOW);
    }
    return Syscalls().linkat(fd_, "", AT_FDCWD, new_path, AT_EMPTY_PATH);
  }

  Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) override {
    if (length == 0 || length > std::numeric_limits<size_t>::max()) {
      return Status::Error(StatusCode::kInvalidArgument, "mmap", path_,
                           "cannot map " + std::to_string(length) + " bytes");
    }
    try {
      // MAP_SHARED: Boost's read_write and read_only modes both map shared.
      bip::mapped_region region(DescriptorMappable(fd_),
                                mode == OpenMode::kReadWrite ? bip::read_write : bip::read_only, 0,
                                static_cast<size_t>(length));
      return std::unique_ptr<Mapping>(std::make_unique<PosixMapping>(std::move(region), path_));
    } catch (const bip::interprocess_exception& error) {
      const int native = error.get_native_error();
      if (native != 0) return Status::FromErrno(native, "mmap", path_);
      return Status::Error(StatusCode::kIOError, "mmap", path_, error.what());
    }
  }

  Result<uint32_t> InodeFlags() override {
    // The kernel reads and writes an int, whatever the macro's type says.
    int flags = 0;
    if (Status s = RetryIoctl(FS_IOC_GETFLAGS, &flags, "ioctl(FS_IOC_GETFLAGS)"); !s.ok()) return s;
    return static_cast<uint32_t>(flags);
  }

  Status SetInodeFlags(uint32_t flags) override {
    int value = static_cast<int>(flags);
    return RetryIoctl(FS_IOC_SETFLAGS, &value, "ioctl(FS_IOC_SETFLAGS)");
  }

  Result<std::vector<FileRange>> SharedRanges(uint64_t offset, uint64_t length) override {
    // 64 extents a call: one call covers any store whose blocks are in few
    // extents, which is what fallocate at create gives. No FIEMAP_FLAG_SYNC:
    // it would write back every dirty page first, and a delayed-allocation
    // extent is not shared anyway.
    constexpr uint32_t kBatch = 64;
    std::vector<std::byte> buffer(sizeof(fiemap) + kBatch * sizeof(fiemap_extent));
    auto* map = reinterpret_cast<fiemap*>(buffer.data());
    std::vector<FileRange> shared;
    const uint64_t end = offset + length;
    uint64_t at = offset;
    while (at < end) {
      std::fill(buffer.begin(), buffer.end(), std::byte{0});
      map->fm_start = at;
      map->fm_length = end - at;
      map->fm_extent_count = kBatch;
      if (Status s = RetryIoctl(FS_IOC_FIEMAP, map, "ioctl(FS_IOC_FIEMAP)"); !s.ok()) return s;
      if (map->fm_mapped_extents == 0) break;
      const uint64_t batch_start = at;
      bool last = false;
      for (uint32_t index = 0; index < map->fm_mapped_extents; ++index) {
        const fiemap_extent& extent = map->fm_extents[index];
        const uint64_t start = std::max<uint64_t>(extent.fe_logical, offset);
        const uint64_t stop = std::min<uint64_t>(extent.fe_logical + extent.fe_length, end);
        if ((extent.fe_flags & FIEMAP_EXTENT_SHARED) != 0 && stop > start) {
          if (!shared.empty() && shared.back().offset + shared.back().length == start) {
            shared.back().length += stop - start;
          } else {
            shared.push_back({start, stop - start});
          }
        }
        at = std::max<uint64_t>(at, extent.fe_logical + extent.fe_length);
        last = last || (extent.fe_flags & FIEMAP_EXTENT_LAST) != 0;
      }
      if (last) break;
      // A filesystem that answers with extents ending before `at` (zero
      // length, or out of order) would make this loop forever.
      if (at <= batch_start) {
        return Status::Error(
            StatusCode::kIOError, "ioctl(FS_IOC_FIEMAP)", path_,
            "the extent map did not advance past offset " + std::to_string(batch_start));
      }
    }
    return shared;
  }

  Status UnshareRange(uint64_t offset, uint64_t length) override {
    int rc;
    do {
      rc = Syscalls().fallocate(fd_, FALLOC_FL_UNSHARE_RANGE, static_cast<off_t>(offset),
                                static_cast<off_t>(length));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0)
      return Status::FromErrno(SavedErrno(), "fallocate(FALLOC_FL_UNSHARE_RANGE)", path_);
    return Status::Ok();
  }

  // statx asking for type, size and inode only. Never for the timestamps:
  // since Linux 6.13 (multigrain timestamps) a query of mtime or ctime makes
  // the next write stamp a fine-grained time, so every pwrite dirties the
  // inode; in a one-shot open/pwrite/fdatasync/close that measured about
  // 50 us of a 290 us update (docs/BENCH-LAB.md). The device number comes
  // with every statx.
  static Result<FileStat> StatNoTimes(int dir_fd, const char* name, int flags,
                                      const char* operation, const std::string& path) {
    struct statx st {};
    if (::statx(dir_fd, name, flags,
                STATX_TYPE | STATX_MODE | STATX_SIZE | STATX_INO | STATX_UID | STATX_GID,
                &st) != 0) {
      const int error = errno;
      // A kernel without statx (ENOSYS), or a seccomp filter that refuses it
      // (EPERM): fall back to fstatat, timestamps and all.
      if (error != ENOSYS && error != EPERM) return Status::FromErrno(error, operation, path);
      struct stat old {};
      if (::fstatat(dir_fd, name, &old, flags) != 0) {
        return Status::FromErrno(SavedErrno(), operation, path);
      }
      FileStat out;
      out.size = static_cast<uint64_t>(old.st_size);
      out.is_regular = S_ISREG(old.st_mode);
      out.is_directory = S_ISDIR(old.st_mode);
      out.device = static_cast<uint64_t>(old.st_dev);
      out.inode = static_cast<uint64_t>(old.st_ino);
      out.uid = old.st_uid;
      out.gid = old.st_gid;
      out.mode = old.st_mode & 07777;
      return out;
    }
    FileStat out;
    out.size = st.stx_size;
    out.is_regular = S_ISREG(st.stx_mode);
    out.is_directory = S_ISDIR(st.stx_mode);
    out.device = static_cast<uint64_t>(makedev(st.stx_dev_major, st.stx_dev_minor));
    out.inode = st.stx_ino;
    out.uid = st.stx_uid;
    out.gid = st.stx_gid;
    out.mode = st.stx_mode & 07777;
    return out;
  }

 private:
  Status RetryIoctl(unsigned long request, void* arg, const char* operation) {
    int rc;
    do {
      rc = Syscalls().ioctl(fd_, request, arg);
    } while (rc != 0 && errno == EINTR);
    return rc == 0 ? Status::Ok() : Status::FromErrno(SavedErrno(), operation, path_);
  }

  Status Retry(int (*call)(int), const char* operation) {
    int rc;
    do {
      rc = call(fd_);
    } while (rc != 0 && errno == EINTR);
    return rc == 0 ? Status::Ok() : Status::FromErrno(SavedErrno(), operation, path_);
  }

  int fd_;
  std::string path_;
  LinkRoute link_route_;
};

class PosixIo final : public Io {
 public:
  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override {
    // O_NONBLOCK: opening a FIFO must not hang; it changes nothing for the
    // regular files a store is, and fstat rejects anything else.
    // O_NOATIME: mmap and reads would update the access time, a journalled
    // inode change on ext4; in a one-shot open/map/pwrite/fdatasync/close it
    // measured about 50 us of a 290 us update (docs/BENCH-LAB.md). Only the
    // file's owner (or CAP_FOWNER) may ask for it: on EPERM, open without.
    const bool refuse_symlink = symlinks == SymlinkPolicy::kRefuse;
    const int flags = (mode == OpenMode::kReadWrite ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK |
                      (refuse_symlink ? O_NOFOLLOW : 0);
    auto opened = OpenWith(path, flags | O_NOATIME, 0, "open");
    if (!opened.ok() && opened.status().sys_errno() == EPERM) {
      opened = OpenWith(path, flags, 0, "open");
    }
    // O_NOFOLLOW reports a link at the last component as ELOOP, the errno of
    // a loop ("too many levels of symbolic links") too. lstat tells them
    // apart, so a refused link is not reported as a loop; the answer is only
    // for the message (the path may change meanwhile), the refusal stands.
    if (!opened.ok() && refuse_symlink && opened.status().sys_errno() == ELOOP && IsSymlink(path)) {
      return Status::Error(StatusCode::kInvalidArgument, "open", path,
                           "is a symbolic link; refused (SymlinkPolicy::kRefuse)");
    }
    return opened;
  }

  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override {
    return OpenWith(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, "create temp file");
  }

  Status Rename(const std::string& from, const std::string& to, bool replace) override {
    if (replace) {
      if (::rename(from.c_str(), to.c_str()) != 0)
        return Status::FromErrno(SavedErrno(), "rename", to);
      return Status::Ok();
    }
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
      return Status::Ok();
    }
    if (errno != EINVAL && errno != ENOSYS) {
      return Status::FromErrno(SavedErrno(), "rename (no replace)", to);
    }
    // The filesystem lacks RENAME_NOREPLACE: link() never replaces either.
    if (::link(from.c_str(), to.c_str()) != 0) return Status::FromErrno(SavedErrno(), "link", to);
    // `to` is published now; a leftover `from` name is only clutter.
    (void)::unlink(from.c_str());
    return Status::Ok();
  }

  Status Remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return Status::FromErrno(SavedErrno(), "unlink", path);
    return Status::Ok();
  }

  Status SyncDirectory(const std::string& directory) override {
    auto opened = OpenWith(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, "open directory");
    if (!opened.ok()) return opened.status();
    Status synced = (*opened)->Sync();
    if (!synced.ok()) {
      return Status::FromErrno(synced.sys_errno(), "fsync directory", directory);
    }
    return Status::Ok();
  }

  Result<FileStat> StatPath(const std::string& path) override {
    return PosixFile::StatNoTimes(AT_FDCWD, path.c_str(), 0, "stat", path);
  }

  Status FillRandom(std::span<std::byte> out) override {
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::getrandom(out.data() + done, out.size() - done, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno(SavedErrno(), "getrandom", "");
      }
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }

  // Whether a space of the btrfs holding `path` is both data and metadata
  // (BTRFS_IOC_SPACE_INFO: once for the count, once for the spaces). false
  // if it cannot be told.
  static bool BtrfsHasMixedBlockGroups(const std::string& path) {
    int fd;
    do {
      fd = Syscalls().open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return false;
    // Through byte buffers: the struct ends in a flexible array member.
    std::vector<std::byte> head(sizeof(btrfs_ioctl_space_args));
    bool mixed = false;
    if (Syscalls().ioctl(fd, BTRFS_IOC_SPACE_INFO, head.data()) == 0) {
      const uint64_t count = reinterpret_cast<btrfs_ioctl_space_args*>(head.data())->total_spaces;
      const size_t slots = static_cast<size_t>(std::min<uint64_t>(count, 1024));
      std::vector<std::byte> buffer(sizeof(btrfs_ioctl_space_args) +
                                    slots * sizeof(btrfs_ioctl_space_info));
      auto* args = reinterpret_cast<btrfs_ioctl_space_args*>(buffer.data());
      args->space_slots = slots;
      if (slots > 0 && Syscalls().ioctl(fd, BTRFS_IOC_SPACE_INFO, args) == 0) {
        constexpr uint64_t kBoth = BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA;
        for (uint64_t i = 0; i < std::min<uint64_t>(args->total_spaces, slots); ++i) {
          if ((args->spaces[i].flags & kBoth) == kBoth) mixed = true;
        }
      }
    }
    ::close(fd);
    return mixed;
  }

  Result<FsInfo> StatFs(const std::string& path) override {
    struct statfs st {};
    int rc;
    do {
      rc = ::statfs(path.c_str(), &st);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return Status::FromErrno(SavedErrno(), "statfs", path);
    FsInfo info;
    info.type_magic = static_cast<uint64_t>(st.f_type) & 0xffffffffu;
    info.block_size = static_cast<uint64_t>(st.f_bsize);
    info.available_bytes = static_cast<uint64_t>(st.f_bavail) * info.block_size;
    switch (info.type_magic) {
      case EXT4_SUPER_MAGIC:
        info.type_name = "ext2/3/4";
        break;
      case XFS_SUPER_MAGIC:
        info.type_name = "xfs";
        break;
      case TMPFS_MAGIC:
        info.type_name = "tmpfs";
        break;
      case NFS_SUPER_MAGIC:
        info.type_name = "nfs";
        break;
      case OVERLAYFS_SUPER_MAGIC:
        info.type_name = "overlayfs";
        break;
      case BTRFS_SUPER_MAGIC:
        info.type_name = "btrfs";
        info.copy_on_write = true;
        info.mixed_block_groups = BtrfsHasMixedBlockGroups(path);
        break;
      case 0xca451a4e:
        info.type_name = "bcachefs";
        info.copy_on_write = true;
        break;
      case 0x2fc12fc1:
        info.type_name = "zfs";
        info.copy_on_write = true;
        break;
      default:
        info.type_name = internal::HexNumber(info.type_magic);
    }
    return info;
  }

  uint64_t ProcessId() override { return static_cast<uint64_t>(::getpid()); }

  uint32_t EffectiveUserId() override { return static_cast<uint32_t>(::geteuid()); }

  Result<std::vector<std::string>> ListDirectory(const std::string& directory) override {
    DIR* dir = ::opendir(directory.c_str());
    if (dir == nullptr) return Status::FromErrno(errno, "list directory", directory);
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
      errno = 0;
    }
    const int error = errno;
    ::closedir(dir);
    if (error != 0) return Status::FromErrno(error, "list directory", directory);
    return names;
  }

  Result<std::array<std::byte, 16>> BootId() override {
    constexpr const char* kPath = "/proc/sys/kernel/random/boot_id";
    auto opened = OpenWith(kPath, O_RDONLY | O_CLOEXEC, 0, "open");
    if (!opened.ok()) return opened.status();
    std::array<std::byte, 64> text{};
    auto read = (*opened)->ReadAt(0, text);
    if (!read.ok()) return read.status();
    // 36 characters: 8-4-4-4-12 hexadecimal digits, then a newline.
    std::array<std::byte, 16> id{};
    size_t digits = 0;
    for (uint64_t i = 0; i < *read && digits < 32; ++i) {
      const char c = static_cast<char>(text[i]);
      int value = -1;
      if (c >= '0' && c <= '9') value = c - '0';
      if (c >= 'a' && c <= 'f') value = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') value = c - 'A' + 10;
      if (value < 0) {
        if (c == '-') continue;
        break;
      }
      id[digits / 2] |= static_cast<std::byte>(digits % 2 == 0 ? value << 4 : value);
      ++digits;
    }
    if (digits != 32) {
      return Status::Error(StatusCode::kCorruption, "read boot id", kPath, "does not hold a UUID");
    }
    return id;
  }

  uint64_t PageSize() override { return static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)); }

  uint64_t NowUnixNanos() override { return ClockNanos(CLOCK_REALTIME); }
  uint64_t MonotonicNanos() override { return ClockNanos(CLOCK_MONOTONIC); }

  Result<std::unique_ptr<File>> CreateAnonymous(const std::string& directory) override {
    // A filesystem without O_TMPFILE says EOPNOTSUPP; a kernel before 3.11
    // does not know the flag and sees O_DIRECTORY | O_RDWR (EISDIR), or
    // refuses the combination (EINVAL). The caller falls back on any error.
    auto opened = OpenWith(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600, "create temp file");
    if (!opened.ok()) return opened.status();
    auto* file = static_cast<PosixFile*>(opened->get());
    // Find a route Link can take before anything is written, so that a
    // refusal costs a fallback, not gigabytes written into a file that can
    // never be named. The probe links onto "<directory>/.": linkat resolves
    // the old path (where a missing /proc fails with ENOENT, and
    // AT_EMPTY_PATH without CAP_DAC_READ_SEARCH before 6.10 fails with
    // ENOENT too) before it looks at the new one, and a "." there always
    // ends the call with EEXIST without creating anything. What the probe
    // cannot see (a security module refusing the link itself) surfaces as
    // an error of Link, and the file, nameless, goes with its descriptor.
    const std::string probe = directory + "/.";
    for (PosixFile::LinkRoute route :
         {PosixFile::LinkRoute::kProcFd, PosixFile::LinkRoute::kEmptyPath}) {
      int rc;
      do {
        rc = file->LinkVia(route, probe.c_str());
      } while (rc != 0 && errno == EINTR);
      if (rc != 0 && errno == EEXIST) {
        return std::unique_ptr<File>(
            std::make_unique<PosixFile>(ReleaseDescriptor(std::move(*opened)), directory, route));
      }
    }
    return Status::FromErrno(EOPNOTSUPP, "create temp file", directory,
                             "an O_TMPFILE file here could not be linked (no /proc, and "
                             "linkat AT_EMPTY_PATH refused)");
  }

 private:
  // lstat: is the last component of `path` itself a symbolic link?
  static bool IsSymlink(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  }

  static Result<std::unique_ptr<File>> OpenWith(const std::string& path, int flags, mode_t mode,
                                                const char* operation) {
    int fd;
    do {
      fd = Syscalls().open(path.c_str(), flags, mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return Status::FromErrno(SavedErrno(), operation, path);
    // A process that closed its standard streams gets a store on 0, 1 or 2
    // from open; a later printf or a child's stderr would then write into
    // it. Move such a descriptor above them (as SQLite's robust_open does).
    if (fd <= STDERR_FILENO) {
      const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
      const int error = errno;
      ::close(fd);
      if (moved < 0) {
        return Status::FromErrno(error, operation, path, "could not move the descriptor above 2");
      }
      fd = moved;
    }
    return std::unique_ptr<File>(std::make_unique<PosixFile>(fd, path));
  }

  // Takes the descriptor out of a PosixFile made by OpenWith, so that it can
  // be wrapped again with a link route.
  static int ReleaseDescriptor(std::unique_ptr<File> file) {
    return static_cast<PosixFile*>(file.get())->ReleaseFd();
  }
};

}  // namespace

Result<FsInfo> Io::StatFs(const std::string& path) { return Default()->StatFs(path); }

uint64_t Io::MonotonicNanos() { return Default()->MonotonicNanos(); }

Status Mapping::WaitWord(uint64_t offset, uint32_t expected, uint64_t deadline_ns) {
  if (offset % sizeof(uint32_t) != 0 || offset > size() || size() - offset < sizeof(uint32_t)) {
    return Status::Error(StatusCode::kInvalidArgument, "futex wait", "",
                         "the word is not 4-byte aligned inside the mapping");
  }
  const struct timespec deadline {
    static_cast<time_t>(deadline_ns / 1'000'000'000u),
        static_cast<long>(deadline_ns % 1'000'000'000u)
  };
  auto* word = reinterpret_cast<uint32_t*>(data() + offset);
  if (Syscalls().futex(word, FUTEX_WAIT_BITSET, expected, &deadline) == 0) return Status::Ok();
  switch (errno) {
    case EAGAIN:  // the word no longer held `expected`
    case EINTR:   // a signal: the caller rechecks and waits again
      return Status::Ok();
    case ETIMEDOUT:
      return Status::Error(StatusCode::kTimedOut, "futex wait", "", "the deadline passed");
    default:
      return Status::FromErrno(SavedErrno(), "futex wait", "");
  }
}

void Mapping::WakeWord(uint64_t offset) {
  if (offset % sizeof(uint32_t) != 0 || offset > size() || size() - offset < sizeof(uint32_t))
    return;
  static_cast<void>(
      Syscalls().futex(reinterpret_cast<uint32_t*>(data() + offset), FUTEX_WAKE, 0, nullptr));
}

Result<std::array<std::byte, 16>> Io::BootId() { return Default()->BootId(); }

uint64_t Io::ProcessId() { return Default()->ProcessId(); }

uint32_t Io::EffectiveUserId() { return Default()->EffectiveUserId(); }

Result<std::vector<std::string>> Io::ListDirectory(const std::string& directory) {
  return Default()->ListDirectory(directory);
}

Result<std::unique_ptr<File>> Io::CreateAnonymous(const std::string& directory) {
  return Status::FromErrno(EOPNOTSUPP, "create temp file", directory,
                           "this Io makes no anonymous files");
}

Status File::Link(const std::string& path) {
  return Status::FromErrno(EOPNOTSUPP, "link", path, "this File cannot be linked");
}

Status File::WriteGatherAt(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                           bool data_sync) {
  for (std::span<const std::byte> part : parts) {
    if (Status s = WriteAt(offset, part); !s.ok()) return s;
    offset += part.size();
  }
  return data_sync ? DataSync() : Status::Ok();
}

namespace {
Status NotSupportedByThisIo(const std::string& path, const char* operation) {
  return Status::Error(StatusCode::kIOError, operation, path, "not supported by this Io",
                       EOPNOTSUPP);
}
}  // namespace

Result<bool> File::HasWriter() { return NotSupportedByThisIo(path(), "test the writer's lock"); }

Result<uint32_t> File::InodeFlags() { return NotSupportedByThisIo(path(), "get inode flags"); }

Status File::SetInodeFlags(uint32_t flags) {
  static_cast<void>(flags);
  return NotSupportedByThisIo(path(), "set inode flags");
}

Result<std::vector<FileRange>> File::SharedRanges(uint64_t offset, uint64_t length) {
  static_cast<void>(offset);
  static_cast<void>(length);
  return NotSupportedByThisIo(path(), "list shared extents");
}

Status File::UnshareRange(uint64_t offset, uint64_t length) {
  static_cast<void>(offset);
  static_cast<void>(length);
  return NotSupportedByThisIo(path(), "unshare");
}

Status File::SetOwner(std::optional<uint32_t> uid, std::optional<uint32_t> gid) {
  static_cast<void>(uid);
  static_cast<void>(gid);
  return NotSupportedByThisIo(path(), "fchown");
}

Status File::SetPermissions(uint32_t mode) {
  static_cast<void>(mode);
  return NotSupportedByThisIo(path(), "fchmod");
}

Io* Io::Default() {
  // Stateless and never destroyed, so it is safe to use from static
  // destructors and other threads.
  static PosixIo* const io = new PosixIo();
  return io;
}

}  // namespace regionstore
