#include "support/test_io.h"

#include <algorithm>
#include <utility>

namespace regionstore::testing {
namespace {

const char* OpName(Op op) {
  switch (op) {
    case Op::kOpen: return "open";
    case Op::kCreateExclusive: return "create temp file";
    case Op::kRename: return "rename";
    case Op::kRemove: return "unlink";
    case Op::kSyncDirectory: return "fsync directory";
    case Op::kReadAt: return "pread";
    case Op::kWriteAt: return "pwrite";
    case Op::kAllocate: return "fallocate";
    case Op::kDataSync: return "fdatasync";
    case Op::kSync: return "fsync";
    case Op::kLock: return "lock";
    case Op::kMap: return "mmap";
    case Op::kMsync: return "msync";
  }
  return "?";
}

class TestMapping final : public Mapping {
 public:
  TestMapping(TestIo& io, std::unique_ptr<Mapping> base, std::string path)
      : io_(io), base_(std::move(base)), path_(std::move(path)) {}
  std::byte* data() override { return base_->data(); }
  uint64_t size() const override { return base_->size(); }
  Status Sync(uint64_t offset, uint64_t length, SyncKind kind) override {
    io_.RecordMsync({offset, length, kind});
    if (Status s = io_.Enter(Op::kMsync, path_); !s.ok()) return s;
    return base_->Sync(offset, length, kind);
  }
  void PrepareWrite(uint64_t offset, uint64_t length) override {
    base_->PrepareWrite(offset, length);
  }
  void ResetPageTables(uint64_t offset, uint64_t length) override {
    io_.RecordPageTableReset({offset, length});
    base_->ResetPageTables(offset, length);
  }

 private:
  TestIo& io_;
  std::unique_ptr<Mapping> base_;
  std::string path_;
};

class TestFile final : public File {
 public:
  TestFile(TestIo& io, std::unique_ptr<File> base) : io_(io), base_(std::move(base)) {}
  const std::string& path() const override { return base_->path(); }
  Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    if (Status s = io_.Enter(Op::kReadAt, path()); !s.ok()) return s;
    auto read = base_->ReadAt(offset, out);
    if (read.ok()) io_.RecordRead(*read);
    return read;
  }
  Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    io_.RecordWrite({offset, data.size()});
    if (Status s = io_.Enter(Op::kWriteAt, path()); !s.ok()) return s;
    return base_->WriteAt(offset, data);
  }
  Status Allocate(uint64_t offset, uint64_t length) override {
    if (Status s = io_.Enter(Op::kAllocate, path()); !s.ok()) return s;
    return base_->Allocate(offset, length);
  }
  Status DataSync() override {
    if (Status s = io_.Enter(Op::kDataSync, path()); !s.ok()) return s;
    return base_->DataSync();
  }
  Status Sync() override {
    if (Status s = io_.Enter(Op::kSync, path()); !s.ok()) return s;
    return base_->Sync();
  }
  Status LockExclusive() override {
    if (Status s = io_.Enter(Op::kLock, path()); !s.ok()) return s;
    return base_->LockExclusive();
  }
  Result<FileStat> Stat() override { return base_->Stat(); }
  Result<std::unique_ptr<Mapping>> Map(uint64_t length, bool writable) override {
    if (Status s = io_.Enter(Op::kMap, path()); !s.ok()) return s;
    auto mapping = base_->Map(length, writable);
    if (!mapping.ok()) return mapping.status();
    return std::unique_ptr<Mapping>(
        std::make_unique<TestMapping>(io_, std::move(*mapping), path()));
  }

 private:
  TestIo& io_;
  std::unique_ptr<File> base_;
};

}  // namespace

void TestIo::FailNth(Op op, int nth, int sys_errno) {
  std::lock_guard lock(mutex_);
  faults_[op] = Fault{nth, sys_errno};
}

