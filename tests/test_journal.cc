// Protocol 2's batch journal (docs/CHECKPOINTS.md, "Batches: a journal in
// every store"): the system calls of a durable batch, counted at the
// syscall level; the record codec; the journal starting over; a batch too
// large for it; and the replay of a writer's open after the members were
// lost from the page cache. The power-loss proof is
// tests/test_batch_power_loss.cc's protocol 2 case.
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "batch.h"
#include "format.h"
#include "intent.h"
#include "journal.h"
#include "regionstore/store.h"
#include "slot.h"
#include "support/commit_payloads.h"
#include "support/files.h"
#include "support/regionctl_runner.h"
#include "support/store_fixtures.h"
#include "support/syscall_hook.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

#ifdef REGIONCTL_PATH  // tests/CMakeLists.txt: the tool, and nlohmann-json with it
#include <nlohmann/json.hpp>
#endif

namespace regionstore::testing {
namespace {

// "r0", "r1", ... (built with snprintf: gcc 12 warns wrongly about
// "r" + std::to_string(r) once inlined).
std::string Name(size_t r) {
  char name[24];
  std::snprintf(name, sizeof name, "r%zu", r);
  return name;
}

std::vector<CheckpointSpec> Regions(size_t count, uint64_t capacity) {
  std::vector<CheckpointSpec> regions;
  for (size_t r = 0; r < count; ++r) regions.push_back({Name(r), capacity});
  return regions;
}

void CreateJournalStore(const std::string& path, size_t regions, uint64_t capacity,
                        uint64_t journal_size = 0) {
  CreateOptions options;
  options.protocol = 2;
  options.journal_size = journal_size;
  options.checkpoints = Regions(regions, capacity);
  const Status created = Store::Create(path, 64 * kKiB, options);
  INFO(created.ToString());
  REQUIRE(created.ok());
}

std::vector<std::byte> Payload(uint64_t length, uint64_t n, uint64_t r) {
  std::vector<std::byte> out;
  FillPayload({n, r + 100}, length, out);
  return out;
}

// Batch `n` of `length` bytes into regions 0 .. count-1.
Result<std::vector<uint64_t>> Batch(Store& store, size_t count, uint64_t length, uint64_t n,
                                    Durability mode) {
  std::vector<std::vector<std::byte>> payloads;
  std::vector<std::span<const std::byte>> pieces;
  std::vector<std::string> names;
  for (size_t r = 0; r < count; ++r) {
    payloads.push_back(Payload(length, n, r));
    names.push_back(Name(r));
  }
  for (const auto& payload : payloads) pieces.emplace_back(payload);
  std::vector<BatchMember> members;
  for (size_t r = 0; r < count; ++r) {
    members.push_back({names[r], PayloadPieces(&pieces[r], 1)});
  }
  return store.CommitBatch(members, mode);
}

void CheckBatch(const Store& store, size_t count, uint64_t length, uint64_t n) {
  for (size_t r = 0; r < count; ++r) {
    INFO("region r" << r << ", batch " << n);
    CHECK(MustLoad(store, Name(r)) == Payload(length, n, r));
  }
}

// Neither the library's verify nor regionctl's calls anything in the
// journal of the store at `path` damage (exit 0, a schema-valid document).
void CheckNoJournalDamage(const std::string& path) {
  auto verified = VerifyRegions(path);
  REQUIRE(verified.ok());
  CHECK(verified->damaged_journal_records.empty());
#ifdef REGIONCTL_PATH
  const ProcessResult result = Regionctl({"verify", path, "--json"});
  INFO(result.stderr_bytes);
  CHECK(result.exit_code == kExitSuccess);
  RequireMatchesSchema("verify", result);
  CHECK(ParseJson(result)["damaged_journal_records"].empty());
#endif
}

TEST_CASE("A durable batch of 16 x 4 KiB is one RWF_DSYNC write of its record and no fdatasync",
          "[journal][protocol2]") {
  TempDir dir;
  const std::string path = dir.File("j.rgn");
  CreateJournalStore(path, 16, 4 * kKiB);
  Store store = MustOpen(path, OpenMode::kReadWrite);
  REQUIRE(store.info().journal_size == format::kDefaultJournalSize);
  REQUIRE(Batch(store, 16, 4096, 1, Durability::kSync).ok());
  for (const Durability mode : {Durability::kSync, Durability::kPwriteFdatasync}) {
    INFO("mode " << DurabilityName(mode));
    SyscallHook hook;
    REQUIRE(Batch(store, 16, 4096, mode == Durability::kSync ? 2 : 3, mode).ok());
    const std::vector<SyscallCall> calls = hook.Calls();
    int dsync = 0, plain = 0, syncs = 0;
    for (const SyscallCall& call : calls) {
      if (call.call == Syscall::kPwritev2 && (call.flags & RWF_DSYNC) != 0) {
        ++dsync;
        // The record: a 4 KiB head (the headers in it), then 16 x 4 KiB.
        CHECK(call.length == 4096 + 16 * 4096);
      } else if (call.call == Syscall::kPwrite || call.call == Syscall::kPwritev ||
                 call.call == Syscall::kPwritev2) {
        ++plain;
      } else if (call.call == Syscall::kFdatasync || call.call == Syscall::kFsync ||
                 call.call == Syscall::kMsync) {
        ++syncs;
      }
    }
    CHECK(dsync == 1);
    CHECK(syncs == 0);
    // Into the page cache: each member's payload and header, the log's record.
    CHECK(plain == 16 * 2 + 1);
  }
  CheckBatch(store, 16, 4096, 3);
  CHECK(store.Stats().journal_checkpoints == 0);
}

TEST_CASE("A batch too large for half the journal takes protocol 1's path",
          "[journal][protocol2]") {
  TempDir dir;
  const std::string path = dir.File("j.rgn");
  CreateJournalStore(path, 4, 64 * kKiB, 256 * kKiB);
  Store store = MustOpen(path, OpenMode::kReadWrite);
  SyscallHook hook;
  // 4 + 4 x 64 KiB = 260 KiB of record: more than 128 KiB.
  REQUIRE(Batch(store, 4, 64 * kKiB, 1, Durability::kSync).ok());
  int dsync = 0, fdatasync = 0;
  for (const SyscallCall& call : hook.Calls()) {
    if (call.call == Syscall::kPwritev2 && (call.flags & RWF_DSYNC) != 0) ++dsync;
    if (call.call == Syscall::kFdatasync) ++fdatasync;
  }
  CHECK(dsync == 0);
  CHECK(fdatasync == 1);
  CheckBatch(store, 4, 64 * kKiB, 1);
}

TEST_CASE("A full journal costs one fdatasync and starts over, and every batch stays",
          "[journal][protocol2]") {
  TempDir dir;
  const std::string path = dir.File("j.rgn");
  // 4 + 2 x 4 KiB = 12 KiB a record: 21 fit in 256 KiB.
  CreateJournalStore(path, 2, 4 * kKiB, 256 * kKiB);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    for (uint64_t n = 1; n <= 30; ++n) {
      REQUIRE(Batch(store, 2, 4096, n, Durability::kPwriteFdatasync).ok());
      CheckBatch(store, 2, 4096, n);
    }
    // Every 32 batch ids a watermark needs whole-file barriers too
    // (batch_log_barriers): the journal fills first here, twice.
    CHECK(store.Stats().journal_checkpoints == 1);
  }
  Store again = MustOpen(path, OpenMode::kReadWrite);
  CheckBatch(again, 2, 4096, 30);
  CheckNothingDamaged(path);
}

TEST_CASE("A writer's open replays journaled batches whose members never reached their slots",
          "[journal][protocol2]") {
  TempDir dir;
  const std::string path = dir.File("j.rgn");
  CreateJournalStore(path, 3, 4 * kKiB);
  std::vector<uint64_t> units;
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(Batch(store, 3, 1000, 1, Durability::kSync).ok());
    REQUIRE(Batch(store, 3, 3000, 2, Durability::kPwriteFdatasync).ok());
    for (const RegionEntry& region : store.info().regions) {
      for (uint32_t s = 0; s < region.slot_count; ++s) {
        units.push_back(slot::HeaderFileOffset(region, s));
      }
    }
  }
  // What a power loss leaves when neither batch's members were written
  // back: batch 1's slots hold it (the open's barrier made them durable?
  // no: nothing synced them), so zero every slot header and the batch log
  // instead, the worst case. The journal still holds both records.
  for (const uint64_t unit : units) PwriteFile(path, unit, std::vector<std::byte>(64));
  {
    const StoreInfo info = *ReadStoreInfo(path);
    PwriteFile(path, *batch::LogOffset(info), std::vector<std::byte>(format::kBatchLogSize));
    std::filesystem::remove(path + ".shm");  // a power loss takes the sidecar too
    // And the reboot: the writer's open recorded this boot as the one that
    // replayed the journal; after a reboot that record names another boot,
    // so readers take the journal's commits (regionctl below runs with this
    // machine's boot id).
    const uint64_t at = *intent::AreaOffset(info) + intent::kSidecarEntry * intent::kEntrySize;
    std::optional<intent::Entry> identity =
        intent::DecodeEntry(PreadFile(path, at, intent::kEntrySize));
    REQUIRE(identity.has_value());
    identity->boot_id[0] ^= std::byte{0xff};
    const intent::EntryBytes encoded = intent::EncodeEntry(*identity);
    PwriteFile(path, at, std::vector<std::byte>(encoded.begin(), encoded.end()));
  }
  {
    // A reader that opens first, after the reboot, sees what the writer's
    // replay will give: the newest journaled batch, one by one and as a set.
    TestIo rebooted;
    rebooted.SetBootId(std::array<std::byte, 16>{std::byte{0x42}});
    Store reader = MustOpen(path, OpenMode::kReadOnly, &rebooted);
    CheckBatch(reader, 3, 3000, 2);
    const std::string_view names[] = {"r0", "r1", "r2"};
    std::vector<std::vector<std::byte>> outs;
    auto set = reader.LoadSet(names, outs);
    INFO(set.status().ToString());
    REQUIRE(set.ok());
    for (size_t r = 0; r < 3; ++r) {
      CHECK((*set)[r].generation == 2);
      CHECK(outs[r] == Payload(3000, 2, r));
    }
  }
#ifdef REGIONCTL_PATH
  // regionctl's documents of the state match their schemas and show the
  // members held by the journal alone.
  for (const std::string verb : {"inspect", "verify"}) {
    const ProcessResult result = Regionctl({verb, path, "--json"});
    INFO(verb << ": " << result.stderr_bytes);
    CHECK(result.exit_code == kExitSuccess);
    RequireMatchesSchema(verb, result);
    const nlohmann::json document = ParseJson(result);
    for (const nlohmann::json& region : document["regions"]) {
      CHECK(region["journaled"] == true);
      CHECK(region["generation"] == 2);
    }
  }
#endif
  Store reopened = MustOpen(path, OpenMode::kReadWrite);
  CheckBatch(reopened, 3, 3000, 2);
  CheckNothingDamaged(path);
  // Generations carry on above the replayed ones.
  auto next = Batch(reopened, 3, 10, 3, Durability::kNone);
  REQUIRE(next.ok());
  CHECK((*next)[0] == 3);
}

