// TestIo: an Io that records every call the store makes through the seam and
// can fail the Nth call of a kind with a chosen errno, without root.
#ifndef REGIONSTORE_TESTS_SUPPORT_TEST_IO_H_
#define REGIONSTORE_TESTS_SUPPORT_TEST_IO_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "regionstore/io.h"

namespace regionstore::testing {

enum class Op {
  kOpen,
  kCreateExclusive,
  kRename,
  kRemove,
  kSyncDirectory,
  kReadAt,
  kWriteAt,
  kAllocate,
  kDataSync,
  kSync,
  kLock,
  kMap,
  kMsync,
};

struct MsyncCall {
  uint64_t offset = 0;
  uint64_t length = 0;
  SyncKind kind = SyncKind::kSync;
};

struct WriteCall {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// A Mapping::ResetPageTables call.
struct RangeCall {
  uint64_t offset = 0;
  uint64_t length = 0;
};

class TestIo final : public Io {
 public:
  explicit TestIo(Io* base = Io::Default()) : base_(base) {}

  // The `nth` call of `op` from now on (1 = the next one) fails with
  // `sys_errno` instead of reaching the OS.
  void FailNth(Op op, int nth, int sys_errno);
  // Calls of `op` so far.
  int Count(Op op) const;
  std::vector<MsyncCall> Msyncs() const;
  std::vector<WriteCall> Writes() const;
  std::vector<RangeCall> PageTableResets() const;
  // Bytes returned by ReadAt so far.
  uint64_t BytesRead() const;
  void RecordRead(uint64_t bytes);
  // Forgets the calls recorded so far (fault rules stay).
  void ClearLog();

  Result<std::unique_ptr<File>> Open(const std::string& path, bool writable,
                                     SymlinkPolicy symlinks) override;
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to, bool replace) override;
  Status Remove(const std::string& path) override;
  Status SyncDirectory(const std::string& directory) override;
  Result<FileStat> StatPath(const std::string& path) override { return base_->StatPath(path); }
  // Random bytes from the base Io, or `value` repeated once FixRandom was
  // called (so that a test knows a temp file's name in advance).
  Status FillRandom(std::span<std::byte> out) override;
  void FixRandom(std::byte value) { fixed_random_ = value; }
  uint64_t PageSize() override { return base_->PageSize(); }
  // The real statfs, unless FakeFilesystem() was called.
  Result<FsInfo> StatFs(const std::string& path) override;
  // Makes StatFs report `info` from now on.
  void FakeFilesystem(const FsInfo& info);
  // Runs `hook` once, right after the next Open() of a file succeeds and
  // before the caller sees it: a chance to swap the path under the caller.
  void OnNextOpen(std::function<void()> hook);
  // Runs `hook` with the kind of every call, as it enters the seam (before a
  // fault can fire): lets a test publish where the caller is.
  void OnEnter(std::function<void(Op)> hook);
  uint64_t NowUnixNanos() override { return base_->NowUnixNanos(); }

  // Counts the call and returns the injected failure, if this is the one.
  Status Enter(Op op, const std::string& path);
  void RecordMsync(const MsyncCall& call);
  void RecordWrite(const WriteCall& call);
  void RecordPageTableReset(const RangeCall& call);

 private:
  struct Fault {
    int remaining = 0;  // calls until it fires; 1 = the next
    int sys_errno = 0;
  };
  Io* base_;
  mutable std::mutex mutex_;
  std::map<Op, int> counts_;
  std::map<Op, Fault> faults_;
  std::vector<MsyncCall> msyncs_;
  std::vector<WriteCall> writes_;
  std::vector<RangeCall> page_table_resets_;
  uint64_t bytes_read_ = 0;
  std::optional<std::byte> fixed_random_;
  std::optional<FsInfo> fake_filesystem_;
  std::function<void()> open_hook_;
  std::function<void(Op)> enter_hook_;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_TEST_IO_H_
