// Store::CopyTo: a new store holding one consistent set of this store's
// commits and its data area, built by Create's steps (a temp beside the
// destination, synced, published by one rename). docs/USING.md ("Copying a
// store") says what a copy promises.
#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "create.h"
#include "format.h"
#include "slot.h"
#include "store_rep.h"

namespace regionstore {

namespace {

// The data area goes over in pieces of this size, each one pwrite from the
// source's mapping.
constexpr uint64_t kDataChunk = 8 * format::kMiB;

// The source's regions (`made`, the first `sources` of them) changed as the
// caller's specs say: a larger capacity, another layout, another slot count
// (0 keeps each), or a new region. Errors (their message only): a region
// given twice, or one that would shrink.
Status ApplyRegionChanges(std::vector<CheckpointSpec>& made, std::span<const CheckpointSpec> specs,
                          size_t sources) {
  const auto invalid = [](std::string message) {
    return Status::Error(StatusCode::kInvalidArgument, "copy", "", std::move(message));
  };
  for (const CheckpointSpec& spec : specs) {
    auto same = std::find_if(made.begin(), made.end(),
                             [&](const CheckpointSpec& one) { return one.name == spec.name; });
    if (same == made.end()) {
      made.push_back(spec);  // a new region (Create checks its name)
      continue;
    }
    if (static_cast<size_t>(same - made.begin()) >= sources) {
      return invalid("region '" + spec.name + "' is given twice");
    }
    if (spec.capacity != 0 && spec.capacity < same->capacity) {
      return invalid("region '" + spec.name + "' would shrink from " +
                     std::to_string(same->capacity) + " to " + std::to_string(spec.capacity) +
                     " bytes: a copy never drops bytes");
    }
    if (spec.capacity != 0 &&
        (spec.capacity != same->capacity || spec.layout != SlotLayout::kAuto)) {
      same->capacity = spec.capacity;
      same->layout = spec.layout;
    } else if (spec.capacity == 0 && spec.layout != SlotLayout::kAuto) {
      same->layout = spec.layout;  // the capacity kept, laid out anew
    }
    if (spec.slots != 0) same->slots = spec.slots;
  }
  return Status::Ok();
}

// Create with replace_existing would take the source's lock and rename
// over it (a writer's handle would go on writing into an unlinked file).
// Checked through the source's descriptor `source` (its path `source_path`),
// so a second name for the same file (a hard link, a path through a
// symbolic link) is caught too. Errors: kInvalidArgument, those of fstat.
Status CheckNotSelf(Io& io, File& source, const std::string& source_path,
                    const std::string& destination) {
  auto target = io.StatPath(destination);
  if (!target.ok()) return Status::Ok();
  auto self = source.Stat();
  if (!self.ok()) return self.status().WithOperation("copy: fstat the source", source_path);
  if (target->device == self->device && target->inode == self->inode) {
    return Status::Error(StatusCode::kInvalidArgument, "copy", destination,
                         "is the store being copied; copy to another file");
  }
  return Status::Ok();
}

// The source's data area `data` into the new store's at `data_offset`, in
// pieces of kDataChunk; `wrote` is told each piece's size.
Status WriteDataArea(File& file, uint64_t data_offset, std::span<const std::byte> data,
                     const std::string& destination, const std::function<void(uint64_t)>& wrote) {
  for (uint64_t offset = 0; offset < data.size();) {
    const uint64_t length = std::min<uint64_t>(kDataChunk, data.size() - offset);
    if (Status s = file.WriteAt(data_offset + offset, data.subspan(offset, length)); !s.ok()) {
      return s.WithOperation("copy: write the data area", destination);
    }
    offset += length;
    wrote(length);
  }
  return Status::Ok();
}

// Each commit into slot 0 of its region of the new store `info` describes,
// as a commit leaves a slot: the header unit (its first 64 bytes; the rest
// is zero), the payload. `wrote` is told each payload's size.
Status WriteCommitsInSlotZero(File& file, const StoreInfo& info,
                              std::span<const CheckpointMeta> metas,
                              std::span<const std::vector<std::byte>> payloads,
                              const std::string& destination,
                              const std::function<void(uint64_t)>& wrote) {
  for (size_t i = 0; i < metas.size(); ++i) {
    if (metas[i].generation == 0) continue;
    const RegionEntry& region = info.regions[i];
    slot::Header header;
    header.region = static_cast<uint32_t>(i);
    header.slot = 0;
    header.generation = metas[i].generation;
    header.length = payloads[i].size();
    header.commit_unix_ns = metas[i].commit_unix_ns;
    header.payload_checksum = format::Checksum(payloads[i]);
    if (!payloads[i].empty()) {
      if (Status s = file.WriteAt(slot::PayloadFileOffset(region, 0), payloads[i]); !s.ok()) {
        return s.WithOperation("copy: write a payload", destination);
      }
    }
    if (Status s = file.WriteAt(slot::HeaderFileOffset(region, 0), slot::EncodeHeader(header));
        !s.ok()) {
      return s.WithOperation("copy: write a slot header", destination);
    }
    wrote(payloads[i].size());
  }
  return Status::Ok();
}

}  // namespace

Result<CopyReport> Store::CopyTo(const std::string& destination, const CopyOptions& options) const {
  const Rep& r = *rep_;
  static constexpr const char* kOperation = "copy";
  const auto invalid = [&](std::string message) {
    return Status::Error(StatusCode::kInvalidArgument, kOperation, destination, std::move(message));
  };
  auto layout = internal::LayoutLike(r.info, options.protocol);
  if (!layout.ok()) return invalid(layout.status().message());
  CreateOptions create = std::move(*layout);
  const uint32_t protocol = create.protocol;
  const uint64_t data_size = options.data_size == 0 ? r.info.data_size : options.data_size;
  if (data_size < r.info.data_size) {
    return invalid("a data area of " + std::to_string(data_size) +
                   " bytes is smaller than the source's " + std::to_string(r.info.data_size) +
                   ": a copy never drops bytes");
  }
  if (Status s = CheckNotSelf(*r.io, *r.file, r.path, destination); !s.ok()) return s;

  // Every region as of one point of the commit history.
  std::vector<std::string_view> names;
  names.reserve(r.info.regions.size());
  for (const RegionEntry& region : r.info.regions) names.push_back(region.name);
  std::vector<std::vector<std::byte>> payloads;
  std::vector<CheckpointMeta> metas;
  if (!names.empty()) {
    // On a writer's handle, under its mutex (Load's rule); the data area
    // is copied without it, as Read copies.
    auto loaded = [&] {
      HandleLock lock(*rep_);
      return LoadSetImpl(names, payloads, /*missing_ok=*/true);
    }();
    if (!loaded.ok()) return loaded.status().WithOperation("copy: load every region", r.path);
    metas = std::move(*loaded);
  }

  CopyReport report;
  report.protocol = protocol;
  report.regions = r.info.regions.size();
  report.data_bytes = r.info.data_size;
  for (size_t i = 0; i < metas.size(); ++i) {
    if (metas[i].generation == 0) continue;
    ++report.regions_committed;
    report.payload_bytes += payloads[i].size();
  }

  create.replace_existing = options.replace_existing;
  create.io = r.io;
  create.warnings = options.warnings;
  for (const RegionEntry& region : r.info.regions) {
    create.checkpoints.push_back({region.name, region.capacity, region.layout,
                                  options.slots != 0 ? options.slots : region.slot_count});
  }
  if (Status s = ApplyRegionChanges(create.checkpoints, options.checkpoints, r.info.regions.size());
      !s.ok()) {
    return invalid(s.message());
  }
  for (size_t i = r.info.regions.size(); i < create.checkpoints.size(); ++i) {
    if (create.checkpoints[i].slots == 0) create.checkpoints[i].slots = options.slots;
  }
  uint64_t file_size = 0;
  const auto progress = [&](uint64_t done) {
    if (options.progress) {
      options.progress(done, file_size + report.payload_bytes + report.data_bytes);
    }
  };
  create.progress = [&](uint64_t done, uint64_t total) {
    file_size = total;
    progress(done);
  };
  const std::byte* source = r.mapping->data();
  auto populate = [&](File& file, const StoreInfo& info) -> Status {
    file_size = info.file_size;
    uint64_t done = file_size;
    if (Status s = WriteCommitsInSlotZero(file, info, metas, payloads, destination,
                                          [&](uint64_t bytes) { progress(done += bytes); });
        !s.ok()) {
      return s;
    }
    return WriteDataArea(file, info.data_offset,
                         std::span(source + r.info.data_offset, r.info.data_size), destination,
                         [&](uint64_t bytes) { progress(done += bytes); });
  };
  if (Status s = internal::CreateStore(destination, data_size, create, populate); !s.ok()) {
    return s.WithOperation(
        s.operation().starts_with("create") ? "copy: " + s.operation() : s.operation(),
        destination);
  }
  report.file_size = file_size;
  return report;
}

}  // namespace regionstore
