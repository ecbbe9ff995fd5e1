#include "support/syscall_hook.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>

namespace regionstore::testing {
namespace {

// The table's entries are plain function pointers: they find the hook here.
SyscallHook* active_hook = nullptr;

SyscallHook& Active() { return *active_hook; }

template <typename T>
uint64_t Address(T* pointer) {
  return reinterpret_cast<uintptr_t>(pointer);
}

// The first `limit` bytes of `iov`, as a new list.
std::vector<iovec> Truncated(const iovec* iov, int iovcnt, uint64_t limit) {
  std::vector<iovec> out;
  for (int i = 0; i < iovcnt && limit > 0; ++i) {
    iovec part = iov[i];
    part.iov_len = static_cast<size_t>(std::min<uint64_t>(part.iov_len, limit));
    limit -= part.iov_len;
    out.push_back(part);
  }
  return out;
}

uint64_t TotalLength(const iovec* iov, int iovcnt) {
  uint64_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  return total;
}

// -1 with the decided errno, or what the real call returns.
template <typename Call>
auto FailOrCall(const SyscallHook::Decision& decision, Call call) -> decltype(call()) {
  if (decision.fail) {
    errno = decision.sys_errno;
    return -1;
  }
  return call();
}

ssize_t HookPread(int fd, void* buf, size_t count, off_t offset) {
  const auto d = Active().Enter({Syscall::kPread, fd, static_cast<uint64_t>(offset), count, 0});
  return FailOrCall(d, [&] {
    return Active().real().pread(fd, buf, std::min<uint64_t>(count, d.limit), offset);
  });
}

ssize_t HookPwrite(int fd, const void* buf, size_t count, off_t offset) {
  const auto d = Active().Enter({Syscall::kPwrite, fd, static_cast<uint64_t>(offset), count, 0});
  return FailOrCall(d, [&] {
    return Active().real().pwrite(fd, buf, std::min<uint64_t>(count, d.limit), offset);
  });
}

ssize_t HookPwritev(int fd, const iovec* iov, int iovcnt, off_t offset) {
  const uint64_t length = TotalLength(iov, iovcnt);
  const auto d = Active().Enter({Syscall::kPwritev, fd, static_cast<uint64_t>(offset), length, 0});
  return FailOrCall(d, [&] {
    const std::vector<iovec> parts = Truncated(iov, iovcnt, d.limit);
    return Active().real().pwritev(fd, parts.data(), static_cast<int>(parts.size()), offset);
  });
}

ssize_t HookPwritev2(int fd, const iovec* iov, int iovcnt, off_t offset, int flags) {
  const uint64_t length = TotalLength(iov, iovcnt);
  const auto d =
      Active().Enter({Syscall::kPwritev2, fd, static_cast<uint64_t>(offset), length, flags});
  return FailOrCall(d, [&] {
    const std::vector<iovec> parts = Truncated(iov, iovcnt, d.limit);
    return Active().real().pwritev2(fd, parts.data(), static_cast<int>(parts.size()), offset,
                                    flags);
  });
}

int HookFdatasync(int fd) {
  return FailOrCall(Active().Enter({Syscall::kFdatasync, fd, 0, 0, 0}),
                    [&] { return Active().real().fdatasync(fd); });
}

int HookFsync(int fd) {
  return FailOrCall(Active().Enter({Syscall::kFsync, fd, 0, 0, 0}),
                    [&] { return Active().real().fsync(fd); });
}

int HookMsync(void* addr, size_t length, int flags) {
  return FailOrCall(Active().Enter({Syscall::kMsync, -1, Address(addr), length, flags}),
                    [&] { return Active().real().msync(addr, length, flags); });
}

int HookSyncFileRange(int fd, off_t offset, off_t nbytes, unsigned int flags) {
  const SyscallCall call{Syscall::kSyncFileRange, fd, static_cast<uint64_t>(offset),
                         static_cast<uint64_t>(nbytes), static_cast<int>(flags)};
  return FailOrCall(Active().Enter(call),
                    [&] { return Active().real().sync_file_range(fd, offset, nbytes, flags); });
}

int HookPosixFallocate(int fd, off_t offset, off_t length) {
  const auto d = Active().Enter(
      {Syscall::kFallocate, fd, static_cast<uint64_t>(offset), static_cast<uint64_t>(length), 0});
  // posix_fallocate returns the error number and leaves errno alone.
  if (d.fail) return d.sys_errno;
  return Active().real().posix_fallocate(fd, offset, length);
}

int HookFlock(int fd, int operation) {
  return FailOrCall(Active().Enter({Syscall::kFlock, fd, 0, 0, operation}),
                    [&] { return Active().real().flock(fd, operation); });
}

int HookMadvise(void* addr, size_t length, int advice) {
  return FailOrCall(Active().Enter({Syscall::kMadvise, -1, Address(addr), length, advice}),
                    [&] { return Active().real().madvise(addr, length, advice); });
}

// Not recorded: the temp-file tests replace these themselves
// (tests/test_temp_files.cc); here they reach the table the hook replaced.
int PassOpen(const char* path, int flags, mode_t mode) {
  return Active().real().open(path, flags, mode);
}

int PassLinkat(int old_dir_fd, const char* old_path, int new_dir_fd, const char* new_path,
               int flags) {
  return Active().real().linkat(old_dir_fd, old_path, new_dir_fd, new_path, flags);
}

int HookIoctl(int fd, unsigned long request, void* arg) {
  return FailOrCall(Active().Enter({Syscall::kIoctl, fd, 0, 0, static_cast<int>(request)}),
                    [&] { return Active().real().ioctl(fd, request, arg); });
}

int HookFallocate(int fd, int mode, off_t offset, off_t length) {
  const SyscallCall call{Syscall::kFallocateWithMode, fd, static_cast<uint64_t>(offset),
                         static_cast<uint64_t>(length), mode};
  return FailOrCall(Active().Enter(call),
                    [&] { return Active().real().fallocate(fd, mode, offset, length); });
}

long HookFutex(uint32_t* word, int op, uint32_t value, const struct timespec* deadline) {
  return FailOrCall(Active().Enter({Syscall::kFutex, -1, Address(word), 0, op}),
                    [&] { return Active().real().futex(word, op, value, deadline); });
}

int HookFcntlLock(int fd, int command, struct flock* lock) {
  const SyscallCall call{Syscall::kFcntlLock, fd, static_cast<uint64_t>(lock->l_start),
                         static_cast<uint64_t>(lock->l_len), command};
  return FailOrCall(Active().Enter(call),
                    [&] { return Active().real().fcntl_lock(fd, command, lock); });
}

constexpr internal::PosixSyscalls kHookedSyscalls = {
    .pread = HookPread,
    .pwrite = HookPwrite,
    .pwritev = HookPwritev,
    .pwritev2 = HookPwritev2,
    .fdatasync = HookFdatasync,
    .fsync = HookFsync,
    .msync = HookMsync,
    .sync_file_range = HookSyncFileRange,
    .posix_fallocate = HookPosixFallocate,
    .flock = HookFlock,
    .madvise = HookMadvise,
    .open = PassOpen,
    .linkat = PassLinkat,
    .ioctl = HookIoctl,
    .fallocate = HookFallocate,
    .futex = HookFutex,
    .fcntl_lock = HookFcntlLock,
};

bool TransfersBytes(Syscall call) {
  return call == Syscall::kPread || call == Syscall::kPwrite || call == Syscall::kPwritev ||
         call == Syscall::kPwritev2;
}

}  // namespace

const char* SyscallName(Syscall call) {
  switch (call) {
    case Syscall::kPread:
      return "pread";
    case Syscall::kPwrite:
      return "pwrite";
    case Syscall::kPwritev:
      return "pwritev";
    case Syscall::kPwritev2:
      return "pwritev2";
    case Syscall::kFdatasync:
      return "fdatasync";
    case Syscall::kFsync:
      return "fsync";
    case Syscall::kMsync:
      return "msync";
    case Syscall::kSyncFileRange:
      return "sync_file_range";
    case Syscall::kFallocate:
      return "posix_fallocate";
    case Syscall::kFlock:
      return "flock";
    case Syscall::kMadvise:
      return "madvise";
    case Syscall::kIoctl:
      return "ioctl";
    case Syscall::kFallocateWithMode:
      return "fallocate";
    case Syscall::kFutex:
      return "futex";
    case Syscall::kFcntlLock:
      return "fcntl";
  }
  return "?";
}

SyscallHook::SyscallHook() {
  REQUIRE(active_hook == nullptr);
  active_hook = this;
  real_ = internal::InstallSyscalls(kHookedSyscalls);
}

SyscallHook::~SyscallHook() {
  internal::InstallSyscalls(real_);
  active_hook = nullptr;
}

void SyscallHook::AddRule(Rule rule, int nth) {
  REQUIRE(nth >= 1);
  std::lock_guard lock(mutex_);
  rule.at = counts_[rule.call] + nth;
  rules_.push_back(rule);
}

void SyscallHook::FailNth(Syscall call, int nth, int sys_errno) {
  AddRule({.call = call, .fail = true, .sys_errno = sys_errno}, nth);
}

void SyscallHook::ShortNth(Syscall call, int nth, uint64_t bytes) {
  REQUIRE(TransfersBytes(call));
  AddRule({.call = call, .limit = bytes}, nth);
}

void SyscallHook::HalveEvery(Syscall call) {
  REQUIRE(TransfersBytes(call));
  std::lock_guard lock(mutex_);
  halved_.insert(call);
}

void SyscallHook::ClearRules() {
  std::lock_guard lock(mutex_);
  rules_.clear();
  halved_.clear();
}

int SyscallHook::Count(Syscall call) const {
  std::lock_guard lock(mutex_);
  auto it = logged_.find(call);
  return it == logged_.end() ? 0 : it->second;
}

int SyscallHook::Shortened() const {
  std::lock_guard lock(mutex_);
  return shortened_;
}

std::vector<SyscallCall> SyscallHook::Calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

void SyscallHook::ClearLog() {
  std::lock_guard lock(mutex_);
  logged_.clear();
  calls_.clear();
  shortened_ = 0;
}

SyscallHook::Decision SyscallHook::Enter(const SyscallCall& call) {
  std::lock_guard lock(mutex_);
  const int number = ++counts_[call.call];
  ++logged_[call.call];
  calls_.push_back(call);
  Decision decision;
  auto rule = std::find_if(rules_.begin(), rules_.end(),
                           [&](const Rule& r) { return r.call == call.call && r.at == number; });
  if (rule != rules_.end()) {
    decision.fail = rule->fail;
    decision.sys_errno = rule->sys_errno;
    if (!rule->fail) decision.limit = rule->limit;
    rules_.erase(rule);
  }
  if (!decision.fail && halved_.count(call.call) != 0) {
    decision.limit = std::min(decision.limit, (call.length + 1) / 2);
  }
  if (!decision.fail && decision.limit < call.length) ++shortened_;
  return decision;
}

}  // namespace regionstore::testing
