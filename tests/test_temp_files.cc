// Temp files of Store::Create and ReplaceFileAtomically: nameless (O_TMPFILE)
// where the kernel and filesystem allow it, each fallback to a named temp,
// an unprivileged caller, the signal-safe registry of named temps, kills,
// and descriptors 0-2 never holding a store or a temp.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bytes.h"
#include "io/posix_syscalls.h"
#include "regionstore/atomic_file.h"
#include "regionstore/io.h"
#include "regionstore/store.h"
#include "regionstore/temp_files.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/skip.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

CreateOptions Through(Io* io, bool replace_existing = false) {
  CreateOptions options;
  options.io = io;
  options.replace_existing = replace_existing;
  return options;
}

// What the fake open and linkat below refuse, and what they saw. Plain
// globals: the syscall table holds plain function pointers. A forked child
// inherits them.
struct Faults {
  int tmpfile_errno = 0;     // open with O_TMPFILE
  int proc_link_errno = 0;   // linkat of "/proc/self/fd/N"
  int empty_link_errno = 0;  // linkat with AT_EMPTY_PATH
};
Faults faults;
int tmpfile_opens = 0;
int exclusive_creates = 0;  // O_CREAT | O_EXCL: named temps
int proc_links = 0;
int empty_links = 0;

int FakeOpen(const char* path, int flags, mode_t mode) {
  if ((flags & O_TMPFILE) == O_TMPFILE) {
    ++tmpfile_opens;
    if (faults.tmpfile_errno != 0) {
      errno = faults.tmpfile_errno;
      return -1;
    }
  } else if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
    ++exclusive_creates;
  }
  return ::open(path, flags, mode);
}

int FakeLinkat(int old_dir_fd, const char* old_path, int new_dir_fd, const char* new_path,
               int flags) {
  const bool via_proc = std::strncmp(old_path, "/proc/self/fd/", 14) == 0;
  const bool via_empty = (flags & AT_EMPTY_PATH) != 0;
  if (via_proc) ++proc_links;
  if (via_empty) ++empty_links;
  const int refuse = via_proc ? faults.proc_link_errno : via_empty ? faults.empty_link_errno : 0;
  if (refuse != 0) {
    errno = refuse;
    return -1;
  }
  return ::linkat(old_dir_fd, old_path, new_dir_fd, new_path, flags);
}

// Puts the counting (and, per `faults`, refusing) open and linkat into the
// POSIX Io's table for its lifetime.
class FakeTempSyscalls {
 public:
  explicit FakeTempSyscalls(const Faults& with) {
    faults = with;
    tmpfile_opens = exclusive_creates = proc_links = empty_links = 0;
    internal::PosixSyscalls table = internal::Syscalls();
    table.open = FakeOpen;
    table.linkat = FakeLinkat;
    previous_ = internal::InstallSyscalls(table);
  }
  ~FakeTempSyscalls() {
    internal::InstallSyscalls(previous_);
    faults = {};
  }
  FakeTempSyscalls(const FakeTempSyscalls&) = delete;
  FakeTempSyscalls& operator=(const FakeTempSyscalls&) = delete;

 private:
  internal::PosixSyscalls previous_{};
};

// Everything a temp can be used for, with the checks that do not depend on
// which temp was taken: no-clobber, replace, atomic replace, byte-exact
// content, nothing else in the directory. Returns a failure text, or ""
// (usable in a forked child, where Catch2 must not run).
std::string ExerciseTemps(const std::string& directory) {
  const std::string store = directory + "/s.rs";
  const std::string out = directory + "/out.bin";
  if (Status s = Store::Create(store, kMiB); !s.ok()) return "create: " + s.ToString();
  Status again = Store::Create(store, kMiB);
  if (again.code() != StatusCode::kAlreadyExists) return "no-clobber: " + again.ToString();
  if (Status s = Store::Create(store, 2 * kMiB, Through(nullptr, true)); !s.ok()) {
    return "replace: " + s.ToString();
  }
  auto opened = Store::Open(store, OpenMode::kReadOnly);
  if (!opened.ok()) return "open: " + opened.status().ToString();
  if (opened->info().data_size != 2 * kMiB) return "the replaced store has the old size";
  const auto first = PatternBytes(3 * kMiB + 7, 5);
  const auto second = PatternBytes(4096, 6);
  if (Status s = ReplaceFileAtomically(out, first); !s.ok()) return "export 1: " + s.ToString();
  if (ReadWholeFile(out) != first) return "export 1: wrong bytes";
  if (Status s = ReplaceFileAtomically(out, second); !s.ok()) return "export 2: " + s.ToString();
  if (ReadWholeFile(out) != second) return "export 2: wrong bytes";
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  if (names != std::vector<std::string>{"out.bin", "s.rs"}) {
    std::string listed;
    for (const auto& name : names) listed += " " + name;
    return "left in the directory:" + listed;
  }
  return "";
}