int TestIo::Count(Op op) const {
  std::lock_guard lock(mutex_);
  auto it = counts_.find(op);
  return it == counts_.end() ? 0 : it->second;
}

std::vector<MsyncCall> TestIo::Msyncs() const {
  std::lock_guard lock(mutex_);
  return msyncs_;
}

std::vector<WriteCall> TestIo::Writes() const {
  std::lock_guard lock(mutex_);
  return writes_;
}

void TestIo::ClearLog() {
  std::lock_guard lock(mutex_);
  counts_.clear();
  msyncs_.clear();
  writes_.clear();
  page_table_resets_.clear();
  bytes_read_ = 0;
}

void TestIo::OnEnter(std::function<void(Op)> hook) {
  std::lock_guard lock(mutex_);
  enter_hook_ = std::move(hook);
}

Status TestIo::Enter(Op op, const std::string& path) {
  std::lock_guard lock(mutex_);
  if (enter_hook_) enter_hook_(op);
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
  std::lock_guard lock(mutex_);
  return bytes_read_;
}

void TestIo::RecordRead(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  bytes_read_ += bytes;
}

std::vector<RangeCall> TestIo::PageTableResets() const {
  std::lock_guard lock(mutex_);
  return page_table_resets_;
}

void TestIo::RecordPageTableReset(const RangeCall& call) {
  std::lock_guard lock(mutex_);
  page_table_resets_.push_back(call);
}

void TestIo::RecordMsync(const MsyncCall& call) {
  std::lock_guard lock(mutex_);
  msyncs_.push_back(call);
}

void TestIo::RecordWrite(const WriteCall& call) {
  std::lock_guard lock(mutex_);
  writes_.push_back(call);
}

Result<FsInfo> TestIo::StatFs(const std::string& path) {
  {
    std::lock_guard lock(mutex_);
    if (fake_filesystem_) return *fake_filesystem_;
  }
  return base_->StatFs(path);
}

void TestIo::FakeFilesystem(const FsInfo& info) {
  std::lock_guard lock(mutex_);
  fake_filesystem_ = info;
}

Status TestIo::FillRandom(std::span<std::byte> out) {
  if (!fixed_random_) return base_->FillRandom(out);
  std::fill(out.begin(), out.end(), *fixed_random_);
  return Status::Ok();
}

void TestIo::OnNextOpen(std::function<void()> hook) {
  std::lock_guard lock(mutex_);
  open_hook_ = std::move(hook);
}

Result<std::unique_ptr<File>> TestIo::Open(const std::string& path, bool writable,
                                           SymlinkPolicy symlinks) {
  if (Status s = Enter(Op::kOpen, path); !s.ok()) return s;
  auto file = base_->Open(path, writable, symlinks);
  if (!file.ok()) return file.status();
  std::function<void()> hook;
  {
    std::lock_guard lock(mutex_);
    hook = std::exchange(open_hook_, nullptr);
  }
  if (hook) hook();
  return std::unique_ptr<File>(std::make_unique<TestFile>(*this, std::move(*file)));
}

Result<std::unique_ptr<File>> TestIo::CreateExclusive(const std::string& path) {
  if (Status s = Enter(Op::kCreateExclusive, path); !s.ok()) return s;
  auto file = base_->CreateExclusive(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<File>(std::make_unique<TestFile>(*this, std::move(*file)));
}

Status TestIo::Rename(const std::string& from, const std::string& to, bool replace) {
  if (Status s = Enter(Op::kRename, to); !s.ok()) return s;
  return base_->Rename(from, to, replace);
}

Status TestIo::Remove(const std::string& path) {
  if (Status s = Enter(Op::kRemove, path); !s.ok()) return s;
  return base_->Remove(path);
}

Status TestIo::SyncDirectory(const std::string& directory) {
  if (Status s = Enter(Op::kSyncDirectory, directory); !s.ok()) return s;
  return base_->SyncDirectory(directory);
}

}  // namespace regionstore::testing
