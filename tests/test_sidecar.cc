// Protocol 2's sidecar (lib/sidecar.h): a kNone commit with nobody waiting
// makes no system call; a waiter in another process registers and the next
// commit wakes it with one; a waiter that cannot register still sees
// commits; a file at PATH.shm that is not a sidecar is refused and left as
// it was; protocol 1 stores never make one.
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "intent.h"
#include "regionstore/io.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "sidecar.h"
#include "slot.h"
#include "support/files.h"
#include "support/process.h"
#include "support/store_fixtures.h"
#include "support/syscall_hook.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

constexpr auto kNeverInATest = std::chrono::seconds(60);

void CreateStore(const std::string& path, uint32_t protocol) {
  CreateOptions options;
  options.checkpoints = {{"r", 4096}};
  options.protocol = protocol;
  REQUIRE(Store::Create(path, 64 * 1024, options).ok());
}

std::vector<std::byte> Payload(uint64_t n) { return PatternBytes(4096, n); }

// Region names and payloads of the LoadSet cases: two regions, each commit
// of both a batch.
void CommitPair(Store& writer, uint64_t n) {
  const std::vector<std::byte> a = Payload(n), b = Payload(n + 1000);
  const std::array<std::span<const std::byte>, 1> pa{std::span<const std::byte>(a)};
  const std::array<std::span<const std::byte>, 1> pb{std::span<const std::byte>(b)};
  const std::array<BatchMember, 2> batch{BatchMember{"a", pa}, BatchMember{"b", pb}};
  REQUIRE(writer.CommitBatch(batch, Durability::kNone).ok());
}

void CreatePairStore(const std::string& path) {
  CreateOptions options;
  options.checkpoints = {{"a", 4096}, {"b", 4096}};
  options.batch_log = true;
  options.protocol = 2;
  REQUIRE(Store::Create(path, 0, options).ok());
}

// Commits generation `n` of region "r" while a thread of `reader` waits for
// it with no recheck due (only a wake or the waiter's polling can end the
// wait before its minute), and checks what the waiter got.
void CommitBesideWaiter(Store& reader, Store& writer, uint64_t n) {
  Result<CheckpointMeta> got = Status::Error(StatusCode::kTimedOut, "", "", "not run");
  std::vector<std::byte> out;
  std::thread waiter([&] {
    got = reader.WaitForNewer("r", n - 1, kNeverInATest, out, {.recheck = std::chrono::hours(1)});
  });
  REQUIRE(writer.Commit("r", Payload(n), Durability::kNone).ok());
  waiter.join();
  REQUIRE(got.ok());
  CHECK(got->generation == n);
  CHECK(out == Payload(n));
}