TEST_CASE("Temps are nameless O_TMPFILE files linked through /proc/self/fd when possible",
          "[temp_files]") {
  TempDir dir;
  FakeTempSyscalls fake({});
  CHECK(ExerciseTemps(dir.path().string()) == "");
  // Two creates and two exports; the refused no-clobber create makes none.
  CHECK(tmpfile_opens == 4);
  CHECK(exclusive_creates == 0);
  // Each temp: one probe, then one link (onto the name, or onto a hidden
  // name renamed over it).
  CHECK(proc_links == 8);
  CHECK(empty_links == 0);
}

TEST_CASE("Each refusal of O_TMPFILE or of its link falls back, and the results are the same",
          "[temp_files]") {
  struct Case {
    const char* name;
    Faults faults;
    int tmpfile_opens, exclusive_creates, proc_links, empty_links;
  };
  for (const Case& c : {
           Case{"O_TMPFILE: EOPNOTSUPP (filesystem)", {.tmpfile_errno = EOPNOTSUPP}, 4, 4, 0, 0},
           Case{"O_TMPFILE: EISDIR (old kernel)", {.tmpfile_errno = EISDIR}, 4, 4, 0, 0},
           Case{"O_TMPFILE: EINVAL", {.tmpfile_errno = EINVAL}, 4, 4, 0, 0},
           Case{"/proc link: ENOENT (no /proc), AT_EMPTY_PATH works",
                {.proc_link_errno = ENOENT},
                4,
                0,
                4,
                8},
           Case{"/proc link: EPERM, AT_EMPTY_PATH works", {.proc_link_errno = EPERM}, 4, 0, 4, 8},
           Case{"/proc link: ENOENT, AT_EMPTY_PATH: ENOENT (no CAP_DAC_READ_SEARCH)",
                {.proc_link_errno = ENOENT, .empty_link_errno = ENOENT},
                4,
                4,
                4,
                4},
           Case{"/proc link: EPERM, AT_EMPTY_PATH: EPERM",
                {.proc_link_errno = EPERM, .empty_link_errno = EPERM},
                4,
                4,
                4,
                4},
       }) {
    SECTION(c.name) {
      TempDir dir;
      FakeTempSyscalls fake(c.faults);
      CHECK(ExerciseTemps(dir.path().string()) == "");
      CHECK(tmpfile_opens == c.tmpfile_opens);
      CHECK(exclusive_creates == c.exclusive_creates);
      CHECK(proc_links == c.proc_links);
      CHECK(empty_links == c.empty_links);
    }
  }
}

TEST_CASE("A file that appears at the path before the link is never replaced", "[temp_files]") {
  TempDir dir;
  const std::string path = dir.File("s.rs");
  TestIo io;
  io.AllowAnonymous(true);
  const auto planted = PatternBytes(100, 9);
  io.OnEnter([&](Op op) {
    if (op == Op::kLink) testing::WriteWholeFile(path, planted);
  });
  Status s = Store::Create(path, kMiB, Through(&io));
  CHECK(s.code() == StatusCode::kAlreadyExists);
  CHECK(s.operation() == "create: link");
  CHECK(s.message() == "a file appeared at this path (replace it explicitly)");
  CHECK(io.Count(Op::kCreateAnonymous) == 1);
  CHECK(io.Count(Op::kCreateExclusive) == 0);
  CHECK(ReadWholeFile(path) == planted);
  CHECK(dir.List() == std::vector<std::string>{"s.rs"});
}

