#include "support/test_io.h"

#include <algorithm>
#include <utility>

namespace regionstore::testing {
namespace {

const char* OpName(Op op) {
  switch (op) {
    case Op::kOpen:
      return "open";
    case Op::kCreateExclusive:
      return "create temp file";
    case Op::kRename:
      return "rename";
    case Op::kRemove:
      return "unlink";
    case Op::kSyncDirectory:
      return "fsync directory";
    case Op::kReadAt:
      return "pread";
    case Op::kWriteAt:
      return "pwrite";
    case Op::kAllocate:
      return "fallocate";
    case Op::kDataSync:
      return "fdatasync";
    case Op::kSync:
      return "fsync";
    case Op::kLock:
      return "lock";
    case Op::kMap:
      return "mmap";
    case Op::kMsync:
      return "msync";
    case Op::kStartWriteback:
      return "sync_file_range";
    case Op::kCreateAnonymous:
      return "create temp file";
    case Op::kLink:
      return "link";
    case Op::kWaitWriteback:
      return "sync_file_range (wait)";
  }
  return "?";
}

class TestMapping final : public ForwardingMapping {
 public:
  TestMapping(TestIo& io, std::unique_ptr<Mapping> base, std::string path)
      : ForwardingMapping(std::move(base)), io_(io), path_(std::move(path)) {}
  Status Sync(uint64_t offset, uint64_t length, SyncKind kind) override {
    io_.RecordMsync({offset, length, kind});
    if (Status s = io_.Enter(Op::kMsync, path_); !s.ok()) return s;
    return base().Sync(offset, length, kind);
  }
  void ResetPageTables(uint64_t offset, uint64_t length) override {
    io_.RecordPageTableReset({offset, length});
    base().ResetPageTables(offset, length);
  }

 private:
  TestIo& io_;
  std::string path_;
};

class TestFile final : public ForwardingFile {
 public:
  TestFile(TestIo& io, std::unique_ptr<File> base) : ForwardingFile(std::move(base)), io_(io) {}
  Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    if (Status s = io_.Enter(Op::kReadAt, path()); !s.ok()) return s;
    auto read = base().ReadAt(offset, out);
    if (read.ok()) io_.RecordRead(*read);
    return read;
  }
  Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    io_.RecordWrite({offset, data.size()});
    if (Status s = io_.Enter(Op::kWriteAt, path()); !s.ok()) return s;
    Status written = base().WriteAt(offset, data);
    if (written.ok()) io_.RecordBytesWritten(data.size());
    return written;
  }
  // Counted as the WriteAt-per-part emulation (test_io.h), written by the
  // wrapped file's WriteGatherAt: with a POSIX file, pwritev2(RWF_DSYNC) and
  // its fallbacks are what runs.
  Status WriteGatherAt(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                       bool data_sync) override {
    uint64_t part_offset = offset;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].empty()) continue;
      io_.RecordWrite({part_offset, parts[i].size()});
      if (Status s = io_.Enter(Op::kWriteAt, path()); !s.ok()) {
        return WriteThenFail(offset, parts.first(i), s);
      }
      part_offset += parts[i].size();
    }
    if (data_sync) {
      if (Status s = io_.Enter(Op::kDataSync, path()); !s.ok()) {
        return WriteThenFail(offset, parts, s);
      }
    }
    return WriteGather(offset, parts, data_sync);
  }
  void StartWriteback(uint64_t offset, uint64_t length) override {
    io_.RecordStartWriteback({offset, length});
    if (!io_.Enter(Op::kStartWriteback, path()).ok()) return;
    base().StartWriteback(offset, length);
  }
  Status WaitWriteback(uint64_t offset, uint64_t length) override {
    if (Status s = io_.Enter(Op::kWaitWriteback, path()); !s.ok()) return s;
    return base().WaitWriteback(offset, length);
  }
  Status Allocate(uint64_t offset, uint64_t length) override {
    if (Status s = io_.Enter(Op::kAllocate, path()); !s.ok()) return s;
    return base().Allocate(offset, length);
  }
  Status DataSync() override {
    if (Status s = io_.Enter(Op::kDataSync, path()); !s.ok()) return s;
    return base().DataSync();
  }
  Status Sync() override {
    if (Status s = io_.Enter(Op::kSync, path()); !s.ok()) return s;
    return base().Sync();
  }
  Status LockExclusive() override {
    if (Status s = io_.Enter(Op::kLock, path()); !s.ok()) return s;
    return base().LockExclusive();
  }
  Status Link(const std::string& path) override {
    if (Status s = io_.Enter(Op::kLink, path); !s.ok()) return s;
    return base().Link(path);
  }
  Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) override {
    if (Status s = io_.Enter(Op::kMap, path()); !s.ok()) return s;
    auto mapping = base().Map(length, mode);
    if (!mapping.ok()) return mapping.status();
    return std::unique_ptr<Mapping>(
        std::make_unique<TestMapping>(io_, std::move(*mapping), path()));
  }

 private:
  Status WriteGather(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                     bool data_sync) {
    Status written = base().WriteGatherAt(offset, parts, data_sync);
    if (written.ok()) {
      uint64_t total = 0;
      for (std::span<const std::byte> part : parts) total += part.size();
      io_.RecordBytesWritten(total);
    }
    return written;
  }
  // What reached the file before the injected `fault`, then the fault (or
  // the real error, if writing that much failed already).
  Status WriteThenFail(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                       const Status& fault) {
    Status written = WriteGather(offset, parts, /*data_sync=*/false);
    return written.ok() ? fault : written;
  }

  TestIo& io_;
};

}  // namespace

