// Stress: one writer and four readers on one store, raw writes and commits
// interleaved, bounded by the writer's round count (no clock anywhere).
//
// Run in three forms: as processes (how the store is deployed: each reader
// its own read-only handle and mapping); as threads sharing one read-only
// handle (as the thread-safety contract allows); and as threads whose
// read-only handle borrows the writer's mapping, the one form in which
// ThreadSanitizer sees reader and writer touch the same addresses. The
// suite runs under ASan+UBSan and TSan in CI, so each form runs under each.
//
// What the readers check while the writer runs:
//  - every Load returns a payload byte-exact for the generation it reports,
//    and generations never go back (kBusy is counted, not an error);
//  - every 8-byte word of a raw-written block carries its block and index
//    in its upper half (a racing copy may mix old and new versions, but
//    never shows bytes from elsewhere);
// and once the writer is done, every block and both regions hold exactly
// the writer's last version: nothing lost.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "regionstore/io.h"
#include "regionstore/store.h"
#include "support/borrowed_mapping.h"
#include "support/commit_payloads.h"
#include "support/process.h"
#include "support/shared_memory.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

constexpr int kReaders = 4;
constexpr uint64_t kRounds = 4000;
constexpr uint64_t kBlocks = 16;
constexpr uint64_t kBlockSize = 16 * kKiB;
constexpr uint64_t kWordsPerBlock = kBlockSize / 8;
// A reader that spins this often without the writer finishing has hung.
constexpr uint64_t kReaderSafetyCap = 50'000'000;

struct Region {
  const char* name;
  uint64_t capacity;
};
constexpr Region kRegions[] = {{"state", 64 * kKiB}, {"meta", 200}};

// Commit `generation` of region `r`: its length and its words follow from
// both (support/commit_payloads.h, region index as the commit's `life`), so
// a reader can check a payload knowing only what Load reported.
CommitId StressId(size_t r, uint64_t generation) { return CommitId{generation, r}; }
uint64_t PayloadLength(size_t r, uint64_t generation) {
  return 1 + Mix64(generation * 4 + r) % kRegions[r].capacity;
}
void FillPayload(size_t r, uint64_t generation, std::vector<std::byte>& out) {
  testing::FillPayload(StressId(r, generation), PayloadLength(r, generation), out);
}
bool PayloadMatches(size_t r, uint64_t generation, const std::vector<std::byte>& bytes) {
  return bytes.size() == PayloadLength(r, generation) &&
         FirstMismatch(StressId(r, generation), bytes) == bytes.size();
}

// Word `index` of data block `block` at writer round `round`: the upper half
// names the place, the lower half the version.
uint64_t BlockWord(uint64_t block, uint64_t index, uint64_t round) {
  return ((0xb10c0000ULL | (block << 12) | index) << 32) | (round & 0xffffffffULL);
}
void FillBlock(uint64_t block, uint64_t round, std::vector<std::byte>& out) {
  out.resize(kBlockSize);
  for (uint64_t i = 0; i < kWordsPerBlock; ++i) {
    const uint64_t word = BlockWord(block, i, round);
    std::memcpy(out.data() + i * 8, &word, 8);
  }
}
// The last round that wrote `block` (rounds 1..kRounds write block round % kBlocks).
uint64_t FinalRound(uint64_t block) {
  uint64_t round = kRounds - (kRounds % kBlocks) + block;
  return round > kRounds ? round - kBlocks : round;
}

// Mostly unsynced (the tightest race for readers), some of every mode.
Durability ModeFor(uint64_t round) {
  if (round % 97 == 0) return Durability::kSync;
  if (round % 89 == 0) return Durability::kPwriteFdatasync;
  if (round % 7 == 0) return Durability::kAsync;
  return Durability::kNone;
}

