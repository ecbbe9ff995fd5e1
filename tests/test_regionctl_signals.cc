// regionctl on SIGINT, SIGTERM and SIGHUP: a `create` interrupted while it
// fills a large store dies of the signal and leaves no file of any name, and
// the space it had reserved comes back; with its nameless temp (O_TMPFILE)
// and with the named temp the library falls back to where O_TMPFILE is
// refused (forced here with a seccomp filter on the real regionctl, so no
// test hook is needed in the tool).
#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/regionctl_runner.h"
#include "support/skip.h"
#include "support/temp_dir.h"

// tests/CMakeLists.txt defines REGIONCTL_PATH only when the tool is built.
#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// Makes every openat with O_TMPFILE fail with EOPNOTSUPP, as on a
// filesystem without it, in this process and what it execs. x86-64 only.
bool RefuseTmpfile() {
#if defined(__x86_64__)
  constexpr unsigned kTmpfileBit = 020000000;  // __O_TMPFILE, without O_DIRECTORY
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      // The flags, openat's third argument (low 32 bits, little-endian).
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])),
      BPF_STMT(BPF_ALU | BPF_AND | BPF_K, kTmpfileBit),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kTmpfileBit, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EOPNOTSUPP & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
#else
  return false;
#endif
}

uint64_t AvailableBytes(const std::string& directory) {
  struct statvfs st {};
  REQUIRE(::statvfs(directory.c_str(), &st) == 0);
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

uint64_t AllocatedBytes(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

// The path of a file of `pid` being built in `directory` that has all of
// `size` allocated: a hidden entry there, or (nameless) a descriptor of the
// process on "<directory>/#<inode> (deleted)". Empty if none yet.
std::string AllocatedTemp(pid_t pid, const std::string& directory, uint64_t size) {
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().filename().string().front() == '.' &&
        AllocatedBytes(entry.path().string()) >= size) {
      return entry.path().string();
    }
  }
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(fds, error)) {
    std::error_code unreadable;
    const std::string target = std::filesystem::read_symlink(entry.path(), unreadable).string();
    if (!unreadable && target.rfind(directory + "/#", 0) == 0 &&
        AllocatedBytes(entry.path().string()) >= size) {
      return entry.path().string();
    }
  }
  return "";
}

TEST_CASE("regionctl create killed by SIGINT, SIGTERM or SIGHUP leaves no file and frees its space",
          "[regionctl][temp_files][multiprocess][signals][slow]") {
  TempDir dir;
  const std::string directory = std::filesystem::canonical(dir.path()).string();
  // Large enough that filling it takes far longer than noticing the
  // allocation; smaller where the disk is short.
  const uint64_t before = AvailableBytes(directory);
  uint64_t size = 2 * kGiB;
  while (size > kGiB / 8 && size * 4 > before) size /= 2;
  if (size * 4 > before) {
    SKIP_CASE("not enough free space for a large store");
    return;
  }
  for (const bool named : {false, true}) {
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
      INFO((named ? "named temp" : "nameless temp") << ", signal " << signal_number);
      const std::string store = directory + "/big.rs";
      const std::string size_text = std::to_string(size);
      // What a failed round left would be found as this round's temp.
      for (const auto& entry : std::filesystem::directory_iterator(directory)) {
        std::filesystem::remove(entry.path());
      }
      const pid_t pid = StartRegionctl({"create", "--size", size_text, store},
                                       named ? RefuseTmpfile : std::function<bool()>{});
      // Poll, a bounded number of times, for the temp to hold the whole
      // reservation; the fill that follows takes seconds.
      std::string temp;
      int wait_status = 0;
      pid_t reaped = 0;
      for (int tries = 0; tries < 20000 && temp.empty() && reaped == 0; ++tries) {
        temp = AllocatedTemp(pid, directory, size);
        if (temp.empty()) {
          reaped = ::waitpid(pid, &wait_status, WNOHANG);
          ::usleep(1000);
        }
      }
      if (reaped == 0) {
        ::kill(pid, temp.empty() ? SIGKILL : signal_number);
        reaped = ::waitpid(pid, &wait_status, 0);
      }
      REQUIRE(reaped == pid);
      if (named && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 125) {
        SKIP_CASE("no seccomp filter here to refuse O_TMPFILE");
        continue;
      }
      REQUIRE_FALSE(temp.empty());
      CHECK((temp.rfind(directory + "/.big.rs.tmp-", 0) == 0) == named);
      CHECK(WIFSIGNALED(wait_status));
      CHECK(WTERMSIG(wait_status) == signal_number);
      CHECK(dir.List().empty());
      // The reservation came back (others may use the disk meanwhile: half
      // of it is enough to tell).
      CHECK(AvailableBytes(directory) + size / 2 >= before);
    }
  }
}

TEST_CASE("regionctl bench interrupted by SIGINT removes its two stores from DIR",
          "[regionctl][temp_files][multiprocess][signals]") {
  TempDir dir;
  const std::string directory = std::filesystem::canonical(dir.path()).string();
  for (const int signal_number : {SIGINT, SIGTERM}) {
    INFO("signal " << signal_number);
    // 2 s per arm: the run lasts far longer than noticing its stores.
    const pid_t pid = StartRegionctl({"bench", "--dir", directory, "--seconds", "2"});
    // Poll, a bounded number of times, until both stores exist.
    const std::string stem = directory + "/regionctl-bench-" + std::to_string(pid);
    int wait_status = 0;
    pid_t reaped = 0;
    bool both = false;
    for (int tries = 0; tries < 20000 && !both && reaped == 0; ++tries) {
      both =
          std::filesystem::exists(stem + "-lab.rs") && std::filesystem::exists(stem + "-commit.rs");
      if (!both) {
        reaped = ::waitpid(pid, &wait_status, WNOHANG);
        ::usleep(1000);
      }
    }
    if (reaped == 0) {
      ::kill(pid, both ? signal_number : SIGKILL);
      reaped = ::waitpid(pid, &wait_status, 0);
    }
    REQUIRE(reaped == pid);
    REQUIRE(both);
    CHECK(WIFSIGNALED(wait_status));
    CHECK(WTERMSIG(wait_status) == signal_number);
    CHECK(dir.List().empty());
  }
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
