// MemoryIo: the store fuzzer's Io, one store file held in a caller's buffer.
//
// The store fuzzer must run thousands of inputs a second; a real file costs
// a create, a truncate, the writes of the image and, for a writer, an
// fdatasync per input, and reading the file back to check what a writer
// changed costs as much again. Here pread, pwrite and the mapping are the
// one buffer, as the page cache is on Linux, and barriers do nothing: the
// fuzzer checks what readers and a writer make of the bytes, not what
// reaches a disk (the crash simulator, support/crash_sim.h, does that).
//
// It is not a CrashSim with tracking off: a MemoryIo answers the questions a
// reader asks about a writer (File::HasWriter: is the lock held now) as the
// POSIX Io does, so the fuzzer's readers take the paths they take on a real
// file. What it does not do is write-protect a read-only mapping: a store
// through a reader's mapping would fault on a real file and goes unseen
// here (making the pages read-only for each reader, with mprotect, took the
// fuzzer from 2,388 to 1,416 executions a second with the same seed). The
// corpus replay (tests/test_fuzz_corpus.cc) runs every input through a real
// file as well, where it would fault.
#ifndef REGIONSTORE_TESTS_FUZZ_MEMORY_IO_H_
#define REGIONSTORE_TESTS_FUZZ_MEMORY_IO_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "regionstore/io.h"
#include "support/memory_sidecar.h"

namespace regionstore::fuzz {

class MemoryIo final : public Io {
 public:
  // `file` is the store file's content; it must outlive every File and
  // Mapping handed out. Every path names it, but for one ending in ".shm":
  // a protocol 2 store's sidecar, kept in memory beside it.
  explicit MemoryIo(std::span<std::byte> file) : file_(file) {}

  std::span<std::byte> file() const { return file_; }
  // Whether a File of this Io holds the writer's lock.
  bool locked() const { return locked_; }
  void set_locked(bool locked) { locked_ = locked; }

  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override;
  Result<FileStat> StatPath(const std::string& path) override;
  Result<FsInfo> StatFs(const std::string& path) override;
  Result<std::array<std::byte, 16>> BootId() override;
  Result<std::vector<std::string>> ListDirectory(const std::string& directory) override;
  Status FillRandom(std::span<std::byte> out) override;
  uint64_t PageSize() override { return 4096; }
  uint64_t ProcessId() override { return 1; }
  uint64_t NowUnixNanos() override { return ++clock_; }
  uint64_t MonotonicNanos() override { return clock_; }
  // The store is never created, renamed or removed; the sidecar is
  // created by a protocol 2 writer's open.
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to, bool replace) override;
  Status Remove(const std::string& path) override;
  Status SyncDirectory(const std::string& directory) override;

 private:
  std::span<std::byte> file_;
  testing::MemorySidecar sidecar_;
  bool locked_ = false;
  uint64_t clock_ = 1'700'000'000'000'000'000;
};

}  // namespace regionstore::fuzz

#endif  // REGIONSTORE_TESTS_FUZZ_MEMORY_IO_H_
