// The sidecar as a trust boundary (lib/sidecar.h, docs/FORMAT.md "Sidecar"):
// nobody who cannot write the store may write PATH.shm. Run as root, each
// case drops to unprivileged users in forked children: a file another user
// made is refused by the writer, one others may write is not trusted by
// readers, a reader in the store's group gets consistent sets from the
// writer's sidecar and cannot write or truncate it, a root writer hands the
// sidecar to the store's owner, and a handle whose sidecar keeps being
// replaced maps at most two.
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "intent.h"
#include "regionstore/store.h"
#include "sidecar.h"
#include "support/files.h"
#include "support/process.h"
#include "support/regionctl_runner.h"
#include "support/shared_memory.h"
#include "support/skip.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

// Users with no entry in the user database: the library names them by uid.
constexpr uid_t kUserA = 61001;  // owns the stores
constexpr uid_t kUserB = 61002;  // another local user
constexpr uid_t kUserC = 61003;  // a reader in the store's group
constexpr gid_t kGroupA = 61001;
constexpr gid_t kGroupB = 61002;
constexpr gid_t kStoreGroup = 61010;

constexpr auto kGiveUp = std::chrono::seconds(60);

struct User {
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
};
const User kA{kUserA, kGroupA, {kGroupA, kStoreGroup}};
const User kB{kUserB, kGroupB, {kGroupB}};
const User kC{kUserC, kGroupB, {kGroupB, kStoreGroup}};

std::string Become(const User& user) {
  if (::setgroups(user.groups.size(), user.groups.data()) != 0 || ::setgid(user.gid) != 0 ||
      ::setuid(user.uid) != 0) {
    return "could not become uid " + std::to_string(user.uid);
  }
  return "";
}

// Runs `body` as `user` in a forked child and waits: "" or what failed.
std::string RunAs(const User& user, const std::function<std::string()>& body) {
  const ChildOutcome outcome = RunReportingChild([&]() -> std::string {
    if (std::string failed = Become(user); !failed.empty()) return failed;
    return body();
  });
  if (!outcome.exited)
    return "the child was killed by signal " + std::to_string(outcome.term_signal);
  return outcome.exit_code == 0 ? "" : "child: " + outcome.message;
}

// Starts `body` as `user` in a forked child that exits with its result.
pid_t StartAs(const User& user, const std::function<int()>& body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (!Become(user).empty()) ::_exit(100);
    ::_exit(body());
  }
  return pid;
}

// Where a case's store lives: `s.rs` and its sidecar in a directory with
// `mode` (exactly), owned by `uid`:`gid`, under a PassableDir.
struct StoreDir {
  StoreDir(mode_t mode, uid_t uid, gid_t gid)
      : dir((base.path() / "d").string()), path(dir + "/s.rs"), side(sidecar::PathFor(path)) {
    REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
    REQUIRE(::chown(dir.c_str(), uid, gid) == 0);
    REQUIRE(::chmod(dir.c_str(), mode) == 0);
  }

  PassableDir base{0755};
  const std::string dir, path, side;
};

bool RequireRootOrSkip() {
  if (::geteuid() == 0) return true;
  SKIP_CASE("needs root to act as several unprivileged users");
  return false;
}

std::vector<std::byte> Payload(uint64_t n) { return PatternBytes(4096, n); }

void CommitPair(Store& writer, uint64_t n) {
  const std::vector<std::byte> a = Payload(n), b = Payload(n + (1ULL << 32));
  const std::array<std::span<const std::byte>, 1> pa{std::span<const std::byte>(a)};
  const std::array<std::span<const std::byte>, 1> pb{std::span<const std::byte>(b)};
  const std::array<BatchMember, 2> batch{BatchMember{"a", pa}, BatchMember{"b", pb}};
  if (!writer.CommitBatch(batch, Durability::kNone).ok()) ::_exit(3);
}

// Whether a loaded pair is one batch's: both regions were committed
// together from the first batch on, so batch n is generation n of both,
// with CommitPair's payloads.
bool OneBatch(const std::vector<CheckpointMeta>& metas,
              const std::vector<std::vector<std::byte>>& outs) {
  const uint64_t n = metas[0].generation;
  return metas[1].generation == n && outs[0] == Payload(n) && outs[1] == Payload(n + (1ULL << 32));
}

