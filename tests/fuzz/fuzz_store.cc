#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "batch.h"
#include "format.h"
#include "fuzz_targets.h"
#include "intent.h"
#include "journal.h"
#include "memory_io.h"
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

// `bytes` as the whole content of `path` (created or truncated, 0600).
bool WriteFile(const std::string& path, std::span<const std::byte> bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool written =
      ::pwrite(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size());
  return ::close(fd) == 0 && written;
}

// The file under test: a path and the Io that reaches it (a real file
// through Io::Default(), or a MemoryIo's buffer).
struct Subject {
  std::string path;
  Io* io = nullptr;
};

// Bytes [offset, offset + out.size()) of the subject's file, through its Io.
bool ReadAt(const Subject& subject, uint64_t offset, std::span<std::byte> out) {
  auto file = subject.io->Open(subject.path, OpenMode::kReadOnly, SymlinkPolicy::kRefuse);
  if (!file.ok()) return false;
  auto read = (*file)->ReadAt(offset, out);
  return read.ok() && *read == out.size();
}

// The image's bytes: `file_size` bytes, zero where no record writes.
void Materialise(const Image& image, std::vector<std::byte>& file) {
  file.assign(image.file_size, std::byte{0});
  for (const Record& record : image.records) {
    if (record.offset >= file.size()) continue;
    const size_t length =
        static_cast<size_t>(std::min<uint64_t>(record.bytes.size(), file.size() - record.offset));
    std::copy_n(record.bytes.begin(), length, file.begin() + static_cast<ptrdiff_t>(record.offset));
  }
}