// Counters live in shared memory (support/shared_memory.h): lock-free atomics work
// across fork() as between threads.
struct ReaderCounts {
  std::atomic<uint64_t> loads{0};
  std::atomic<uint64_t> loads_during_writes{0};
  std::atomic<uint64_t> busy{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> bad_payloads{0};
  std::atomic<uint64_t> generation_went_back{0};
  std::atomic<uint64_t> bad_words{0};
  std::atomic<uint64_t> other_errors{0};
  std::atomic<uint64_t> final_mismatches{0};
  std::atomic<uint64_t> hit_safety_cap{0};
  std::atomic<uint32_t> done{0};
};
struct Shared {
  std::atomic<uint32_t> readers_ready{0};
  std::atomic<uint32_t> writer_done{0};
  uint64_t final_generation[2] = {0, 0};  // written before writer_done
  ReaderCounts readers[kReaders];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// Whether a reader reads the raw-written blocks while the writer writes them.
// Store documents that race as allowed (a mix of old and new bytes), so the
// variant whose reader shares the writer's mapping, where TSan would report
// it, reads them only once the writer is done.
enum class BlockReads : uint8_t { kWhileWriting, kAtTheEndOnly };

// One reader: alternates Loads of both regions and Reads of the blocks until
// the writer is done, then checks the final state once.
void ReadUntilWriterDone(const Store& store, Shared& shared, ReaderCounts& counts, int seed,
                         BlockReads block_reads) {
  shared.readers_ready.fetch_add(1);
  std::vector<std::byte> out;
  std::vector<std::byte> block(kBlockSize);
  uint64_t newest[2] = {0, 0};
  for (uint64_t i = 0;; ++i) {
    if (i == kReaderSafetyCap) {
      counts.hit_safety_cap.fetch_add(1);
      break;
    }
    const bool writer_done = shared.writer_done.load(std::memory_order_acquire) != 0;
    const size_t r = (i + static_cast<uint64_t>(seed)) % 2;
    auto meta = store.Load(kRegions[r].name, out);
    if (meta.ok()) {
      counts.loads.fetch_add(1, std::memory_order_relaxed);
      if (!writer_done) counts.loads_during_writes.fetch_add(1, std::memory_order_relaxed);
      if (!PayloadMatches(r, meta->generation, out)) counts.bad_payloads.fetch_add(1);
      if (meta->generation < newest[r]) counts.generation_went_back.fetch_add(1);
      newest[r] = std::max(newest[r], meta->generation);
    } else if (meta.status().code() == StatusCode::kBusy) {
      counts.busy.fetch_add(1, std::memory_order_relaxed);
    } else {
      counts.other_errors.fetch_add(1);
    }
    const uint64_t b = Mix64(i * 8 + static_cast<uint64_t>(seed)) % kBlocks;
    if (block_reads == BlockReads::kAtTheEndOnly) {
      // Nothing to read yet.
    } else if (store.Read(b * kBlockSize, block).ok()) {
      counts.reads.fetch_add(1, std::memory_order_relaxed);
      for (uint64_t w = 0; w < kWordsPerBlock; ++w) {
        uint64_t word;
        std::memcpy(&word, block.data() + w * 8, 8);
        // This block's word at some version. Every version has the same
        // upper half, so even a copy that tears a word byte by byte (a
        // racing pwrite promises no more) keeps it.
        if ((word >> 32) != (BlockWord(b, w, 0) >> 32)) {
          counts.bad_words.fetch_add(1);
          break;
        }
      }
    } else {
      counts.other_errors.fetch_add(1);
    }
    if (writer_done) break;
  }
  // The writer is done: everything it wrote is there, exactly.
  std::vector<std::byte> expected;
  for (uint64_t b = 0; b < kBlocks; ++b) {
    FillBlock(b, FinalRound(b), expected);
    if (!store.Read(b * kBlockSize, block).ok() || block != expected) {
      counts.final_mismatches.fetch_add(1);
    }
  }
  for (size_t r = 0; r < 2; ++r) {
    auto meta = store.Load(kRegions[r].name, out);
    if (!meta.ok() || meta->generation != shared.final_generation[r] ||
        !PayloadMatches(r, meta->generation, out)) {
      counts.final_mismatches.fetch_add(1);
    }
  }
  counts.done.store(1);
}

struct WriterResult {
  uint64_t rounds = 0;
  uint64_t by_mode[4] = {};
  std::string error;  // the first failure
};

// kRounds rounds, each a raw write of one block and a commit to each region.
// `readers_alive` says false once a reader has ended before it started (a
// failed open, a crash), which would otherwise keep the writer waiting.
WriterResult WriteRounds(Store& store, Shared& shared, const std::function<bool()>& readers_alive) {
  WriterResult result;
  // Readers start first: with everyone spinning, the writer's work overlaps
  // theirs. A spin on an atomic, not a sleep.
  while (shared.readers_ready.load() < kReaders) {
    if (!readers_alive()) {
      result.error = "a reader ended before it was ready";
      shared.writer_done.store(1, std::memory_order_release);
      return result;
    }
    ::sched_yield();
  }
  std::vector<std::byte> block;
  std::vector<std::byte> payload;
  uint64_t generation[2] = {1, 1};  // CommitFirst's
  for (uint64_t round = 1; round <= kRounds && result.error.empty(); ++round) {
    const Durability mode = ModeFor(round);
    const uint64_t b = round % kBlocks;
    FillBlock(b, round, block);
    if (Status s = store.Write(b * kBlockSize, block, mode); !s.ok()) {
      result.error = "write: " + s.ToString();
      break;
    }
    for (size_t r = 0; r < 2; ++r) {
      FillPayload(r, generation[r] + 1, payload);
      auto committed = store.Commit(kRegions[r].name, payload, mode);
      if (!committed.ok()) {
        result.error = "commit: " + committed.status().ToString();
        break;
      }
      if (*committed != generation[r] + 1) {
        result.error = "commit returned generation " + std::to_string(*committed) + ", expected " +
                       std::to_string(generation[r] + 1);
        break;
      }
      generation[r] = *committed;
    }
    ++result.by_mode[static_cast<size_t>(mode)];
    ++result.rounds;
  }
  shared.final_generation[0] = generation[0];
  shared.final_generation[1] = generation[1];
  shared.writer_done.store(1, std::memory_order_release);
  return result;
}

// The store, and a writer that has made generation 1 of each region, so no
// reader ever gets kNotFound, and written every block at round 0, so no
// reader races a block's change from zeros (a word torn between zero and
// its first version would carry a mixed upper half).
Store CreateStressStore(const std::string& path) {
  CreateOptions options;
  for (const Region& region : kRegions)
    options.checkpoints.push_back({region.name, region.capacity});
  Status created = Store::Create(path, kBlocks * kBlockSize, options);
  INFO(created.ToString());
  REQUIRE(created.ok());
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  std::vector<std::byte> payload;
  for (size_t r = 0; r < 2; ++r) {
    FillPayload(r, 1, payload);
    auto committed = writer.Commit(kRegions[r].name, payload, Durability::kNone);
    REQUIRE(committed.ok());
    REQUIRE(*committed == 1);
  }
  std::vector<std::byte> block;
  for (uint64_t b = 0; b < kBlocks; ++b) {
    FillBlock(b, 0, block);
    REQUIRE(writer.Write(b * kBlockSize, block, Durability::kNone).ok());
  }
  return writer;
}

void CheckCounts(const Shared& shared, const WriterResult& writer) {
  INFO("writer: " << writer.rounds << " rounds (none " << writer.by_mode[0] << ", async "
                  << writer.by_mode[1] << ", sync " << writer.by_mode[2] << ", pwrite-fdatasync "
                  << writer.by_mode[3] << ") " << writer.error);
  CHECK(writer.error.empty());
  CHECK(writer.rounds == kRounds);
  CHECK(shared.final_generation[0] == kRounds + 1);
  CHECK(shared.final_generation[1] == kRounds + 1);
  uint64_t loads_during_writes = 0;
  for (int i = 0; i < kReaders; ++i) {
    const ReaderCounts& c = shared.readers[i];
    INFO("reader " << i << ": " << c.loads << " loads (" << c.loads_during_writes
                   << " while the writer ran), " << c.busy << " busy, " << c.reads << " reads");
    CHECK(c.done.load() == 1);
    CHECK(c.bad_payloads.load() == 0);
    CHECK(c.generation_went_back.load() == 0);
    CHECK(c.bad_words.load() == 0);
    CHECK(c.other_errors.load() == 0);
    CHECK(c.final_mismatches.load() == 0);
    CHECK(c.hit_safety_cap.load() == 0);
    CHECK(c.loads.load() >= 1);
    // Load retries a copy the writer overtook; giving up must stay rare.
    CHECK(c.busy.load() < c.loads.load());
    loads_during_writes += c.loads_during_writes.load();
  }
  // The readers did race the writer.
  CHECK(loads_during_writes >= kReaders);
}

TEST_CASE("Four reader processes racing one writer see only whole commits and lose nothing",
          "[stress][multiprocess]") {
  TempDir dir;
  const std::string path = dir.File("stress.rgn");
  Store writer = CreateStressStore(path);
  SharedMemory<Shared> page;
  Shared& shared = *page;
  // The children inherit the writer's descriptor and never use it.
  // Reaped once: the writer polls them while it waits for them to start.
  ChildProcesses readers;
  for (int i = 0; i < kReaders; ++i) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::alarm(600);
      auto reader = Store::Open(path, OpenMode::kReadOnly);
      if (!reader.ok()) ::_exit(2);
      ReadUntilWriterDone(*reader, shared, shared.readers[i], i, BlockReads::kWhileWriting);
      ::_exit(0);
    }
    readers.Add(child);
  }
  const WriterResult result = WriteRounds(writer, shared, [&] { return readers.AllRunning(); });
  for (size_t i = 0; i < readers.size(); ++i) {
    const int status = readers.Wait(i);
    INFO("reader process " << i);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CheckCounts(shared, result);
}

TEST_CASE("Four reader threads sharing a read-only handle see only whole commits",
          "[stress][threads]") {
  TempDir dir;
  const std::string path = dir.File("stress.rgn");
  Store writer = CreateStressStore(path);
  const Store reader = MustOpen(path, OpenMode::kReadOnly);
  SharedMemory<Shared> page;
  Shared& shared = *page;
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&, i] {
      ReadUntilWriterDone(reader, shared, shared.readers[i], i, BlockReads::kWhileWriting);
    });
  }
  const WriterResult result = WriteRounds(writer, shared, [] { return true; });
  for (std::thread& thread : threads) thread.join();
  CheckCounts(shared, result);
}

TEST_CASE("Four reader threads on the writer's own mapping race its commits without a data race",
          "[stress][threads][tsan]") {
  TempDir dir;
  const std::string path = dir.File("stress.rgn");
  Store writer = CreateStressStore(path);
  std::unique_ptr<BorrowingIo> io;
  auto reader = OpenOnWritersMapping(writer, path, io);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  REQUIRE(reader->View(0, 1)->data() == writer.View(0, 1)->data());
  SharedMemory<Shared> page;
  Shared& shared = *page;
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&, i] {
      ReadUntilWriterDone(*reader, shared, shared.readers[i], i, BlockReads::kAtTheEndOnly);
    });
  }
  const WriterResult result = WriteRounds(writer, shared, [] { return true; });
  for (std::thread& thread : threads) thread.join();
  CheckCounts(shared, result);
}

}  // namespace
}  // namespace regionstore::testing