// The sidecar's wake word, read through a mapping of the test's own.
class WakeWordProbe {
 public:
  explicit WakeWordProbe(const std::string& store_path) {
    const int fd = ::open(sidecar::PathFor(store_path).c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    void* base = ::mmap(nullptr, sidecar::kSize, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    REQUIRE(base != MAP_FAILED);
    base_ = static_cast<const std::byte*>(base);
  }
  ~WakeWordProbe() { ::munmap(const_cast<std::byte*>(base_), sidecar::kSize); }
  WakeWordProbe(const WakeWordProbe&) = delete;
  WakeWordProbe& operator=(const WakeWordProbe&) = delete;

  uint32_t Load() const {
    return __atomic_load_n(reinterpret_cast<const uint32_t*>(base_ + sidecar::kWakeOffset),
                           __ATOMIC_ACQUIRE);
  }
  // Until a waiter has set the bit; false if none did within a minute (a
  // failure, not a timing: the waiter sets it before its first sleep).
  bool AwaitWaiter() const {
    const auto give_up = std::chrono::steady_clock::now() + kNeverInATest;
    while ((Load() & sidecar::kWaiterBit) == 0) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      std::this_thread::yield();
    }
    return true;
  }

 private:
  const std::byte* base_ = nullptr;
};

TEST_CASE("A kNone commit with nobody waiting makes no system call in protocol 2",
          "[sidecar][wait]") {
  TempDir dir;
  for (const uint32_t protocol : {1u, 2u}) {
    INFO("protocol " << protocol);
    const std::string path = dir.File(protocol == 1 ? "p1.rgn" : "p2.rgn");
    CreateStore(path, protocol);
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    CHECK(writer.info().protocol() == protocol);
    // The first kNone commit after the open's barrier writes the
    // commits-pending mark and the publication word with pwrite.
    REQUIRE(writer.Commit("r", Payload(1), Durability::kNone).ok());
    SyscallHook hook;
    for (uint64_t n = 2; n <= 101; ++n) {
      REQUIRE(writer.Commit("r", Payload(n), Durability::kNone).ok());
    }
    INFO("calls: " << hook.Calls().size());
    if (protocol == 2) {
      CHECK(hook.Calls().empty());
    } else {
      // The control: protocol 1 wakes on every commit.
      CHECK(hook.Count(Syscall::kFutex) == 100);
      CHECK(hook.Calls().size() == 100);
    }
    std::vector<std::byte> out;
    auto loaded = writer.Load("r", out);
    REQUIRE(loaded.ok());
    CHECK(loaded->generation == 101);
    CHECK(out == Payload(101));
  }
  // Only protocol 2 made a sidecar.
  CHECK_FALSE(std::filesystem::exists(sidecar::PathFor(dir.File("p1.rgn"))));
  CHECK(std::filesystem::file_size(sidecar::PathFor(dir.File("p2.rgn"))) == sidecar::kSize);
}

TEST_CASE("A waiter in another process registers, and the next commit wakes it with one call",
          "[sidecar][wait][multiprocess]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateStore(path, 2);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  REQUIRE(writer.Commit("r", Payload(1), Durability::kNone).ok());
  WakeWordProbe probe(path);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::byte> newest;
    const uint64_t next = writer.Load("r", newest)->generation + 1;
    INFO("round " << round << ", generation " << next);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::alarm(120);
      auto reader = Store::Open(path, OpenMode::kReadOnly);
      if (!reader.ok()) ::_exit(2);
      std::vector<std::byte> out;
      auto got = reader->WaitForNewer("r", next - 1, kNeverInATest, out,
                                      {.recheck = std::chrono::hours(1)});
      if (!got.ok()) ::_exit(3);
      if (got->generation != next || out != Payload(next)) ::_exit(4);
      ::_exit(0);
    }
    ChildGuard guard(pid);
    REQUIRE(probe.AwaitWaiter());
    {
      SyscallHook hook;
      REQUIRE(writer.Commit("r", Payload(next), Durability::kNone).ok());
      // The one call: the wake. The commit cleared the bit.
      REQUIRE(hook.Calls().size() == 1);
      CHECK(hook.Calls()[0].call == Syscall::kFutex);
      CHECK(hook.Calls()[0].flags == FUTEX_WAKE);
      CHECK((probe.Load() & sidecar::kWaiterBit) == 0);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    guard.Release();
    INFO(DescribeWait(status));
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    // Nobody waits any more: the next commit makes no call.
    SyscallHook hook;
    REQUIRE(writer.Commit("r", Payload(next + 1), Durability::kNone).ok());
    CHECK(hook.Calls().empty());
  }
}

// An Io under which the sidecar cannot be opened or created.
class NoSidecarIo final : public ForwardingIo {
 public:
  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override {
    if (path.ends_with(".shm")) return Denied(path);
    return ForwardingIo::Open(path, mode, symlinks);
  }
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override {
    if (path.ends_with(".shm")) return Denied(path);
    return ForwardingIo::CreateExclusive(path);
  }
  std::atomic<int> refused{0};

 private:
  Status Denied(const std::string& path) {
    ++refused;
    return Status::FromErrno(EACCES, "open", path);
  }
};

TEST_CASE("A waiter that cannot register in the sidecar still sees every commit",
          "[sidecar][wait][threads]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateStore(path, 2);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  NoSidecarIo io;
  OpenOptions options;
  options.io = &io;
  auto reader = Store::Open(path, OpenMode::kReadOnly, options);
  REQUIRE(reader.ok());
  WakeWordProbe probe(path);
  for (uint64_t n = 1; n <= 5; ++n) {
    // No recheck to rescue it: only its polling can.
    CommitBesideWaiter(*reader, writer, n);
    // It never set the bit, and no writer woke it.
    CHECK((probe.Load() & sidecar::kWaiterBit) == 0);
  }
  CHECK(io.refused >= 1);
}