void TestIo::FailNth(Op op, int nth, int sys_errno) {
  Locked([&] { faults_[op] = Fault{nth, sys_errno}; });
}

int TestIo::Count(Op op) const {
  std::lock_guard lock(mutex_);
  auto it = counts_.find(op);
  return it == counts_.end() ? 0 : it->second;
}

std::vector<MsyncCall> TestIo::Msyncs() const {
  return Locked([&] { return msyncs_; });
}

std::vector<WriteCall> TestIo::Writes() const {
  return Locked([&] { return writes_; });
}

void TestIo::ClearLog() {
  std::lock_guard lock(mutex_);
  counts_.clear();
  msyncs_.clear();
  writes_.clear();
  page_table_resets_.clear();
  start_writebacks_.clear();
  bytes_read_ = 0;
  bytes_written_ = 0;
}

void TestIo::OnEnter(std::function<void(Op)> hook) {
  Locked([&] { enter_hook_ = std::move(hook); });
}

Status TestIo::Enter(Op op, const std::string& path) {
  // The hook runs on a copy, outside the lock: it may call Count(), or
  // replace itself.
  if (auto hook = Locked([&] { return enter_hook_; })) hook(op);
  std::lock_guard lock(mutex_);
  ++counts_[op];
  auto it = faults_.find(op);
  if (it != faults_.end() && --it->second.remaining == 0) {
    const int sys_errno = it->second.sys_errno;
    faults_.erase(it);
    return Status::FromErrno(sys_errno, std::string(OpName(op)) + " (injected)", path);
  }
  return Status::Ok();
}

uint64_t TestIo::BytesRead() const {
  return Locked([&] { return bytes_read_; });
}

void TestIo::RecordRead(uint64_t bytes) {
  Locked([&] { bytes_read_ += bytes; });
}

uint64_t TestIo::BytesWritten() const {
  return Locked([&] { return bytes_written_; });
}

void TestIo::RecordBytesWritten(uint64_t bytes) {
  Locked([&] { bytes_written_ += bytes; });
}

std::vector<RangeCall> TestIo::StartWritebacks() const {
  return Locked([&] { return start_writebacks_; });
}

