#include "regionstore/store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "cow.h"
#include "create.h"
#include "format.h"
#include "slot.h"
#include "store_rep.h"
#include "temp_file.h"

namespace regionstore {

namespace {

// Zero-fill chunk for Create: large enough that the syscall count does not
// matter, small enough not to matter for memory.
constexpr uint64_t kZeroFillChunk = 8 * format::kMiB;
// Zero-fill chunk outside the data area (see Create).
constexpr uint64_t kSmallFillChunk = 64 * format::kKiB;

// How many times Open retries when the path is replaced between its open()
// and its lock (a concurrent `regionctl create --force`).
constexpr int kOpenAttempts = 3;

}  // namespace

// ---------------------------------------------------------------------------
// Create

Status Store::Create(const std::string& path, uint64_t data_size, const CreateOptions& options) {
  return internal::CreateStore(path, data_size, options, nullptr);
}

Status internal::CreateStore(const std::string& path, uint64_t data_size,
                             const CreateOptions& options, const PopulateFn& populate) {
  Io& io = options.io != nullptr ? *options.io : *Io::Default();
  if (options.protocol != 1 && options.protocol != 2) {
    return Status::Error(StatusCode::kInvalidArgument, "create", path,
                         "protocol " + std::to_string(options.protocol) +
                             " does not exist: 1 (the default) or 2 (readers that wait "
                             "register in a sidecar, PATH.shm)");
  }
  // Every protocol 2 store takes batches, and has a journal for them.
  const bool batch_log = options.batch_log || options.protocol == 2;
  const uint64_t journal_size = options.protocol != 2       ? 0
                                : options.journal_size == 0 ? format::kDefaultJournalSize
                                                            : options.journal_size;
  if (options.protocol != 2 && options.journal_size != 0) {
    return Status::Error(StatusCode::kInvalidArgument, "create", path,
                         "a batch journal needs protocol 2");
  }
  if (options.protocol == 2 &&
      (journal_size < format::kMinJournalSize || journal_size > format::kMaxJournalSize ||
       journal_size % format::kAreaAlignment != 0)) {
    return Status::Error(StatusCode::kInvalidArgument, "create", path,
                         "journal size " + std::to_string(journal_size) +
                             " is not a multiple of 64 KiB from 256 KiB to 1 GiB");
  }
  auto layout = format::LayoutFor(data_size, options.checkpoints.size(), batch_log, journal_size);
  if (!layout.ok()) return layout.status().WithOperation("create", path);
  auto regions = slot::LayoutRegions(options.checkpoints, layout->file_size, io.PageSize());
  if (!regions.ok()) return regions.status().WithOperation("create", path);

  // Refuse early, before writing gigabytes, when the target exists; the
  // no-replace rename below still closes the race.
  std::unique_ptr<File> replaced_store_lock;
  if (!options.replace_existing) {
    if (io.StatPath(path).ok()) {
      return Status::Error(StatusCode::kAlreadyExists, "create", path,
                           "a file exists at this path (replace it explicitly)");
    }
  } else {
    // Never pull a store from under a live writer: hold its lock across the
    // rename. flock works on a read-only descriptor, so this needs no write
    // permission on the old file. Open() re-checks the inode after locking,
    // so a writer that opened the old file just before us notices the swap.
    // Never through a symbolic link: the rename below would replace the
    // link itself, leaving the store it points to (and its writer) as they
    // were, while the lock taken here would be the target's.
    // Replace a file, never a directory (the rename would fail only after
    // the whole zero-fill) nor a FIFO, device or socket (the rename would
    // put a regular file in its place: /dev/null would become a store).
    // Asked of the path before anything opens it: opening a device can
    // have effects of its own (a tape rewinds at close).
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
      replaced_store_lock = std::move(*existing);
    } else if (existing.status().code() != StatusCode::kNotFound) {
      return existing.status().WithOperation("create: open the store being replaced", path);
    }
  }

