// Readers in other processes Load a checkpoint region without a lock while a
// writer process commits to it, and every copy they get must be exactly one
// commit's bytes (support/commit_payloads.h: each payload is a function of
// its generation, so a copy is checked without history).
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "regionstore/store.h"
#include "support/commit_payloads.h"
#include "support/process.h"
#include "support/shared_memory.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

// --- Concurrent readers -------------------------------------------------------

constexpr char kReadRegion[] = "shared";

constexpr uint64_t kReadCapacity = 64 * kKiB;

constexpr int kReaders = 3;

constexpr uint64_t kLoadsPerReader = 20000;

// A safety cap on the writer; it normally stops when the readers are done.
constexpr uint64_t kWriterCommitCap = 5000000;

// 4 KiB to 64 KiB, most not multiples of 4096.
uint64_t ReadPayloadSize(uint64_t generation) {
  const uint64_t h = Mix64(generation ^ 0xabcdefULL);
  return 4 * kKiB + (h >> 4) % (kReadCapacity - 4 * kKiB + 1);
}

// Mostly kNone (fast commits, the hardest race for readers), with durable
// ones (the pwritev path writes the header unit before the payload).
Durability ReadMode(uint64_t generation) {
  const uint64_t pick = Mix64(generation ^ 0x7777ULL) % 10;
  if (pick == 0) return Durability::kAsync;
  if (pick == 1) return Durability::kSync;
  if (pick == 2) return Durability::kPwriteFdatasync;
  return Durability::kNone;
}

CommitId ReadId(uint64_t generation) { return CommitId{generation, 0}; }

struct ReaderShared {
  std::atomic<uint32_t> readers_done{0};
  std::atomic<uint32_t> stop_writer{0};
};

struct ReaderReport {
  uint64_t loads_ok = 0;
  uint64_t busy = 0;
  uint64_t other_errors = 0;
  int32_t first_other_code = -1;
  uint64_t inconsistent = 0;      // wrong length or bytes for the generation returned
  uint64_t decreasing = 0;        // a generation lower than one returned before
  uint64_t generations_seen = 0;  // how many times the returned generation changed, + 1
  uint64_t first_generation = 0;
  uint64_t last_generation = 0;
  // The first inconsistent copy, for the failure message.
  uint64_t bad_generation = 0;
  uint64_t bad_length = 0;
  uint64_t bad_offset = 0;
  uint64_t bad_first_word = 0;
  uint32_t bad_slot = 0;
};

struct WriterReport {
  uint64_t commits = 0;
  uint64_t last_generation = 0;
  uint64_t by_mode[4] = {};
  int32_t error_code = -1;  // StatusCode of a failed commit
};

static_assert(sizeof(ReaderReport) < PIPE_BUF && sizeof(WriterReport) < PIPE_BUF);