// What a reboot leaves of the writer's own record: the sidecar goes with
// the power, and the store's sidecar identity names another boot, so readers
// and verify take the journal's commits until a writer opens the store.
void SimulateReboot(const std::string& path) {
  const StoreInfo info = *ReadStoreInfo(path);
  std::filesystem::remove(path + ".shm");
  const uint64_t at = *intent::AreaOffset(info) + intent::kSidecarEntry * intent::kEntrySize;
  std::optional<intent::Entry> identity =
      intent::DecodeEntry(PreadFile(path, at, intent::kEntrySize));
  REQUIRE(identity.has_value());
  identity->boot_id[0] ^= std::byte{0xff};
  const intent::EntryBytes encoded = intent::EncodeEntry(*identity);
  PwriteFile(path, at, std::vector<std::byte>(encoded.begin(), encoded.end()));
}

// A lost writeback: the header of `region`'s slot holding `generation` is
// zero on disk.
void LoseSlotHeader(const std::string& path, uint32_t region, uint64_t generation) {
  const StoreInfo info = *ReadStoreInfo(path);
  const RegionEntry& entry = info.regions[region];
  int lost = 0;
  for (uint32_t s = 0; s < entry.slot_count; ++s) {
    const std::vector<std::byte> bytes = PreadFile(path, slot::HeaderFileOffset(entry, s), 64);
    slot::HeaderBytes header;
    std::copy(bytes.begin(), bytes.end(), header.begin());
    const slot::DecodedHeader decoded =
        slot::DecodeHeader(header, region, s, entry.capacity, /*batch_ids=*/true);
    if (decoded.kind == slot::DecodedHeader::Kind::kValid &&
        decoded.header.generation == generation) {
      PwriteFile(path, slot::HeaderFileOffset(entry, s), std::vector<std::byte>(64));
      ++lost;
    }
  }
  REQUIRE(lost == 1);
}