// Creates a two-region protocol 2 store as `owner`, with `mode` and group
// `group`.
void CreatePairStoreAs(const User& owner, const std::string& path, mode_t mode, gid_t group) {
  REQUIRE(RunAs(owner, [&]() -> std::string {
            CreateOptions options;
            options.checkpoints = {{"a", 4096}, {"b", 4096}};
            options.batch_log = true;
            options.protocol = 2;
            if (Status s = Store::Create(path, 0, options); !s.ok()) return s.ToString();
            if (::chown(path.c_str(), static_cast<uid_t>(-1), group) != 0) return "chown store";
            if (::chmod(path.c_str(), mode) != 0) return "chmod store";
            return "";
          }) == "");
}

// What the children of a writer-beside-readers case share.
struct Shared {
  std::atomic<int> ready{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> batches{0};
  std::atomic<uint64_t> loads{0};  // the readers' finished LoadSets
};

bool AwaitReady(const Shared& shared, int count) {
  const auto give_up = std::chrono::steady_clock::now() + kGiveUp;
  while (shared.ready.load() < count) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

// A writer child: commits batch after batch until told to stop, each once
// a reader finished a load since the one before (so that the writer paces
// itself by the readers, as a program with other work between its commits
// would, and never keeps every snapshot from completing).
int WriteBatchesUntilStopped(const std::string& path, Shared& shared,
                             const std::function<void()>& after_open = {}) {
  auto writer = Store::Open(path, OpenMode::kReadWrite);
  if (!writer.ok()) return 2;
  if (after_open) after_open();
  CommitPair(*writer, 1);
  shared.ready.fetch_add(1);
  for (uint64_t n = 2; !shared.stop.load(); ++n) {
    const uint64_t loads = shared.loads.load();
    CommitPair(*writer, n);
    shared.batches.store(n);
    while (shared.loads.load() == loads && !shared.stop.load()) std::this_thread::yield();
  }
  return 0;
}

TEST_CASE("A writer refuses a sidecar another user made in a shared directory, naming that user",
          "[sidecar][trust][multiprocess]") {
  if (!RequireRootOrSkip()) return;
  const StoreDir where(01777, 0, 0);
  const std::string &path = where.path, &side = where.side;
  REQUIRE(RunAs(kA, [&]() -> std::string {
            CreateOptions options;
            options.checkpoints = {{"r", 4096}};
            Status s = Store::Create(path, 0, options);
            return s.ok() ? "" : s.ToString();
          }) == "");
  // B gets there first: a sidecar's size of zeros anyone may write.
  REQUIRE(RunAs(kB, [&]() -> std::string {
            ::umask(0);
            const int fd = ::open(side.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
            if (fd < 0 || ::ftruncate(fd, sidecar::kSize) != 0) return "B's create";
            ::close(fd);
            return "";
          }) == "");
  // A's writer refuses it, naming B.
  CHECK(RunAs(kA, [&]() -> std::string {
          auto writer = Store::Open(path, OpenMode::kReadWrite);
          if (writer.ok()) return "A's writer opened the store with B's sidecar";
          const Status& s = writer.status();
          if (s.code() != StatusCode::kInvalidArgument)
            return "not kInvalidArgument: " + s.ToString();
          if (s.message().find("uid 61002") == std::string::npos ||
              s.message().find("not trusted") == std::string::npos) {
            return "the message does not name B: " + s.ToString();
          }
          return "";
        }) == "");
  // So does regionctl's, even run by root: exit 2, naming B and the remedy.
  const ProcessResult committed = Regionctl({"commit", path, "r"}, TextBytes("through B's file"));
  CHECK(committed.exit_code == kExitUsage);
  CHECK_THAT(committed.stderr_bytes, Catch::Contains("uid 61002"));
  CHECK_THAT(committed.stderr_bytes, Catch::Contains("1777"));
  // Nothing went through B's file: not even claimed; no commit in the store.
  CHECK(ReadWholeFile(side) == std::vector<std::byte>(sidecar::kSize));
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  std::vector<std::byte> out;
  CHECK(reader.Load("r", out).status().code() == StatusCode::kNotFound);
}

TEST_CASE("Readers do not trust a sidecar every user may write, and the next writer refuses it",
          "[sidecar][trust][loadset][multiprocess]") {
  if (!RequireRootOrSkip()) return;
  const StoreDir where(0755, kUserA, kGroupA);
  const std::string &path = where.path, &side = where.side;
  CreatePairStoreAs(kA, path, 0644, kGroupA);
  SharedMemory<Shared> shared;
  // A's writer, whose sidecar A then opens to everyone (the old advice).
  ChildGuard writer(StartAs(kA, [&] {
    return WriteBatchesUntilStopped(path, *shared, [&] {
      if (::chmod(side.c_str(), 0666) != 0) ::_exit(4);
    });
  }));
  REQUIRE(AwaitReady(*shared, 1));
  // B keeps the publication word at one even value: a reader that compared
  // it around its snapshot would take a set torn across batches.
  ChildGuard attacker(StartAs(kB, [&] {
    const int fd = ::open(side.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return 5;
    const intent::PublicationBytes even = intent::EncodePublication(1ULL << 40);
    const off_t at = static_cast<off_t>(sidecar::kAreaOffset +
                                        uint64_t{intent::kPublicationEntry} * intent::kEntrySize);
    shared->ready.fetch_add(1);
    while (!shared->stop.load()) {
      if (::pwrite(fd, even.data(), even.size(), at) != static_cast<ssize_t>(even.size())) return 6;
    }
    return 0;
  }));
  REQUIRE(AwaitReady(*shared, 2));
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  const std::string_view names[] = {"a", "b"};
  std::vector<std::vector<std::byte>> outs;
  uint64_t mixed = 0, busy = 0, loaded = 0;
  std::string untrusted;
  const uint64_t loads = ScaledCount(100'000);
  for (uint64_t i = 0; i < loads; ++i) {
    auto metas = reader.LoadSet(names, outs);
    shared->loads.fetch_add(1);
    if (!metas.ok()) {
      REQUIRE(metas.status().code() == StatusCode::kBusy);
      if (untrusted.empty()) untrusted = metas.status().message();
      ++busy;
      continue;
    }
    ++loaded;
    if (!OneBatch(*metas, outs)) ++mixed;
  }
  shared->stop.store(true);
  CHECK(Reap(attacker) == 0);
  CHECK(Reap(writer) == 0);
  INFO("loads " << loads << ", consistent " << loaded << ", busy " << busy);
  CHECK(mixed == 0);
  CHECK(busy == loads);
  CHECK_THAT(untrusted,
             Catch::Contains("not trusted") && Catch::Contains("every user may write it"));
  CHECK(shared->batches.load() > 1);
  // A's next writer refuses it.
  CHECK(RunAs(kA, [&]() -> std::string {
          auto again = Store::Open(path, OpenMode::kReadWrite);
          if (again.ok()) return "A's next writer opened with the 0666 sidecar";
          if (again.status().code() != StatusCode::kInvalidArgument ||
              again.status().message().find("every user may write it") == std::string::npos) {
            return again.status().ToString();
          }
          return "";
        }) == "");
}

TEST_CASE(
    "A reader in the store's group gets consistent sets and wake-ups, and cannot write "
    "or truncate the sidecar",
    "[sidecar][trust][loadset][wait][multiprocess]") {
  if (!RequireRootOrSkip()) return;
  const StoreDir where(0755, kUserA, kGroupA);
  const std::string &path = where.path, &side = where.side;
  CreatePairStoreAs(kA, path, 0640, kStoreGroup);
  SharedMemory<Shared> shared;
  ChildGuard writer(StartAs(kA, [&] { return WriteBatchesUntilStopped(path, *shared); }));
  REQUIRE(AwaitReady(*shared, 1));
  // Made by the writer with the store's owner, group and permissions.
  struct stat st {};
  REQUIRE(::stat(side.c_str(), &st) == 0);
  CHECK(st.st_uid == kUserA);
  CHECK(st.st_gid == kStoreGroup);
  CHECK((st.st_mode & 07777) == 0640);
  const uint64_t loads = ScaledCount(20'000);
  CHECK(RunAs(kC, [&]() -> std::string {
          // Read access only: neither a write nor a truncation gets through.
          if (::open(side.c_str(), O_RDWR | O_CLOEXEC) >= 0 || errno != EACCES) {
            return "C could open the sidecar for writing";
          }
          if (::truncate(side.c_str(), 0) == 0 || errno != EACCES) return "C could truncate it";
          auto reader = Store::Open(path, OpenMode::kReadOnly);
          if (!reader.ok()) return reader.status().ToString();
          const std::string_view names[] = {"a", "b"};
          std::vector<std::vector<std::byte>> outs;
          for (uint64_t i = 0; i < loads; ++i) {
            auto metas = reader->LoadSet(names, outs);
            shared->loads.fetch_add(1);
            if (!metas.ok()) return "load " + std::to_string(i) + ": " + metas.status().ToString();
            if (!OneBatch(*metas, outs)) {
              return "a mixed set at load " + std::to_string(i);
            }
          }
          // Waits: no wake-up for a reader that may not register, so only
          // its polling can end these before the hour's recheck.
          std::vector<std::byte> out;
          for (int i = 0; i < 5; ++i) {
            auto now = reader->Load("a", out);
            if (!now.ok()) return now.status().ToString();
            shared->loads.fetch_add(1);  // lets the writer commit the next batch
            auto newer = reader->WaitForNewer("a", now->generation, kGiveUp, out,
                                              {.recheck = std::chrono::hours(1)});
            if (!newer.ok()) return "wait: " + newer.status().ToString();
            if (newer->generation <= now->generation) return "wait returned no newer commit";
          }
          return "";
        }) == "");
  shared->stop.store(true);
  CHECK(Reap(writer) == 0);
  struct stat after {};
  REQUIRE(::stat(side.c_str(), &after) == 0);
  CHECK(after.st_size == static_cast<off_t>(sidecar::kSize));
}

TEST_CASE(
    "A root writer hands the sidecar to the store's owner, and a root-owned one is "
    "refused with its owner and the remedy named",
    "[sidecar][trust][multiprocess]") {
  if (!RequireRootOrSkip()) return;
  const StoreDir where(0755, kUserA, kGroupA);
  const std::string &path = where.path, &side = where.side;
  CreatePairStoreAs(kA, path, 0600, kGroupA);
  {
    Store root_writer = MustOpen(path, OpenMode::kReadWrite);
    CommitPair(root_writer, 1);
  }
  struct stat st {};
  REQUIRE(::stat(side.c_str(), &st) == 0);
  CHECK(st.st_uid == kUserA);
  CHECK(st.st_gid == kGroupA);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(RunAs(kA, [&]() -> std::string {
          auto writer = Store::Open(path, OpenMode::kReadWrite);
          if (!writer.ok()) return writer.status().ToString();
          CommitPair(*writer, 2);
          return "";
        }) == "");
  // A sidecar root made before this rule: root's, 0600.
  REQUIRE(::chown(side.c_str(), 0, 0) == 0);
  CHECK(RunAs(kA, [&]() -> std::string {
          auto writer = Store::Open(path, OpenMode::kReadWrite);
          if (writer.ok()) return "opened";
          const std::string text = writer.status().ToString();
          if (writer.status().code() != StatusCode::kPermissionDenied ||
              text.find("uid 0, mode 0600") == std::string::npos ||
              text.find("removing it loses nothing") == std::string::npos) {
            return text;
          }
          return "";
        }) == "");
}

// Open descriptors and mappings of this process.
uint64_t CountFds() {
  uint64_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count;
}
uint64_t CountMaps() {
  std::ifstream maps("/proc/self/maps");
  uint64_t count = 0;
  for (std::string line; std::getline(maps, line);) ++count;
  return count;
}

TEST_CASE("A handle whose sidecar keeps being replaced holds at most two",
          "[sidecar][trust][loadset][wait]") {
  TempDir dir;
  const std::string path = dir.File("s.rs");
  const std::string side = sidecar::PathFor(path);
  CreateOptions options;
  options.checkpoints = {{"a", 4096}, {"b", 4096}};
  options.batch_log = true;
  options.protocol = 2;
  REQUIRE(Store::Create(path, 0, options).ok());
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  CommitPair(writer, 1);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  const std::string_view names[] = {"a", "b"};
  std::vector<std::vector<std::byte>> outs;
  std::vector<std::byte> out;
  const auto poll = [&] {
    static_cast<void>(reader.LoadSet(names, outs));
    static_cast<void>(reader.WaitForNewer("a", 1, std::chrono::microseconds(1), out));
  };
  poll();
  const uint64_t fds = CountFds(), maps = CountMaps();
  // A copy restored over the writer's (cp + mv): the path names a file no
  // writer uses, a new one every tenth poll.
  const std::string copy = side + ".copy";
  for (int i = 0; i < 1000; ++i) {
    if (i % 10 == 0) {
      std::filesystem::copy_file(side, copy, std::filesystem::copy_options::overwrite_existing);
      REQUIRE(::rename(copy.c_str(), side.c_str()) == 0);
    }
    poll();
  }
  INFO("descriptors " << fds << " -> " << CountFds() << ", mappings " << maps << " -> "
                      << CountMaps());
  CHECK(CountFds() <= fds + 2);
  CHECK(CountMaps() <= maps + 2);
}

}  // namespace
}  // namespace regionstore::testing