  StoreInfo info;
  if (Status s = io.FillRandom(std::as_writable_bytes(std::span(info.uuid))); !s.ok()) {
    return s.WithOperation("create: random", path);
  }
  // RFC 4122 version 4 (random) UUID.
  info.uuid[6] = static_cast<uint8_t>((info.uuid[6] & 0x0f) | 0x40);
  info.uuid[8] = static_cast<uint8_t>((info.uuid[8] & 0x3f) | 0x80);
  info.format_version = format::kFormatVersion;
  info.file_size = regions->second;
  info.regions = std::move(regions->first);
  info.data_offset = layout->data_offset;
  info.data_size = layout->data_size;
  info.region_table_offset = format::kRegionTableOffset;
  info.created_unix_ns = io.NowUnixNanos();
  info.created_page_size = static_cast<uint32_t>(io.PageSize());
  info.incompat_flags = (batch_log ? format::kIncompatBatchLog : 0) |
                        (options.protocol == 2 ? format::kIncompatSidecar : 0) |
                        (journal_size != 0 ? format::kIncompatJournal : 0);
  info.journal_size = journal_size;
  info.incompat_flags = format::IncompatFlagsFor(info);

  const std::string directory = internal::DirectoryOf(path);
  // Copy-on-write: btrfs gets FS_NOCOW_FL in `build` (and its warning there).
  const Result<FsInfo> fs = io.StatFs(directory);
  if (fs.ok() && fs->mixed_block_groups) {
    return Status::Error(
        StatusCode::kInvalidArgument, "create", path,
        "'" + directory +
            "' is on a btrfs whose data and metadata share block groups (mkfs.btrfs --mixed, "
            "as small filesystems are often made): there a full disk turns a store's mapped "
            "writes into SIGBUS even with NOCOW; put the store on another filesystem, or on a "
            "btrfs made without --mixed; nothing created");
  }
  if (options.warnings != nullptr) {
    // Only a warning: the store still works, but the reservation below does
    // not protect mapped writes from a full disk there.
    if (fs.ok() && fs->copy_on_write && !internal::CanDisableCopyOnWrite(*fs)) {
      options.warnings->push_back("'" + directory + "' is on " + fs->type_name +
                                  ", a copy-on-write filesystem: reserved blocks do not "
                                  "stop a full disk from turning a mapped write into SIGBUS");
    }
  }
  // In the same directory, so the publish stays on one filesystem; nameless
  // where the filesystem allows it, so that no kill leaves it behind.
  auto temp = internal::CreateTempBeside(io, path, "create");
  if (!temp.ok()) return temp.status();

