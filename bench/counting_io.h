// CountingIo: an Io that forwards every call to another one (by default
// Io::Default(), the production POSIX seam) and counts what the store asks
// its files to read and write, so a benchmark can say how many bytes an Open
// or a Commit moved. Bench code only; it must not lean on tests/.
//
// What it counts: bytes and calls of File::ReadAt (bytes actually read),
// File::WriteAt and File::WriteGatherAt (bytes asked for, counted when the
// call returns OK), and barriers (DataSync, Sync, WriteGatherAt with
// data_sync, Mapping::Sync with SyncKind::kSync, i.e. msync(MS_SYNC)). What
// it cannot see: loads and stores through a Mapping (a memcpy into
// MAP_SHARED memory makes no call); their bytes reach the disk at a barrier
// or at the kernel's writeback and are not in these counts.
//
// Every virtual of Io, File and Mapping is overridden, so no call the store makes
// falls through to a base-class default (File::WriteGatherAt's default would
// emulate pwritev2 with WriteAt per part, and count the same bytes while
// running other syscalls).
//
// Thread safety: counts are plain integers; use one thread.
#ifndef REGIONSTORE_BENCH_COUNTING_IO_H_
#define REGIONSTORE_BENCH_COUNTING_IO_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "regionstore/io.h"

namespace regionstore_bench {

struct IoCounts {
  uint64_t read_calls = 0;
  uint64_t read_bytes = 0;
  uint64_t write_calls = 0;  // WriteAt and WriteGatherAt calls
  uint64_t write_bytes = 0;
  uint64_t barriers = 0;  // DataSync, Sync, WriteGatherAt with data_sync, msync(MS_SYNC)

  IoCounts operator-(const IoCounts& earlier) const {
    return {read_calls - earlier.read_calls, read_bytes - earlier.read_bytes,
            write_calls - earlier.write_calls, write_bytes - earlier.write_bytes,
            barriers - earlier.barriers};
  }
};

// Owns the Mapping it forwards to.
class CountingMapping : public regionstore::Mapping {
 public:
  CountingMapping(std::unique_ptr<regionstore::Mapping> base, IoCounts* counts)
      : base_(std::move(base)), counts_(counts) {}

  std::byte* data() override { return base_->data(); }
  uint64_t size() const override { return base_->size(); }
  regionstore::Status Sync(uint64_t offset, uint64_t length, regionstore::SyncKind kind) override {
    if (kind == regionstore::SyncKind::kSync) ++counts_->barriers;
    return base_->Sync(offset, length, kind);
  }
  void PrepareWrite(uint64_t offset, uint64_t length) override {
    base_->PrepareWrite(offset, length);
  }
  void ResetPageTables(uint64_t offset, uint64_t length) override {
    base_->ResetPageTables(offset, length);
  }

 private:
  std::unique_ptr<regionstore::Mapping> base_;
  IoCounts* counts_;
};

class CountingFile : public regionstore::File {
 public:
  // `counts` is not owned and must outlive the file.
  CountingFile(std::unique_ptr<regionstore::File> base, IoCounts* counts)
      : base_(std::move(base)), counts_(counts) {}

  const std::string& path() const override { return base_->path(); }
  regionstore::Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    auto read = base_->ReadAt(offset, out);
    ++counts_->read_calls;
    if (read.ok()) counts_->read_bytes += *read;
    return read;
  }
  regionstore::Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    regionstore::Status s = base_->WriteAt(offset, data);
    ++counts_->write_calls;
    if (s.ok()) counts_->write_bytes += data.size();
    return s;
  }
  regionstore::Status WriteGatherAt(uint64_t offset,
                                    std::span<const std::span<const std::byte>> parts,
                                    bool data_sync) override {
    regionstore::Status s = base_->WriteGatherAt(offset, parts, data_sync);
    ++counts_->write_calls;
    if (data_sync) ++counts_->barriers;
    if (s.ok()) {
      for (const std::span<const std::byte>& part : parts) counts_->write_bytes += part.size();
    }
    return s;
  }
  void StartWriteback(uint64_t offset, uint64_t length) override {
    base_->StartWriteback(offset, length);
  }
  regionstore::Status Allocate(uint64_t offset, uint64_t length) override {
    return base_->Allocate(offset, length);
  }
  regionstore::Status DataSync() override {
    ++counts_->barriers;
    return base_->DataSync();
  }
  regionstore::Status Sync() override {
    ++counts_->barriers;
    return base_->Sync();
  }
  regionstore::Status LockExclusive() override { return base_->LockExclusive(); }
  regionstore::Result<regionstore::FileStat> Stat() override { return base_->Stat(); }
  regionstore::Result<std::unique_ptr<regionstore::Mapping>> Map(
      uint64_t length, regionstore::OpenMode mode) override {
    auto mapping = base_->Map(length, mode);
    if (!mapping.ok()) return mapping.status();
    return std::unique_ptr<regionstore::Mapping>(
        std::make_unique<CountingMapping>(std::move(*mapping), counts_));
  }

 private:
  std::unique_ptr<regionstore::File> base_;
  IoCounts* counts_;
};

class CountingIo : public regionstore::Io {
 public:
  explicit CountingIo(regionstore::Io* base = regionstore::Io::Default()) : base_(base) {}

  // What every file opened through this Io did so far.
  const IoCounts& counts() const { return counts_; }

  regionstore::Result<std::unique_ptr<regionstore::File>> Open(
      const std::string& path, regionstore::OpenMode mode, regionstore::SymlinkPolicy symlinks) override {
    return Wrap(base_->Open(path, mode, symlinks));
  }
  regionstore::Result<std::unique_ptr<regionstore::File>> CreateExclusive(
      const std::string& path) override {
    return Wrap(base_->CreateExclusive(path));
  }
  regionstore::Status Rename(const std::string& from, const std::string& to,
                             bool replace) override {
    return base_->Rename(from, to, replace);
  }
  regionstore::Status Remove(const std::string& path) override { return base_->Remove(path); }
  regionstore::Status SyncDirectory(const std::string& directory) override {
    ++counts_.barriers;
    return base_->SyncDirectory(directory);
  }
  regionstore::Result<regionstore::FileStat> StatPath(const std::string& path) override {
    return base_->StatPath(path);
  }
  regionstore::Status FillRandom(std::span<std::byte> out) override {
    return base_->FillRandom(out);
  }
  regionstore::Result<regionstore::FsInfo> StatFs(const std::string& path) override {
    return base_->StatFs(path);
  }
  regionstore::Result<std::array<std::byte, 16>> BootId() override { return base_->BootId(); }
  uint64_t PageSize() override { return base_->PageSize(); }
  uint64_t NowUnixNanos() override { return base_->NowUnixNanos(); }

 private:
  regionstore::Result<std::unique_ptr<regionstore::File>> Wrap(
      regionstore::Result<std::unique_ptr<regionstore::File>> file) {
    if (!file.ok()) return file.status();
    return std::unique_ptr<regionstore::File>(
        std::make_unique<CountingFile>(std::move(*file), &counts_));
  }

  regionstore::Io* base_;
  IoCounts counts_;
};

}  // namespace regionstore_bench

#endif  // REGIONSTORE_BENCH_COUNTING_IO_H_
