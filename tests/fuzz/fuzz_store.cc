#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "format.h"
#include "fuzz_targets.h"
#include "intent.h"
#include "regionstore/checkpoint.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "slot.h"
#include "store_image.h"

namespace regionstore::fuzz {
namespace {

[[noreturn]] void Broken(const std::string& what) {
  std::fprintf(stderr, "fuzz store: %s\n", what.c_str());
  std::abort();
}

// A refusal of the file itself: what every reader may answer to a bad store.
void ExpectRefusal(const Status& status, const char* call) {
  if (status.code() == StatusCode::kCorruption ||
      status.code() == StatusCode::kUnsupportedVersion) {
    if (status.message().empty()) Broken(std::string(call) + ": a refusal without a message");
    return;
  }
  Broken(std::string(call) + ": unexpected error " + status.ToString());
}

// One scratch file per process, in TMPDIR, removed at exit.
class ScratchFile {
 public:
  ScratchFile() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
    pattern += "/regionstore-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) Broken("mkdtemp " + pattern + " failed");
    dir_ = pattern;
    path_ = dir_ + "/store.rgn";
  }
  ~ScratchFile() {
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
};

// pread/pwrite of a whole buffer; short or failed calls end the input's run.
bool ReadAt(int fd, uint64_t offset, std::span<std::byte> out) {
  return ::pread(fd, out.data(), out.size(), static_cast<off_t>(offset)) ==
         static_cast<ssize_t>(out.size());
}
void WriteAt(int fd, uint64_t offset, std::span<const std::byte> data) {
  if (::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset)) !=
      static_cast<ssize_t>(data.size())) {
    Broken("cannot write the scratch file");
  }
}

// Slot headers first (their payload and header checksums), then the region
// table's and the superblock's, as the fields found in the file say. Fields
// pointing outside the file are skipped: the readers must refuse those.
void FixChecksums(const std::string& path, uint64_t file_size) {
  using format::Load32;
  using format::Load64;
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) Broken("cannot reopen the scratch file");
  std::vector<std::byte> superblock(format::kSuperblockSize);
  if (file_size < format::kSuperblockSize || !ReadAt(fd, 0, superblock)) {
    ::close(fd);
    return;
  }
  const uint64_t table_offset = Load64(superblock, format::sb::kRegionTableOffset);
  const uint32_t region_count = Load32(superblock, format::sb::kRegionCount);
  std::vector<std::byte> table;
  if (region_count <= format::kMaxRegions && table_offset <= file_size &&
      format::RegionTableBytes(region_count) <= file_size - table_offset) {
    table.resize(format::RegionTableBytes(region_count));
    if (!ReadAt(fd, table_offset, table)) table.clear();
  }
  for (uint32_t r = 0; r < table.size() / format::kRegionEntrySize; ++r) {
    const std::span<const std::byte> entry =
        std::span<const std::byte>(table).subspan(r * format::kRegionEntrySize);
    const uint32_t slot_count =
        std::min(Load32(entry, format::re::kSlotCount), slot::kMaxSlotsPerRegion);
    const uint64_t capacity = Load64(entry, format::re::kCapacity);
    const uint64_t slots_offset = Load64(entry, format::re::kSlotsOffset);
    const uint64_t stride = Load64(entry, format::re::kSlotStride);
    // Compact slots (a non-zero slot alignment) start with the header unit.
    const uint64_t header_offset =
        Load32(entry, format::re::kSlotAlignment) != 0 ? 0 : slot::kAlignedHeaderOffset;
    for (uint32_t s = 0; s < slot_count; ++s) {
      uint64_t at = 0;
      if (__builtin_mul_overflow(uint64_t{s}, stride, &at) ||
          __builtin_add_overflow(at, slots_offset, &at) ||
          __builtin_add_overflow(at, header_offset, &at) || at > file_size ||
          file_size - at < slot::kHeaderSize) {
        break;
      }
      slot::HeaderBytes header;
      if (!ReadAt(fd, at, header)) break;
      if (std::all_of(header.begin(), header.end(),
                      [](std::byte b) { return b == std::byte{0}; })) {
        continue;
      }
      const uint64_t length = Load64(header, slot::hdr::kLength);
      const uint64_t payload_at = at + slot::kHeaderUnitSize;
      if (length <= capacity && length <= file_size && payload_at <= file_size - length &&
          length <= kMaxImageFileSize) {
        std::vector<std::byte> payload(length);
        if (ReadAt(fd, payload_at, payload)) {
          format::Store64(header, slot::hdr::kPayloadChecksum, format::Checksum(payload));
        }
      }
      format::Store64(
          header, slot::hdr::kHeaderChecksum,
          format::Checksum(std::span<const std::byte>(header).first(slot::hdr::kHeaderChecksum)));
      WriteAt(fd, at, header);
    }
  }
  if (!table.empty()) {
    format::Store64(superblock, format::sb::kRegionTableChecksum, format::Checksum(table));
  }
  format::Store64(
      superblock, format::kSuperblockChecksumOffset,
      format::Checksum(
          std::span<const std::byte>(superblock).first(format::kSuperblockChecksumOffset)));
  WriteAt(fd, 0, superblock);
  ::close(fd);
}

