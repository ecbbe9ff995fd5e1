// The production POSIX file and mapping meeting syscall failures, through
// the syscall table (lib/io/posix_syscalls.h): EIO, EINTR, EOPNOTSUPP from
// pwritev2, short and zero-byte writes, sync_file_range; then whole commits
// of a real Store whose every write, barrier and writeback hint fails in
// turn. Real files on a real filesystem, so the bytes on disk are checked.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/posix_syscalls.h"
#include "regionstore/io.h"
#include "regionstore/store.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/syscall_hook.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

std::unique_ptr<File> MustCreateFile(const std::string& path) {
  auto file = Io::Default()->CreateExclusive(path);
  INFO(file.status().ToString());
  REQUIRE(file.ok());
  return std::move(*file);
}

// A new empty file of the POSIX Io in its own directory, and the hook
// installed.
struct HookedFile {
  std::vector<std::byte> Contents() const { return ReadWholeFile(path); }

  TempDir dir;
  const std::string path = dir.File("f");
  std::unique_ptr<File> file = MustCreateFile(path);
  SyscallHook hook;
};

// Three parts of 1000, 3000 and 5 bytes, so that a cut can fall inside an
// iovec, on a boundary, or one byte before the end.
struct Gather {
  Gather() = default;
  Gather(const Gather&) = delete;  // `parts` point into `bytes`
  Gather& operator=(const Gather&) = delete;

  std::vector<std::byte> bytes = PatternBytes(4005, 7);
  std::array<std::span<const std::byte>, 3> parts{
      std::span<const std::byte>(bytes).first(1000),
      std::span<const std::byte>(bytes).subspan(1000, 3000),
      std::span<const std::byte>(bytes).last(5)};
};

// What the file must hold after `bytes` were written at `offset` of an
// empty file.
std::vector<std::byte> ExpectedContents(uint64_t offset, const std::vector<std::byte>& bytes) {
  // Not insert() after `offset` zeros: GCC 12 warns falsely (-Warray-bounds).
  std::vector<std::byte> out(offset + bytes.size());
  std::copy(bytes.begin(), bytes.end(), out.begin() + static_cast<ptrdiff_t>(offset));
  return out;
}

// The calls of the given kinds, in order.
std::vector<SyscallCall> CallsOf(const SyscallHook& hook, std::span<const Syscall> kinds) {
  std::vector<SyscallCall> out;
  for (const SyscallCall& call : hook.Calls()) {
    if (std::find(kinds.begin(), kinds.end(), call.call) != kinds.end()) out.push_back(call);
  }
  return out;
}

std::vector<SyscallCall> CallsOf(const SyscallHook& hook, Syscall kind) {
  return CallsOf(hook, std::span<const Syscall>(&kind, 1));
}

constexpr Syscall kWritesAndSyncs[] = {Syscall::kPwrite,    Syscall::kPwritev, Syscall::kPwritev2,
                                       Syscall::kFdatasync, Syscall::kFsync,   Syscall::kMsync};

void CheckCall(const SyscallCall& call, Syscall kind, uint64_t offset, uint64_t length, int flags) {
  INFO("call " << SyscallName(call.call));
  CHECK(call.call == kind);
  CHECK(call.offset == offset);
  CHECK(call.length == length);
  CHECK(call.flags == flags);
}

TEST_CASE("SyscallHook puts the real syscalls back when the test fails inside it", "[io]") {
  const internal::PosixSyscalls real = internal::RealSyscalls();
  try {
    SyscallHook hook;
    CHECK(internal::Syscalls().pwritev2 != real.pwritev2);
    throw std::runtime_error("a failed REQUIRE");
  } catch (const std::runtime_error&) {
  }
  CHECK(std::memcmp(&internal::Syscalls(), &real, sizeof real) == 0);
}

TEST_CASE(
    "WriteGatherAt with data_sync falls back to pwritev, then one fdatasync, when pwritev2 "
    "refuses RWF_DSYNC",
    "[io][fault]") {
  HookedFile f;
  const Gather gather;
  f.hook.FailNth(Syscall::kPwritev2, 1, EOPNOTSUPP);
  const Status written = f.file->WriteGatherAt(100, gather.parts, /*data_sync=*/true);
  INFO(written.ToString());
  REQUIRE(written.ok());
  const auto calls = CallsOf(f.hook, kWritesAndSyncs);
  REQUIRE(calls.size() == 3);
  CheckCall(calls[0], Syscall::kPwritev2, 100, 4005, RWF_DSYNC);
  CheckCall(calls[1], Syscall::kPwritev, 100, 4005, 0);
  CheckCall(calls[2], Syscall::kFdatasync, 0, 0, 0);
  CHECK(f.Contents() == ExpectedContents(100, gather.bytes));
}

