// regionstore_make_corpus OUTPUT_DIR
//
// Writes the fuzzers' seed corpus into OUTPUT_DIR/{store,slot_header,cli_parse}
// (tests/fuzz/corpus/ in the repository): valid stores made by the library
// and damaged copies of them as store images (store_image.h), slot headers
// taken from those stores, and regionctl arguments. Rerun it when the format
// changes; the files are checked in so that CI starts from them.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "format.h"
#include "regionstore/store.h"
#include "slot.h"
#include "store_image.h"

namespace fs = std::filesystem;
using regionstore::CheckpointSpec;
using regionstore::CreateOptions;
using regionstore::Durability;
using regionstore::OpenMode;
using regionstore::SlotLayout;
using regionstore::Store;

namespace {

std::vector<std::byte> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

bool WriteFile(const fs::path& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

std::vector<std::byte> Pattern(size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 31 + seed * 17) & 0xff);
  return bytes;
}

bool Check(const regionstore::Status& status, const char* what) {
  if (!status.ok()) std::cerr << what << ": " << status.ToString() << "\n";
  return status.ok();
}

// A store made by the library: `regions` with a commit in each region
// listed in `commits` (name, length).
bool MakeStore(const fs::path& path, uint64_t data_size, const std::vector<CheckpointSpec>& regions,
               const std::vector<std::pair<std::string, size_t>>& commits, uint32_t protocol = 1) {
  fs::remove(path);
  fs::remove(path.string() + ".shm");
  CreateOptions options;
  options.checkpoints = regions;
  options.protocol = protocol;
  if (!Check(Store::Create(path.string(), data_size, options), "create")) return false;
  auto store = Store::Open(path.string(), OpenMode::kReadWrite);
  if (!Check(store.status(), "open")) return false;
  unsigned seed = 1;
  for (const auto& [name, length] : commits) {
    if (!Check(store->Commit(name, Pattern(length, seed++), Durability::kNone).status(),
               "commit")) {
      return false;
    }
  }
  if (data_size > 0 && !Check(store->Write(0, Pattern(4096, 9), Durability::kNone), "write")) {
    return false;
  }
  return true;
}

// Recomputes the region table checksum (over the region_count entries the
// superblock names) and the superblock checksum of `file`, after a field was
// changed on purpose.
void Reseal(std::vector<std::byte>& file) {
  using namespace regionstore::format;
  std::span<std::byte> bytes(file);
  const uint64_t table = Load64(bytes, sb::kRegionTableOffset);
  const uint32_t count = Load32(bytes, sb::kRegionCount);
  Store64(bytes, sb::kRegionTableChecksum, Checksum(bytes.subspan(table, RegionTableBytes(count))));
  Store64(bytes, kSuperblockChecksumOffset, Checksum(bytes.first(kSuperblockChecksumOffset)));
}

struct Seed {
  std::string name;
  std::vector<std::byte> file;
  uint8_t flags = 0;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace regionstore;
  using fuzz::kFixChecksums;
  using fuzz::kOpenWriter;
  using fuzz::kReadDataArea;
  if (argc != 2) {
    std::cerr << "usage: regionstore_make_corpus OUTPUT_DIR\n";
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* sub : {"store", "slot_header", "cli_parse"}) {
    std::error_code error;
    fs::create_directories(out / sub, error);
    for (const auto& entry : fs::directory_iterator(out / sub, error)) fs::remove(entry.path());
  }
  const fs::path scratch = fs::temp_directory_path() / "regionstore-make-corpus.rgn";

  std::vector<Seed> seeds;
  if (!MakeStore(scratch, 0, {}, {})) return 1;
  seeds.push_back({"empty-no-regions", ReadFile(scratch), 0});
  // The first stores have 64 KiB-aligned slots only (incompat_flags 0), as
  // every store before 0.5; the compact and large-table ones follow.
  if (!MakeStore(scratch, 64 * 1024,
                 {{"a", 100, SlotLayout::kAligned}, {"state", 5000, SlotLayout::kAligned}},
                 {{"a", 100}, {"a", 40}, {"state", 4999}})) {
    return 1;
  }
  const std::vector<std::byte> two = ReadFile(scratch);
  auto info = ReadStoreInfo(scratch.string());
  if (!Check(info.status(), "read info")) return 1;
  seeds.push_back({"two-regions", two, 0});
  seeds.push_back({"two-regions-writer", two, kOpenWriter | kReadDataArea});
  seeds.push_back({"two-regions-fix-checksums", two, kFixChecksums | kOpenWriter});
  if (!MakeStore(scratch, 0,
                 {{"x", 1, SlotLayout::kAligned},
                  {"y", 70000, SlotLayout::kAligned},
                  {"z", 3, SlotLayout::kAligned}},
                 {{"y", 3000}, {"z", 0}})) {
    return 1;
  }
  seeds.push_back({"three-regions-writer", ReadFile(scratch), kOpenWriter});