// The journal's chain as it lies from its start (offset, id), read before
// anything is damaged: whole records, each id above the one before.
std::vector<std::pair<uint64_t, uint64_t>> JournalRecords(const std::string& path) {
  const StoreInfo info = *ReadStoreInfo(path);
  const uint64_t start = *journal::Offset(info);
  std::vector<std::pair<uint64_t, uint64_t>> records;
  for (uint64_t pos = 0; pos < info.journal_size;) {
    const std::vector<std::byte> first = PreadFile(path, start + pos, journal::kUnit);
    const auto length = journal::RecordLength(first, info.journal_size - pos);
    if (!length) break;
    const auto record = journal::DecodeRecord(PreadFile(path, start + pos, *length), info);
    if (!record || (!records.empty() && record->id <= records.back().second)) break;
    records.emplace_back(start + pos, record->id);
    pos += *length;
  }
  return records;
}

// A store at `path` with two regions of 4 KiB and two durable batches of
// both, each one journal record; the records' offsets and lengths.
std::vector<std::pair<uint64_t, uint64_t>> TwoJournaledBatches(const std::string& path) {
  CreateJournalStore(path, 2, 4 * kKiB);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(Batch(store, 2, 4096, 1, Durability::kSync).ok());
    REQUIRE(Batch(store, 2, 4096, 2, Durability::kSync).ok());
  }
  auto records = JournalRecords(path);
  REQUIRE(records.size() == 2);
  return records;
}