TEST_CASE("A short pwritev2 is continued without the flag where it stopped, then one fdatasync",
          "[io][fault]") {
  const Gather gather;
  for (const bool data_sync : {true, false}) {
    // Inside the first iovec, on each boundary, inside the second, one byte
    // before the end.
    for (const uint64_t cut : {1, 999, 1000, 1001, 2500, 3999, 4000, 4004}) {
      INFO("data_sync " << data_sync << ", first call writes " << cut << " bytes");
      HookedFile f;
      const Syscall first = data_sync ? Syscall::kPwritev2 : Syscall::kPwritev;
      f.hook.ShortNth(first, 1, cut);
      REQUIRE(f.file->WriteGatherAt(100, gather.parts, data_sync).ok());
      const auto calls = CallsOf(f.hook, kWritesAndSyncs);
      REQUIRE(calls.size() == (data_sync ? 3 : 2));
      CheckCall(calls[0], first, 100, 4005, data_sync ? RWF_DSYNC : 0);
      CheckCall(calls[1], Syscall::kPwritev, 100 + cut, 4005 - cut, 0);
      if (data_sync) CheckCall(calls[2], Syscall::kFdatasync, 0, 0, 0);
      CHECK(f.Contents() == ExpectedContents(100, gather.bytes));
    }
  }
}

TEST_CASE("Several short writes in a row are each continued, with one fdatasync at the end",
          "[io][fault]") {
  HookedFile f;
  const Gather gather;
  f.hook.ShortNth(Syscall::kPwritev2, 1, 1001);
  f.hook.ShortNth(Syscall::kPwritev, 1, 1);
  f.hook.ShortNth(Syscall::kPwritev, 2, 2998);
  REQUIRE(f.file->WriteGatherAt(0, gather.parts, /*data_sync=*/true).ok());
  const auto calls = CallsOf(f.hook, kWritesAndSyncs);
  REQUIRE(calls.size() == 5);
  CheckCall(calls[0], Syscall::kPwritev2, 0, 4005, RWF_DSYNC);
  CheckCall(calls[1], Syscall::kPwritev, 1001, 3004, 0);
  CheckCall(calls[2], Syscall::kPwritev, 1002, 3003, 0);
  CheckCall(calls[3], Syscall::kPwritev, 4000, 5, 0);
  CheckCall(calls[4], Syscall::kFdatasync, 0, 0, 0);
  CHECK(f.hook.Shortened() == 3);
  CHECK(f.Contents() == ExpectedContents(0, gather.bytes));
}

TEST_CASE("Short pwrite and pread calls are continued where they stopped", "[io][fault]") {
  HookedFile f;
  const std::vector<std::byte> bytes = PatternBytes(5000, 3);
  f.hook.ShortNth(Syscall::kPwrite, 1, 1);
  f.hook.ShortNth(Syscall::kPwrite, 2, 4000);
  REQUIRE(f.file->WriteAt(10, bytes).ok());
  auto writes = CallsOf(f.hook, Syscall::kPwrite);
  REQUIRE(writes.size() == 3);
  CheckCall(writes[1], Syscall::kPwrite, 11, 4999, 0);
  CheckCall(writes[2], Syscall::kPwrite, 4011, 999, 0);
  CHECK(f.Contents() == ExpectedContents(10, bytes));

  f.hook.ShortNth(Syscall::kPread, 1, 7);
  std::vector<std::byte> read(bytes.size());
  auto got = f.file->ReadAt(10, read);
  REQUIRE(got.ok());
  CHECK(*got == bytes.size());
  CHECK(read == bytes);
  CHECK(f.hook.Count(Syscall::kPread) == 2);
}

