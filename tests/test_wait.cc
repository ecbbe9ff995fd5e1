// Readers that wait (Store::WaitForNewer): waiters in other processes wake
// with every commit and batch, counted in lockstep so that a lost wake-up
// is a timeout; a commit landing between a waiter's check and its sleep
// wakes it; timeouts, a dead writer and a replaced store; and what a waiter
// costs in system calls while it sleeps.
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "regionstore/io.h"
#include "regionstore/store.h"
#include "support/files.h"
#include "support/mutation_scope.h"
#include "support/process.h"
#include "support/store_fixtures.h"
#include "support/syscall_hook.h"
#include "support/temp_dir.h"
#include "test_hooks.h"

namespace regionstore::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A lost wake-up shows as this timeout; nothing else waits that long.
constexpr auto kNeverInATest = seconds(60);

// Protocol 1 wakes on the publication word after every commit; protocol 2
// registers waiters in the sidecar and wakes only those.
void CreateWaitStore(const std::string& path, uint32_t protocol = 1) {
  CreateOptions options;
  options.checkpoints = {{"r", 5'000}, {"other", 64}};
  options.batch_log = true;
  options.protocol = protocol;
  REQUIRE(Store::Create(path, 0, options).ok());
}

std::vector<std::byte> PayloadOf(uint64_t generation) {
  return PatternBytes(100 + generation % 4000, generation);
}

// Commit number `n` of region "r" in the lockstep loop: every mode, and one
// in four a batch with the other region (one wake for the batch).
void CommitNumber(Store& store, uint64_t n) {
  const std::vector<std::byte> payload = PayloadOf(n);
  const Durability mode = n % 8 == 0 ? kAllModes[(n / 8) % 4] : Durability::kNone;
  if (n % 4 == 1) {
    const std::vector<std::byte> small = PatternBytes(10, n);
    const std::array<std::span<const std::byte>, 1> r_piece{std::span<const std::byte>(payload)};
    const std::array<std::span<const std::byte>, 1> o_piece{std::span<const std::byte>(small)};
    const std::array<BatchMember, 2> batch{BatchMember{"other", o_piece},
                                           BatchMember{"r", r_piece}};
    auto done = store.CommitBatch(batch, mode);
    Must(done.ok(), "CommitBatch");
  } else {
    auto done = store.Commit("r", payload, mode);
    Must(done.ok(), "Commit");
  }
}

TEST_CASE("Waiters in several processes each wake with every commit, none lost",
          "[wait][multiprocess][long]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateWaitStore(path, protocol);
  const uint64_t commits = ScaledCount(protocol == 1 ? 5000 : 2500);
  constexpr int kWaiters = 3;
  Store writer = MustOpen(path, OpenMode::kReadWrite);

  // Each waiter acknowledges every generation it got; the writer commits
  // the next one only when all have. So each wait has exactly one newer
  // commit to find, and a lost wake-up is a wait that times out.
  std::vector<std::unique_ptr<Pipe>> acks;
  ChildProcesses children;
  for (int w = 0; w < kWaiters; ++w) {
    acks.push_back(std::make_unique<Pipe>());
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::alarm(600);
      auto reader = Store::Open(path, OpenMode::kReadOnly);
      if (!reader.ok()) ::_exit(2);
      std::vector<std::byte> out;
      uint64_t slept = 0;
      struct Counter {
        static void Count(void* context) { ++*static_cast<uint64_t*>(context); }
      };
      internal::SetWaitPause(&Counter::Count, &slept);
      for (uint64_t n = 1; n <= commits; ++n) {
        auto got = reader->WaitForNewer("r", n - 1, kNeverInATest, out);
        if (!got.ok()) {
          std::fprintf(stderr, "waiter %d, generation %llu: %s\n", w,
                       static_cast<unsigned long long>(n), got.status().ToString().c_str());
          ::_exit(3);
        }
        if (got->generation != n) ::_exit(4);
        if (out != PayloadOf(n)) ::_exit(5);
        if (!WriteAll(acks[w]->write_fd(), &n, sizeof n)) ::_exit(6);
      }
      // How many waits went to sleep (the wake path), after the last ack.
      if (!WriteAll(acks[w]->write_fd(), &slept, sizeof slept)) ::_exit(6);
      ::_exit(0);
    }
    children.Add(pid);
    acks[w]->CloseWrite();
  }
  for (uint64_t n = 1; n <= commits; ++n) {
    CommitNumber(writer, n);
    for (int w = 0; w < kWaiters; ++w) {
      uint64_t acked = 0;
      if (!ReadExactly(acks[w]->read_fd(), &acked, sizeof acked)) {
        FAIL("waiter " << w << " stopped before acknowledging generation " << n << ": "
                       << DescribeWait(children.Wait(w)));
      }
      if (acked != n) FAIL("waiter " << w << " acknowledged " << acked << ", not " << n);
    }
  }
  for (int w = 0; w < kWaiters; ++w) {
    uint64_t slept = 0;
    REQUIRE(ReadExactly(acks[w]->read_fd(), &slept, sizeof slept));
    const int status = children.Wait(w);
    INFO("waiter " << w << ": " << DescribeWait(status) << ", slept in " << slept << " of "
                   << commits << " waits");
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    // The wake path ran: most waits found nothing and slept until woken.
    CHECK(slept > 0);
  }
}

// Records what each of its mappings' WaitWord calls returned.
class WaitRecordingIo final : public ForwardingIo {
 public:
  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override {
    auto file = ForwardingIo::Open(path, mode, symlinks);
    if (!file.ok()) return file.status();
    return std::unique_ptr<File>(std::make_unique<RecordingFile>(std::move(*file), outcomes));
  }
  std::vector<StatusCode> outcomes;

 private:
  class RecordingMapping final : public ForwardingMapping {
   public:
    RecordingMapping(std::unique_ptr<Mapping> base, std::vector<StatusCode>& outcomes)
        : ForwardingMapping(std::move(base)), outcomes_(outcomes) {}
    Status WaitWord(uint64_t offset, uint32_t expected, uint64_t deadline_ns) override {
      Status s = ForwardingMapping::WaitWord(offset, expected, deadline_ns);
      outcomes_.push_back(s.code());
      return s;
    }

   private:
    std::vector<StatusCode>& outcomes_;
  };
  class RecordingFile final : public ForwardingFile {
   public:
    RecordingFile(std::unique_ptr<File> base, std::vector<StatusCode>& outcomes)
        : ForwardingFile(std::move(base)), outcomes_(outcomes) {}
    Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) override {
      auto mapping = ForwardingFile::Map(length, mode);
      if (!mapping.ok()) return mapping.status();
      return std::unique_ptr<Mapping>(
          std::make_unique<RecordingMapping>(std::move(*mapping), outcomes_));
    }

   private:
    std::vector<StatusCode>& outcomes_;
  };
};