// What ReadStoreInfo accepted must lie inside the file, whatever it says.
void CheckLayout(const StoreInfo& info, uint64_t file_size) {
  if (info.file_size != file_size) Broken("accepted a superblock whose size is not the file's");
  if (info.data_offset > file_size || info.data_size > file_size - info.data_offset) {
    Broken("accepted a data area outside the file");
  }
  if ((info.incompat_flags & ~format::kKnownIncompatFlags) != 0) {
    Broken("accepted an unknown incompat flag");
  }
  // The table ends before the data area; past 8,160 entries only with the
  // large-table flag, and then before the intent area too. A writer's
  // intent area never overlaps the table.
  const uint64_t table_end = info.region_table_offset +
                             format::RegionTableBytes(static_cast<uint32_t>(info.regions.size()));
  const bool large_table = (info.incompat_flags & format::kIncompatLargeTable) != 0;
  if (table_end > info.data_offset ||
      (info.regions.size() > format::kMaxRegionsSmallTable && !large_table) ||
      (large_table && table_end > info.data_offset - intent::kAreaSize)) {
    Broken("accepted a region table that does not fit before the data area");
  }
  if (const auto area = intent::AreaOffset(info);
      area && (*area < table_end || *area + intent::kAreaSize > info.data_offset)) {
    Broken("the intent area overlaps the region table or the data area");
  }
  // Regions follow the data area and each other without overlapping.
  uint64_t next_free = info.data_offset + info.data_size;
  for (const RegionEntry& region : info.regions) {
    if (region.slot_count == 0 || region.slot_count > slot::kMaxSlotsPerRegion) {
      Broken("accepted a region with a bad slot count");
    }
    if (region.slot_stride < slot::PayloadOffsetInSlot(region) ||
        region.capacity > region.slot_stride - slot::PayloadOffsetInSlot(region)) {
      Broken("accepted a slot stride that cannot hold the capacity");
    }
    if (region.slots_offset < next_free || region.slots_offset > file_size ||
        region.slot_stride > (file_size - region.slots_offset) / region.slot_count) {
      Broken("accepted a region whose slots are not inside the file, after what comes before");
    }
    const bool compact = region.layout == SlotLayout::kCompact;
    if (compact ? (region.slot_alignment < slot::kHeaderUnitSize ||
                   region.slot_alignment > format::kAreaAlignment ||
                   (region.slot_alignment & (region.slot_alignment - 1)) != 0 ||
                   (info.incompat_flags & format::kIncompatCompactSlots) == 0)
                : (region.layout != SlotLayout::kAligned ||
                   region.slot_alignment != format::kAreaAlignment)) {
      Broken("accepted a slot layout the format does not define");
    }
    if (region.slots_offset % region.slot_alignment != 0 ||
        region.slot_stride % region.slot_alignment != 0) {
      Broken("accepted slots off their alignment grid");
    }
    next_free = region.slots_offset + uint64_t{region.slot_count} * region.slot_stride;
  }
}