TEST_CASE("A write call that transfers nothing fails with kIOError instead of looping",
          "[io][fault]") {
  const Gather gather;
  struct Case {
    Syscall call;
    std::function<Status(File&)> write;
  };
  const Case cases[] = {
      {Syscall::kPwrite, [&](File& f) { return f.WriteAt(0, gather.bytes); }},
      {Syscall::kPwritev2, [&](File& f) { return f.WriteGatherAt(0, gather.parts, true); }},
      {Syscall::kPwritev, [&](File& f) { return f.WriteGatherAt(0, gather.parts, false); }},
  };
  for (const Case& c : cases) {
    INFO(SyscallName(c.call));
    HookedFile f;
    f.hook.ShortNth(c.call, 1, 0);
    const Status written = c.write(*f.file);
    CHECK(written.code() == StatusCode::kIOError);
    CHECK(written.sys_errno() == EIO);
    CHECK(f.hook.Count(c.call) == 1);
    CHECK(f.hook.Count(Syscall::kFdatasync) == 0);
  }
}

// One call of the POSIX file or mapping that reaches syscall `call`; `wrote`
// says what the file holds after it succeeded (empty: the case writes
// nothing).
struct SyscallCase {
  Syscall call;
  std::function<Status(File&)> run;
  std::vector<std::byte> wrote;
  bool retries_eintr = true;
};

std::vector<SyscallCase> OneCallEach(const Gather& gather) {
  const auto msync = [](File& f) {
    const uint64_t page = Io::Default()->PageSize();
    if (Status s = f.Allocate(0, page); !s.ok()) return s;
    auto mapping = f.Map(page, OpenMode::kReadWrite);
    if (!mapping.ok()) return mapping.status();
    std::memset((*mapping)->data(), 0x5a, page);
    return (*mapping)->Sync(0, page, SyncKind::kSync);
  };
  const auto pread = [](File& f) {
    std::array<std::byte, 16> out{};
    return f.ReadAt(0, out).status();
  };
  return {
      {Syscall::kPwrite, [&](File& f) { return f.WriteAt(0, gather.bytes); }, gather.bytes},
      {Syscall::kPwritev2, [&](File& f) { return f.WriteGatherAt(0, gather.parts, true); },
       gather.bytes},
      {Syscall::kPwritev, [&](File& f) { return f.WriteGatherAt(0, gather.parts, false); },
       gather.bytes},
      {Syscall::kFdatasync, [](File& f) { return f.DataSync(); }, {}},
      {Syscall::kFsync, [](File& f) { return f.Sync(); }, {}},
      {Syscall::kPread, pread, {}},
      {Syscall::kFallocate, [](File& f) { return f.Allocate(0, 8192); }, {}},
      {Syscall::kFlock, [](File& f) { return f.LockExclusive(); }, {}},
      // Linux's msync never fails with EINTR, and the POSIX file does not
      // retry it.
      {Syscall::kMsync, msync, {}, /*retries_eintr=*/false},
  };
}

TEST_CASE(
    "EIO from pwrite, pwritev2, pwritev, msync, fdatasync and the others reaches the caller "
    "as kIOError with errno EIO",
    "[io][fault]") {
  const Gather gather;
  for (const SyscallCase& c : OneCallEach(gather)) {
    INFO(SyscallName(c.call));
    HookedFile f;
    f.hook.FailNth(c.call, 1, EIO);
    const Status s = c.run(*f.file);
    INFO(s.ToString());
    CHECK(s.code() == StatusCode::kIOError);
    CHECK(s.sys_errno() == EIO);
    CHECK(f.hook.Count(c.call) == 1);
    // No fallback or retry comes after it.
    CHECK(f.hook.Calls().back().call == c.call);
  }
}

TEST_CASE("EINTR is retried by every call of the POSIX file", "[io][fault]") {
  const Gather gather;
  for (const SyscallCase& c : OneCallEach(gather)) {
    if (!c.retries_eintr) continue;
    INFO(SyscallName(c.call));
    HookedFile f;
    f.hook.FailNth(c.call, 1, EINTR);
    const Status s = c.run(*f.file);
    INFO(s.ToString());
    CHECK(s.ok());
    CHECK(f.hook.Count(c.call) == 2);
    if (!c.wrote.empty()) CHECK(f.Contents() == c.wrote);
  }
}

TEST_CASE("StartWriteback asks sync_file_range(SYNC_FILE_RANGE_WRITE) for exactly its range",
          "[io]") {
  HookedFile f;
  REQUIRE(f.file->WriteAt(8192, PatternBytes(10000, 1)).ok());
  const int fd = f.hook.Calls().at(0).fd;
  f.file->StartWriteback(8192, 10000);
  auto calls = CallsOf(f.hook, Syscall::kSyncFileRange);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].fd == fd);
  CheckCall(calls[0], Syscall::kSyncFileRange, 8192, 10000, SYNC_FILE_RANGE_WRITE);
  // A length of 0 would ask for everything to the end of the file.
  f.file->StartWriteback(4096, 0);
  CHECK(f.hook.Count(Syscall::kSyncFileRange) == 1);
}