TEST_CASE("A commit between a waiter's check and its sleep wakes it", "[wait]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateWaitStore(path, protocol);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  REQUIRE(writer.Commit("r", PayloadOf(1), Durability::kNone).ok());
  WaitRecordingIo io;
  OpenOptions options;
  options.io = &io;
  auto opened = Store::Open(path, OpenMode::kReadOnly, options);
  REQUIRE(opened.ok());
  Store& reader = *opened;

  // The hook commits once, in the window between the waiter's look at the
  // region (nothing above generation 1) and its futex call.
  struct Window {
    Store* writer;
    int commits = 0;
    static void Commit(void* context) {
      auto* window = static_cast<Window*>(context);
      if (window->commits++ > 0) return;
      Must(window->writer->Commit("r", PayloadOf(2), Durability::kNone).ok(), "Commit");
    }
  } window{&writer};
  internal::SetWaitPause(&Window::Commit, &window);
  // No recheck to rescue a lost wake-up: only the futex can end this wait
  // before its timeout.
  const WaitOptions no_recheck{.recheck = std::chrono::hours(1)};
  std::vector<std::byte> out;
  // Either way the wait ends with generation 2 (after its deadline, one
  // last look finds it); what tells a lost wake-up is how its sleep ended.
  SECTION("the word read before the check: the sleep ends at once") {
    auto got = reader.WaitForNewer("r", 1, milliseconds(300), out, no_recheck);
    internal::SetWaitPause(nullptr, nullptr);
    REQUIRE(got.ok());
    CHECK(got->generation == 2);
    CHECK(out == PayloadOf(2));
    CHECK(window.commits == 1);
    if (protocol == 1) {
      // The futex call found the word changed.
      CHECK(io.outcomes == std::vector<StatusCode>{StatusCode::kOk});
    } else {
      // The waiter bit's compare-and-swap failed: no sleep at all.
      CHECK(io.outcomes.empty());
    }
  }
  SECTION("the word read after the check (a broken waiter): the sleep runs to the deadline") {
    MutationScope broken(internal::Mutation::kWaitReadsWordLate);
    auto got = reader.WaitForNewer("r", 1, milliseconds(300), out, no_recheck);
    internal::SetWaitPause(nullptr, nullptr);
    REQUIRE(got.ok());
    CHECK(window.commits == 1);
    CHECK(io.outcomes == std::vector<StatusCode>{StatusCode::kTimedOut});
  }
}