void CheckReports(const std::vector<RegionReport>& reports, const StoreInfo& info) {
  if (reports.size() != info.regions.size()) Broken("verify lists a different number of regions");
  for (size_t i = 0; i < reports.size(); ++i) {
    const RegionReport& report = reports[i];
    if (report.name != info.regions[i].name) Broken("verify names a region differently");
    if (report.slots.size() != info.regions[i].slot_count) Broken("verify: wrong slot count");
    if (report.has_commit && report.length > report.capacity) {
      Broken("verify: commit over capacity");
    }
    if (report.has_commit && report.damaged) Broken("verify: a region both committed and damaged");
    if (report.torn && report.damaged) Broken("verify: a region both torn and damaged");
    if (report.torn && (report.torn_slot >= report.slots.size() ||
                        report.slots[report.torn_slot].state != SlotState::kTorn ||
                        (report.has_commit && report.generation > report.torn_generation))) {
      Broken("verify: a torn slot that is not the region's newest header");
    }
    int torn_slots = 0;
    for (const SlotReport& slot : report.slots) torn_slots += slot.state == SlotState::kTorn;
    if (torn_slots != (report.torn ? 1 : 0)) Broken("verify: torn slots and the region disagree");
  }
}

// The read-only handle: List, Load and View agree with the full verify.
void CheckReader(const std::string& path, const StoreInfo& info,
                 const std::vector<RegionReport>& verified) {
  // ReadStoreInfo accepted the file; Open validates the same bytes.
  auto reader = Store::Open(path, OpenMode::kReadOnly);
  if (!reader.ok()) {
    Broken("Open(read-only) refused what ReadStoreInfo accepted: " + reader.status().ToString());
  }
  if (reader->info().file_size != info.file_size || reader->data_size() != info.data_size ||
      reader->info().regions.size() != info.regions.size()) {
    Broken("Open and ReadStoreInfo disagree");
  }
  CheckReports(reader->List(), info);
  std::vector<std::byte> out;
  for (size_t i = 0; i < info.regions.size(); ++i) {
    auto loaded = reader->Load(info.regions[i].name, out);
    const RegionReport& report = verified[i];
    if (loaded.ok()) {
      if (out.size() != loaded->length || loaded->length > info.regions[i].capacity) {
        Broken("Load returned a length it should not");
      }
      if (!report.has_commit || report.generation != loaded->generation) {
        Broken("Load returned a commit verify does not call the newest valid one");
      }
      if (loaded->skipped_torn_generation != (report.torn ? report.torn_generation : 0)) {
        Broken("Load and verify disagree on a torn newest commit");
      }
      // The payload is where FORMAT.md puts it: 4 KiB into a compact slot,
      // 64 KiB into an aligned one.
      const RegionEntry& region = info.regions[i];
      const uint64_t payload_at = region.slots_offset +
                                  uint64_t{loaded->slot} * region.slot_stride +
                                  (region.layout == SlotLayout::kCompact ? 4096 : 65536);
      std::vector<std::byte> on_disk(out.size());
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      const bool read = fd >= 0 && ReadAt(fd, payload_at, on_disk);
      if (fd >= 0) ::close(fd);
      if (!read || on_disk != out) Broken("Load returned bytes that are not at the slot's payload");
    } else {
      const StatusCode code = loaded.status().code();
      // kNotFound: no commit yet; kTornCommit: only the torn newest;
      // kCorruption: slots hold data, no header passes its checks.
      const bool expected = (code == StatusCode::kNotFound && !report.torn && !report.damaged) ||
                            (code == StatusCode::kTornCommit && report.torn) ||
                            (code == StatusCode::kCorruption && report.damaged);
      if (!expected) {
        Broken("Load: an error verify does not explain: " + loaded.status().ToString());
      }
      if (report.has_commit) Broken("Load found no valid slot where verify found one");
    }
  }
  if (info.data_size > 0) {
    auto view = reader->View(0, info.data_size);
    if (!view.ok() || view->size() != info.data_size) Broken("View of the whole data area failed");
    std::byte edge[1];
    if (!reader->Read(info.data_size - 1, edge).ok()) Broken("Read of the last data byte failed");
  }
  if (reader->View(info.data_size, 1).ok()) Broken("View past the data area succeeded");
}

// The whole file (at most kMaxImageFileSize bytes).
std::vector<std::byte> ReadWhole(const std::string& path, uint64_t size) {
  std::vector<std::byte> bytes(size);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || !ReadAt(fd, 0, bytes)) Broken("cannot read the scratch file back");
  ::close(fd);
  return bytes;
}

