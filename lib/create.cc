// Store creation: check the options, size the file, refuse or lock what the
// path holds, fill in the superblock, then build a temp file beside the path
// and publish it with one rename. Each step is a function below, in the order
// CreateStore runs them; the order is part of what the golden seam trace
// pins, so a change here shows up there.
#include "create.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "cow.h"
#include "format.h"
#include "slot.h"
#include "temp_file.h"

namespace regionstore {

namespace {

// Zero-fill chunk for the data area: large enough that the syscall count does
// not matter, small enough not to matter for memory.
constexpr uint64_t kZeroFillChunk = 8 * format::kMiB;
// Zero-fill chunk outside the data area (see ZeroFill).
constexpr uint64_t kSmallFillChunk = 64 * format::kKiB;

// What the options ask for beyond the data area and the checkpoints.
struct Features {
  bool sidecar = false;  // protocol 2
  bool batch_log = false;
  uint64_t journal_size = 0;
};

// The protocol and, for protocol 2, its journal's size.
Result<Features> CheckProtocol(const std::string& path, const CreateOptions& options) {
  if (options.protocol != 1 && options.protocol != 2) {
    return Status::Error(StatusCode::kInvalidArgument, "create", path,
                         "protocol " + std::to_string(options.protocol) +
                             " does not exist: 1 (the default) or 2 (readers that wait "
                             "register in a sidecar, PATH.shm)");
  }
  // Every protocol 2 store takes batches, and has a journal for them.
  Features features;
  features.sidecar = options.protocol == 2;
  features.batch_log = options.batch_log || options.protocol == 2;
  features.journal_size = options.protocol != 2       ? 0
                          : options.journal_size == 0 ? format::kDefaultJournalSize
                                                      : options.journal_size;
  if (options.protocol != 2 && options.journal_size != 0) {
    return Status::Error(StatusCode::kInvalidArgument, "create", path,
                         "a batch journal needs protocol 2");
  }
  const uint64_t journal_size = features.journal_size;
  if (options.protocol == 2 &&
      (journal_size < format::kMinJournalSize || journal_size > format::kMaxJournalSize ||
       journal_size % format::kAreaAlignment != 0)) {
    return Status::Error(StatusCode::kInvalidArgument, "create", path,
                         "journal size " + std::to_string(journal_size) +
                             " is not a multiple of 64 KiB from 256 KiB to 1 GiB");
  }
  return features;
}

// Refuses early, before writing gigabytes, when the target exists and may not
// be replaced; the no-replace rename of the publish still closes the race.
// When it may be replaced, returns the old store's file with its lock held
// (nullptr when there is none), to be held across the rename.
Result<std::unique_ptr<File>> LockReplacedStore(Io& io, const std::string& path,
                                                const CreateOptions& options) {
  if (!options.replace_existing) {
    if (io.StatPath(path).ok()) {
      return Status::Error(StatusCode::kAlreadyExists, "create", path,
                           "a file exists at this path (replace it explicitly)");
    }
    return std::unique_ptr<File>();
  }
  // Never pull a store from under a live writer: hold its lock across the
  // rename. flock works on a read-only descriptor, so this needs no write
  // permission on the old file. Open() re-checks the inode after locking,
  // so a writer that opened the old file just before us notices the swap.
  // Never through a symbolic link: the rename would replace the link itself,
  // leaving the store it points to (and its writer) as they were, while the
  // lock taken here would be the target's.
  // Replace a file, never a directory (the rename would fail only after the
  // whole zero-fill) nor a FIFO, device or socket (the rename would put a
  // regular file in its place: /dev/null would become a store). Asked of the
  // path before anything opens it: opening a device can have effects of its
  // own (a tape rewinds at close).
  if (auto kind = io.StatPath(path); kind.ok() && !kind->is_regular) {
    return Status::Error(StatusCode::kInvalidArgument, "create", path,
                         kind->is_directory
                             ? "is a directory; refused: only a file is replaced"
                             : "is not a regular file (a FIFO, a device or a socket); "
                               "refused: replacing it would put a regular file in its place");
  }
  auto existing = io.Open(path, OpenMode::kReadOnly, SymlinkPolicy::kRefuse);
  if (!existing.ok() && existing.status().code() == StatusCode::kInvalidArgument) {
    return Status::Error(StatusCode::kInvalidArgument, "create", path,
                         "is a symbolic link; replacing it would replace the link, not the "
                         "store it points to (remove the link, or create at its target)");
  }
  if (existing.ok()) {
    if (Status locked = (*existing)->LockExclusive(); !locked.ok()) {
      return locked.WithOperation("create: lock the store being replaced", path);
    }
    return std::move(*existing);
  }
  if (existing.status().code() != StatusCode::kNotFound) {
    return existing.status().WithOperation("create: open the store being replaced", path);
  }
  return std::unique_ptr<File>();
}

// The new store's superblock: a fresh UUID, the layout, and the feature flags.
Result<StoreInfo> NewStoreInfo(Io& io, const std::string& path, const Features& features,
                               const format::Layout& layout,
                               std::pair<std::vector<RegionEntry>, uint64_t> regions) {
  StoreInfo info;
  if (Status s = io.FillRandom(std::as_writable_bytes(std::span(info.uuid))); !s.ok()) {
    return s.WithOperation("create: random", path);
  }
  // RFC 4122 version 4 (random) UUID.
  info.uuid[6] = static_cast<uint8_t>((info.uuid[6] & 0x0f) | 0x40);
  info.uuid[8] = static_cast<uint8_t>((info.uuid[8] & 0x3f) | 0x80);
  info.format_version = format::kFormatVersion;
  info.file_size = regions.second;
  info.regions = std::move(regions.first);
  info.data_offset = layout.data_offset;
  info.data_size = layout.data_size;
  info.region_table_offset = format::kRegionTableOffset;
  info.created_unix_ns = io.NowUnixNanos();
  info.created_page_size = static_cast<uint32_t>(io.PageSize());
  info.incompat_flags = (features.batch_log ? format::kIncompatBatchLog : 0) |
                        (features.sidecar ? format::kIncompatSidecar : 0) |
                        (features.journal_size != 0 ? format::kIncompatJournal : 0);
  info.journal_size = features.journal_size;
  info.incompat_flags = format::IncompatFlagsFor(info);
  return info;
}

// Refuses a btrfs with mixed block groups; warns (when asked for warnings) of
// a copy-on-write filesystem whose files cannot be made NOCOW.
Status CheckFilesystem(const Result<FsInfo>& fs, const std::string& directory,
                       const std::string& path, const CreateOptions& options) {
  if (fs.ok() && fs->mixed_block_groups) {
    return Status::Error(
        StatusCode::kInvalidArgument, "create", path,
        "'" + directory +
            "' is on a btrfs whose data and metadata share block groups (mkfs.btrfs --mixed, "
            "as small filesystems are often made): there a full disk turns a store's mapped "
            "writes into SIGBUS even with NOCOW; put the store on another filesystem, or on a "
            "btrfs made without --mixed; nothing created");
  }
  // Only a warning: the store still works, but the reservation does not
  // protect mapped writes from a full disk there.
  if (options.warnings != nullptr && fs.ok() && fs->copy_on_write &&
      !internal::CanDisableCopyOnWrite(*fs)) {
    options.warnings->push_back("'" + directory + "' is on " + fs->type_name +
                                ", a copy-on-write filesystem: reserved blocks do not "
                                "stop a full disk from turning a mapped write into SIGBUS");
  }
  return Status::Ok();
}

// fallocated blocks are unwritten extents; writing zeros converts them now,
// so later flushes do not each journal an extent conversion. The data area is
// filled in large writes. The metadata and the slots get writes of at most
// 64 KiB: the page cache keeps the folio size a write made, and every later
// small write into a large folio (an intent mark, a 4 KiB header unit) walks
// all its blocks on ext4, 6-10 us instead of under 1
// (docs/history/BENCH-CHECKPOINTS-0.13.md, "Compact slots and many regions").
Status ZeroFill(File& file, const StoreInfo& info, const std::string& path,
                const CreateOptions& options) {
  const uint64_t data_end =
      info.data_offset + format::AlignUp(info.data_size, format::kAreaAlignment);
  const std::vector<std::byte> zeros(std::min(kZeroFillChunk, info.file_size));
  for (uint64_t offset = 0; offset < info.file_size;) {
    const bool data_area = offset >= info.data_offset && offset < data_end;
    const uint64_t chunk = data_area ? kZeroFillChunk : kSmallFillChunk;
    const uint64_t stop = offset < info.data_offset ? info.data_offset
                          : data_area               ? data_end
                                                    : info.file_size;
    const uint64_t length = std::min({zeros.size(), chunk, stop - offset});
    if (Status s = file.WriteAt(offset, std::span(zeros).first(length)); !s.ok()) {
      return s.WithOperation("create: zero-fill", path);
    }
    offset += length;
    if (options.progress) options.progress(offset, info.file_size);
  }
  return Status::Ok();
}

// Every step until the rename works on the temp file; on failure the caller
// discards it.
Status BuildAndPublish(Io& io, internal::TempFile& temp, const std::string& path,
                       const StoreInfo& info, const Result<FsInfo>& fs,
                       const std::string& directory, const CreateOptions& options,
                       const internal::PopulateFn& populate) {
  File& file = *temp.file;
  // btrfs: FS_NOCOW_FL while the file is still empty (it is ignored once
  // there is data), so the reserved blocks are overwritten in place and a
  // full disk cannot turn a mapped write into SIGBUS (docs/HARDENING.md).
  if (fs.ok() && internal::CanDisableCopyOnWrite(*fs)) {
    std::string warning = internal::DisableCopyOnWrite(file, *fs, directory);
    if (options.warnings != nullptr) options.warnings->push_back(std::move(warning));
  }
  // Reserve every block: a sparse store turns a full disk into SIGBUS on a
  // later mapped write.
  if (Status s = file.Allocate(0, info.file_size); !s.ok()) {
    return s.WithOperation("create: fallocate", path);
  }
  if (Status s = ZeroFill(file, info, path, options); !s.ok()) return s;
  if (Status s = file.WriteAt(0, format::EncodeHeader(info)); !s.ok()) {
    return s.WithOperation("create: write superblock", path);
  }
  if (populate) {
    if (Status s = populate(file, info); !s.ok()) return s;
  }
  if (Status s = file.Sync(); !s.ok()) return s.WithOperation("create: fsync", path);
  if (Status s = internal::PublishTemp(io, temp, path, options.replace_existing,
                                       /*durable=*/true, "create");
      !s.ok()) {
    if (s.code() == StatusCode::kAlreadyExists) {
      return Status::Error(StatusCode::kAlreadyExists, s.operation(), path,
                           "a file appeared at this path (replace it explicitly)");
    }
    return s;
  }
  return Status::Ok();
}

}  // namespace

Status Store::Create(const std::string& path, uint64_t data_size, const CreateOptions& options) {
  return internal::CreateStore(path, data_size, options, nullptr);
}

Status internal::CreateStore(const std::string& path, uint64_t data_size,
                             const CreateOptions& options, const PopulateFn& populate) {
  Io& io = options.io != nullptr ? *options.io : *Io::Default();
  auto features = CheckProtocol(path, options);
  if (!features.ok()) return features.status();
  auto layout = format::LayoutFor(data_size, options.checkpoints.size(), features->batch_log,
                                  features->journal_size);
  if (!layout.ok()) return layout.status().WithOperation("create", path);
  auto regions = slot::LayoutRegions(options.checkpoints, layout->file_size, io.PageSize());
  if (!regions.ok()) return regions.status().WithOperation("create", path);

  // Held until this returns, across the publish's rename.
  auto replaced_store_lock = LockReplacedStore(io, path, options);
  if (!replaced_store_lock.ok()) return replaced_store_lock.status();

  auto info = NewStoreInfo(io, path, *features, *layout, std::move(*regions));
  if (!info.ok()) return info.status();

  const std::string directory = internal::DirectoryOf(path);
  // Copy-on-write: btrfs gets FS_NOCOW_FL in BuildAndPublish (and its
  // warning there).
  const Result<FsInfo> fs = io.StatFs(directory);
  if (Status s = CheckFilesystem(fs, directory, path, options); !s.ok()) return s;
  // In the same directory, so the publish stays on one filesystem; nameless
  // where the filesystem allows it, so that no kill leaves it behind.
  auto temp = internal::CreateTempBeside(io, path, "create");
  if (!temp.ok()) return temp.status();

  if (Status s = BuildAndPublish(io, *temp, path, *info, fs, directory, options, populate);
      !s.ok()) {
    return internal::DiscardTemp(io, *temp, s);
  }
  if (Status s = io.SyncDirectory(directory); !s.ok()) {
    // Published, but the new name may not survive a power loss yet.
    return s.WithOperation(
        "create: fsync directory (the store exists; its name may not be durable)", path);
  }
  return Status::Ok();
}

Result<CreateOptions> internal::LayoutLike(const StoreInfo& info, uint32_t protocol) {
  CreateOptions create;
  create.protocol = protocol == 0 ? info.protocol() : protocol;
  if (create.protocol != 1 && create.protocol != 2) {
    return Status::Error(
        StatusCode::kInvalidArgument, "copy", "",
        "protocol " + std::to_string(protocol) + " does not exist: 1 or 2 (0 keeps the source's)");
  }
  create.batch_log = (info.incompat_flags & format::kIncompatBatchLog) != 0;
  // A protocol 2 source's journal size carries over; a migration gets the
  // default.
  if (create.protocol == 2 && info.journal_size != 0) create.journal_size = info.journal_size;
  return create;
}

}  // namespace regionstore