std::atomic<int> g_signals_handled{0};
void CountSignal(int) { g_signals_handled.fetch_add(1); }

// Whether thread `tid` of this process is asleep ('S' in /proc).
bool Asleep(pid_t tid) {
  std::FILE* file = std::fopen(("/proc/self/task/" + std::to_string(tid) + "/stat").c_str(), "re");
  if (file == nullptr) return false;
  char line[512] = {};
  const bool read = std::fgets(line, sizeof line, file) != nullptr;
  std::fclose(file);
  const char* close = read ? std::strrchr(line, ')') : nullptr;
  return close != nullptr && close[1] == ' ' && close[2] == 'S';
}

TEST_CASE("Signals and wake-ups for other regions do not end a wait early", "[wait][threads]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateWaitStore(path);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  REQUIRE(writer.Commit("r", PayloadOf(1), Durability::kNone).ok());
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  struct sigaction action {};
  action.sa_handler = CountSignal;  // no SA_RESTART: a futex wait returns EINTR
  struct sigaction previous {};
  REQUIRE(::sigaction(SIGUSR1, &action, &previous) == 0);
  g_signals_handled = 0;
  // The waiter counts its sleeps (the hook runs just before each futex
  // call): the next blocking call after the n-th is the n-th futex wait.
  std::atomic<int> sleeps{0};
  struct Counter {
    static void Count(void* context) { static_cast<std::atomic<int>*>(context)->fetch_add(1); }
  };
  internal::SetWaitPause(&Counter::Count, &sleeps);
  std::atomic<pid_t> waiter_tid{0};
  Result<CheckpointMeta> got = Status::Ok();
  std::vector<std::byte> out;
  std::thread waiter([&] {
    waiter_tid = ::gettid();
    got = reader.WaitForNewer("r", 1, kNeverInATest, out, {.recheck = std::chrono::hours(1)});
  });
  // Interrupts it asleep, 40 times: a signal, then a commit of another
  // region (which wakes it), in turn. Each time it must go back to sleep.
  constexpr int kInterruptions = 40;
  for (int i = 0; i < kInterruptions; ++i) {
    while (sleeps.load() < i + 1 || !Asleep(waiter_tid.load())) std::this_thread::yield();
    if (i % 2 == 0) {
      const int handled = g_signals_handled.load();
      REQUIRE(::pthread_kill(waiter.native_handle(), SIGUSR1) == 0);
      while (g_signals_handled.load() == handled) std::this_thread::yield();
    } else {
      REQUIRE(writer.Commit("other", PatternBytes(10, static_cast<uint64_t>(i)), Durability::kNone)
                  .ok());
    }
  }
  while (sleeps.load() < kInterruptions + 1 || !Asleep(waiter_tid.load())) {
    std::this_thread::yield();
  }
  REQUIRE(writer.Commit("r", PayloadOf(2), Durability::kNone).ok());
  waiter.join();
  internal::SetWaitPause(nullptr, nullptr);
  REQUIRE(::sigaction(SIGUSR1, &previous, nullptr) == 0);
  REQUIRE(got.ok());
  CHECK(got->generation == 2);
  CHECK(out == PayloadOf(2));
  CHECK(g_signals_handled == kInterruptions / 2);
  // One sleep to start with and one after each interruption; the commit of
  // "r" ends the last.
  CHECK(sleeps == kInterruptions + 1);
}