TEST_CASE("A failing sync_file_range is ignored: not retried, not reported, the file still works",
          "[io][fault]") {
  HookedFile f;
  const std::vector<std::byte> bytes = PatternBytes(10000, 1);
  REQUIRE(f.file->WriteAt(0, bytes).ok());
  for (const int sys_errno : {EIO, EINTR, ENOSPC}) {
    INFO("errno " << sys_errno);
    f.hook.ClearLog();
    f.hook.FailNth(Syscall::kSyncFileRange, 1, sys_errno);
    f.file->StartWriteback(0, bytes.size());
    CHECK(f.hook.Count(Syscall::kSyncFileRange) == 1);
    CHECK(f.hook.Calls().size() == 1);
    CHECK(f.file->DataSync().ok());
  }
  CHECK(f.Contents() == bytes);
}

TEST_CASE("WaitWriteback waits on exactly its range, retries EINTR, reports EIO, skips ENOSYS",
          "[io][fault]") {
  HookedFile f;
  REQUIRE(f.file->WriteAt(8192, PatternBytes(10000, 1)).ok());
  const int fd = f.hook.Calls().at(0).fd;
  constexpr unsigned int kWaitAll =
      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
  f.hook.ClearLog();
  f.hook.FailNth(Syscall::kSyncFileRange, 1, EINTR);
  CHECK(f.file->WaitWriteback(8192, 10000).ok());
  auto calls = CallsOf(f.hook, Syscall::kSyncFileRange);
  REQUIRE(calls.size() == 2);
  CHECK(calls[1].fd == fd);
  CheckCall(calls[1], Syscall::kSyncFileRange, 8192, 10000, kWaitAll);
  f.hook.ClearLog();
  f.hook.FailNth(Syscall::kSyncFileRange, 1, EIO);
  const Status failed = f.file->WaitWriteback(8192, 10000);
  CHECK(failed.code() == StatusCode::kIOError);
  CHECK_THAT(failed.ToString(), Catch::Contains("sync_file_range (wait)"));
  CHECK(f.hook.Count(Syscall::kSyncFileRange) == 1);
  // A kernel or sandbox without the call: nothing waited for, no error (the
  // barrier after it still syncs the range).
  for (const int sys_errno : {ENOSYS, EPERM, EINVAL}) {
    f.hook.FailNth(Syscall::kSyncFileRange, 1, sys_errno);
    CHECK(f.file->WaitWriteback(8192, 10000).ok());
  }
  CHECK(f.hook.Count(Syscall::kSyncFileRange) == 4);
  // Nothing to wait for: no call.
  CHECK(f.file->WaitWriteback(4096, 0).ok());
  CHECK(f.hook.Count(Syscall::kSyncFileRange) == 4);
}

// --- Whole commits through a real Store.

constexpr Syscall kCommitCalls[] = {Syscall::kPwrite, Syscall::kPwritev,   Syscall::kPwritev2,
                                    Syscall::kMsync,  Syscall::kFdatasync, Syscall::kSyncFileRange};
constexpr Durability kDurableModes[] = {Durability::kSync, Durability::kPwriteFdatasync};

// A store with one 64 KiB region, "state", and the hook installed.
struct HookedStore {
  HookedStore() { MustCreateWithRegions(path, 0, {{"state", 64 * kKiB}}); }

  // Opens the store read-write and commits `previous` (which must succeed),
  // then forgets the calls so far: what the hook counts from then on is the
  // caller's commit of `next`.
  Store OpenAfterCommit(Durability mode) {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Commit("state", previous, mode).ok());
    hook.ClearLog();
    return store;
  }

  TempDir dir;
  const std::string path = dir.File("s.rgn");
  SyscallHook hook;
  const std::vector<std::byte> previous = PatternBytes(40000, 1);
  const std::vector<std::byte> next = PatternBytes(50000, 2);
};

