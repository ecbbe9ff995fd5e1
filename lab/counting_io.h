// CountingIo: an Io that forwards every call to another one (by default
// Io::Default(), the production POSIX seam) and counts what the store asks
// its files to read and write, so a benchmark can say how many bytes an Open
// or a Commit moved. It is built on the public forwarding bases
// (regionstore/io.h, ForwardingIo and its kin), which override every virtual
// of Io, File and Mapping, so no call the store makes falls through to a
// base-class default (File::WriteGatherAt's default would emulate pwritev2
// with WriteAt per part, and count the same bytes while running other
// syscalls; SharedRanges's would skip the FIEMAP check a production open
// makes).
//
// What it counts: bytes and calls of File::ReadAt (bytes actually read),
// File::WriteAt and File::WriteGatherAt (bytes asked for, counted when the
// call returns OK), and barriers (DataSync, Sync, WriteGatherAt with
// data_sync, Mapping::Sync with SyncKind::kSync, i.e. msync(MS_SYNC), and
// Io::SyncDirectory). What it cannot see: loads and stores through a Mapping
// (a memcpy into MAP_SHARED memory makes no call); their bytes reach the
// disk at a barrier or at the kernel's writeback and are not in these counts.
//
// Thread safety: one thread at a time, except that File::DataSync may run on
// the thread of Store::StartSync beside the handle's thread: the barrier
// count is updated and read atomically (std::atomic_ref), the rest are plain
// integers.
#ifndef REGIONSTORE_LAB_COUNTING_IO_H_
#define REGIONSTORE_LAB_COUNTING_IO_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "regionstore/io.h"

namespace regionstore::bench {

struct IoCounts {
  uint64_t read_calls = 0;
  uint64_t read_bytes = 0;
  uint64_t write_calls = 0;  // WriteAt and WriteGatherAt calls
  uint64_t write_bytes = 0;
  // DataSync, Sync, WriteGatherAt with data_sync, msync(MS_SYNC); aligned
  // for std::atomic_ref (CountBarrier).
  alignas(std::atomic_ref<uint64_t>::required_alignment) uint64_t barriers = 0;

  IoCounts& operator+=(const IoCounts& more) {
    read_calls += more.read_calls;
    read_bytes += more.read_bytes;
    write_calls += more.write_calls;
    write_bytes += more.write_bytes;
    barriers += more.barriers;
    return *this;
  }
  IoCounts operator-(const IoCounts& earlier) const {
    return {read_calls - earlier.read_calls, read_bytes - earlier.read_bytes,
            write_calls - earlier.write_calls, write_bytes - earlier.write_bytes,
            barriers - earlier.barriers};
  }
};

// Barriers may be counted on StartSync's thread (see above).
inline void CountBarrier(IoCounts* counts) {
  std::atomic_ref<uint64_t>(counts->barriers).fetch_add(1, std::memory_order_relaxed);
}

// Owns the Mapping it forwards to.
class CountingMapping : public ForwardingMapping {
 public:
  CountingMapping(std::unique_ptr<Mapping> base, IoCounts* counts)
      : ForwardingMapping(std::move(base)), counts_(counts) {}

  Status Sync(uint64_t offset, uint64_t length, SyncKind kind) override {
    if (kind == SyncKind::kSync) CountBarrier(counts_);
    return ForwardingMapping::Sync(offset, length, kind);
  }

 private:
  IoCounts* counts_;
};

class CountingFile : public ForwardingFile {
 public:
  // `counts` is not owned and must outlive the file.
  CountingFile(std::unique_ptr<File> base, IoCounts* counts)
      : ForwardingFile(std::move(base)), counts_(counts) {}

  Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    auto read = ForwardingFile::ReadAt(offset, out);
    ++counts_->read_calls;
    if (read.ok()) counts_->read_bytes += *read;
    return read;
  }
  Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    Status s = ForwardingFile::WriteAt(offset, data);
    ++counts_->write_calls;
    if (s.ok()) counts_->write_bytes += data.size();
    return s;
  }
  Status WriteGatherAt(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                       bool data_sync) override {
    Status s = ForwardingFile::WriteGatherAt(offset, parts, data_sync);
    ++counts_->write_calls;
    if (data_sync) CountBarrier(counts_);
    if (s.ok()) {
      for (const std::span<const std::byte>& part : parts) counts_->write_bytes += part.size();
    }
    return s;
  }
  Status DataSync() override {
    CountBarrier(counts_);
    return ForwardingFile::DataSync();
  }
  Status Sync() override {
    CountBarrier(counts_);
    return ForwardingFile::Sync();
  }
  Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) override {
    auto mapping = ForwardingFile::Map(length, mode);
    if (!mapping.ok()) return mapping.status();
    return std::unique_ptr<Mapping>(
        std::make_unique<CountingMapping>(std::move(*mapping), counts_));
  }

 private:
  IoCounts* counts_;
};

class CountingIo : public ForwardingIo {
 public:
  explicit CountingIo(Io* base = Io::Default()) : ForwardingIo(base) {}

  // What every file opened through this Io did so far.
  IoCounts counts() const {
    return {counts_.read_calls, counts_.read_bytes, counts_.write_calls, counts_.write_bytes,
            std::atomic_ref<uint64_t>(const_cast<uint64_t&>(counts_.barriers))
                .load(std::memory_order_relaxed)};
  }

  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override {
    return Wrap(ForwardingIo::Open(path, mode, symlinks));
  }
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override {
    return Wrap(ForwardingIo::CreateExclusive(path));
  }
  Result<std::unique_ptr<File>> CreateAnonymous(const std::string& directory) override {
    return Wrap(ForwardingIo::CreateAnonymous(directory));
  }
  Status SyncDirectory(const std::string& directory) override {
    CountBarrier(&counts_);
    return ForwardingIo::SyncDirectory(directory);
  }

 private:
  Result<std::unique_ptr<File>> Wrap(Result<std::unique_ptr<File>> file) {
    if (!file.ok()) return file.status();
    return std::unique_ptr<File>(std::make_unique<CountingFile>(std::move(*file), &counts_));
  }

  IoCounts counts_;
};

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_COUNTING_IO_H_