TEST_CASE("A failed link or rename of a nameless temp leaves nothing behind", "[temp_files]") {
  TempDir dir;
  const std::string path = dir.File("out.bin");
  const auto old_bytes = PatternBytes(10, 1);
  testing::WriteWholeFile(path, old_bytes);
  for (Op op : {Op::kLink, Op::kRename}) {
    TestIo io;
    io.AllowAnonymous(true);
    io.FailNth(op, 1, EIO);
    Status s = ReplaceFileAtomically(path, PatternBytes(5000, 2), {.io = &io});
    CHECK(s.code() == StatusCode::kIOError);
    CHECK(s.operation() == (op == Op::kLink ? "replace: link" : "replace: rename"));
    CHECK(ReadWholeFile(path) == old_bytes);
    CHECK(dir.List() == std::vector<std::string>{"out.bin"});
  }
}

TEST_CASE("RemoveLiveTempFiles unlinks a named temp being built, and the create then fails",
          "[temp_files]") {
  TempDir dir;
  const std::string path = dir.File("s.rs");
  TestIo io;  // named temps: AllowAnonymous is off
  int removed = -1;
  io.OnEnter([&](Op op) {
    if (op == Op::kAllocate) {
      CHECK(dir.List().size() == 1);  // the hidden temp
      removed = RemoveLiveTempFiles();
    }
  });
  Status s = Store::Create(path, kMiB, Through(&io));
  CHECK(removed == 1);
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.operation() == "create: rename");
  CHECK(dir.List().empty());
  // Nothing is tracked once the create is over.
  CHECK(RemoveLiveTempFiles() == 0);
  // And a nameless temp is never tracked.
  io.AllowAnonymous(true);
  io.OnEnter([&](Op op) {
    if (op == Op::kAllocate) removed = RemoveLiveTempFiles();
  });
  REQUIRE(Store::Create(path, kMiB, Through(&io)).ok());
  CHECK(removed == 0);
  CHECK(dir.List() == std::vector<std::string>{"s.rs"});
}

// Runs `body` in a forked child and returns its exit status; the child
// exits 0 when `body` returns "", else writes the text to stderr, exits 1.
template <typename Body>
int InChild(Body body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::string failure;
    try {
      failure = body();
    } catch (...) {
      failure = "exception";
    }
    if (!failure.empty()) {
      (void)!::write(STDERR_FILENO, failure.data(), failure.size());
      (void)!::write(STDERR_FILENO, "\n", 1);
    }
    ::_exit(failure.empty() ? 0 : 1);
  }
  int wait_status = 0;
  REQUIRE(::waitpid(pid, &wait_status, 0) == pid);
  return wait_status;
}

TEST_CASE("An unprivileged process gets nameless temps too", "[temp_files][multiprocess]") {
  if (::geteuid() != 0) {
    SKIP_CASE("needs root to drop to an unprivileged uid");
    return;
  }
  constexpr uid_t kNobody = 65534;
  // The test's directory is root's: let the child through it.
  const PassableDir dir(0711);
  const std::filesystem::path& base = dir.path();
  INFO("work directory under " << base.string());
  const std::string work = (base / "work").string();
  REQUIRE(::mkdir(work.c_str(), 0700) == 0);
  REQUIRE(::chown(work.c_str(), kNobody, kNobody) == 0);
  for (const bool fallback : {false, true}) {
    INFO((fallback ? "named temps forced" : "nameless temps"));
    const int status = InChild([&]() -> std::string {
      if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
        return "could not drop privileges";
      }
      FakeTempSyscalls fake(fallback ? Faults{.proc_link_errno = ENOENT, .empty_link_errno = ENOENT}
                                     : Faults{});
      std::string failure = ExerciseTemps(work);
      if (!failure.empty()) return failure;
      if (tmpfile_opens != 4) return "O_TMPFILE opens: " + std::to_string(tmpfile_opens);
      const int expected_named = fallback ? 4 : 0;
      if (exclusive_creates != expected_named) {
        return "named temps: " + std::to_string(exclusive_creates);
      }
      return "";
    });
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    struct stat st {};
    REQUIRE(::stat((work + "/s.rs").c_str(), &st) == 0);
    CHECK(st.st_uid == kNobody);
    std::filesystem::remove(work + "/s.rs");
    std::filesystem::remove(work + "/out.bin");
    CHECK(std::filesystem::is_empty(work));
  }
}