void FlipByte(const std::string& path, uint64_t at, std::byte mask) {
  std::vector<std::byte> byte = PreadFile(path, at, 1);
  byte[0] ^= mask;
  PwriteFile(path, at, byte);
}

TEST_CASE("A damaged older journal record is reported by verify and the newer batch still loads",
          "[journal][protocol2]") {
  // The byte flipped in the first, already applied record: in a payload; in
  // its length, to another plausible length (0x3000 -> 0x2000), so that
  // the newer record is found by its magic; in the magic itself.
  struct Damage {
    const char* what;
    uint64_t at;
    std::byte mask;
  };
  const Damage damages[] = {{"a payload byte", journal::kUnit + 10, std::byte{0x40}},
                            {"the length", journal::head::kLength + 1, std::byte{0x10}},
                            {"the magic", 0, std::byte{0x01}}};
  for (const Damage& damage : damages) {
    INFO("damaged: " << damage.what);
    TempDir dir;
    const std::string path = dir.File("j.rgn");
    const auto records = TwoJournaledBatches(path);
    // 4 KiB of head and two 4 KiB images each.
    REQUIRE(records[1].first - records[0].first == 3 * journal::kUnit);
    LoseSlotHeader(path, 1, 2);
    FlipByte(path, records[0].first + damage.at, damage.mask);
    SimulateReboot(path);

    // The library: verify names the record, a reader after the reboot and
    // the writer's replay give batch 2 in both regions.
    auto verified = VerifyRegions(path);
    REQUIRE(verified.ok());
    REQUIRE(verified->damaged_journal_records.size() == 1);
    const DamagedJournalRecord& bad = verified->damaged_journal_records[0];
    CHECK(bad.file_offset == records[0].first);
    CHECK(bad.length == 3 * journal::kUnit);
    CHECK(bad.batch_id == (damage.at == 0 ? 0 : records[0].second));
    CHECK(bad.next_batch_id == records[1].second);
    {
      TestIo rebooted;
      rebooted.SetBootId(std::array<std::byte, 16>{std::byte{0x42}});
      Store reader = MustOpen(path, OpenMode::kReadOnly, &rebooted);
      CheckBatch(reader, 2, 4096, 2);
    }
#ifdef REGIONCTL_PATH
    const ProcessResult result = Regionctl({"verify", path, "--json"});
    INFO(result.stderr_bytes);
    CHECK(result.exit_code == kExitInvalidStore);
    RequireMatchesSchema("verify", result);
    const nlohmann::json document = ParseJson(result);
    CHECK(document["ok"] == false);
    REQUIRE(document["damaged_journal_records"].size() == 1);
    const nlohmann::json& reported = document["damaged_journal_records"][0];
    CHECK(reported["file_offset"] == records[0].first);
    CHECK(reported["next_batch_id"] == records[1].second);
    if (damage.at == 0) {
      CHECK(reported["batch_id"].is_null());
    } else {
      CHECK(reported["batch_id"] == records[0].second);
    }
    CHECK(result.stderr_bytes.find("batch journal's record at file offset " +
                                   std::to_string(records[0].first)) != std::string::npos);
    for (const nlohmann::json& region : document["regions"]) CHECK(region["generation"] == 2);
    const ProcessResult human = Regionctl({"verify", path});
    CHECK(human.exit_code == kExitInvalidStore);
    CHECK(human.stdout_bytes.find("ok: every checksum verified") == std::string::npos);
#endif
    Store writer = MustOpen(path, OpenMode::kReadWrite);
    CheckBatch(writer, 2, 4096, 2);
  }
}

