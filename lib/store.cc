#include "regionstore/store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "cow.h"
#include "format.h"
#include "store_rep.h"

namespace regionstore {

namespace {

// How many times Open retries when the path is replaced between its open()
// and its lock (a concurrent `regionctl create --force`).
constexpr int kOpenAttempts = 3;

}  // namespace

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
  rep->sync_interval = options.sync_interval;
  rep->commit_progress = options.commit_progress;
  rep->opened_fork_generation = CurrentForkGeneration();
  rep->last_whole_file_barrier_ns = rep->io->MonotonicNanos();
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
  // Before anything is published: every wake goes through it.
  auto shared = SharedState::Open(
      {rep->io, &rep->path, rep->file.get(), rep->mapping.get(), &rep->info, rep->writable});
  if (!shared.ok()) return shared.status();
  rep->shared = std::move(*shared);
  // Durable commits share barriers where each can have an intent mark of
  // its own; other handles make each one whole before the next call.
  rep->group_commits = rep->writable && rep->shared->MarksPerCommit();
  // A read-only handle shows the journal's batches no writer has replayed.
  if (!rep->writable) {
    rep->journal = BatchJournal::ForStore(rep->info);
    if (rep->journal) rep->journal->KeepPending(*rep->mapping, *rep->io);
  }
  if (rep->writable) {
    if (Status s = rep->RecoverOnOpen(); !s.ok()) return s;
    if (Status s = rep->AfterOpenBarrier(); !s.ok()) return s;
    // The open's barrier returned: what it settled is durable, and so is
    // every region settled from here on (the open made what earlier
    // handles left durable, or undid it).
    rep->durable_points_open = true;
    for (uint32_t r = 0; r < rep->regions.size(); ++r) rep->PublishDurable(r);
    if (rep->open_publishing) {
      if (Status s = rep->EndPublishing("open: pwrite (publication word)"); !s.ok()) return s;
    }
  }
  return Store(std::move(rep));
}

Status Store::Write(uint64_t offset, std::span<const std::byte> data, Durability durability) {
  Rep& r = *rep_;
  HandleLock lock(r);
  if (Status s = r.BeginWrite("write"); !s.ok()) return s;
  if (Status s = r.CheckRange(offset, data.size(), "write"); !s.ok()) return s;
  if (data.empty()) return Status::Ok();
  const uint64_t file_offset = r.info.data_offset + offset;

  std::byte* target = r.mapping->data() + file_offset;
  // From kWriteByPwriteFrom, kNone and kAsync write by pwrite unless this
  // handle wrote the whole range in the last seconds: a store through the
  // mapping into pages writeback has cleaned takes a write fault and
  // page_mkwrite per 4 KiB page (1 MiB: 0.37 ms through the mapping, 0.085
  // ms by pwrite; 256 MiB: 98 against 60 ms), while into dirty, writable
  // pages the mapping is faster (1 MiB: 0.039 against 0.087 ms; 256 MiB:
  // 25 against 54 ms; regionstore_clean_pages_bench, docs/BENCHMARKS.md).
  // Bytes from the store's own mapping (a view) keep the memmove: the
  // kernel's copy is a memcpy, wrong for ranges that overlap.
  const bool volatile_mode = durability == Durability::kNone || durability == Durability::kAsync;
  const bool tracked = volatile_mode && data.size() >= kWriteByPwriteFrom;
  const bool by_pwrite = tracked && !r.InMapping(data) && !r.DataLikelyDirty(offset, data.size());
  if (tracked) r.NoteDataRange(file_offset, data.size(), r.io->MonotonicNanos());
  if (by_pwrite) {
    // Through the page cache the mapping shares, so views see it. A failed
    // pwrite may have changed some pages: poison.
    if (Status s = r.file->WriteAt(file_offset, data); !s.ok()) {
      ++r.stats.failed_writes;
      return r.Poison(s, "write: pwrite");
    }
    if (durability == Durability::kNone) return r.CountWrite(durability, data.size());
    Status started = r.Barrier({.kind = Rep::BarrierKind::kMsyncAsync,
                                .counted_as = durability,
                                .operation = "write: msync(MS_ASYNC)",
                                .file_offset = file_offset,
                                .length = data.size()});
    return started.ok() ? r.CountWrite(durability, data.size()) : started;
  }
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
  HandleLock lock(r);
  if (Status s = r.BeginWrite("write"); !s.ok()) return s;
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

bool Store::Rep::DataLikelyDirty(uint64_t offset, uint64_t length) {
  if (data_written_at_ns.empty() || length == 0) return false;
  const uint64_t now = io->MonotonicNanos();
  const uint64_t first = offset >> data_chunk_shift;
  const uint64_t last = (offset + length - 1) >> data_chunk_shift;
  for (uint64_t chunk = first; chunk <= last; ++chunk) {
    const uint64_t written = data_written_at_ns[chunk];
    if (written == 0 || written <= cleaned_at_ns || now - written >= kPagesStayDirtyNanos) {
      return false;
    }
  }
  return true;
}

void Store::Rep::NoteDataRange(uint64_t file_offset, uint64_t length, uint64_t now) {
  const uint64_t data_size = info.data_size;
  const uint64_t data_end = info.data_offset + data_size;
  if (length == 0 || data_size == 0) return;
  if (file_offset + length <= info.data_offset || file_offset >= data_end) return;
  if (data_written_at_ns.empty()) {
    if (now == 0) return;  // nothing stamped yet: nothing to clean
    // Chunks of 256 KiB, larger for a data area of more than 16 GiB, so
    // that the table stays at most 512 KiB.
    data_chunk_shift = 18;
    while ((data_size >> data_chunk_shift) >= 65536) ++data_chunk_shift;
    data_written_at_ns.assign(((data_size - 1) >> data_chunk_shift) + 1, 0);
  }
  const uint64_t start = std::max(file_offset, info.data_offset) - info.data_offset;
  const uint64_t end = std::min(file_offset + length, data_end) - info.data_offset;
  for (uint64_t chunk = start >> data_chunk_shift; chunk <= (end - 1) >> data_chunk_shift;
       ++chunk) {
    data_written_at_ns[chunk] = now;
  }
}

Status Store::Flush(uint64_t offset, uint64_t length, Durability durability) {
  Rep& r = *rep_;
  HandleLock lock(r);
  if (Status s = r.BeginWrite("flush"); !s.ok()) return s;
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
  if (Status s =
          [&] {
            HandleLock lock(r);
            return r.CheckWritable("view");
          }();
      !s.ok()) {
    return s;
  }
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
bool Store::poisoned() const {
  HandleLock lock(*rep_);
  return !rep_->poison.ok();
}

StoreStats Store::Stats() const {
  HandleLock lock(*rep_);
  StoreStats stats = rep_->stats;
  stats.poisoned = !rep_->poison.ok();
  return stats;
}

}  // namespace regionstore