TEST_CASE("A waiter holding a sidecar that was removed and made anew still sees every commit",
          "[sidecar][wait][threads]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateStore(path, 2);
  std::optional<Store> writer = MustOpen(path, OpenMode::kReadWrite);
  REQUIRE(writer->Commit("r", Payload(1), Durability::kNone).ok());
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  std::vector<std::byte> out;
  // The reader opens (and registers in) the first sidecar.
  REQUIRE(reader.WaitForNewer("r", 0, kNeverInATest, out).ok());
  writer.reset();
  REQUIRE(::unlink(sidecar::PathFor(path).c_str()) == 0);
  writer = MustOpen(path, OpenMode::kReadWrite);  // a new sidecar, a new identity
  for (uint64_t n = 2; n <= 4; ++n) {
    // No recheck to rescue it: the old sidecar's word never moves again,
    // so only noticing that it is not the store's (and polling) can.
    CommitBesideWaiter(reader, *writer, n);
  }
}

TEST_CASE("A writer's open recovers every region when this boot's sidecar was replaced",
          "[sidecar][checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreatePairStore(path);
  const std::string shm = sidecar::PathFor(path);
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    CommitPair(writer, 1);
  }
  // What a writer's open (and close) writes outside the intent unit,
  // through the seam: nothing, or, with a full recovery, each region's
  // newest commit again (its header unit and payload at least).
  const uint64_t intent_unit = *intent::AreaOffset(*ReadStoreInfo(path));
  const auto open_writes = [&] {
    TestIo io;
    { Store writer = MustOpen(path, OpenMode::kReadWrite, &io); }
    uint64_t outside = 0;
    for (const WriteCall& write : io.Writes()) {
      const bool in_unit =
          write.offset >= intent_unit && write.offset + write.length <= intent_unit + 4096;
      if (!in_unit) outside += write.length;
    }
    return outside;
  };
  // A plain open: the identity and the batch watermark entries, no slot.
  const uint64_t plain = open_writes();
  CHECK(plain == 0);
  // A copy of the sidecar: the same id, another inode. Its marks cannot be
  // told from stale ones.
  std::filesystem::copy_file(shm, shm + ".copy");
  std::filesystem::rename(shm + ".copy", shm);
  const uint64_t replaced = open_writes();
  INFO("a plain open wrote " << plain << " bytes, one after the copy " << replaced);
  CHECK(replaced >= 2 * (4096 + 4096));
  // Removed: the same.
  std::filesystem::remove(shm);
  CHECK(open_writes() >= 2 * (4096 + 4096));
  // And the commits are all there.
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  std::vector<std::byte> out;
  REQUIRE(reader.Load("a", out).ok());
  CHECK(out == Payload(1));
  REQUIRE(reader.Load("b", out).ok());
  CHECK(out == Payload(1001));
}

TEST_CASE("A writer refuses a file at PATH.shm that is not a sidecar, and leaves it as it was",
          "[sidecar]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateStore(path, 2);
  const std::string shm = sidecar::PathFor(path);
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(writer.Commit("r", Payload(1), Durability::kSync).ok());
  }
  REQUIRE(::unlink(shm.c_str()) == 0);

  struct Case {
    const char* what;
    std::vector<std::byte> bytes;  // written at PATH.shm unless a link or directory
    StatusCode code;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"a short file", PatternBytes(100, 1), StatusCode::kInvalidArgument, "holds 100 bytes"},
      {"another file's 8 KiB", PatternBytes(sidecar::kSize, 2), StatusCode::kInvalidArgument,
       "magic"},
      {"a symbolic link", {}, StatusCode::kInvalidArgument, "symbolic link"},
      {"a directory", {}, StatusCode::kIOError, "sidecar"},
  };
  const std::string victim = dir.File("victim");
  WriteWholeFile(victim, PatternBytes(4096, 3));
  for (const Case& c : cases) {
    INFO(c.what);
    const std::string kind = c.what;
    if (kind == "a symbolic link") {
      REQUIRE(::symlink(victim.c_str(), shm.c_str()) == 0);
    } else if (kind == "a directory") {
      REQUIRE(::mkdir(shm.c_str(), 0700) == 0);
    } else {
      WriteWholeFile(shm, c.bytes);
    }
    auto opened = Store::Open(path, OpenMode::kReadWrite);
    REQUIRE_FALSE(opened.ok());
    INFO(opened.status().ToString());
    CHECK(opened.status().code() == c.code);
    CHECK(opened.status().path() == shm);
    CHECK(opened.status().ToString().find(c.says) != std::string::npos);
    CHECK(opened.status().ToString().find("PATH.shm") != std::string::npos);
    // Nothing was written into what is there.
    if (!c.bytes.empty()) CHECK(ReadWholeFile(shm) == c.bytes);
    CHECK(ReadWholeFile(victim) == PatternBytes(4096, 3));
    // The store is whole: a reader loads the commit.
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    std::vector<std::byte> out;
    auto loaded = reader.Load("r", out);
    REQUIRE(loaded.ok());
    CHECK(out == Payload(1));
    std::filesystem::remove(shm);
  }
  // With the file moved away, the writer makes its sidecar.
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  CHECK(std::filesystem::file_size(shm) == sidecar::kSize);
}

