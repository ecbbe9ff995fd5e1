#include "golden/spec_decoder.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "golden/golden_expected.h"
#include "golden/golden_writer.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "support/files.h"
#include "support/temp_dir.h"

namespace regionstore::testing {

bool AllZeroIn(const std::vector<std::byte>& file, uint64_t begin, uint64_t end) {
  return std::all_of(file.begin() + static_cast<ptrdiff_t>(begin),
                     file.begin() + static_cast<ptrdiff_t>(end),
                     [](std::byte b) { return b == std::byte{0}; });
}

namespace {

uint64_t RoundUp(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

bool PowerOfTwo(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

// FORMAT.md, "Checkpoint slots": the header of slot `s` of region `r`.
// With a batch log, header bytes 48..55 are the batch id, else reserved.
SpecSlot DecodeSpecSlot(const std::vector<std::byte>& file, const SpecRegion& region, uint32_t r,
                        uint32_t s, bool batch_log) {
  SpecSlot slot;
  const uint64_t start = region.slots_offset + uint64_t{s} * region.slot_stride;
  // 64 KiB-aligned: 61440 zero bytes, the header unit, the payload at 64 KiB.
  // Compact: the header unit first, the payload after its 4096 bytes.
  slot.header_offset = region.slot_alignment == 0 ? start + 61440 : start;
  slot.payload_offset = slot.header_offset + 4096;
  const uint64_t h = slot.header_offset;
  if (AllZeroIn(file, h, h + 8)) {
    slot.kind = AllZeroIn(file, h, h + 64) ? SpecSlot::Kind::kEmpty : SpecSlot::Kind::kUnfinished;
    return slot;
  }
  slot.kind = SpecSlot::Kind::kInvalid;
  const uint64_t generation = LoadLE(file, h + 16, 8);
  const uint64_t length = LoadLE(file, h + 24, 8);
  if (std::memcmp(file.data() + h, "RGNSLOT1", 8) != 0) {
    slot.why = "magic";
  } else if (LoadLE(file, h + 56, 8) != XXH3_64bits(file.data() + h, 56)) {
    slot.why = "header_checksum";
  } else if (LoadLE(file, h + 8, 4) != r || LoadLE(file, h + 12, 4) != s) {
    slot.why = "region or slot";
  } else if (generation == 0 || generation > (uint64_t{1} << 63) - 1) {
    slot.why = "generation";
  } else if (length > region.capacity) {
    slot.why = "length";
  } else if (!batch_log && LoadLE(file, h + 48, 8) != 0) {
    slot.why = "reserved";
  } else if (LoadLE(file, h + 40, 8) != XXH3_64bits(file.data() + slot.payload_offset, length)) {
    slot.why = "payload_checksum";
  } else {
    slot.kind = SpecSlot::Kind::kValid;
    slot.generation = generation;
    slot.length = length;
    slot.batch_id = batch_log ? LoadLE(file, h + 48, 8) : 0;
    slot.counts = true;  // until the batch rules say otherwise
  }
  return slot;
}

// FORMAT.md, "Intent area": the batch watermark, from entries 62 and 63.
void DecodeWatermark(const std::vector<std::byte>& file, SpecStore& store) {
  const uint64_t area = store.data_offset - 4096;
  uint64_t best_sequence = 0;
  bool found = false;
  for (uint32_t e : {62u, 63u}) {
    const uint64_t at = area + uint64_t{e} * 64;
    if (LoadLE(file, at, 4) != 4 || LoadLE(file, at + 56, 8) != XXH3_64bits(file.data() + at, 56) ||
        !AllZeroIn(file, at + 12, at + 16) || !AllZeroIn(file, at + 32, at + 40) ||
        !AllZeroIn(file, at + 40, at + 56)) {
      continue;
    }
    store.watermark_entries.push_back(e);
    const uint64_t sequence = LoadLE(file, at + 24, 8);
    if (!found || sequence > best_sequence) {
      found = true;
      best_sequence = sequence;
      store.watermark = LoadLE(file, at + 16, 8);
      store.watermark_clean = LoadLE(file, at + 4, 4) == 1;
    }
  }
}

// FORMAT.md, "Batch log": the units that hold a record.
void DecodeRecords(const std::vector<std::byte>& file, SpecStore& store) {
  for (uint32_t u = 0; u < 32; ++u) {
    const uint64_t at = store.batch_log_offset + uint64_t{u} * 4096;
    if (std::memcmp(file.data() + at, "RGNBATC1", 8) != 0 ||
        LoadLE(file, at + 4088, 8) != XXH3_64bits(file.data() + at, 4088)) {
      continue;
    }
    SpecBatchRecord record;
    record.unit = u;
    record.id = LoadLE(file, at + 8, 8);
    const uint64_t count = LoadLE(file, at + 16, 4);
    if (record.id == 0 || record.id == UINT64_MAX || count == 0 || count > 254 ||
        !AllZeroIn(file, at + 20, at + 24) || !AllZeroIn(file, at + 24 + count * 16, at + 4088)) {
      continue;
    }
    for (uint64_t m = 0; m < count; ++m) {
      const uint64_t e = at + 24 + m * 16;
      record.members.push_back({static_cast<uint32_t>(LoadLE(file, e, 4)),
                                static_cast<uint32_t>(LoadLE(file, e + 4, 4)),
                                LoadLE(file, e + 8, 8)});
    }
    store.records.push_back(std::move(record));
  }
}

// FORMAT.md, "Batch log": whether slot `s` of region `r` (valid) counts; why
// not, in `why`. A chain of more than 64 batches counts as not (only a
// crafted file has one).
bool SlotCounts(const SpecStore& store, uint32_t r, uint32_t s, int depth, std::string& why) {
  const SpecSlot& slot = store.regions[r].slots[s];
  const uint64_t x = slot.batch_id;
  if (x == 0 || x <= store.watermark) return true;
  if (depth > 64) {
    why = "too long a chain of batches";
    return false;
  }
  const SpecBatchRecord* record = nullptr;
  for (const SpecBatchRecord& candidate : store.records) {
    if (candidate.unit == x % 32 && candidate.id == x) record = &candidate;
  }
  if (record == nullptr) {
    why = "no record";
    return false;
  }
  bool named = false;
  for (const SpecBatchMember& m : record->members) {
    named = named || (m.region == r && m.slot == s && m.generation == slot.generation);
  }
  if (!named) {
    why = "the record does not name it";
    return false;
  }
  for (const SpecBatchMember& m : record->members) {
    if (m.region == r && m.slot == s) continue;
    if (m.region >= store.regions.size() || m.slot >= store.regions[m.region].slots.size()) {
      why = "the record names a slot the store lacks";
      return false;
    }
    const SpecRegion& other = store.regions[m.region];
    const SpecSlot& there = other.slots[m.slot];
    if (there.kind == SpecSlot::Kind::kValid && there.generation == m.generation &&
        there.batch_id == x) {
      continue;
    }
    bool moved_on = false;
    for (uint32_t t = 0; t < other.slots.size() && !moved_on; ++t) {
      std::string ignored;
      moved_on = other.slots[t].kind == SpecSlot::Kind::kValid &&
                 other.slots[t].generation > m.generation &&
                 SlotCounts(store, m.region, t, depth + 1, ignored);
    }
    if (!moved_on) {
      why = "a member is missing";
      return false;
    }
  }
  return true;
}

}  // namespace

SpecStore DecodeBySpec(const std::vector<std::byte>& file) {
  SpecStore store;
  auto refuse = [&](std::string why) {
    store.refusal = std::move(why);
    return store;
  };
  if (file.size() < 8 || std::memcmp(file.data(), "RGNSTORE", 8) != 0) return refuse("magic");
  if (file.size() < 4096) return refuse("truncated");
  if (LoadLE(file, 8, 4) != 1) return refuse("format_version");
  store.superblock_checksum = LoadLE(file, 4088, 8);
  if (store.superblock_checksum != XXH3_64bits(file.data(), 4088)) {
    return refuse("superblock_checksum");
  }
  if (LoadLE(file, 12, 4) != 4096) return refuse("superblock_size");
  // Bit 0 compact slots, bit 1 large region table; any other is unknown.
  store.incompat_flags = static_cast<uint32_t>(LoadLE(file, 16, 4));
  // Bit 2 a batch log; bit 3 protocol 2's sidecar, which changes no byte of
  // the store file's layout; bit 4 a batch journal before the batch log, its
  // size at offset 104.
  if ((store.incompat_flags & ~uint32_t{0x1f}) != 0) return refuse("unknown incompat_flags");
  const bool journal = (store.incompat_flags & 0x10) != 0;
  if (journal) {
    store.journal_size = LoadLE(file, 104, 8);
    if ((store.incompat_flags & 0xc) != 0xc) return refuse("journal without batch log and sidecar");
    if (store.journal_size < 262144 || store.journal_size > (uint64_t{1} << 30) ||
        store.journal_size % 65536 != 0) {
      return refuse("journal_size");
    }
  }
  const bool compact_flag = (store.incompat_flags & 0x1) != 0;
  const bool large_table = (store.incompat_flags & 0x2) != 0;
  store.batch_log = (store.incompat_flags & 0x4) != 0;
  const uint64_t compat_flags = LoadLE(file, 20, 4);
  for (size_t i = 0; i < store.uuid.size(); ++i) {
    store.uuid[i] = std::to_integer<uint8_t>(file[24 + i]);
  }
  store.file_size = LoadLE(file, 40, 8);
  store.data_offset = LoadLE(file, 48, 8);
  store.data_size = LoadLE(file, 56, 8);
  store.region_table_offset = LoadLE(file, 64, 8);
  store.region_count = static_cast<uint32_t>(LoadLE(file, 72, 4));
  store.created_unix_ns = LoadLE(file, 88, 8);
  store.created_page_size = static_cast<uint32_t>(LoadLE(file, 96, 4));

  // Step 7, field sanity.
  if (LoadLE(file, 76, 4) != 128) return refuse("region_entry_size");
  if (store.region_table_offset == 0 || store.region_table_offset % 4096 != 0) {
    return refuse("region_table_offset");
  }
  if (store.data_offset % 65536 != 0 || store.data_offset < store.region_table_offset ||
      store.data_offset > (uint64_t{1} << 62)) {
    return refuse("data_offset");
  }
  const uint64_t table_end = store.region_table_offset + uint64_t{store.region_count} * 128;
  if (large_table ? (store.region_count > 1048576 || table_end > store.data_offset - 4096)
                  : (store.region_count > 8160 || table_end > store.data_offset)) {
    return refuse("region_count");
  }
  if (store.batch_log && table_end + 4096 + 131072 + store.journal_size > store.data_offset) {
    return refuse("region_count (the batch log)");
  }
  if (store.data_size > (uint64_t{1} << 62)) return refuse("data_size");
  const uint64_t data_end = store.data_offset + RoundUp(store.data_size, 65536);
  if (store.file_size % 65536 != 0 || store.file_size < data_end) return refuse("file_size");
  // Steps 8 and 9.
  if (compat_flags == 0 &&
      (!AllZeroIn(file, 100, 104) || (!journal && !AllZeroIn(file, 104, 112)) ||
       !AllZeroIn(file, 112, 4088))) {
    return refuse("reserved bytes");
  }
  if (store.file_size != file.size()) return refuse("file_size is not the file's size");

  // Step 10, the region table.
  if (LoadLE(file, 80, 8) !=
      XXH3_64bits(file.data() + store.region_table_offset, table_end - store.region_table_offset)) {
    return refuse("region_table_checksum");
  }
  uint64_t previous_end = data_end;
  std::set<std::string> names;
  for (uint32_t r = 0; r < store.region_count; ++r) {
    const uint64_t e = store.region_table_offset + uint64_t{r} * 128;
    const std::string where = "entry " + std::to_string(r) + ": ";
    SpecRegion region;
    const uint64_t name_length = LoadLE(file, e + 64, 4);
    if (name_length < 1 || name_length > 64 || !AllZeroIn(file, e + name_length, e + 64)) {
      return refuse(where + "name_length");
    }
    region.name.assign(reinterpret_cast<const char*>(file.data() + e), name_length);
    region.slot_count = static_cast<uint32_t>(LoadLE(file, e + 68, 4));
    if (region.slot_count < 3 || region.slot_count > 64) return refuse(where + "slot_count");
    region.slot_alignment = static_cast<uint32_t>(LoadLE(file, e + 96, 4));
    const uint64_t a = region.slot_alignment;
    if (a != 0 && (!compact_flag || !PowerOfTwo(a) || a < 4096 || a > 65536)) {
      return refuse(where + "slot_alignment");
    }
    region.capacity = LoadLE(file, e + 72, 8);
    region.slots_offset = LoadLE(file, e + 80, 8);
    region.slot_stride = LoadLE(file, e + 88, 8);
    // The two layouts: offsets and stride on the layout's unit, the stride
    // at least the header space plus the capacity.
    const uint64_t unit = a == 0 ? 65536 : a;
    const uint64_t header_space = a == 0 ? 65536 : 4096;
    if (region.capacity == 0 || region.slots_offset % unit != 0 || region.slot_stride % unit != 0 ||
        region.slot_stride < header_space || region.slot_stride - header_space < region.capacity) {
      return refuse(where + "capacity or alignment");
    }
    if (region.slots_offset < previous_end || region.slots_offset > store.file_size ||
        (store.file_size - region.slots_offset) / region.slot_count < region.slot_stride) {
      return refuse(where + "placement");
    }
    if (!AllZeroIn(file, e + 100, e + 128)) return refuse(where + "reserved bytes");
    if (!names.insert(region.name).second) return refuse(where + "duplicate name");
    // This writer: each region at the end of the previous one rounded up to
    // its own alignment, strides as the layouts table gives them.
    const uint64_t writer_stride =
        a == 0 ? 65536 + RoundUp(region.capacity, 65536) : RoundUp(4096 + region.capacity, a);
    if (region.slots_offset != RoundUp(previous_end, unit) || region.slot_stride != writer_stride ||
        region.slot_count != 3) {
      store.writer_rules_broken.push_back(where + "not laid out as this writer does");
    }
    previous_end = region.slots_offset + uint64_t{region.slot_count} * region.slot_stride;
    for (uint32_t s = 0; s < region.slot_count; ++s) {
      region.slots.push_back(DecodeSpecSlot(file, region, r, s, store.batch_log));
    }
    store.regions.push_back(std::move(region));
  }
  if (store.batch_log) {
    store.batch_log_offset = store.data_offset - 4096 - 131072;
    if (journal) {
      store.journal_offset = store.batch_log_offset - store.journal_size;
      static constexpr char kJournalMagic[8] = {'R', 'G', 'N', 'J', 'R', 'N', 'L', '1'};
      for (uint64_t at = store.journal_offset; at + 4096 <= store.batch_log_offset;) {
        if (std::memcmp(file.data() + at, kJournalMagic, 8) != 0) break;
        const uint64_t length = LoadLE(file, at + 24, 8);
        if (length == 0 || length % 4096 != 0 || length > store.batch_log_offset - at) break;
        store.journal_records.emplace_back(at, at + length);
        at += length;
      }
    }
    DecodeWatermark(file, store);
    DecodeRecords(file, store);
    // Decided on the slots as decoded, then recorded.
    std::vector<std::vector<std::pair<bool, std::string>>> verdicts;
    for (uint32_t r = 0; r < store.regions.size(); ++r) {
      verdicts.emplace_back();
      for (uint32_t s = 0; s < store.regions[r].slots.size(); ++s) {
        std::string why;
        const bool valid = store.regions[r].slots[s].kind == SpecSlot::Kind::kValid;
        verdicts.back().emplace_back(valid && SlotCounts(store, r, s, 0, why), why);
      }
    }
    for (uint32_t r = 0; r < store.regions.size(); ++r) {
      for (uint32_t s = 0; s < store.regions[r].slots.size(); ++s) {
        SpecSlot& slot = store.regions[r].slots[s];
        if (slot.kind != SpecSlot::Kind::kValid) continue;
        slot.counts = verdicts[r][s].first;
        if (!slot.counts) slot.why = verdicts[r][s].second;
      }
    }
  }
  for (SpecRegion& region : store.regions) {
    for (uint32_t s = 0; s < region.slots.size(); ++s) {
      const SpecSlot& slot = region.slots[s];
      if (slot.kind == SpecSlot::Kind::kValid && slot.counts &&
          (region.content < 0 || slot.generation > region.slots[region.content].generation)) {
        region.content = static_cast<int>(s);
      }
    }
  }

  // What this writer puts in the superblock.
  const uint64_t mib = 1048576;
  const uint64_t log_size = store.batch_log ? 131072 : 0;
  if (store.data_offset !=
      RoundUp(4096 + uint64_t{store.region_count} * 128 + store.journal_size + log_size + 4096,
              mib)) {
    store.writer_rules_broken.push_back(
        "data_offset is not the first 1 MiB boundary after the "
        "table and the intent area");
  }
  bool any_compact = false;
  for (const SpecRegion& region : store.regions) any_compact |= region.slot_alignment != 0;
  if (compact_flag != any_compact) store.writer_rules_broken.push_back("incompat_flags bit 0");
  if (large_table != (store.region_count > 8160)) {
    store.writer_rules_broken.push_back("incompat_flags bit 1");
  }
  if (store.file_size != RoundUp(previous_end, 65536)) {
    store.writer_rules_broken.push_back("file_size is not the end of the last slot");
  }
  return store;
}

std::optional<uint64_t> NonZeroOutsideMeaning(const std::vector<std::byte>& file,
                                              const SpecStore& store) {
  std::vector<std::pair<uint64_t, uint64_t>> meaning = {
      {0, 4096},
      {store.region_table_offset, store.region_table_offset + uint64_t{store.region_count} * 128},
      {store.data_offset, store.data_offset + store.data_size}};
  for (uint32_t e : store.watermark_entries) {
    const uint64_t at = store.data_offset - 4096 + uint64_t{e} * 64;
    meaning.emplace_back(at, at + 64);
  }
  for (const SpecBatchRecord& record : store.records) {
    const uint64_t at = store.batch_log_offset + uint64_t{record.unit} * 4096;
    meaning.emplace_back(at, at + 4096);
  }
  for (const auto& record : store.journal_records) meaning.push_back(record);
  for (const SpecRegion& region : store.regions) {
    for (const SpecSlot& slot : region.slots) {
      if (slot.kind == SpecSlot::Kind::kEmpty) continue;
      meaning.emplace_back(slot.header_offset, slot.header_offset + 64);
      if (slot.kind == SpecSlot::Kind::kValid) {
        meaning.emplace_back(slot.payload_offset, slot.payload_offset + slot.length);
      }
    }
  }
  std::sort(meaning.begin(), meaning.end());
  uint64_t at = 0;
  auto check_gap = [&](uint64_t end) -> std::optional<uint64_t> {
    for (uint64_t i = at; i < end; ++i) {
      if (file[i] != std::byte{0}) return i;
    }
    return std::nullopt;
  };
  for (const auto& [begin, end] : meaning) {
    if (begin > at) {
      if (auto found = check_gap(begin)) return found;
    }
    at = std::max(at, end);
  }
  return check_gap(file.size());
}

std::vector<std::string> LibraryDisagreements(const std::string& path,
                                              const std::vector<std::byte>& file,
                                              const SpecStore& spec) {
  std::vector<std::string> out;
  auto expect = [&](bool same, const std::string& what) {
    if (!same) out.push_back(what);
  };
  auto info = ReadStoreInfo(path);
  if (!info.ok()) return {"ReadStoreInfo refused it: " + info.status().ToString()};
  expect(info->incompat_flags == spec.incompat_flags, "incompat_flags");
  expect(info->uuid == spec.uuid, "uuid");
  expect(info->file_size == spec.file_size, "file_size");
  expect(info->data_offset == spec.data_offset, "data_offset");
  expect(info->data_size == spec.data_size, "data_size");
  expect(info->region_table_offset == spec.region_table_offset, "region_table_offset");
  expect(info->created_unix_ns == spec.created_unix_ns, "created_unix_ns");
  expect(info->created_page_size == spec.created_page_size, "created_page_size");
  expect(info->superblock_checksum == spec.superblock_checksum, "superblock_checksum");
  if (info->regions.size() != spec.regions.size()) {
    out.push_back("ReadStoreInfo lists " + std::to_string(info->regions.size()) + " regions");
    return out;
  }
  for (size_t r = 0; r < spec.regions.size(); ++r) {
    const SpecRegion& want = spec.regions[r];
    const RegionEntry& got = info->regions[r];
    const std::string where = "region " + want.name + ": ";
    expect(got.name == want.name, where + "name");
    expect(got.capacity == want.capacity, where + "capacity");
    expect(got.slot_count == want.slot_count, where + "slot_count");
    expect(got.slots_offset == want.slots_offset, where + "slots_offset");
    expect(got.slot_stride == want.slot_stride, where + "slot_stride");
    expect(got.layout == (want.slot_alignment == 0 ? SlotLayout::kAligned : SlotLayout::kCompact),
           where + "layout");
    expect(got.slot_alignment == (want.slot_alignment == 0 ? 65536 : want.slot_alignment),
           where + "slot_alignment");
  }

  auto verified = VerifyRegions(path);
  if (!verified.ok()) {
    out.push_back("VerifyRegions refused it: " + verified.status().ToString());
  } else if (verified->regions.size() != spec.regions.size()) {
    out.push_back("VerifyRegions lists " + std::to_string(verified->regions.size()) + " regions");
  } else {
    for (size_t r = 0; r < spec.regions.size(); ++r) {
      const SpecRegion& want = spec.regions[r];
      const RegionReport& got = verified->regions[r];
      const std::string where = "verify, region " + want.name + ": ";
      expect(got.name == want.name && got.index == r, where + "name or index");
      expect(got.has_commit == (want.content >= 0), where + "has_commit");
      if (want.content >= 0 && got.has_commit) {
        const SpecSlot& newest = want.slots[static_cast<size_t>(want.content)];
        expect(got.active_slot == static_cast<uint32_t>(want.content), where + "active_slot");
        expect(got.generation == newest.generation, where + "generation");
        expect(got.length == newest.length, where + "length");
      }
      expect(!got.torn && !got.damaged, where + "torn or damaged");
      if (got.slots.size() != want.slots.size()) {
        out.push_back(where + "slot count");
        continue;
      }
      for (size_t s = 0; s < want.slots.size(); ++s) {
        const SpecSlot& slot = want.slots[s];
        const SlotState state =
            slot.kind == SpecSlot::Kind::kValid
                ? (slot.counts ? SlotState::kValid : SlotState::kIncomplete)
            : slot.kind == SpecSlot::Kind::kEmpty || slot.kind == SpecSlot::Kind::kUnfinished
                ? SlotState::kEmpty
                : SlotState::kIncomplete;
        expect(got.slots[s].state == state, where + "slot " + std::to_string(s) + " state");
        expect(got.slots[s].generation == slot.generation,
               where + "slot " + std::to_string(s) + " generation");
        expect(got.slots[s].batch_id == slot.batch_id,
               where + "slot " + std::to_string(s) + " batch id");
        expect(
            got.slots[s].batch_incomplete == (slot.kind == SpecSlot::Kind::kValid && !slot.counts),
            where + "slot " + std::to_string(s) + " batch_incomplete");
      }
    }
  }

  auto store = Store::Open(path, OpenMode::kReadOnly);
  if (!store.ok()) {
    out.push_back("Store::Open read-only refused it: " + store.status().ToString());
    return out;
  }
  std::vector<std::byte> data(store->data_size());
  if (!store->Read(0, data).ok() ||
      !std::equal(data.begin(), data.end(),
                  file.begin() + static_cast<ptrdiff_t>(spec.data_offset))) {
    out.push_back("the data area read through Store is not the bytes at data_offset");
  }
  std::vector<std::byte> payload;
  for (const SpecRegion& want : spec.regions) {
    const std::string where = "Load(" + want.name + "): ";
    auto loaded = store->Load(want.name, payload);
    if (want.content < 0) {
      expect(!loaded.ok() && loaded.status().code() == StatusCode::kNotFound,
             where + "not kNotFound for a region without a commit");
      continue;
    }
    if (!loaded.ok()) {
      out.push_back(where + loaded.status().ToString());
      continue;
    }
    const SpecSlot& newest = want.slots[static_cast<size_t>(want.content)];
    expect(loaded->slot == static_cast<uint32_t>(want.content), where + "slot");
    expect(loaded->generation == newest.generation, where + "generation");
    expect(payload.size() == newest.length &&
               std::equal(payload.begin(), payload.end(),
                          file.begin() + static_cast<ptrdiff_t>(newest.payload_offset)),
           where + "payload is not the bytes at the slot's payload offset");
  }
  return out;
}

std::vector<std::string> AllGoldenPaths() {
  std::vector<std::string> paths;
  for (const ExpectedGolden& golden : ExpectedGoldens())
    paths.push_back(GoldenPath(golden.file_name));
  for (const ExpectedRegionGolden& golden : ExpectedRegionGoldens())
    paths.push_back(PathOf(golden));
  return paths;
}

}  // namespace regionstore::testing