TEST_CASE("A torn last journal record is the chain's end, not damage", "[journal][protocol2]") {
  TempDir dir;
  const std::string path = dir.File("j.rgn");
  const auto records = TwoJournaledBatches(path);
  // Batch 2's write never returned: its record is torn (a payload unit and
  // its head's length disagree with what is on disk), and no member reached
  // its slot.
  FlipByte(path, records[1].first + journal::kUnit + 100, std::byte{0x08});
  LoseSlotHeader(path, 0, 2);
  LoseSlotHeader(path, 1, 2);
  SimulateReboot(path);
  CheckNoJournalDamage(path);
  Store writer = MustOpen(path, OpenMode::kReadWrite);
  CheckBatch(writer, 2, 4096, 1);
}

TEST_CASE(
    "Records from before the journal started over are not damage, nor a torn record over them",
    "[journal][protocol2][long]") {
  // 4 + 2 x 4 KiB = 12 KiB a record: 21 fit in 256 KiB, so batch 22 starts
  // the journal over and the records of batches 2 to 21 lie past the chain.
  for (const uint64_t batches : {uint64_t{22}, uint64_t{25}}) {
    for (const bool torn : {false, true}) {
      INFO(batches << " batches, the last one's record " << (torn ? "torn" : "whole"));
      TempDir dir;
      const std::string path = dir.File("j.rgn");
      CreateJournalStore(path, 2, 4 * kKiB, 256 * kKiB);
      std::vector<std::pair<uint64_t, uint64_t>> round1;
      {
        Store store = MustOpen(path, OpenMode::kReadWrite);
        for (uint64_t n = 1; n <= batches; ++n) {
          if (n == 22) round1 = JournalRecords(path);
          REQUIRE(Batch(store, 2, 4096, n, Durability::kSync).ok());
        }
        REQUIRE(store.Stats().journal_checkpoints == 1);
      }
      REQUIRE(round1.size() == 21);
      const auto chain = JournalRecords(path);
      REQUIRE(chain.size() == batches - 21);
      uint64_t expected = batches;
      if (torn) {
        // Its head reached the disk, a payload unit did not.
        FlipByte(path, chain.back().first + journal::kUnit + 7, std::byte{0x80});
        LoseSlotHeader(path, 0, batches);
        LoseSlotHeader(path, 1, batches);
        expected = batches - 1;
      }
      SimulateReboot(path);
      CheckNoJournalDamage(path);
      Store writer = MustOpen(path, OpenMode::kReadWrite);
      CheckBatch(writer, 2, 4096, expected);
    }
  }
}