TEST_CASE("A protocol 2 commit writes its slot and nothing else of the store",
          "[sidecar][checkpoint]") {
  TempDir dir;
  for (const uint32_t protocol : {1u, 2u}) {
    INFO("protocol " << protocol);
    const std::string path = dir.File(protocol == 1 ? "p1.rgn" : "p2.rgn");
    CreateStore(path, protocol);
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    const uint64_t intent_unit = *intent::AreaOffset(writer.info());
    uint64_t n = 0;
    // The first settles the region (three preads of its headers) and ends
    // with a whole-file barrier; the kNone after it is the first commit
    // without a barrier since one.
    for (const Durability mode : {Durability::kPwriteFdatasync, Durability::kNone,
                                  Durability::kAsync, Durability::kSync, Durability::kNone}) {
      INFO("mode " << static_cast<int>(mode));
      SyscallHook hook;
      auto committed = writer.Commit("r", Payload(++n), mode);
      REQUIRE(committed.ok());
      std::vector<Syscall> calls;
      bool wrote_intent_unit = false;
      for (const SyscallCall& call : hook.Calls()) {
        calls.push_back(call.call);
        const bool writes = call.call == Syscall::kPwrite || call.call == Syscall::kPwritev;
        if (writes && call.offset >= intent_unit && call.offset < intent_unit + 4096) {
          wrote_intent_unit = true;
        }
      }
      if (protocol == 1) {
        // The control: protocol 1 writes marks or P into the intent unit
        // (but for a mapped commit after a mapped one) and wakes.
        CHECK(hook.Count(Syscall::kFutex) == 1);
        // Durable ones, and the first commit without a barrier since one
        // (a mapped commit after a mapped one stores P through the mapping).
        if (n <= 2 || n == 4) CHECK(wrote_intent_unit);
        continue;
      }
      CHECK_FALSE(wrote_intent_unit);
      for (const SyscallCall& call : hook.Calls()) {
        UNSCOPED_INFO(SyscallName(call.call) << " offset " << call.offset << " length "
                                             << call.length << " flags " << call.flags);
      }
      if (n == 1) {
        calls.erase(calls.begin(), calls.begin() + 3);  // the settle's preads
      }
      switch (mode) {
        case Durability::kNone:
          // The first after a whole-file barrier too: the commits-pending
          // mark is a store into the sidecar.
          CHECK(calls.empty());
          break;
        case Durability::kAsync:
          CHECK(calls == std::vector<Syscall>{Syscall::kMsync});
          break;
        case Durability::kSync:
          // The zero header unit and the payload, the header, the barrier.
          CHECK(calls ==
                std::vector<Syscall>{Syscall::kPwritev, Syscall::kPwrite, Syscall::kMsync});
          break;
        case Durability::kPwriteFdatasync:
          CHECK(calls ==
                std::vector<Syscall>{Syscall::kPwritev, Syscall::kPwrite, Syscall::kFdatasync});
          break;
      }
    }
    std::vector<std::byte> out;
    REQUIRE(writer.Load("r", out).ok());
    CHECK(out == Payload(n));
  }
}

