// The system calls the POSIX Io makes on an open file or mapping (and the
// opens and links of temp files), as a table
// of function pointers, after SQLite's os_unix.c: a test replaces an entry
// to make the production code meet EIO, EINTR, EOPNOTSUPP or a short count,
// and what runs is the real fallback code, not an emulation of it.
//
// Lib-internal (not installed, symbols hidden): tests reach it through the
// static regionstore_testing library. Production code never replaces it.
#ifndef REGIONSTORE_LIB_IO_POSIX_SYSCALLS_H_
#define REGIONSTORE_LIB_IO_POSIX_SYSCALLS_H_

#include <fcntl.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include <cstddef>
#include <cstdint>

namespace regionstore::internal {

// Each entry has the signature and the error convention of the libc function
// it is named after: -1 and errno, except posix_fallocate, which returns the
// error number.
struct PosixSyscalls {
  ssize_t (*pread)(int fd, void* buf, size_t count, off_t offset);
  ssize_t (*pwrite)(int fd, const void* buf, size_t count, off_t offset);
  ssize_t (*pwritev)(int fd, const iovec* iov, int iovcnt, off_t offset);
  ssize_t (*pwritev2)(int fd, const iovec* iov, int iovcnt, off_t offset, int flags);
  int (*fdatasync)(int fd);
  int (*fsync)(int fd);
  int (*msync)(void* addr, size_t length, int flags);
  int (*sync_file_range)(int fd, off_t offset, off_t nbytes, unsigned int flags);
  int (*posix_fallocate)(int fd, off_t offset, off_t length);
  int (*flock)(int fd, int operation);
  int (*madvise)(void* addr, size_t length, int advice);
  // open(2) with an explicit mode (libc's is variadic): every open of the
  // POSIX Io, O_TMPFILE included.
  int (*open)(const char* path, int flags, mode_t mode);
  int (*linkat)(int old_dir_fd, const char* old_path, int new_dir_fd, const char* new_path,
                int flags);
  // ioctl with one pointer argument (FS_IOC_GETFLAGS, FS_IOC_SETFLAGS,
  // FS_IOC_FIEMAP); libc's is variadic, so the table holds a wrapper.
  int (*ioctl)(int fd, unsigned long request, void* arg);
  // Linux fallocate(2) with a mode (FALLOC_FL_UNSHARE_RANGE): -1 and errno.
  int (*fallocate)(int fd, int mode, off_t offset, off_t length);
  // futex(2), which libc does not wrap: FUTEX_WAIT_BITSET with an absolute
  // CLOCK_MONOTONIC `deadline` (nullptr: none), or FUTEX_WAKE (`deadline`
  // unused). -1 and errno.
  long (*futex)(uint32_t* word, int op, uint32_t value, const struct timespec* deadline);
  // fcntl with a struct flock (F_OFD_SETLK, F_OFD_GETLK); libc's is
  // variadic, so the table holds a wrapper. -1 and errno.
  int (*fcntl_lock)(int fd, int command, struct flock* lock);
};

// The table every PosixFile and PosixMapping call goes through; at start
// the real libc functions. Reading it costs one load per call.
const PosixSyscalls& Syscalls();

// The real libc functions, whatever is installed.
PosixSyscalls RealSyscalls();

// Makes `table` the one Syscalls() returns and returns the one it replaces,
// so the caller can put it back. For tests only. Not thread-safe: no other
// thread may be inside, or about to enter, a call of the POSIX Io while it
// runs, and every entry must be non-null.
PosixSyscalls InstallSyscalls(const PosixSyscalls& table);

}  // namespace regionstore::internal

#endif  // REGIONSTORE_LIB_IO_POSIX_SYSCALLS_H_