TEST_CASE("A wait returns a newer commit at once, and times out with none", "[wait]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateWaitStore(path);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  std::vector<std::byte> out;
  const auto start = std::chrono::steady_clock::now();
  auto none = reader.WaitForNewer("r", 0, milliseconds(200), out);
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(none.status().code() == StatusCode::kTimedOut);
  CHECK_THAT(none.status().ToString(), Catch::Contains("no commit above generation 0"));
  // Never early.
  CHECK(waited >= milliseconds(200));
  CHECK(reader.WaitForNewer("nope", 0, milliseconds(1), out).status().code() ==
        StatusCode::kNotFound);
  CHECK(reader.WaitForNewer("r", 0, milliseconds(1), out, {.recheck = milliseconds(0)})
            .status()
            .code() == StatusCode::kInvalidArgument);
  {
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(writer.Commit("r", PayloadOf(1), Durability::kSync).ok());
    // On the writer's own handle: what is there already.
    auto own = writer.WaitForNewer("r", 0, milliseconds(1), out);
    REQUIRE(own.ok());
    CHECK(own->generation == 1);
  }
  auto got = reader.WaitForNewer("r", 0, kNeverInATest, out);
  REQUIRE(got.ok());
  CHECK(got->generation == 1);
  CHECK(out == PayloadOf(1));
  CHECK(reader.WaitForNewer("r", 1, milliseconds(50), out).status().code() ==
        StatusCode::kTimedOut);
}

TEST_CASE("A waiter whose writer was killed returns at its timeout", "[wait][multiprocess]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateWaitStore(path);
  Pipe ready;
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(60);
    auto writer = Store::Open(path, OpenMode::kReadWrite);
    if (!writer.ok() || !writer->Commit("r", PayloadOf(1), Durability::kNone).ok()) ::_exit(2);
    const char byte = 1;
    if (!WriteAll(ready.write_fd(), &byte, 1)) ::_exit(3);
    ::pause();
    ::_exit(4);
  }
  ChildGuard guard(pid);
  ready.CloseWrite();
  char byte = 0;
  REQUIRE(ReadExactly(ready.read_fd(), &byte, 1));
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  std::vector<std::byte> out;
  auto first = reader.WaitForNewer("r", 0, kNeverInATest, out);
  REQUIRE(first.ok());
  CHECK(first->generation == 1);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  guard.Release();
  auto after = reader.WaitForNewer("r", 1, milliseconds(300), out);
  CHECK(after.status().code() == StatusCode::kTimedOut);
}

