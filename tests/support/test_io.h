// TestIo: an Io that records every call the store makes through the seam and
// can fail the Nth call of a kind with a chosen errno, without root. Its
// files and mappings derive from ForwardingFile and ForwardingMapping, so
// every call they do not record still reaches the wrapped Io's file.
#ifndef REGIONSTORE_TESTS_SUPPORT_TEST_IO_H_
#define REGIONSTORE_TESTS_SUPPORT_TEST_IO_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "regionstore/io.h"

namespace regionstore::testing {

// The kinds of call TestIo counts. File::WriteGatherAt has no kind of its
// own: it is counted as the WriteAt-per-part emulation it replaces would be,
// one kWriteAt (and one Writes() entry) per non-empty part, then, with
// data_sync, one kDataSync; a fault injected into one of those stops it
// where the emulation would stop (parts before a failing kWriteAt reach the
// file; a failing kDataSync comes after the whole write reached it). Either
// way the wrapped file's own WriteGatherAt does the writing.
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
  // File::StartWriteback. A fault injected here drops the hint (it returns
  // nothing to report it with).
  kStartWriteback,
  // Io::CreateAnonymous (only once AllowAnonymous(true)) and File::Link.
  kCreateAnonymous,
  kLink,
  // File::WaitWriteback (a commit's progress for its writeback).
  kWaitWriteback,
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

// A Mapping::ResetPageTables or File::StartWriteback call.
struct RangeCall {
  uint64_t offset = 0;
  uint64_t length = 0;
};

class TestIo final : public ForwardingIo {
 public:
  explicit TestIo(Io* base = Io::Default()) : ForwardingIo(base) {}

  // The `nth` call of `op` from now on (1 = the next one) fails with
  // `sys_errno` instead of reaching the OS.
  void FailNth(Op op, int nth, int sys_errno);
  // Calls of `op` so far.
  int Count(Op op) const;
  std::vector<MsyncCall> Msyncs() const;
  std::vector<WriteCall> Writes() const;
  std::vector<RangeCall> PageTableResets() const;
  std::vector<RangeCall> StartWritebacks() const;
  // Bytes returned by ReadAt so far.
  uint64_t BytesRead() const;
  void RecordRead(uint64_t bytes);
  // Bytes of WriteAt and WriteGatherAt calls (all parts) that the wrapped
  // file completed without error.
  uint64_t BytesWritten() const;
  void RecordBytesWritten(uint64_t bytes);
  // Forgets the calls recorded so far (fault rules stay).
  void ClearLog();

  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override;
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to, bool replace) override;
  Status Remove(const std::string& path) override;
  Status SyncDirectory(const std::string& directory) override;
  // Random bytes from the base Io, or `value` repeated once FixRandom was
  // called (so that a test knows a temp file's name in advance).
  Status FillRandom(std::span<std::byte> out) override;
  void FixRandom(std::byte value) { fixed_random_ = value; }
  // Nameless temps (O_TMPFILE) from the wrapped Io, counted as
  // kCreateAnonymous, once AllowAnonymous(true) was called. By default a
  // TestIo makes none, so the store's temps are named files made through
  // CreateExclusive, the sequence the older fault tests count and fail.
  Result<std::unique_ptr<File>> CreateAnonymous(const std::string& directory) override;
  void AllowAnonymous(bool allow) { allow_anonymous_ = allow; }
  // The real statfs, unless FakeFilesystem() was called.
  Result<FsInfo> StatFs(const std::string& path) override;
  // Makes StatFs report `info` from now on.
  void FakeFilesystem(const FsInfo& info);
  // Runs `hook` once, right after the next Open() of a file succeeds and
  // before the caller sees it: a chance to swap the path under the caller.
  void OnNextOpen(std::function<void()> hook);
  // The wrapped Io's boot id, or `id` once SetBootId was called (so that a
  // test can play a reboot).
  Result<std::array<std::byte, 16>> BootId() override;
  void SetBootId(const std::array<std::byte, 16>& id);
  // The wrapped Io's monotonic clock, or `nanos` once SetMonotonicNanos was
  // called (so that a test can say how long ago the store last wrote).
  uint64_t MonotonicNanos() override;
  void SetMonotonicNanos(uint64_t nanos);
  // Runs `hook` with the kind of every call, as it enters the seam (before it
  // is counted and before a fault can fire): lets a test publish where the
  // caller is. It runs on the caller's thread without TestIo's lock held, so
  // it may call Count() or any other member.
  void OnEnter(std::function<void(Op)> hook);

  // Counts the call and returns the injected failure, if this is the one.
  Status Enter(Op op, const std::string& path);
  void RecordMsync(const MsyncCall& call);
  void RecordWrite(const WriteCall& call);
  void RecordPageTableReset(const RangeCall& call);
  void RecordStartWriteback(const RangeCall& call);

 private:
  // Runs `body` with mutex_ held and returns what it returns.
  template <typename Body>
  auto Locked(Body body) const -> decltype(body()) {
    std::lock_guard lock(mutex_);
    return body();
  }

  struct Fault {
    int remaining = 0;  // calls until it fires; 1 = the next
    int sys_errno = 0;
  };
  mutable std::mutex mutex_;
  std::map<Op, int> counts_;
  std::map<Op, Fault> faults_;
  std::vector<MsyncCall> msyncs_;
  std::vector<WriteCall> writes_;
  std::vector<RangeCall> page_table_resets_;
  std::vector<RangeCall> start_writebacks_;
  uint64_t bytes_read_ = 0;
  uint64_t bytes_written_ = 0;
  std::optional<std::array<std::byte, 16>> boot_id_;
  std::optional<uint64_t> monotonic_nanos_;
  std::optional<std::byte> fixed_random_;
  bool allow_anonymous_ = false;
  std::optional<FsInfo> fake_filesystem_;
  std::function<void()> open_hook_;
  std::function<void(Op)> enter_hook_;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_TEST_IO_H_
