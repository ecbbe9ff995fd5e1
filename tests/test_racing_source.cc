// A commit whose source buffer another thread rewrites while the commit
// runs: legal in Python (a bytearray), a mistake a C caller can make. The
// commit stores some mix of old and new bytes; what must hold is that the
// checksum it writes is of those stored bytes, so the generation it returns
// is the one the next Load returns (never an older one, never kTornCommit)
// and verify finds nothing damaged. Every commit path is raced: single
// commits in each durability mode, batches (journaled, streamed through the
// slots, and mapped), and commits filled by Append.
//
// Deliberately racy (the mutator writes while the library reads): not in the
// ThreadSanitizer pass (tests/CMakeLists.txt, concurrency_cases).
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "regionstore/checkpoint.h"
#include "regionstore/store.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

#ifdef REGIONCTL_PATH
#include "support/regionctl_runner.h"
#endif

namespace regionstore::testing {
namespace {

// Above the mapped path's one-pass threshold (16 KiB): the commit copies and
// hashes block by block, the path with the narrowest window.
constexpr uint64_t kPayloadBytes = 64 * kKiB;

uint64_t Rounds() { return ScaledCount(1000); }

// A buffer one thread commits while another rewrites it: one 8-byte word per
// 64-byte line, over and over, so every block changes within a microsecond.
// Word stores are relaxed atomics: the race is with the library's plain
// reads, which is what is under test.
class RacingSource {
 public:
  explicit RacingSource(size_t bytes) : bytes_(bytes) {
    for (size_t i = 0; i < bytes_.size(); ++i) bytes_[i] = static_cast<std::byte>(i * 31);
    mutator_ = std::thread([this] { Mutate(); });
  }
  ~RacingSource() {
    stop_.store(true, std::memory_order_relaxed);
    mutator_.join();
  }
  RacingSource(const RacingSource&) = delete;
  RacingSource& operator=(const RacingSource&) = delete;

  std::span<const std::byte> bytes() const { return bytes_; }
  std::span<const std::byte> first(size_t n) const { return bytes().first(n); }
  std::span<const std::byte> subspan(size_t at, size_t n) const { return bytes().subspan(at, n); }
  // Sweeps the mutator has completed: proof it ran beside the commits.
  uint64_t sweeps() const { return sweeps_.load(std::memory_order_relaxed); }

