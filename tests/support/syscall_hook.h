// SyscallHook: replaces, for its lifetime, the POSIX Io's syscall table
// (lib/io/posix_syscalls.h) with one that records every call and can fail the
// Nth call of a kind with an errno or cut a read or write short. The code
// under test is the production PosixFile and PosixMapping: their EINTR
// loops, short-write continuation and EOPNOTSUPP fallback are what runs.
//
// One hook at a time (a second one fails the test). Not thread-safe against
// I/O through Io::Default() on other threads while it is installed or
// removed; calls made while it is installed may come from any thread.
#ifndef REGIONSTORE_TESTS_SUPPORT_SYSCALL_HOOK_H_
#define REGIONSTORE_TESTS_SUPPORT_SYSCALL_HOOK_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "io/posix_syscalls.h"

namespace regionstore::testing {

enum class Syscall {
  kPread,
  kPwrite,
  kPwritev,
  kPwritev2,
  kFdatasync,
  kFsync,
  kMsync,
  kSyncFileRange,
  kFallocate,
  kFlock,
  kMadvise,
  kIoctl,              // offset 0, length 0, flags: the request (FS_IOC_*)
  kFallocateWithMode,  // fallocate(2) with a mode; flags: the mode
  kFutex,              // fd -1; offset: the word's address; flags: the op (FUTEX_WAKE, ...)
  kFcntlLock,          // offset: the lock's l_start; flags: the command (F_OFD_GETLK, ...)
};

const char* SyscallName(Syscall call);

// One call as the production code made it.
struct SyscallCall {
  Syscall call = Syscall::kPread;
  int fd = -1;          // -1 for msync and madvise
  uint64_t offset = 0;  // file offset; for msync and madvise the address
  uint64_t length = 0;  // bytes asked for (all iovecs together)
  int flags = 0;        // pwritev2, msync and sync_file_range flags; madvise advice
};

class SyscallHook {
 public:
  SyscallHook();
  // Puts back the table the constructor replaced, also when a REQUIRE threw.
  ~SyscallHook();
  SyscallHook(const SyscallHook&) = delete;
  SyscallHook& operator=(const SyscallHook&) = delete;

  // The `nth` call of `call` from now on (1 = the next) returns its error
  // (-1 with errno `sys_errno`; posix_fallocate returns it) without reaching
  // the OS.
  void FailNth(Syscall call, int nth, int sys_errno);
  // The `nth` pread, pwrite, pwritev or pwritev2 from now on transfers at
  // most `bytes` bytes (the real call, asked for less); 0 makes it return 0.
  void ShortNth(Syscall call, int nth, uint64_t bytes);
  // Every pread, pwrite, pwritev or pwritev2 of `call` from now on transfers
  // at most half of what it is asked for, rounded up (so it always moves at
  // least one byte).
  void HalveEvery(Syscall call);
  // Drops the rules that have not fired, and HalveEvery.
  void ClearRules();

  // Calls of `call` recorded so far.
  int Count(Syscall call) const;
  // Calls a rule made transfer less than asked.
  int Shortened() const;
  std::vector<SyscallCall> Calls() const;
  // Forgets the calls recorded so far; rules stay, counted from now on.
  void ClearLog();

  // What a hooked call does instead of the plain real call. Used by the
  // table's entries.
  struct Decision {
    bool fail = false;
    int sys_errno = 0;
    uint64_t limit = UINT64_MAX;  // bytes the real call may transfer
  };
  Decision Enter(const SyscallCall& call);
  const internal::PosixSyscalls& real() const { return real_; }

 private:
  struct Rule {
    Syscall call = Syscall::kPread;
    int at = 0;  // fires on this call number of its kind
    bool fail = false;
    int sys_errno = 0;
    uint64_t limit = 0;
  };
  void AddRule(Rule rule, int nth);

  internal::PosixSyscalls real_{};
  mutable std::mutex mutex_;
  std::map<Syscall, int> counts_;  // since install: rules count on it
  std::map<Syscall, int> logged_;  // since ClearLog
  std::vector<SyscallCall> calls_;
  std::vector<Rule> rules_;
  std::set<Syscall> halved_;
  int shortened_ = 0;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_SYSCALL_HOOK_H_