  // Damaged copies of the two-region store.
  const RegionEntry& a = info->regions[0];
  auto damaged = [&](const std::string& name, uint64_t offset, uint8_t mask, uint8_t flags) {
    std::vector<std::byte> file = two;
    file[offset] ^= std::byte{mask};
    seeds.push_back({name, std::move(file), flags});
  };
  damaged("superblock-checksum", format::kSuperblockChecksumOffset, 0x01, 0);
  damaged("superblock-version", format::sb::kVersion, 0x02, 0);
  damaged("region-table-entry", format::kRegionTableOffset + 3, 0x10, 0);
  damaged("slot-header-generation", slot::HeaderFileOffset(a, 1) + slot::hdr::kGeneration, 0x04,
          kOpenWriter);
  damaged("slot-payload", slot::PayloadFileOffset(a, 1) + 5, 0x80, kOpenWriter);
  // Fields changed behind checksums made right again.
  damaged("data-size-fixed", format::sb::kDataSize + 2, 0x01, kFixChecksums);
  damaged("slot-length-fixed", slot::HeaderFileOffset(a, 1) + slot::hdr::kLength, 0x40,
          kFixChecksums | kOpenWriter);
  {
    std::vector<std::byte> file = two;
    file.resize(file.size() - 4096);
    seeds.push_back({"truncated", std::move(file), 0});
  }
  {
    std::vector<std::byte> file = two;
    file.resize(format::kDataOffset + 100);
    seeds.push_back({"truncated-in-data", std::move(file), 0});
  }

  // Compact slots (incompat_flags bit 0) on this host's pages, of capacities
  // around one page, a 64 KiB-aligned region between them, commits in most.
  if (!MakeStore(
          scratch, 64 * 1024,
          {{"one", 1, SlotLayout::kCompact},
           {"hundred", 100, SlotLayout::kCompact},
           {"page+1", 4097, SlotLayout::kCompact},
           {"aligned", 100, SlotLayout::kAligned},
           {"tail", 5000, SlotLayout::kCompact}},
          {{"one", 1}, {"hundred", 100}, {"hundred", 37}, {"page+1", 4097}, {"aligned", 50}})) {
    return 1;
  }
  const std::vector<std::byte> compact = ReadFile(scratch);
  auto compact_info = ReadStoreInfo(scratch.string());
  if (!Check(compact_info.status(), "read compact info")) return 1;
  seeds.push_back({"compact-regions", compact, 0});
  seeds.push_back({"compact-regions-writer", compact, kOpenWriter | kReadDataArea});
  seeds.push_back({"compact-regions-fix-checksums", compact, kFixChecksums | kOpenWriter});
  const RegionEntry& hundred = compact_info->regions[1];
  const uint64_t hundred_entry = format::kRegionTableOffset + 1 * format::kRegionEntrySize;
  auto compact_damaged = [&](const std::string& name, uint64_t offset, uint8_t mask,
                             uint8_t flags) {
    std::vector<std::byte> file = compact;
    file[offset] ^= std::byte{mask};
    seeds.push_back({name, std::move(file), flags});
  };
  compact_damaged("compact-slot-header-generation",
                  slot::HeaderFileOffset(hundred, 1) + slot::hdr::kGeneration, 0x04, kOpenWriter);
  compact_damaged("compact-slot-payload", slot::PayloadFileOffset(hundred, 1) + 5, 0x80,
                  kOpenWriter);
  compact_damaged("compact-slot-length-fixed",
                  slot::HeaderFileOffset(hundred, 1) + slot::hdr::kLength, 0x40,
                  kFixChecksums | kOpenWriter);
  // The entry's slot_alignment (4096 = 0x1000): 8192, then 0 (64 KiB
  // layout), and the superblock's compact flag cleared; checksums fixed.
  compact_damaged("compact-alignment-8k-fixed", hundred_entry + format::re::kSlotAlignment + 1,
                  0x30, kFixChecksums | kOpenWriter);
  compact_damaged("compact-alignment-zero-fixed", hundred_entry + format::re::kSlotAlignment + 1,
                  0x10, kFixChecksums | kOpenWriter);
  compact_damaged("compact-flag-cleared-fixed", format::sb::kIncompatFlags, 0x01, kFixChecksums);