 private:
  void Mutate() {
    uint64_t value = 1;
    while (!stop_.load(std::memory_order_relaxed)) {
      for (size_t at = 0; at + 8 <= bytes_.size(); at += 64) {
        __atomic_store_n(reinterpret_cast<uint64_t*>(bytes_.data() + at), value++,
                         __ATOMIC_RELAXED);
      }
      sweeps_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  std::vector<std::byte> bytes_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sweeps_{0};
  std::thread mutator_;
};

// Rounds whose returned generation the next Load did not return, with the
// first few descriptions.
struct Misses {
  uint64_t rounds = 0, missed = 0;
  std::vector<std::string> examples;
  void Note(std::string what) {
    if (examples.size() < 5) examples.push_back(std::move(what));
  }
};

// Load of `region` must return `generation`, nothing skipped; false (and a
// note in `misses`) if it does not.
bool Loads(const Store& store, std::string_view region, uint64_t generation,
           std::vector<std::byte>& out, Misses& misses, const std::string& where) {
  auto meta = store.Load(region, out);
  if (!meta.ok()) {
    misses.Note(where + ": " + std::string(region) + " generation " + std::to_string(generation) +
                " returned, Load failed: " + meta.status().ToString());
  } else if (meta->generation != generation || meta->skipped_torn_generation != 0) {
    misses.Note(where + ": " + std::string(region) + " generation " + std::to_string(generation) +
                " returned, Load gave " + std::to_string(meta->generation) + " (skipped torn " +
                std::to_string(meta->skipped_torn_generation) + ")");
  } else {
    return true;
  }
  return false;
}

// A round ends with every member's Load: one that does not return its
// generation counts the round as missed.
void EndRound(Misses& misses, std::initializer_list<bool> loaded) {
  ++misses.rounds;
  for (bool ok : loaded) {
    if (!ok) {
      ++misses.missed;
      return;
    }
  }
}

void Report(const Misses& misses, const std::string& what) {
  INFO(what << ": " << misses.missed << " of " << misses.rounds << " rounds missed");
  for (const std::string& example : misses.examples) UNSCOPED_INFO(example);
  CHECK(misses.missed == 0);
}

// Every slot of every region valid or empty: no torn payload anywhere, a
// commit in each region named in `committed`, and regionctl verify (when
// built) exits 0.
void CheckVerifies(const std::string& path, std::initializer_list<std::string_view> committed) {
  auto report = VerifyRegions(path);
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  for (const RegionReport& region : report->regions) {
    INFO("region " << region.name);
    if (std::find(committed.begin(), committed.end(), region.name) != committed.end()) {
      CHECK(region.has_commit);
    }
    CHECK_FALSE(region.torn);
    CHECK_FALSE(region.damaged);
    for (const SlotReport& slot : region.slots) {
      INFO("slot " << slot.index << ": " << SlotStateName(slot.state) << " " << slot.reason);
      CHECK((slot.state == SlotState::kValid || slot.state == SlotState::kEmpty));
    }
  }
#ifdef REGIONCTL_PATH
  const ProcessResult verify = Regionctl({"verify", path});
  INFO(verify.stdout_bytes << verify.stderr_bytes);
  CHECK(verify.exit_code == kExitSuccess);
#endif
}

void CreateStore(const std::string& path, uint32_t protocol, uint64_t capacity,
                 uint64_t journal_size = 0) {
  CreateOptions options;
  options.protocol = protocol;
  options.batch_log = true;
  options.journal_size = journal_size;
  options.checkpoints = {{"a", capacity}, {"b", capacity}};
  const Status s = Store::Create(path, 64 * kKiB, options);
  INFO(s.ToString());
  REQUIRE(s.ok());
}

TEST_CASE("A commit racing a thread that rewrites its source returns a generation Load returns",
          "[racing][checkpoint][long]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateStore(path, 2, kPayloadBytes);
  RacingSource source(kPayloadBytes);
  std::vector<std::byte> out;
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    for (Durability mode : kAllModes) {
      const std::string where(DurabilityName(mode));
      Misses misses;
      for (uint64_t round = 0; round < Rounds(); ++round) {
        // Alternately one piece and two, so both payload shapes race.
        Result<uint64_t> generation =
            round % 2 == 0 ? store.Commit("a", source.bytes(), mode) : [&] {
              const std::array<std::span<const std::byte>, 2> pieces{
                  source.first(kPayloadBytes / 3),
                  source.subspan(kPayloadBytes / 3, kPayloadBytes - kPayloadBytes / 3)};
              return store.CommitPieces("a", pieces, mode);
            }();
        REQUIRE(generation.ok());
        EndRound(misses, {Loads(store, "a", *generation, out, misses, where)});
      }
      Report(misses, where + " commits");
    }
  }
  CHECK(source.sweeps() > 0);
  CheckVerifies(path, {"a"});
}

// Batches of both regions in every mode on `path`; `what` names the path.
void RaceBatches(const std::string& path, uint64_t member_bytes, const std::string& what) {
  RacingSource source(2 * member_bytes);
  std::vector<std::byte> out;
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    for (Durability mode : kAllModes) {
      const std::string where = what + ", " + std::string(DurabilityName(mode));
      Misses misses;
      for (uint64_t round = 0; round < Rounds(); ++round) {
        const std::array<std::span<const std::byte>, 1> a{source.first(member_bytes)};
        const std::array<std::span<const std::byte>, 1> b{
            source.subspan(member_bytes, member_bytes)};
        const std::array<BatchMember, 2> members{BatchMember{"a", a}, BatchMember{"b", b}};
        auto generations = store.CommitBatch(members, mode);
        INFO(generations.status().ToString());
        REQUIRE(generations.ok());
        const bool a_loads = Loads(store, "a", (*generations)[0], out, misses, where);
        const bool b_loads = Loads(store, "b", (*generations)[1], out, misses, where);
        EndRound(misses, {a_loads, b_loads});
      }
      Report(misses, where + " batches");
    }
  }
  CHECK(source.sweeps() > 0);
  CheckVerifies(path, {"a", "b"});
}

TEST_CASE("A batch racing a thread that rewrites its sources returns generations Load returns",
          "[racing][batch][long]") {
  TempDir dir;
  SECTION("protocol 2: durable batches go through the journal") {
    const std::string path = dir.File("journal.rgn");
    CreateStore(path, 2, kPayloadBytes);
    RaceBatches(path, kPayloadBytes, "protocol 2");
  }
  SECTION("protocol 2: durable batches too large for the journal stream into their slots") {
    // A 256 KiB journal takes records up to 128 KiB: two 96 KiB members
    // do not fit.
    const std::string path = dir.File("large.rgn");
    CreateStore(path, 2, 96 * kKiB, 256 * kKiB);
    RaceBatches(path, 96 * kKiB, "protocol 2, past half the journal");
  }
  SECTION("protocol 1: durable batches stream into their slots") {
    const std::string path = dir.File("p1.rgn");
    CreateStore(path, 1, kPayloadBytes);
    RaceBatches(path, kPayloadBytes, "protocol 1");
  }
}

TEST_CASE("A commit filled by Append racing a thread that rewrites its source loads as returned",
          "[racing][inplace][long]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  CreateStore(path, 2, kPayloadBytes);
  RacingSource source(kPayloadBytes);
  std::vector<std::byte> out;
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    for (Durability mode : kAllModes) {
      const std::string where(DurabilityName(mode));
      Misses single, batches;
      for (uint64_t round = 0; round < Rounds(); ++round) {
        if (round % 2 == 0) {
          auto pending = store.BeginCommit("a", kPayloadBytes);
          REQUIRE(pending.ok());
          // In two appends, as regionctl streams a file.
          REQUIRE(pending->Append(source.first(kPayloadBytes / 2)).ok());
          REQUIRE(pending->Append(source.subspan(kPayloadBytes / 2, kPayloadBytes / 2)).ok());
          auto generation = pending->Finish(mode);
          REQUIRE(generation.ok());
          EndRound(single, {Loads(store, "a", *generation, out, single, where)});
        } else {
          const std::array<BatchReservation, 2> reservations{
              BatchReservation{"a", kPayloadBytes / 2}, BatchReservation{"b", kPayloadBytes / 2}};
          auto pending = store.BeginBatch(reservations);
          REQUIRE(pending.ok());
          REQUIRE(pending->Append(0, source.first(kPayloadBytes / 2)).ok());
          REQUIRE(pending->Append(1, source.subspan(kPayloadBytes / 2, kPayloadBytes / 2)).ok());
          auto generations = pending->Finish(mode);
          INFO(generations.status().ToString());
          REQUIRE(generations.ok());
          const bool a_loads = Loads(store, "a", (*generations)[0], out, batches, where);
          const bool b_loads = Loads(store, "b", (*generations)[1], out, batches, where);
          EndRound(batches, {a_loads, b_loads});
        }
      }
      Report(single, where + " appended commits");
      Report(batches, where + " appended batches");
    }
  }
  CHECK(source.sweeps() > 0);
  CheckVerifies(path, {"a", "b"});
}

}  // namespace
}  // namespace regionstore::testing