TEST_CASE("A journal record decodes whole, and any changed byte makes it nothing",
          "[journal][protocol2]") {
  TempDir dir;
  const std::string path = dir.File("j.rgn");
  CreateJournalStore(path, 2, 5000);
  const StoreInfo info = *ReadStoreInfo(path);
  const std::vector<std::byte> a = Payload(5000, 1, 0), b = Payload(1, 1, 1);
  const std::vector<journal::Member> members = {{0, 1, 7, a.size()}, {1, 2, 3, b.size()}};
  std::vector<slot::HeaderBytes> headers;
  for (const journal::Member& m : members) {
    slot::Header header;
    header.region = m.region;
    header.slot = m.slot;
    header.generation = m.generation;
    header.length = m.length;
    header.payload_checksum = format::Checksum(m.region == 0 ? a : b);
    header.batch_id = 9;
    headers.push_back(slot::EncodeHeader(header));
  }
  const std::span<const std::byte> pa(a), pb(b);
  const std::vector<PayloadPieces> payloads = {PayloadPieces(&pa, 1), PayloadPieces(&pb, 1)};
  std::vector<std::byte> record;
  journal::EncodeRecord(9, members, headers, payloads, record);
  CHECK(record.size() == 4096 + 8192 + 4096);
  CHECK(journal::RecordLength(record, record.size()) == record.size());
  const auto decoded = journal::DecodeRecord(record, info);
  REQUIRE(decoded.has_value());
  CHECK(decoded->id == 9);
  CHECK(decoded->members == members);
  CHECK(decoded->image_offsets == std::vector<uint64_t>{4096, 4096 + 8192});
  CHECK(decoded->headers == headers);
  // One byte in the head, in a header, in a payload, in padding.
  for (const uint64_t at : {uint64_t{20}, uint64_t{50}, uint64_t{40 + 24 + 10},
                            uint64_t{4096 + 4999}, uint64_t{4096 + 5000}, record.size() - 1}) {
    INFO("byte " << at);
    std::vector<std::byte> changed = record;
    changed[at] ^= std::byte{0x40};
    CHECK_FALSE(journal::DecodeRecord(changed, info).has_value());
  }
  // A record cut short, or read past its end.
  CHECK_FALSE(journal::DecodeRecord(std::span(record).first(record.size() - 4096), info));
  CHECK_FALSE(journal::RecordLength(record, record.size() - 4096).has_value());
}

// Batch `id`'s record over payloads `a` (region 0, slot 1) and `b` (region
// 1, slot 2), generation `id` of both.
std::vector<std::byte> RecordOf(uint64_t id, const std::vector<std::byte>& a,
                                const std::vector<std::byte>& b) {
  const std::vector<journal::Member> members = {{0, 1, id, a.size()}, {1, 2, id, b.size()}};
  std::vector<slot::HeaderBytes> headers;
  for (const journal::Member& m : members) {
    slot::Header header;
    header.region = m.region;
    header.slot = m.slot;
    header.generation = m.generation;
    header.length = m.length;
    header.payload_checksum = format::Checksum(m.region == 0 ? a : b);
    header.batch_id = id;
    headers.push_back(slot::EncodeHeader(header));
  }
  const std::span<const std::byte> pa(a), pb(b);
  const std::vector<PayloadPieces> payloads = {PayloadPieces(&pa, 1), PayloadPieces(&pb, 1)};
  std::vector<std::byte> record;
  journal::EncodeRecord(id, members, headers, payloads, record);
  return record;
}