  // A table past 1 MiB (incompat_flags bit 1): 8,161 regions of compact
  // slots, the data area at 2 MiB, 193 MiB in all. An image holds at most
  // kMaxImageFileSize (8 MiB) and the fuzzer's inputs 32 KiB, so the seeds
  // keep the header area and the first 200 regions' slots of the real file:
  //  - large-table-8161-entries: region_count 8161 and the flag as made,
  //    the entries past 200 zeroed, file_size 8 MiB, checksums resealed: the
  //    large-table limits pass and entry 200 is refused;
  //  - large-table-flag-200-regions: region_count 200 and the flag kept, the
  //    file cut after the 200th region: a store readers accept (the flag
  //    only allows a table past 8,160 entries), opened by a writer.
  {
    std::vector<CheckpointSpec> many;
    for (int i = 0; i < 8161; ++i) {
      many.push_back({"r" + std::to_string(i), 1, SlotLayout::kCompact});
    }
    if (!MakeStore(scratch, 4096, many, {{"r0", 1}, {"r7", 1}, {"r7", 0}, {"r199", 1}})) return 1;
    auto large_info = ReadStoreInfo(scratch.string());
    if (!Check(large_info.status(), "read large-table info")) return 1;
    std::vector<std::byte> file = ReadFile(scratch);
    const uint64_t kept = 200;
    const uint64_t kept_end =
        format::AlignUp(slot::SlotOffset(large_info->regions[kept], 0), format::kAreaAlignment);
    if (large_info->incompat_flags != 3 || kept_end > fuzz::kMaxImageFileSize) {
      std::cerr << "large-table store is not as expected\n";
      return 1;
    }
    std::span<std::byte> bytes(file);
    std::vector<std::byte> entries(file);
    std::fill(entries.begin() + static_cast<ptrdiff_t>(format::kRegionTableOffset +
                                                       kept * format::kRegionEntrySize),
              entries.begin() + static_cast<ptrdiff_t>(large_info->data_offset), std::byte{0});
    entries.resize(fuzz::kMaxImageFileSize);
    format::Store64(entries, format::sb::kFileSize, fuzz::kMaxImageFileSize);
    Reseal(entries);
    seeds.push_back({"large-table-8161-entries", std::move(entries), 0});
    file.resize(kept_end);
    std::fill(file.begin() + static_cast<ptrdiff_t>(format::kRegionTableOffset +
                                                    kept * format::kRegionEntrySize),
              file.begin() + static_cast<ptrdiff_t>(large_info->data_offset), std::byte{0});
    bytes = std::span<std::byte>(file);
    format::Store32(bytes, format::sb::kRegionCount, static_cast<uint32_t>(kept));
    format::Store64(bytes, format::sb::kFileSize, kept_end);
    Reseal(file);
    seeds.push_back({"large-table-flag-200-regions", file, 0});
    seeds.push_back(
        {"large-table-flag-200-regions-writer", std::move(file), kOpenWriter | kFixChecksums});
  }

  // Protocol 2 (incompat_flags bit 3): the store's intent area holds the
  // sidecar's identity entry, which a writer's open compares with the
  // sidecar it makes beside the image.
  if (!MakeStore(scratch, 4096, {{"a", 100}, {"state", 5000, SlotLayout::kAligned}},
                 {{"a", 100}, {"state", 4999}, {"a", 7}}, 2)) {
    return 1;
  }
  fs::remove(scratch.string() + ".shm");
  seeds.push_back({"protocol2-writer", ReadFile(scratch), kOpenWriter | kReadDataArea});

  // Protocol 2 with its batch journal (incompat_flags bit 4, 0.13): the
  // smallest journal, holding the record of one journaled batch, which a
  // writer's open replays.
  {
    fs::remove(scratch);
    fs::remove(scratch.string() + ".shm");
    CreateOptions options;
    options.checkpoints = {{"a", 100}, {"state", 5000, SlotLayout::kAligned}};
    options.protocol = 2;
    options.journal_size = 256 * 1024;
    if (!Check(Store::Create(scratch.string(), 4096, options), "create")) return 1;
    auto store = Store::Open(scratch.string(), OpenMode::kReadWrite);
    if (!Check(store.status(), "open")) return 1;
    const std::vector<std::byte> first = Pattern(100, 11), second = Pattern(4999, 12);
    const std::span<const std::byte> pieces[] = {first, second};
    const BatchMember members[] = {{"a", PayloadPieces(&pieces[0], 1)},
                                   {"state", PayloadPieces(&pieces[1], 1)}};
    if (!Check(store->CommitBatch(members, Durability::kSync).status(), "batch")) return 1;
  }
  fs::remove(scratch.string() + ".shm");
  seeds.push_back({"protocol2-journal-writer", ReadFile(scratch), kOpenWriter | kReadDataArea});