TEST_CASE("A waiter notices at its recheck that the path names another store, or none",
          "[wait][threads]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateWaitStore(path);
  for (const bool remove : {false, true}) {
    INFO((remove ? "removed" : "replaced"));
    Store reader = MustOpen(path, OpenMode::kReadOnly);
    Result<CheckpointMeta> got = Status::Ok();
    std::vector<std::byte> out;
    std::thread waiter([&] {
      got = reader.WaitForNewer("r", 0, kNeverInATest, out, {.recheck = milliseconds(20)});
    });
    if (remove) {
      REQUIRE(::unlink(path.c_str()) == 0);
    } else {
      // Made anew at the path: a rename over it, another inode.
      CreateOptions options;
      options.checkpoints = {{"r", 5'000}};
      options.replace_existing = true;
      REQUIRE(Store::Create(path, 0, options).ok());
    }
    waiter.join();
    CHECK(got.status().code() == StatusCode::kStoreReplaced);
    CHECK_THAT(got.status().ToString(),
               Catch::Contains(remove ? "no longer exists" : "now names another file"));
  }
}

// Counts the Io calls a waiter makes: StatPath (the recheck) and, through
// the syscall table, its futex calls.
class StatCountingIo final : public ForwardingIo {
 public:
  Result<FileStat> StatPath(const std::string& path) override {
    ++stat_calls;
    return ForwardingIo::StatPath(path);
  }
  std::atomic<int> stat_calls{0};
};

TEST_CASE("A waiter makes no repeated system calls while it sleeps",
          "[wait][multiprocess][threads][long]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateWaitStore(path, protocol);
  if (protocol == 2) {
    // The writer's open creates the sidecar the waiter registers in.
    REQUIRE(Store::Open(path, OpenMode::kReadWrite).ok());
  }
  StatCountingIo io;
  OpenOptions options;
  options.io = &io;
  auto reader = Store::Open(path, OpenMode::kReadOnly, options);
  REQUIRE(reader.ok());
  std::vector<std::byte> out;
  {
    // 400 ms with nothing to wake it and no recheck due: one futex wait
    // (a polling reader at 1 ms would make ~400 calls).
    SyscallHook hook;
    auto got =
        reader->WaitForNewer("r", 0, milliseconds(400), out, {.recheck = std::chrono::hours(1)});
    CHECK(got.status().code() == StatusCode::kTimedOut);
    INFO("futex calls: " << hook.Count(Syscall::kFutex));
    CHECK(hook.Count(Syscall::kFutex) >= 1);
    CHECK(hook.Count(Syscall::kFutex) <= 2);
    CHECK(hook.Calls().size() == static_cast<size_t>(hook.Count(Syscall::kFutex)));
    CHECK(io.stat_calls == 0);
  }
  {
    // With a recheck every 100 ms: one stat and one more futex wait each.
    SyscallHook hook;
    auto got = reader->WaitForNewer("r", 0, milliseconds(450), out, {.recheck = milliseconds(100)});
    CHECK(got.status().code() == StatusCode::kTimedOut);
    INFO("futex calls: " << hook.Count(Syscall::kFutex) << ", stat calls: " << io.stat_calls);
    CHECK(hook.Count(Syscall::kFutex) <= 7);
    CHECK(io.stat_calls >= 1);
    CHECK(io.stat_calls <= 5);
  }
  {
    // Woken by a writer in another process: one wait, then the commit.
    Pipe go;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::alarm(60);
      char byte = 0;
      if (!ReadExactly(go.read_fd(), &byte, 1)) ::_exit(2);
      auto writer = Store::Open(path, OpenMode::kReadWrite);
      if (!writer.ok() || !writer->Commit("r", PayloadOf(1), Durability::kNone).ok()) ::_exit(3);
      ::_exit(0);
    }
    ChildGuard guard(pid);
    go.CloseRead();
    SyscallHook hook;
    std::thread release([&] {
      const char byte = 1;
      Must(WriteAll(go.write_fd(), &byte, 1), "write");
    });
    auto got = reader->WaitForNewer("r", 0, kNeverInATest, out, {.recheck = std::chrono::hours(1)});
    release.join();
    REQUIRE(got.ok());
    CHECK(got->generation == 1);
    INFO("futex calls: " << hook.Count(Syscall::kFutex));
    CHECK(hook.Count(Syscall::kFutex) <= 3);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    guard.Release();
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
}

TEST_CASE("A writer wakes waiters once per commit and per batch, and not when told not to",
          "[wait]") {
  const uint32_t protocol = GENERATE(1u, 2u);
  INFO("protocol " << protocol);
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateWaitStore(path, protocol);
  for (const bool wake : {true, false}) {
    INFO("wake_waiters " << wake);
    OpenOptions options;
    options.wake_waiters = wake;
    auto writer = Store::Open(path, OpenMode::kReadWrite, options);
    REQUIRE(writer.ok());
    SyscallHook hook;
    for (Durability mode : kAllModes) {
      REQUIRE(writer->Commit("r", PayloadOf(7), mode).ok());
    }
    const std::vector<std::byte> small = PatternBytes(10, 1);
    const std::array<std::span<const std::byte>, 1> piece{std::span<const std::byte>(small)};
    const std::array<BatchMember, 2> batch{BatchMember{"other", piece}, BatchMember{"r", piece}};
    REQUIRE(writer->CommitBatch(batch, Durability::kNone).ok());
    REQUIRE(writer->CommitBatch(batch, Durability::kSync).ok());
    // Protocol 2 wakes only registered waiters, and nobody waits here.
    CHECK(hook.Count(Syscall::kFutex) == (wake && protocol == 1 ? 6 : 0));
    for (const SyscallCall& call : hook.Calls()) {
      if (call.call == Syscall::kFutex) CHECK(call.flags == FUTEX_WAKE);
    }
  }
}

}  // namespace
}  // namespace regionstore::testing