TEST_CASE("A record's image inside an earlier round's payload is never taken for a record",
          "[journal][protocol2]") {
  TempDir dir;
  const std::string path = dir.File("j.rgn");
  CreateJournalStore(path, 2, 16 * kKiB, 256 * kKiB);
  const StoreInfo info = *ReadStoreInfo(path);
  // A caller's payload that holds, at a unit boundary of the record it is
  // journaled in, the image of a whole record of a batch far ahead (50).
  const std::vector<std::byte> forged = RecordOf(50, Payload(1, 50, 0), Payload(1, 50, 1));
  REQUIRE(forged.size() == 3 * journal::kUnit);
  std::vector<std::byte> carrier = Payload(16 * kKiB, 3, 0);
  std::copy(forged.begin(), forged.end(), carrier.begin());
  // The journal after a crash: batch 10's record at its start (the chain),
  // then batch 3's from the round before, which carries the image.
  std::vector<std::byte> journal_bytes(info.journal_size);
  const std::vector<std::byte> newest = RecordOf(10, Payload(100, 10, 0), Payload(100, 10, 1));
  const std::vector<std::byte> earlier = RecordOf(3, carrier, Payload(100, 3, 1));
  std::copy(newest.begin(), newest.end(), journal_bytes.begin());
  std::copy(earlier.begin(), earlier.end(), journal_bytes.begin() + newest.size());
  const journal::ReadAt read = [&](uint64_t offset, std::span<std::byte> out) {
    std::copy_n(journal_bytes.begin() + static_cast<std::ptrdiff_t>(offset), out.size(),
                out.begin());
    return Status::Ok();
  };
  const batch::Watermark unclean{.w = 2, .sequence = 1, .clean = false};
  auto chain = journal::ReadChain(read, info, 0, unclean);
  REQUIRE(chain.ok());
  REQUIRE(chain->records.size() == 1);
  CHECK(chain->records[0].record.id == 10);
  CHECK(chain->damaged.empty());
  // Control, and the case docs/FORMAT.md leaves open: right behind damage
  // (batch 10's head unit lost) the search reads every unit, so the same
  // image there is taken for the newer record it looks like.
  std::vector<std::byte> damaged_head = journal_bytes;
  std::fill_n(damaged_head.begin(), journal::kUnit, std::byte{0});
  std::copy(forged.begin(), forged.end(), damaged_head.begin() + journal::kUnit);
  const journal::ReadAt read_damaged = [&](uint64_t offset, std::span<std::byte> out) {
    std::copy_n(damaged_head.begin() + static_cast<std::ptrdiff_t>(offset), out.size(),
                out.begin());
    return Status::Ok();
  };
  auto found = journal::ReadChain(read_damaged, info, 0, unclean);
  REQUIRE(found.ok());
  REQUIRE(found->records.size() == 1);
  CHECK(found->records[0].record.id == 50);
  CHECK(found->damaged.size() == 1);
}

TEST_CASE("Create refuses a journal outside protocol 2 or of a size that cannot be",
          "[journal][protocol2]") {
  TempDir dir;
  CreateOptions options;
  options.protocol = 1;
  options.journal_size = 1 * kMiB;
  CHECK(Store::Create(dir.File("a.rgn"), 0, options).code() == StatusCode::kInvalidArgument);
  options.protocol = 2;
  for (const uint64_t size : {uint64_t{128 * kKiB}, uint64_t{300 * kKiB}, uint64_t{2} << 30}) {
    options.journal_size = size;
    CHECK(Store::Create(dir.File("b.rgn"), 0, options).code() == StatusCode::kInvalidArgument);
  }
  CHECK_FALSE(std::filesystem::exists(dir.File("a.rgn")));
  CHECK_FALSE(std::filesystem::exists(dir.File("b.rgn")));
  options.journal_size = 320 * kKiB;
  REQUIRE(Store::Create(dir.File("c.rgn"), 0, options).ok());
  CHECK(ReadStoreInfo(dir.File("c.rgn"))->journal_size == 320 * kKiB);
  CHECK((ReadStoreInfo(dir.File("c.rgn"))->incompat_flags & format::kIncompatJournal) != 0);
}

}  // namespace
}  // namespace regionstore::testing
