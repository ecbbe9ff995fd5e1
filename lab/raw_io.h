// Raw descriptors: the benchmarks' baselines call the OS directly, without
// the library and without its Io seam, so that "commit vs raw" compares the
// library with the syscalls it makes. A failed open or mmap ends the program
// (Die); writes return "" or what failed, so an arm can report it.
#ifndef REGIONSTORE_LAB_RAW_IO_H_
#define REGIONSTORE_LAB_RAW_IO_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace regionstore::bench {

// An open(2)ed descriptor, closed by the destructor. Dies if open fails.
class Fd {
 public:
  Fd(const std::string& path, int flags);
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// MAP_SHARED, read-write or read-only, of [offset, offset + length). Dies if
// mmap fails; the destructor unmaps.
class FileMapping {
 public:
  FileMapping(int fd, uint64_t offset, uint64_t length, bool writable, const std::string& path);
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  ~FileMapping();
  std::byte* data() const { return base_; }

 private:
  std::byte* base_ = nullptr;
  uint64_t length_ = 0;
};

// One write of all of `parts` at `offset` (pwritev2 with `flags`); a short
// write is an error here, which a local file does not give.
std::string WriteParts(int fd, std::span<const iovec> parts, uint64_t offset, int flags);

std::string WriteOne(int fd, std::span<const std::byte> data, uint64_t offset, int flags);

// fdatasync, retried on EINTR.
std::string DataSync(int fd);

std::string PwriteFdatasync(int fd, std::span<const std::byte> data, uint64_t offset);

// The same bytes written in steps of `step`, each step's writeback started
// (sync_file_range(SYNC_FILE_RANGE_WRITE)) before the next is written, then
// fdatasync: the device writes while the page cache fills.
std::string SteppedPwriteFdatasync(int fd, std::span<const std::byte> data, uint64_t offset,
                                   uint64_t step);

// A plain file of `size` bytes written by one large pwrite and synced.
void CreatePlainFile(const std::string& path, uint64_t size);

// All of `size` bytes to or from a descriptor (a pipe between a benchmark
// and its child), retrying short counts and EINTR; false on an error or,
// reading, at end of file.
bool WriteAll(int fd, const void* data, size_t size);
bool ReadAll(int fd, void* data, size_t size);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_RAW_IO_H_
