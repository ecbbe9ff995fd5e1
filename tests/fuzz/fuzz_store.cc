#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_targets.h"
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

// What ReadStoreInfo accepted must lie inside the file, whatever it says.
void CheckLayout(const StoreInfo& info, uint64_t file_size) {
  if (info.file_size != file_size) Broken("accepted a superblock whose size is not the file's");
  if (info.data_offset > file_size || info.data_size > file_size - info.data_offset) {
    Broken("accepted a data area outside the file");
  }
  for (const RegionEntry& region : info.regions) {
    if (region.slot_count == 0 || region.slot_count > slot::kMaxSlotsPerRegion) {
      Broken("accepted a region with a bad slot count");
    }
    if (region.slot_stride < slot::kPayloadOffset ||
        region.capacity > region.slot_stride - slot::kPayloadOffset) {
      Broken("accepted a slot stride that cannot hold the capacity");
    }
    if (region.slots_offset < info.data_offset + info.data_size ||
        region.slots_offset > file_size ||
        region.slot_stride > (file_size - region.slots_offset) / region.slot_count) {
      Broken("accepted a region whose slots are not inside the file after the data area");
    }
  }
}

void CheckReports(const std::vector<RegionReport>& reports, const StoreInfo& info) {
  if (reports.size() != info.regions.size()) Broken("verify lists a different number of regions");
  for (size_t i = 0; i < reports.size(); ++i) {
    const RegionReport& report = reports[i];
    if (report.name != info.regions[i].name) Broken("verify names a region differently");
    if (report.slots.size() != info.regions[i].slot_count) Broken("verify: wrong slot count");
    if (report.has_commit && report.length > report.capacity) Broken("verify: commit over capacity");
    if (report.has_commit && report.damaged) Broken("verify: a region both committed and damaged");
  }
}

// The read-only handle: List, Load and View agree with the full verify.
void CheckReader(const std::string& path, const StoreInfo& info,
                 const std::vector<RegionReport>* verified) {
  auto reader = Store::Open(path, OpenMode::kReadOnly);
  if (!reader.ok()) {
    ExpectRefusal(reader.status(), "Open(read-only)");
    return;
  }
  if (reader->info().file_size != info.file_size || reader->data_size() != info.data_size ||
      reader->info().regions.size() != info.regions.size()) {
    Broken("Open and ReadStoreInfo disagree");
  }
  CheckReports(reader->List(), info);
  std::vector<std::byte> out;
  for (size_t i = 0; i < info.regions.size(); ++i) {
    auto loaded = reader->Load(info.regions[i].name, out);
    const RegionReport* report = verified != nullptr ? &(*verified)[i] : nullptr;
    if (loaded.ok()) {
      if (out.size() != loaded->length || loaded->length > info.regions[i].capacity) {
        Broken("Load returned a length it should not");
      }
      if (report != nullptr &&
          (!report->has_commit || report->generation != loaded->generation)) {
        Broken("Load returned a commit verify does not call the newest valid one");
      }
    } else {
      const StatusCode code = loaded.status().code();
      // kNotFound: no commit yet; two regions may share a (crafted) name, in
      // which case Load finds the first.
      if (code != StatusCode::kNotFound && code != StatusCode::kCorruption) {
        Broken("Load: unexpected error " + loaded.status().ToString());
      }
      if (report != nullptr && report->has_commit && code == StatusCode::kCorruption) {
        Broken("Load found no valid slot where verify found one");
      }
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

// A writer: recovery on open, then a commit to each region reads back.
void CheckWriter(const std::string& path, const StoreInfo& info) {
  auto writer = Store::Open(path, OpenMode::kReadWrite);
  if (!writer.ok()) {
    ExpectRefusal(writer.status(), "Open(read-write)");
    return;
  }
  std::vector<std::byte> out;
  for (const RegionEntry& region : info.regions) {
    std::vector<std::byte> payload(std::min<uint64_t>(region.capacity, 100));
    for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 7 + 1);
    auto generation = writer->Commit(region.name, payload, Durability::kNone);
    if (!generation.ok()) {
      // A crafted table may repeat a name; Commit then goes to the first.
      if (generation.status().code() == StatusCode::kCorruption) continue;
      Broken("Commit: unexpected error " + generation.status().ToString());
    }
    auto loaded = writer->Load(region.name, out);
    if (!loaded.ok() || loaded->generation != *generation || out != payload) {
      Broken("a commit does not read back");
    }
  }
}

}  // namespace

int StoreFile(std::span<const uint8_t> input) {
  static ScratchFile scratch;
  const Image image = DecodeImage(input);
  if (!WriteImage(image, scratch.path())) Broken("cannot write the scratch file");
  const std::string& path = scratch.path();

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
  auto headers = VerifyRegions(path, headers_only);
  if (headers.ok()) {
    CheckReports(*headers, *info);
  } else {
    ExpectRefusal(headers.status(), "VerifyRegions(headers)");
  }
  VerifyOptions full;
  full.read_data_area = (image.flags & kReadDataArea) != 0;
  auto verified = VerifyRegions(path, full);
  if (verified.ok()) {
    CheckReports(*verified, *info);
  } else {
    ExpectRefusal(verified.status(), "VerifyRegions(full)");
  }
  CheckReader(path, *info, verified.ok() ? &*verified : nullptr);
  if ((image.flags & kOpenWriter) != 0) CheckWriter(path, *info);
  return 0;
}

}  // namespace regionstore::fuzz