  // Every step until the rename works on the temp file; on failure it goes.
  auto build = [&]() -> Status {
    File& file = *temp->file;
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
    // fallocated blocks are unwritten extents; writing zeros converts them
    // now, so later flushes do not each journal an extent conversion.
    // The data area is filled in large writes. The metadata and the slots
    // get writes of at most 64 KiB: the page cache keeps the folio size a
    // write made, and every later small write into a large folio (an intent
    // mark, a 4 KiB header unit) walks all its blocks on ext4, 6-10 us
    // instead of under 1 (docs/history/BENCH-CHECKPOINTS-0.13.md, "Compact slots and
    // many regions").
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
    if (Status s = file.WriteAt(0, format::EncodeHeader(info)); !s.ok()) {
      return s.WithOperation("create: write superblock", path);
    }
    if (populate) {
      if (Status s = populate(file, info); !s.ok()) return s;
    }
    if (Status s = file.Sync(); !s.ok()) return s.WithOperation("create: fsync", path);
    if (Status s = internal::PublishTemp(io, *temp, path, options.replace_existing,
                                         /*durable=*/true, "create");
        !s.ok()) {
      if (s.code() == StatusCode::kAlreadyExists) {
        return Status::Error(StatusCode::kAlreadyExists, s.operation(), path,
                             "a file appeared at this path (replace it explicitly)");
      }
      return s;
    }
    return Status::Ok();
  };
  if (Status s = build(); !s.ok()) return internal::DiscardTemp(io, *temp, s);
  if (Status s = io.SyncDirectory(directory); !s.ok()) {
    // Published, but the new name may not survive a power loss yet.
    return s.WithOperation(
        "create: fsync directory (the store exists; its name may not be durable)", path);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Open and the handle

Store::Store(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
Store::Store(Store&& other) noexcept = default;
Store& Store::operator=(Store&& other) noexcept = default;
Store::~Store() = default;

Result<Store> Store::Open(const std::string& path, OpenMode mode, const OpenOptions& options) {
  auto rep = std::make_unique<Rep>();
  rep->io = options.io != nullptr ? options.io : Io::Default();
  rep->path = path;
  rep->writable = mode == OpenMode::kReadWrite;
  rep->wake_waiters = options.wake_waiters;
  rep->page_size = rep->io->PageSize();

  for (int attempt = 1;; ++attempt) {
    auto file = OpenStoreFile(*rep->io, path, mode, options.symlinks);
    if (!file.ok()) return file.status();
    if (!rep->writable) {
      rep->file = std::move(*file);
      break;
    }
    if (Status s = (*file)->LockExclusive(); !s.ok()) return s.WithOperation("open: lock", path);
    // The lock protects an inode, not a name: if the path was replaced
    // between our open() and flock(), we hold the lock of an orphan.
    auto locked = (*file)->Stat();
    if (!locked.ok()) return locked.status().WithOperation("open: fstat", path);
    auto named = rep->io->StatPath(path);
    if (named.ok() && named->device == locked->device && named->inode == locked->inode) {
      rep->file = std::move(*file);
      break;
    }
    if (attempt == kOpenAttempts) {
      return Status::Error(StatusCode::kBusy, "open: lock", path,
                           "the file at this path kept being replaced while opening it");
    }
  }

  auto info = ReadValidatedInfo(*rep->file, path);
  if (!info.ok()) return info.status();
  if (rep->writable) {
    // Blocks shared with a reflink copy fault on a full disk when written.
    if (Status s =
            internal::CheckSharedExtents(*rep->io, *rep->file, path, info->file_size, options);
        !s.ok()) {
      return s;
    }
  }
  rep->info = std::move(*info);
  rep->by_name = format::SortedByName(rep->info.regions);
  auto mapping = rep->file->Map(rep->info.file_size, mode);
  if (!mapping.ok()) return mapping.status().WithOperation("open: mmap", path);
  rep->mapping = std::move(*mapping);
  std::shared_ptr<sidecar::Sidecar> writer_sidecar;
  if (rep->writable && rep->info.protocol() == 2) {
    // Before anything is published: every wake goes through it.
    const Result<FileStat> store_stat = rep->file->Stat();
    if (!store_stat.ok()) return store_stat.status().WithOperation("open: fstat", path);
    auto sidecar =
        sidecar::Open(*rep->io, path, *store_stat, OpenMode::kReadWrite, /*create=*/true);
    if (!sidecar.ok()) {
      const Status& failed = sidecar.status();
      return Status::Error(failed.code(), "open: sidecar", failed.path(),
                           failed.message() + (failed.message().empty() ? "" : "; ") +
                               "the writer of a protocol 2 store needs its sidecar PATH.shm, "
                               "where readers that wait register",
                           failed.sys_errno());
    }
    writer_sidecar = std::make_shared<sidecar::Sidecar>(std::move(*sidecar));
  }
  rep->shared = SharedState::ForStore(
      {rep->io, &rep->path, rep->file.get(), rep->mapping.get(), &rep->info, rep->writable},
      std::move(writer_sidecar));
  if (!rep->writable) rep->BuildJournalOverlay();
  if (rep->writable) {
    if (Status s = rep->RecoverOnOpen(); !s.ok()) return s;
    if (Status s = rep->AfterOpenBarrier(); !s.ok()) return s;
    if (rep->open_publishing) {
      if (Status s = rep->EndPublishing("open: pwrite (publication word)"); !s.ok()) return s;
    }
  }
  return Store(std::move(rep));
}

Status Store::Write(uint64_t offset, std::span<const std::byte> data, Durability durability) {
  Rep& r = *rep_;
  if (Status s = r.CheckWritable("write"); !s.ok()) return s;
  if (Status s = r.CheckRange(offset, data.size(), "write"); !s.ok()) return s;
  if (data.empty()) return Status::Ok();
  const uint64_t file_offset = r.info.data_offset + offset;

  std::byte* target = r.mapping->data() + file_offset;
  switch (durability) {
    case Durability::kNone:
      std::memmove(target, data.data(), data.size());
      return r.CountWrite(durability, data.size());
    case Durability::kSync:
      if (data.size() < kDsyncWriteBelow && !r.InMapping(data)) {
        // A store through the mapping dirties every page-cache folio it
        // touches whole (ext4's write fault marks all its blocks), and
        // msync then writes the folios back: 2 MiB for a 4 KiB write into
        // a fresh store's data area. A pwrite dirties only the blocks it
        // writes, and RWF_DSYNC syncs its range as msync(MS_SYNC) would
        // (docs/history/BENCH-CHECKPOINTS-0.13.md, "Small durable writes, the
        // publication word and the fused copy"). It goes through the page
        // cache the mapping shares, so views see it. A failed call may
        // have changed some pages: it poisons, as a failed barrier does.
        // Bytes that come from the store's own mapping (a view) take the
        // memmove path: the kernel's copy is a memcpy, wrong for ranges
        // that overlap.
        Status synced = r.Barrier({.kind = Rep::BarrierKind::kDsyncWrite,
                                   .counted_as = durability,
                                   .operation = "write: pwritev2(RWF_DSYNC)",
                                   .file_offset = file_offset,
                                   .length = data.size(),
                                   .data = data});
        return synced.ok() ? r.CountWrite(durability, data.size()) : synced;
      }
      [[fallthrough]];
    case Durability::kAsync: {
      if (durability == Durability::kSync) {
        // After each msync(MS_SYNC) the kernel write-protects the pages it
        // wrote back, so the next copy would fault once per page; taking
        // those faults in one call measured 5-27% faster (docs/BENCH-LAB.md).
        const uint64_t start = file_offset & ~(r.page_size - 1);
        r.mapping->PrepareWrite(start, file_offset + data.size() - start);
      }
      std::memmove(target, data.data(), data.size());
      const bool sync = durability == Durability::kSync;
      Status synced =
          r.Barrier({.kind = sync ? Rep::BarrierKind::kMsyncSync : Rep::BarrierKind::kMsyncAsync,
                     .counted_as = durability,
                     .operation = sync ? "write: msync(MS_SYNC)" : "write: msync(MS_ASYNC)",
                     .file_offset = file_offset,
                     .length = data.size(),
                     .reset_page_tables = true});
      return synced.ok() ? r.CountWrite(durability, data.size()) : synced;
    }
    case Durability::kPwriteFdatasync: {
      // The write goes through the page cache the mapping shares, so the
      // mapping sees it. A failed pwrite may have changed some pages: poison.
      if (Status s = r.file->WriteAt(file_offset, data); !s.ok()) {
        ++r.stats.failed_writes;
        return r.Poison(s, "write: pwrite");
      }
      Status synced = r.Barrier({.kind = Rep::BarrierKind::kFdatasync,
                                 .counted_as = durability,
                                 .operation = "write: fdatasync"});
      return synced.ok() ? r.CountWrite(durability, data.size()) : synced;
    }
  }
  return Status::Error(StatusCode::kInvalidArgument, "write", r.path, "unknown durability mode");
}

Status Store::Pwrite(uint64_t offset, std::span<const std::byte> data) {
  Rep& r = *rep_;
  if (Status s = r.CheckWritable("write"); !s.ok()) return s;
  if (Status s = r.CheckRange(offset, data.size(), "write"); !s.ok()) return s;
  if (data.empty()) return Status::Ok();
  // As kPwriteFdatasync's first half: a failed pwrite may have changed some
  // pages, so it poisons.
  if (Status s = r.file->WriteAt(r.info.data_offset + offset, data); !s.ok()) {
    ++r.stats.failed_writes;
    return r.Poison(s, "write: pwrite");
  }
  return r.CountWrite(Durability::kNone, data.size());
}

Status Store::Flush(uint64_t offset, uint64_t length, Durability durability) {
  Rep& r = *rep_;
  if (Status s = r.CheckWritable("flush"); !s.ok()) return s;
  if (Status s = r.CheckRange(offset, length, "flush"); !s.ok()) return s;
  if (length == 0) return Status::Ok();
  const uint64_t file_offset = r.info.data_offset + offset;
  switch (durability) {
    case Durability::kNone:
      return Status::Ok();
    case Durability::kAsync:
      return r.Barrier({.kind = Rep::BarrierKind::kMsyncAsync,
                        .counted_as = durability,
                        .operation = "flush: msync(MS_ASYNC)",
                        .file_offset = file_offset,
                        .length = length});
    case Durability::kSync:
      return r.Barrier({.kind = Rep::BarrierKind::kMsyncSync,
                        .counted_as = durability,
                        .operation = "flush: msync(MS_SYNC)",
                        .file_offset = file_offset,
                        .length = length,
                        .reset_page_tables = true});
    case Durability::kPwriteFdatasync: {
      Status barrier = r.Barrier({.kind = Rep::BarrierKind::kFdatasync,
                                  .counted_as = durability,
                                  .operation = "flush: fdatasync"});
      // As kSync's barrier does: the writeback write-protected the range's
      // pages, and the next store through a view would fault per 4 KiB page.
      if (barrier.ok()) {
        const uint64_t begin = file_offset & ~(r.page_size - 1);
        r.mapping->ResetPageTables(begin,
                                   format::AlignUp(file_offset + length, r.page_size) - begin);
      }
      return barrier;
    }
  }
  return Status::Error(StatusCode::kInvalidArgument, "flush", r.path, "unknown durability mode");
}

Status Store::Read(uint64_t offset, std::span<std::byte> out) const {
  const Rep& r = *rep_;
  if (Status s = r.CheckRange(offset, out.size(), "read"); !s.ok()) return s;
  if (!out.empty()) {
    std::memcpy(out.data(), r.mapping->data() + r.info.data_offset + offset, out.size());
  }
  return Status::Ok();
}

Result<std::span<const std::byte>> Store::View(uint64_t offset, uint64_t length) const {
  const Rep& r = *rep_;
  if (Status s = r.CheckRange(offset, length, "view"); !s.ok()) return s;
  return std::span<const std::byte>(r.mapping->data() + r.info.data_offset + offset, length);
}

Result<std::span<std::byte>> Store::MutableView(uint64_t offset, uint64_t length) {
  Rep& r = *rep_;
  if (Status s = r.CheckWritable("view"); !s.ok()) return s;
  if (Status s = r.CheckRange(offset, length, "view"); !s.ok()) return s;
  return std::span<std::byte>(r.mapping->data() + r.info.data_offset + offset, length);
}

Result<uint32_t> Store::Rep::FindRegion(std::string_view name, const char* operation) const {
  const auto at = std::lower_bound(
      by_name.begin(), by_name.end(), name,
      [&](uint32_t index, std::string_view wanted) { return info.regions[index].name < wanted; });
  if (at != by_name.end() && info.regions[*at].name == name) return *at;
  return Status::Error(StatusCode::kNotFound, operation, path,
                       "no checkpoint region named '" + std::string(name) + "'");
}

const std::string& Store::path() const { return rep_->path; }
const StoreInfo& Store::info() const { return rep_->info; }
uint64_t Store::data_size() const { return rep_->info.data_size; }
bool Store::writable() const { return rep_->writable; }
bool Store::poisoned() const { return !rep_->poison.ok(); }

StoreStats Store::Stats() const {
  StoreStats stats = rep_->stats;
  stats.poisoned = poisoned();
  return stats;
}

}  // namespace regionstore