// Hidden entries (temps) in `directory`.
int HiddenEntries(const std::string& directory) {
  int hidden = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().filename().string().front() == '.') ++hidden;
  }
  return hidden;
}

// 100 times: a child exports in a loop, reporting each export through a
// pipe; the parent lets it finish 1-3, then SIGKILLs it mid-way through the
// next one. Returns the hidden temps left in the directory.
int HiddenLeftAfterKilledExports(const std::string& directory, const Faults& with) {
  const std::string path = directory + "/export.bin";
  const auto data = PatternBytes(2 * kMiB, 3);
  for (int kill_number = 0; kill_number < 100; ++kill_number) {
    int report[2];
    REQUIRE(::pipe(report) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(report[0]);
      FakeTempSyscalls fake(with);
      for (;;) {
        if (!ReplaceFileAtomically(path, data).ok()) ::_exit(1);
        if (::write(report[1], "x", 1) != 1) ::_exit(2);
      }
    }
    ::close(report[1]);
    const int wanted = 1 + kill_number % 3;
    int seen = 0;
    char byte;
    while (seen < wanted && ::read(report[0], &byte, 1) == 1) ++seen;
    ::kill(pid, SIGKILL);
    int wait_status = 0;
    REQUIRE(::waitpid(pid, &wait_status, 0) == pid);
    ::close(report[0]);
    REQUIRE(seen == wanted);  // the child exported, and did not fail
    REQUIRE(WIFSIGNALED(wait_status));
  }
  CHECK(ReadWholeFile(path) == data);
  return HiddenEntries(directory);
}

TEST_CASE("Exports killed with SIGKILL 100 times leave no temp after the next export",
          "[temp_files][crash][slow]") {
  TempDir dir;
  for (const bool named : {false, true}) {
    INFO((named ? "named temps" : "nameless temps"));
    const std::string directory = dir.File(named ? "named" : "nameless");
    REQUIRE(std::filesystem::create_directory(directory));
    // Each child's first export removes what the children before it left,
    // so at most the last one's temp is here.
    const int left = HiddenLeftAfterKilledExports(
        directory, named ? Faults{.tmpfile_errno = EOPNOTSUPP} : Faults{});
    CHECK(left <= 1);
    const auto data = PatternBytes(4096, 9);
    REQUIRE(ReplaceFileAtomically(directory + "/export.bin", data).ok());
    CHECK(ReadWholeFile(directory + "/export.bin") == data);
    CHECK(HiddenEntries(directory) == 0);
  }
}

