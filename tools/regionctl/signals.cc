#include "signals.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <initializer_list>
#include <string>

#include "regionstore/temp_files.h"

namespace regionstore::regionctl {
namespace {

// regionctl's own files: a path is written while its slot is not `live`,
// and the handler reads only live slots.
struct OwnFile {
  std::atomic<bool> live{false};
  char path[4096] = {};
};
std::array<OwnFile, kMaxOwnFiles> own_files;

void RemoveTempsThenDie(int signal_number) {
  // Only async-signal-safe calls here: the registry's removal, unlink,
  // sigaction, sigprocmask, raise.
  static_cast<void>(RemoveLiveTempFiles());
  for (OwnFile& file : own_files) {
    if (file.live.exchange(false, std::memory_order_acquire)) ::unlink(file.path);
  }
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal_number, &fallback, nullptr);
  // The signal is blocked while its handler runs: unblock it, so the raise
  // below is delivered (and kills) at once, not after the handler returns.
  sigset_t this_one;
  sigemptyset(&this_one);
  sigaddset(&this_one, signal_number);
  sigprocmask(SIG_UNBLOCK, &this_one, nullptr);
  raise(signal_number);
}

}  // namespace

bool RememberToRemoveOnSignal(const std::string& path) {
  if (path.size() >= sizeof(OwnFile::path)) return false;
  for (OwnFile& file : own_files) {
    if (file.live.load(std::memory_order_relaxed)) continue;
    std::memcpy(file.path, path.c_str(), path.size() + 1);
    file.live.store(true, std::memory_order_release);
    return true;
  }
  return false;
}

void ForgetToRemoveOnSignal(const std::string& path) {
  for (OwnFile& file : own_files) {
    if (file.live.load(std::memory_order_acquire) && path == file.path) {
      file.live.store(false, std::memory_order_release);
    }
  }
}

void RemoveTempFilesOnTerminatingSignals() {
  struct sigaction action {};
  action.sa_handler = RemoveTempsThenDie;
  // While one of them is handled the other two wait, so the removal runs
  // once and is not interrupted by itself.
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, signal_number);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal the parent made us ignore (nohup, a shell's background job
    // and SIGINT) stays ignored.
    struct sigaction previous {};
    if (sigaction(signal_number, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) {
      continue;
    }
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace regionstore::regionctl