TEST_CASE("LoadSet follows a sidecar made anew, and says so when it cannot reach the writer's",
          "[sidecar][loadset]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreatePairStore(path);
  const std::string_view names[] = {"a", "b"};
  std::vector<std::vector<std::byte>> outs;
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    CommitPair(writer, 1);
  }
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  REQUIRE(reader.LoadSet(names, outs).ok());
  CHECK(outs[0] == Payload(1));
  CHECK(outs[1] == Payload(1001));
  // Removed while the reader holds it; the next writer makes another, and
  // the reader opens that one at its next LoadSet.
  REQUIRE(::unlink(sidecar::PathFor(path).c_str()) == 0);
  std::optional<Store> writer = MustOpen(path, OpenMode::kReadWrite);
  CommitPair(*writer, 2);
  auto followed = reader.LoadSet(names, outs);
  INFO(followed.status().ToString());
  REQUIRE(followed.ok());
  CHECK(outs[0] == Payload(2));
  CHECK(outs[1] == Payload(1002));
  // Through a symbolic link the sidecar path is the link's, which no
  // writer uses (and a reader never creates): with the writer there, no
  // word to read by, and an error that says so.
  const std::string link = dir.File("link.rgn");
  REQUIRE(::symlink(path.c_str(), link.c_str()) == 0);
  OpenOptions follow;
  follow.symlinks = SymlinkPolicy::kFollow;
  auto by_link = Store::Open(link, OpenMode::kReadOnly, follow);
  REQUIRE(by_link.ok());
  auto refused = by_link->LoadSet(names, outs);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kBusy);
  CHECK_THAT(refused.status().message(), Catch::Contains(sidecar::PathFor(link)));
  CHECK_FALSE(std::filesystem::exists(sidecar::PathFor(link)));
  // Without a writer, the same handle's snapshot is exact.
  writer.reset();
  auto quiet = by_link->LoadSet(names, outs);
  REQUIRE(quiet.ok());
  CHECK(outs[0] == Payload(2));
  CHECK(outs[1] == Payload(1002));
}

TEST_CASE("Readers never create the sidecar", "[sidecar][loadset][wait]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreatePairStore(path);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  const std::string_view names[] = {"a", "b"};
  std::vector<std::vector<std::byte>> outs;
  CHECK(reader.LoadSet(names, outs).status().code() == StatusCode::kNotFound);
  std::vector<std::byte> out;
  CHECK(reader.WaitForNewer("a", 0, std::chrono::milliseconds(30), out).status().code() ==
        StatusCode::kTimedOut);
  // A file a reader made would be the reader's (mode 0600): a writer of
  // another user could not open it.
  CHECK_FALSE(std::filesystem::exists(sidecar::PathFor(path)));
}

TEST_CASE("LoadSet without a sidecar works while no writer holds the store, and says why not",
          "[sidecar][loadset]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreatePairStore(path);
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    CommitPair(writer, 1);
  }
  NoSidecarIo io;
  OpenOptions options;
  options.io = &io;
  auto reader = Store::Open(path, OpenMode::kReadOnly, options);
  REQUIRE(reader.ok());
  const std::string_view names[] = {"a", "b"};
  std::vector<std::vector<std::byte>> outs;
  auto quiet = reader->LoadSet(names, outs);
  REQUIRE(quiet.ok());
  CHECK(outs[0] == Payload(1));
  CHECK(outs[1] == Payload(1001));
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  auto busy = reader->LoadSet(names, outs);
  REQUIRE_FALSE(busy.ok());
  CHECK(busy.status().code() == StatusCode::kBusy);
  CHECK_THAT(busy.status().message(), Catch::Contains("permission denied"));
  CHECK_THAT(busy.status().message(), Catch::Contains(sidecar::PathFor(path)));
  CHECK(io.refused >= 2);
}

TEST_CASE("Create refuses a protocol that does not exist", "[sidecar]") {
  TempDir dir;
  for (const uint32_t protocol : {0u, 3u}) {
    CreateOptions options;
    options.protocol = protocol;
    const Status s = Store::Create(dir.File("s.rgn"), 4096, options);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find("protocol " + std::to_string(protocol)) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.File("s.rgn")));
  }
}

}  // namespace
}  // namespace regionstore::testing