  for (const Seed& seed : seeds) {
    const std::vector<uint8_t> image = fuzz::EncodeImage(seed.file, seed.flags);
    if (!WriteFile(out / "store" / seed.name, image.data(), image.size())) return 1;
    std::cout << "store/" << seed.name << ": " << image.size() << " bytes for a "
              << seed.file.size() << "-byte file\n";
  }

  // Slot headers as they are on disk, each behind the region, slot and
  // capacity it belongs to; and the same with a flipped bit.
  int headers = 0;
  for (uint32_t s = 0; s < a.slot_count; ++s) {
    const uint64_t at = slot::HeaderFileOffset(a, s);
    for (int flip = 0; flip < 2; ++flip) {
      std::vector<uint8_t> input(16 + slot::kHeaderSize);
      for (int i = 0; i < 4; ++i) input[4 + i] = static_cast<uint8_t>(s >> (8 * i));
      for (int i = 0; i < 8; ++i) input[8 + i] = static_cast<uint8_t>(a.capacity >> (8 * i));
      for (size_t i = 0; i < slot::kHeaderSize; ++i) {
        input[16 + i] = std::to_integer<uint8_t>(two[at + i]);
      }
      if (flip == 1) {
        input[16 + slot::hdr::kLength] ^= 0x01;
        input[3] = 0x80;  // and the checksum made right
      }
      const std::string name = "region0-slot" + std::to_string(s) + (flip == 1 ? "-flipped" : "");
      if (!WriteFile(out / "slot_header" / name, input.data(), input.size())) return 1;
      ++headers;
    }
  }
  // A compact slot's header (generation 2 of "hundred") is the same 64 bytes.
  {
    const RegionEntry& compact_region = compact_info->regions[1];
    const uint32_t s = 1;
    const uint64_t at = slot::HeaderFileOffset(compact_region, s);
    std::vector<uint8_t> input(16 + slot::kHeaderSize);
    input[0] = 1;  // region index 1
    for (int i = 0; i < 4; ++i) input[4 + i] = static_cast<uint8_t>(s >> (8 * i));
    for (int i = 0; i < 8; ++i) {
      input[8 + i] = static_cast<uint8_t>(compact_region.capacity >> (8 * i));
    }
    for (size_t i = 0; i < slot::kHeaderSize; ++i) {
      input[16 + i] = std::to_integer<uint8_t>(compact[at + i]);
    }
    if (!WriteFile(out / "slot_header" / "compact-region1-slot1", input.data(), input.size())) {
      return 1;
    }
    ++headers;
  }
  std::cout << "slot_header: " << headers << " seeds\n";

  // regionctl arguments: the selector byte (see CliParse), then the text.
  const std::vector<std::pair<char, std::string>> texts = {{0, "4096"},
                                                           {0, "64KiB"},
                                                           {0, "16M"},
                                                           {0, "1.5GiB"},
                                                           {0, "2KB"},
                                                           {0, "18446744073709551616"},
                                                           {1, "state:64KiB"},
                                                           {1, "a:b:1K"},
                                                           {1, ":1"},
                                                           {1, "x:0"},
                                                           {2, "plain"},
                                                           {2, "tab\there"},
                                                           {2,
                                                            "\xe2\x80\xae"
                                                            "rtl"},
                                                           {2, "\xff\xfe"},
                                                           {3, "sync"},
                                                           {3, "pwrite-fdatasync"},
                                                           {3, "SYNC"},
                                                           {4, "\x01\x02\x03\x04\x05\x06\x07\x08"}};
  int index = 0;
  for (const auto& [selector, text] : texts) {
    std::string input(1, selector);
    input += text;
    if (!WriteFile(out / "cli_parse" / ("arg" + std::to_string(index++)), input.data(),
                   input.size())) {
      return 1;
    }
  }
  std::cout << "cli_parse: " << texts.size() << " seeds\n";
  fs::remove(scratch);
  return 0;
}