[[noreturn]] void ReadLoop(const std::string& path, int go_fd, ReaderShared* shared,
                           int report_fd) {
  ::alarm(300);
  auto store = Store::Open(path, OpenMode::kReadOnly);
  if (!store.ok()) ::_exit(kChildOpenFailed);
  // Start with the writer: end of file once it has opened the store.
  char byte;
  ssize_t n;
  do {
    n = ::read(go_fd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 0) ::_exit(kChildPipeFailed);

  ReaderReport report;
  std::vector<std::byte> out;
  uint64_t previous = 0;
  for (uint64_t i = 0; i < kLoadsPerReader; ++i) {
    auto meta = store->Load(kReadRegion, out);
    if (!meta.ok()) {
      if (meta.status().code() == StatusCode::kBusy) {
        ++report.busy;
      } else {
        if (report.other_errors++ == 0) {
          report.first_other_code = static_cast<int32_t>(meta.status().code());
        }
      }
      continue;
    }
    ++report.loads_ok;
    const uint64_t generation = meta->generation;
    if (report.first_generation == 0) report.first_generation = generation;
    if (generation != previous) ++report.generations_seen;
    if (generation < previous) ++report.decreasing;
    previous = std::max(previous, generation);
    report.last_generation = generation;
    const uint64_t expected_size = ReadPayloadSize(generation);
    const uint64_t at = FirstMismatch(ReadId(generation), out);
    if (out.size() != expected_size || meta->length != out.size() || at != out.size()) {
      if (report.inconsistent++ == 0) {
        report.bad_generation = generation;
        report.bad_length = out.size();
        report.bad_offset = at;
        report.bad_first_word = FirstWord(out);
        report.bad_slot = meta->slot;
      }
    }
  }
  shared->readers_done.fetch_add(1);
  if (!WriteAll(report_fd, &report, sizeof report)) ::_exit(kChildPipeFailed);
  ::_exit(kChildOk);
}

[[noreturn]] void WriteLoop(const std::string& path, int go_write_fd, ReaderShared* shared,
                            int report_fd) {
  ::alarm(300);
  auto store = Store::Open(path, OpenMode::kReadWrite);
  if (!store.ok()) ::_exit(kChildOpenFailed);
  ::close(go_write_fd);  // the readers may start
  WriterReport report;
  std::vector<std::byte> payload;
  uint64_t generation = 1;  // the parent's commit
  while (shared->readers_done.load(std::memory_order_relaxed) < kReaders &&
         shared->stop_writer.load(std::memory_order_relaxed) == 0 &&
         report.commits < kWriterCommitCap) {
    ++generation;
    FillPayload(ReadId(generation), ReadPayloadSize(generation), payload);
    const Durability mode = ReadMode(generation);
    auto committed = store->Commit(kReadRegion, payload, mode);
    if (!committed.ok()) {
      report.error_code = static_cast<int32_t>(committed.status().code());
      (void)WriteAll(report_fd, &report, sizeof report);
      ::_exit(kChildCommitFailed);
    }
    if (*committed != generation) ::_exit(kChildCommitGeneration);
    ++report.commits;
    ++report.by_mode[static_cast<size_t>(mode)];
    report.last_generation = generation;
  }
  if (!WriteAll(report_fd, &report, sizeof report)) ::_exit(kChildPipeFailed);
  ::_exit(kChildOk);
}

template <typename T>
T ParseReport(const std::vector<char>& bytes, const char* who) {
  INFO(who << " sent " << bytes.size() << " bytes, expected " << sizeof(T));
  REQUIRE(bytes.size() == sizeof(T));
  T report;
  std::memcpy(&report, bytes.data(), sizeof(T));
  return report;
}

TEST_CASE(
    "Readers in other processes Load only whole commits while a writer commits, "
    "without a lock",
    "[checkpoint][multiprocess][readers][fs-matrix][long]") {
  TempDir dir;
  const std::string path = dir.File("readers.rgn");
  MustCreateWithRegions(path, 64 * kKiB, {{kReadRegion, kReadCapacity}});
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    std::vector<std::byte> payload;
    FillPayload(ReadId(1), ReadPayloadSize(1), payload);
    auto committed = store.Commit(kReadRegion, payload, Durability::kPwriteFdatasync);
    REQUIRE(committed.ok());
    REQUIRE(*committed == 1);
  }

  SharedMemory<ReaderShared> shared;
  Pipe go;
  Pipe writer_pipe;
  Pipe reader_pipes[kReaders];
  // In a child: close every descriptor of these pipes but the ones kept.
  const auto close_all_but = [&](int keep_a, int keep_b) {
    for (int fd : {go.read_fd(), go.write_fd(), writer_pipe.read_fd(), writer_pipe.write_fd()}) {
      if (fd != keep_a && fd != keep_b) ::close(fd);
    }
    for (const Pipe& p : reader_pipes) {
      for (int fd : {p.read_fd(), p.write_fd()}) {
        if (fd != keep_a && fd != keep_b) ::close(fd);
      }
    }
  };

  ChildGuard writer(::fork());
  REQUIRE(writer.pid() >= 0);
  if (writer.pid() == 0) {
    close_all_but(go.write_fd(), writer_pipe.write_fd());
    WriteLoop(path, go.write_fd(), &*shared, writer_pipe.write_fd());
  }
  ChildGuard readers[kReaders];
  for (int i = 0; i < kReaders; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close_all_but(go.read_fd(), reader_pipes[i].write_fd());
      ReadLoop(path, go.read_fd(), &*shared, reader_pipes[i].write_fd());
    }
    readers[i].Adopt(pid);
  }
  go.CloseRead();
  go.CloseWrite();
  writer_pipe.CloseWrite();
  for (Pipe& p : reader_pipes) p.CloseWrite();

  // Readers first: they are bounded by their count. Then stop the writer
  // (it stops by itself once all three are done; this covers a reader that
  // died early).
  ReaderReport reports[kReaders];
  std::string reader_failures;
  for (int i = 0; i < kReaders; ++i) {
    const int wait_status = Reap(readers[i]);
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != kChildOk) {
      reader_failures += "reader " + std::to_string(i) + " " + DescribeChild(wait_status) + "; ";
    }
  }
  shared->stop_writer.store(1);
  const int writer_status = Reap(writer);
  const std::vector<char> writer_bytes = ReadToEnd(writer_pipe.read_fd());
  INFO(reader_failures);
  REQUIRE(reader_failures.empty());
  int32_t writer_error = -1;
  if (writer_bytes.size() == sizeof(WriterReport)) {
    writer_error = ParseReport<WriterReport>(writer_bytes, "the writer").error_code;
  }
  INFO("writer " << DescribeChild(writer_status) << ", failed commit's status code "
                 << writer_error);
  REQUIRE(WIFEXITED(writer_status));
  REQUIRE(WEXITSTATUS(writer_status) == kChildOk);
  const auto writer_report = ParseReport<WriterReport>(writer_bytes, "the writer");
  for (int i = 0; i < kReaders; ++i) {
    reports[i] = ParseReport<ReaderReport>(ReadToEnd(reader_pipes[i].read_fd()), "a reader");
  }

  WARN("concurrent readers: writer commits "
       << writer_report.commits << " (none " << writer_report.by_mode[0] << ", async "
       << writer_report.by_mode[1] << ", sync " << writer_report.by_mode[2] << ", pwrite-fdatasync "
       << writer_report.by_mode[3] << "), last generation " << writer_report.last_generation);
  for (int i = 0; i < kReaders; ++i) {
    const ReaderReport& r = reports[i];
    WARN("reader " << i << ": loads " << kLoadsPerReader << ", ok " << r.loads_ok << ", busy "
                   << r.busy << ", other errors " << r.other_errors << ", inconsistent "
                   << r.inconsistent << ", decreasing " << r.decreasing << ", distinct generations "
                   << r.generations_seen << " (" << r.first_generation << " to "
                   << r.last_generation << ")");
  }

  for (int i = 0; i < kReaders; ++i) {
    const ReaderReport& r = reports[i];
    INFO("reader " << i << ": first inconsistent copy: generation " << r.bad_generation
                   << " from slot " << r.bad_slot << ", " << r.bad_length << " bytes (expected "
                   << ReadPayloadSize(r.bad_generation) << "), first bad byte " << r.bad_offset
                   << ", its first word names " << r.bad_first_word << "; first other error code "
                   << r.first_other_code);
    CHECK(r.inconsistent == 0);
    CHECK(r.decreasing == 0);
    CHECK(r.other_errors == 0);
    CHECK(r.loads_ok + r.busy + r.other_errors == kLoadsPerReader);
    // At least 95% of the loads succeed.
    CHECK(r.loads_ok * 100 >= kLoadsPerReader * 95);
    // The loads raced the writer: they saw its commits go by.
    CHECK(r.generations_seen >= 10);
    CHECK(r.last_generation <= writer_report.last_generation);
  }
  CHECK(writer_report.commits >= 100);
  CHECK(writer_report.by_mode[0] > 0);
  CHECK(writer_report.by_mode[2] + writer_report.by_mode[3] > 0);

  // The writer exited cleanly after its last commit returned: that is what
  // the region holds, for a fresh writer (recovery) too.
  Store after = MustOpen(path, OpenMode::kReadWrite);
  std::vector<std::byte> bytes;
  auto meta = after.Load(kReadRegion, bytes);
  REQUIRE(meta.ok());
  CHECK(meta->generation == writer_report.last_generation);
  CHECK(bytes.size() == ReadPayloadSize(meta->generation));
  CHECK(FirstMismatch(ReadId(meta->generation), bytes) == bytes.size());
}

}  // namespace
}  // namespace regionstore::testing