void TestIo::RecordStartWriteback(const RangeCall& call) {
  Locked([&] { start_writebacks_.push_back(call); });
}

std::vector<RangeCall> TestIo::PageTableResets() const {
  return Locked([&] { return page_table_resets_; });
}

void TestIo::RecordPageTableReset(const RangeCall& call) {
  Locked([&] { page_table_resets_.push_back(call); });
}

void TestIo::RecordMsync(const MsyncCall& call) {
  Locked([&] { msyncs_.push_back(call); });
}

void TestIo::RecordWrite(const WriteCall& call) {
  Locked([&] { writes_.push_back(call); });
}

Result<FsInfo> TestIo::StatFs(const std::string& path) {
  if (auto fake = Locked([&] { return fake_filesystem_; })) return *fake;
  return base()->StatFs(path);
}

Result<std::array<std::byte, 16>> TestIo::BootId() {
  if (auto fake = Locked([&] { return boot_id_; })) return *fake;
  return base()->BootId();
}

void TestIo::SetBootId(const std::array<std::byte, 16>& id) {
  Locked([&] { boot_id_ = id; });
}

uint64_t TestIo::MonotonicNanos() {
  if (auto fixed = Locked([&] { return monotonic_nanos_; })) return *fixed;
  return base()->MonotonicNanos();
}

void TestIo::SetMonotonicNanos(uint64_t nanos) {
  Locked([&] { monotonic_nanos_ = nanos; });
}

void TestIo::FakeFilesystem(const FsInfo& info) {
  Locked([&] { fake_filesystem_ = info; });
}

Status TestIo::FillRandom(std::span<std::byte> out) {
  if (!fixed_random_) return base()->FillRandom(out);
  std::fill(out.begin(), out.end(), *fixed_random_);
  return Status::Ok();
}

void TestIo::OnNextOpen(std::function<void()> hook) {
  Locked([&] { open_hook_ = std::move(hook); });
}

Result<std::unique_ptr<File>> TestIo::Open(const std::string& path, OpenMode mode,
                                           SymlinkPolicy symlinks) {
  if (Status s = Enter(Op::kOpen, path); !s.ok()) return s;
  auto file = base()->Open(path, mode, symlinks);
  if (!file.ok()) return file.status();
  if (auto hook = Locked([&] { return std::exchange(open_hook_, nullptr); })) hook();
  return std::unique_ptr<File>(std::make_unique<TestFile>(*this, std::move(*file)));
}

Result<std::unique_ptr<File>> TestIo::CreateExclusive(const std::string& path) {
  if (Status s = Enter(Op::kCreateExclusive, path); !s.ok()) return s;
  auto file = base()->CreateExclusive(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<File>(std::make_unique<TestFile>(*this, std::move(*file)));
}

Result<std::unique_ptr<File>> TestIo::CreateAnonymous(const std::string& directory) {
  if (!allow_anonymous_) return Io::CreateAnonymous(directory);
  if (Status s = Enter(Op::kCreateAnonymous, directory); !s.ok()) return s;
  auto file = base()->CreateAnonymous(directory);
  if (!file.ok()) return file.status();
  return std::unique_ptr<File>(std::make_unique<TestFile>(*this, std::move(*file)));
}

Status TestIo::Rename(const std::string& from, const std::string& to, bool replace) {
  if (Status s = Enter(Op::kRename, to); !s.ok()) return s;
  return base()->Rename(from, to, replace);
}

Status TestIo::Remove(const std::string& path) {
  if (Status s = Enter(Op::kRemove, path); !s.ok()) return s;
  return base()->Remove(path);
}

Status TestIo::SyncDirectory(const std::string& directory) {
  if (Status s = Enter(Op::kSyncDirectory, directory); !s.ok()) return s;
  return base()->SyncDirectory(directory);
}

}  // namespace regionstore::testing