TEST_CASE("Only temps whose owner is gone are removed, and verify and stat list them",
          "[temp_files][regionctl]") {
  TempDir dir;
  const std::string store = dir.File("s.rs");
  REQUIRE(Store::Create(store, kMiB).ok());
  auto boot_id = Io::Default()->BootId();
  REQUIRE(boot_id.ok());
  const std::string boot = internal::HexBytes(std::span<const std::byte>(*boot_id).first(4));
  std::string other_boot = boot;
  other_boot[0] = other_boot[0] == 'f' ? '0' : 'f';
  // A process id that was just in use and is now gone.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);

  const std::string dead_here = TempNameOf(store, static_cast<uint64_t>(child), "0123abcd", boot);
  const std::string other_boots = TempNameOf(store, 1, "0123abcd", other_boot);
  const std::string live_parent =
      TempNameOf(store, static_cast<uint64_t>(::getppid()), "0123abcd", boot);
  const std::string ours = TempNameOf(store, static_cast<uint64_t>(::getpid()), "0123abcd", boot);
  const std::string unknown_boot =
      TempNameOf(store, static_cast<uint64_t>(child), "0123abcd", "00000000");
  const std::string legacy = dir.File(".s.rs.tmp-0123456789abcdef");
  const std::string someone_elses =
      TempNameOf(dir.File("other.rs"), static_cast<uint64_t>(child), "0123abcd", boot);
  const std::string not_ours = dir.File(".s.rs.tmp-notatemp");
  for (const std::string& path :
       {dead_here, other_boots, live_parent, ours, unknown_boot, legacy, someone_elses, not_ours}) {
    WriteWholeFile(path, PatternBytes(10, 1));
  }

  auto stray = FindStrayTemps(store);
  REQUIRE(stray.ok());
  std::vector<std::pair<std::string, bool>> found;
  for (const StrayTemp& temp : *stray) found.emplace_back(temp.path, temp.owner_gone);
  std::vector<std::pair<std::string, bool>> expected = {
      {dead_here, true}, {other_boots, true}, {legacy, false}};
  std::sort(expected.begin(), expected.end());
  CHECK(found == expected);

  for (const std::string verb : {"verify", "stat"}) {
    INFO("regionctl " << verb);
    const ProcessResult human = Regionctl({verb, store});
    CHECK(human.exit_code == 0);
    CHECK(human.stdout_bytes.find("stray temp file '" + dead_here + "': the process") !=
          std::string::npos);
    CHECK(human.stdout_bytes.find("stray temp file '" + legacy + "': named by") !=
          std::string::npos);
    const ProcessResult json = Regionctl({verb, store, "--json"});
    REQUIRE(json.exit_code == 0);
    const auto listed = nlohmann::json::parse(json.stdout_bytes).at("stray_temps");
    REQUIRE(listed.size() == 3);
    CHECK(listed[0].at("path") == expected[0].first);
    CHECK(listed[0].at("owner_gone") == expected[0].second);
  }

  // A create of the store's path (replacing it) removes the two whose owner
  // is gone, and nothing else.
  CreateOptions replace;
  replace.replace_existing = true;
  REQUIRE(Store::Create(store, kMiB, replace).ok());
  for (const std::string& path : {dead_here, other_boots}) {
    CHECK_FALSE(std::filesystem::exists(path));
  }
  for (const std::string& path :
       {live_parent, ours, unknown_boot, legacy, someone_elses, not_ours}) {
    CHECK(std::filesystem::exists(path));
  }
  auto after = FindStrayTemps(store);
  REQUIRE(after.ok());
  REQUIRE(after->size() == 1);
  CHECK(after->front().path == legacy);
}

TEST_CASE("The library never keeps a store or a temp on descriptors 0, 1 or 2",
          "[temp_files][multiprocess]") {
  TempDir dir;
  for (const bool named : {false, true}) {
    INFO((named ? "named temps" : "nameless temps"));
    const std::string path = dir.File(named ? "named.rs" : "nameless.rs");
    const int status = InChild([&]() -> std::string {
      FakeTempSyscalls fake(named ? Faults{.tmpfile_errno = EOPNOTSUPP} : Faults{});
      ::close(STDIN_FILENO);
      ::close(STDOUT_FILENO);
      const int saved_stderr = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 10);
      ::close(STDERR_FILENO);
      auto closed = [] {
        for (int fd = 0; fd <= 2; ++fd) {
          if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) return false;
        }
        return true;
      };
      auto fail = [&](const std::string& text) {
        ::dup2(saved_stderr, STDERR_FILENO);
        return text;
      };
      if (Status s = Store::Create(path, kMiB); !s.ok()) return fail(s.ToString());
      if (!closed()) return fail("a descriptor 0-2 was left open by Create");
      auto store = Store::Open(path, OpenMode::kReadWrite);
      if (!store.ok()) return fail(store.status().ToString());
      if (!closed()) return fail("the store sits on a descriptor 0-2");
      const auto bytes = PatternBytes(4096, 4);
      if (Status s = store->Write(0, bytes, Durability::kPwriteFdatasync); !s.ok()) {
        return fail(s.ToString());
      }
      if (Status s = ReplaceFileAtomically(path + ".out", bytes); !s.ok()) {
        return fail(s.ToString());
      }
      if (!closed()) return fail("a descriptor 0-2 was left open by the export");
      return "";
    });
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

}  // namespace
}  // namespace regionstore::testing