// Slot headers first (their payload and header checksums), then the region
// table's and the superblock's, as the fields found in the file say. Fields
// pointing outside the file are skipped: the readers must refuse those.
void FixChecksums(std::span<std::byte> file) {
  using format::Load32;
  using format::Load64;
  const uint64_t file_size = file.size();
  if (file_size < format::kSuperblockSize) return;
  const std::span<std::byte> superblock = file.first(format::kSuperblockSize);
  const uint64_t table_offset = Load64(superblock, format::sb::kRegionTableOffset);
  const uint32_t region_count = Load32(superblock, format::sb::kRegionCount);
  std::span<const std::byte> table;
  if (region_count <= format::kMaxRegions && table_offset <= file_size &&
      format::RegionTableBytes(region_count) <= file_size - table_offset) {
    table = file.subspan(table_offset, format::RegionTableBytes(region_count));
  }
  for (uint32_t r = 0; r < table.size() / format::kRegionEntrySize; ++r) {
    const std::span<const std::byte> entry = table.subspan(r * format::kRegionEntrySize);
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
      const std::span<std::byte> header = file.subspan(at, slot::kHeaderSize);
      if (std::all_of(header.begin(), header.end(),
                      [](std::byte b) { return b == std::byte{0}; })) {
        continue;
      }
      const uint64_t length = Load64(header, slot::hdr::kLength);
      const uint64_t payload_at = at + slot::kHeaderUnitSize;
      if (length <= capacity && payload_at <= file_size && length <= file_size - payload_at) {
        format::Store64(header, slot::hdr::kPayloadChecksum,
                        format::Checksum(file.subspan(payload_at, length)));
      }
      format::Store64(
          header, slot::hdr::kHeaderChecksum,
          format::Checksum(std::span<const std::byte>(header).first(slot::hdr::kHeaderChecksum)));
    }
  }
  if (!table.empty()) {
    format::Store64(superblock, format::sb::kRegionTableChecksum, format::Checksum(table));
  }
  format::Store64(
      superblock, format::kSuperblockChecksumOffset,
      format::Checksum(
          std::span<const std::byte>(superblock).first(format::kSuperblockChecksumOffset)));
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
void CheckReader(const Subject& subject, const StoreInfo& info,
                 const std::vector<RegionReport>& verified) {
  // ReadStoreInfo accepted the file; Open validates the same bytes.
  auto reader = Store::Open(subject.path, OpenMode::kReadOnly, {.io = subject.io});
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
      // 64 KiB into an aligned one; or, for a journaled batch no writer has
      // replayed, in its journal record.
      if (report.journaled) continue;
      const RegionEntry& region = info.regions[i];
      const uint64_t payload_at = region.slots_offset +
                                  uint64_t{loaded->slot} * region.slot_stride +
                                  (region.layout == SlotLayout::kCompact ? 4096 : 65536);
      std::vector<std::byte> on_disk(out.size());
      if (!ReadAt(subject, payload_at, on_disk) || on_disk != out)
        Broken("Load returned bytes that are not at the slot's payload");
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

// A writer changes bytes only where FORMAT.md lets it: a slot's header unit
// and payload area (never the zero unit before an aligned slot's header, a
// neighbouring slot, the table or the data area) and the intent area.
void CheckWritesConfined(std::span<const std::byte> before, std::span<const std::byte> after,
                         const StoreInfo& info) {
  if (before.size() != after.size()) Broken("a writer changed the file's size");
  std::vector<std::pair<uint64_t, uint64_t>> writable;
  if (const auto area = intent::AreaOffset(info)) {
    writable.emplace_back(*area, *area + intent::kAreaSize);
  }
  // A writer's open rewrites batch records, and removes a journal record
  // whose batch did not return.
  if (const auto log = batch::LogOffset(info)) {
    writable.emplace_back(*log, *log + format::kBatchLogSize);
  }
  if (const auto journal = journal::Offset(info)) {
    writable.emplace_back(*journal, *journal + info.journal_size);
  }
  for (const RegionEntry& region : info.regions) {
    for (uint32_t s = 0; s < region.slot_count; ++s) {
      writable.emplace_back(slot::HeaderFileOffset(region, s),
                            slot::SlotOffset(region, s) + region.slot_stride);
    }
  }
  std::sort(writable.begin(), writable.end());
  writable.emplace_back(before.size(), before.size());  // the end closes the last gap
  // Compare each gap between writable ranges whole; look for the byte only
  // when a gap differs.
  uint64_t from = 0;
  for (const auto& [first, end] : writable) {
    const uint64_t to = std::min<uint64_t>(first, before.size());
    if (from < to && std::memcmp(before.data() + from, after.data() + from, to - from) != 0) {
      uint64_t i = from;
      while (before[i] == after[i]) ++i;
      Broken("a writer changed file offset " + std::to_string(i) +
             ", outside every slot's header unit and payload area and the intent area");
    }
    from = std::max(from, std::min<uint64_t>(end, before.size()));
  }
}

// A writer: recovery on open, then a commit to each region reads back.
void CheckWriter(const Subject& subject, const StoreInfo& info,
                 const std::vector<RegionReport>& verified) {
  // Kept between inputs: the allocation is the cost, not the copy.
  static std::vector<std::byte> before;
  static std::vector<std::byte> after;
  before.resize(info.file_size);
  after.resize(info.file_size);
  if (!ReadAt(subject, 0, before)) Broken("cannot read the store file");
  {  // the writer closes before the file is read back
    auto writer = Store::Open(subject.path, OpenMode::kReadWrite, {.io = subject.io});
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
  if (!ReadAt(subject, 0, after)) Broken("cannot read the store file back");
  CheckWritesConfined(before, after, info);
}

// Every check, on the file `subject` names.
void CheckStore(const Subject& subject, const Image& image) {
  const std::string& path = subject.path;
  auto info = ReadStoreInfo(path, subject.io);
  if (!info.ok()) {
    ExpectRefusal(info.status(), "ReadStoreInfo");
    // Every other reader must refuse it too.
    auto reader = Store::Open(path, OpenMode::kReadOnly, {.io = subject.io});
    if (reader.ok()) Broken("Open accepted a file ReadStoreInfo refused");
    ExpectRefusal(reader.status(), "Open(read-only)");
    return;
  }
  CheckLayout(*info, image.file_size);

  VerifyOptions headers_only;
  headers_only.io = subject.io;
  headers_only.check_payloads = false;
  // The file does not change under us, so once ReadStoreInfo has accepted
  // it, every reader must: a refusal now is two readers disagreeing.
  auto headers = VerifyRegions(path, headers_only);
  if (!headers.ok()) Broken("VerifyRegions(headers) refused: " + headers.status().ToString());
  CheckReports(headers->regions, *info);
  VerifyOptions full;
  full.io = subject.io;
  full.read_data_area = (image.flags & kReadDataArea) != 0;
  auto verified = VerifyRegions(path, full);
  if (!verified.ok()) Broken("VerifyRegions(full) refused: " + verified.status().ToString());
  CheckReports(verified->regions, *info);
  CheckReader(subject, *info, verified->regions);
  if ((image.flags & kOpenWriter) != 0) CheckWriter(subject, *info, verified->regions);
}

// The image's bytes, checksums resealed if its flags ask.
std::vector<std::byte>& Prepare(const Image& image) {
  static std::vector<std::byte> file;  // kept: most inputs are 1-2 MiB
  Materialise(image, file);
  if ((image.flags & kFixChecksums) != 0) FixChecksums(file);
  return file;
}

}  // namespace

int StoreFile(std::span<const uint8_t> input) {
  const Image image = DecodeImage(input);
  std::vector<std::byte>& file = Prepare(image);
  MemoryIo io(file);
  CheckStore({"store.rgn", &io}, image);
  return 0;
}

int StoreFileOnDisk(std::span<const uint8_t> input) {
  static ScratchFile scratch;
  const Image image = DecodeImage(input);
  const std::vector<std::byte>& file = Prepare(image);
  if (!WriteFile(scratch.path(), file)) Broken("cannot write the scratch file");
  CheckStore({scratch.path(), Io::Default()}, image);
  return 0;
}

}  // namespace regionstore::fuzz