// A writer changes bytes only where FORMAT.md lets it: a slot's header unit
// and payload area (never the zero unit before an aligned slot's header, a
// neighbouring slot, the table or the data area) and the intent area.
void CheckWritesConfined(const std::vector<std::byte>& before, const std::vector<std::byte>& after,
                         const StoreInfo& info) {
  if (before.size() != after.size()) Broken("a writer changed the file's size");
  std::vector<std::pair<uint64_t, uint64_t>> writable;
  if (const auto area = intent::AreaOffset(info)) {
    writable.emplace_back(*area, *area + intent::kAreaSize);
  }
  for (const RegionEntry& region : info.regions) {
    for (uint32_t s = 0; s < region.slot_count; ++s) {
      writable.emplace_back(slot::HeaderFileOffset(region, s),
                            slot::SlotOffset(region, s) + region.slot_stride);
    }
  }
  std::sort(writable.begin(), writable.end());
  size_t next = 0;
  for (uint64_t i = 0; i < before.size(); ++i) {
    if (before[i] == after[i]) continue;
    while (next < writable.size() && writable[next].second <= i) ++next;
    if (next == writable.size() || i < writable[next].first) {
      Broken("a writer changed file offset " + std::to_string(i) +
             ", outside every slot's header unit and payload area and the intent area");
    }
  }
}

// A writer: recovery on open, then a commit to each region reads back.
void CheckWriter(const std::string& path, const StoreInfo& info,
                 const std::vector<RegionReport>& verified) {
  const std::vector<std::byte> before = ReadWhole(path, info.file_size);
  {  // the writer closes before the file is read back
    auto writer = Store::Open(path, OpenMode::kReadWrite);
    if (!writer.ok()) {
      Broken("Open(read-write) refused what the readers accepted: " + writer.status().ToString());
    }
    std::vector<std::byte> out;
    for (size_t r = 0; r < info.regions.size(); ++r) {
      const RegionEntry& region = info.regions[r];
      std::vector<std::byte> payload(std::min<uint64_t>(region.capacity, 100));
      for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 7 + 1);
      auto generation = writer->Commit(region.name, payload, Durability::kNone);
      if (!generation.ok()) {
        // The one refusal a valid table allows: a (crafted) header that passes
        // its checks with generation 2^63 - 1 leaves no next one.
        bool highest = false;
        for (const SlotReport& s : verified[r].slots) {
          highest = highest || s.generation == slot::kMaxGeneration;
        }
        const bool exhausted = generation.status().code() == StatusCode::kCorruption && highest;
        if (exhausted) continue;
        Broken("Commit: unexpected error " + generation.status().ToString());
      }
      auto loaded = writer->Load(region.name, out);
      if (!loaded.ok() || loaded->generation != *generation || out != payload) {
        Broken("a commit does not read back");
      }
    }
  }
  CheckWritesConfined(before, ReadWhole(path, info.file_size), info);
}

}  // namespace

int StoreFile(std::span<const uint8_t> input) {
  static ScratchFile scratch;
  const Image image = DecodeImage(input);
  if (!WriteImage(image, scratch.path())) Broken("cannot write the scratch file");
  const std::string& path = scratch.path();
  if ((image.flags & kFixChecksums) != 0) FixChecksums(path, image.file_size);

  auto info = ReadStoreInfo(path);
  if (!info.ok()) {
    ExpectRefusal(info.status(), "ReadStoreInfo");
    // Every other reader must refuse it too.
    auto reader = Store::Open(path, OpenMode::kReadOnly);
    if (reader.ok()) Broken("Open accepted a file ReadStoreInfo refused");
    ExpectRefusal(reader.status(), "Open(read-only)");
    return 0;
  }
  CheckLayout(*info, image.file_size);

  VerifyOptions headers_only;
  headers_only.check_payloads = false;
  // The file does not change under us, so once ReadStoreInfo has accepted
  // it, every reader must: a refusal now is two readers disagreeing.
  auto headers = VerifyRegions(path, headers_only);
  if (!headers.ok()) Broken("VerifyRegions(headers) refused: " + headers.status().ToString());
  CheckReports(headers->regions, *info);
  VerifyOptions full;
  full.read_data_area = (image.flags & kReadDataArea) != 0;
  auto verified = VerifyRegions(path, full);
  if (!verified.ok()) Broken("VerifyRegions(full) refused: " + verified.status().ToString());
  CheckReports(verified->regions, *info);
  CheckReader(path, *info, verified->regions);
  if ((image.flags & kOpenWriter) != 0) CheckWriter(path, *info, verified->regions);
  return 0;
}

}  // namespace regionstore::fuzz