TEST_CASE(
    "A commit whose nth write, msync, fdatasync or sync_file_range fails with EIO, an error "
    "and a poisoned store, then a reopen loads the previous or the failed payload",
    "[io][fault]") {
  for (const Durability mode : kDurableModes) {
    HookedStore hooked;
    SyscallHook& hook = hooked.hook;
    const std::vector<std::byte>& failed = hooked.next;
    int failed_commits = 0;
    for (const Syscall call : kCommitCalls) {
      // Against behaviour, not a call order: fail each call of this kind the
      // commit makes, until the commit makes no nth call.
      for (int n = 1;; ++n) {
        INFO(DurabilityName(mode) << ": EIO from " << SyscallName(call) << " call " << n);
        bool fired = false;
        {
          Store store = hooked.OpenAfterCommit(mode);
          hook.FailNth(call, n, EIO);
          auto committed = store.Commit("state", failed, mode);
          fired = hook.Count(call) >= n;
          hook.ClearRules();
          if (!fired) {
            CHECK(committed.ok());
            break;
          }
          if (call == Syscall::kSyncFileRange) {
            // A hint: its failure is no failure of the commit.
            CHECK(committed.ok());
            CHECK_FALSE(store.poisoned());
            CHECK(MustLoad(store, "state") == failed);
          } else {
            ++failed_commits;
            INFO(committed.status().ToString());
            CHECK(committed.status().code() == StatusCode::kIOError);
            CHECK(committed.status().sys_errno() == EIO);
            CHECK(store.poisoned());
          }
        }
        Store reopened = MustOpen(hooked.path, OpenMode::kReadWrite);
        const std::vector<std::byte> got = MustLoad(reopened, "state");
        if (call == Syscall::kSyncFileRange) {
          CHECK(got == failed);
        } else {
          CHECK((got == hooked.previous || got == failed));
        }
      }
    }
    INFO(DurabilityName(mode));
    CHECK(failed_commits > 0);
  }
}

TEST_CASE(
    "A durable commit of 64 KiB starts its payload's writeback in a 64 KiB-aligned slot only, "
    "and a failing start is no failure",
    "[io][fault]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreateWithRegions(
      path, 0,
      {{"aligned", 64 * kKiB, SlotLayout::kAligned}, {"compact", 64 * kKiB, SlotLayout::kCompact}});
  SyscallHook hook;
  const std::vector<std::byte> payload = PatternBytes(64 * kKiB, 3);
  for (const Durability mode : kDurableModes) {
    INFO(DurabilityName(mode));
    Store store = MustOpen(path, OpenMode::kReadWrite);
    // Settle both regions first: their first commit reads the slots.
    REQUIRE(store.Commit("aligned", payload, mode).ok());
    REQUIRE(store.Commit("compact", payload, mode).ok());
    hook.ClearLog();
    REQUIRE(store.Commit("aligned", payload, mode).ok());
    CHECK(hook.Count(Syscall::kSyncFileRange) == 1);
    hook.ClearLog();
    // In a compact slot the payload shares a page-cache folio with the
    // header unit, whose write would wait for that writeback.
    REQUIRE(store.Commit("compact", payload, mode).ok());
    CHECK(hook.Count(Syscall::kSyncFileRange) == 0);
    hook.ClearLog();
    hook.FailNth(Syscall::kSyncFileRange, 1, EIO);
    const auto committed = store.Commit("aligned", payload, mode);
    CHECK(hook.Count(Syscall::kSyncFileRange) == 1);
    hook.ClearRules();
    CHECK(committed.ok());
    CHECK_FALSE(store.poisoned());
    CHECK(MustLoad(store, "aligned") == payload);
  }
}

TEST_CASE(
    "Commits whose every write transfers half of what it asks for succeed and load back "
    "byte-exact",
    "[io][fault]") {
  for (const Durability mode : kDurableModes) {
    INFO(DurabilityName(mode));
    HookedStore hooked;
    const std::vector<std::byte>& payload = hooked.next;
    {
      Store store = hooked.OpenAfterCommit(mode);
      for (const Syscall call : {Syscall::kPwrite, Syscall::kPwritev, Syscall::kPwritev2}) {
        hooked.hook.HalveEvery(call);
      }
      auto committed = store.Commit("state", payload, mode);
      hooked.hook.ClearRules();
      INFO(committed.status().ToString());
      REQUIRE(committed.ok());
      CHECK(hooked.hook.Shortened() > 0);
      CHECK_FALSE(store.poisoned());
      CHECK(MustLoad(store, "state") == payload);
    }
    Store reopened = MustOpen(hooked.path, OpenMode::kReadWrite);
    CHECK(MustLoad(reopened, "state") == payload);
  }
}

}  // namespace
}  // namespace regionstore::testing
