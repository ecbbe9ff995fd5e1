#include "cow.h"

#include <linux/magic.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "format.h"
#include "store_rep.h"

namespace regionstore {
namespace internal {

namespace {

// Pieces of unshare work between progress calls.
constexpr uint64_t kUnsharePiece = 64 * format::kMiB;
// Buffer of the btrfs rewrite.
constexpr uint64_t kRewriteChunk = 1 * format::kMiB;

// What a mapped write into a shared block risks, for every message.
constexpr const char* kSharedRisk =
    "a mapped write into a shared block needs a new block, and on a full filesystem that is "
    "SIGBUS";

uint64_t TotalBytes(const std::vector<FileRange>& ranges) {
  uint64_t total = 0;
  for (const FileRange& range : ranges) total += range.length;
  return total;
}

std::string SharedSummary(const std::vector<FileRange>& ranges) {
  return std::to_string(TotalBytes(ranges)) + " bytes in " + std::to_string(ranges.size()) +
         (ranges.size() == 1 ? " range" : " ranges");
}

}  // namespace

bool CanDisableCopyOnWrite(const FsInfo& fs) { return fs.type_magic == BTRFS_SUPER_MAGIC; }

std::string DisableCopyOnWrite(File& file, const FsInfo& fs, const std::string& directory) {
  const std::string where =
      "'" + directory + "' is on " + fs.type_name + ", a copy-on-write filesystem: ";
  std::string failure;
  if (auto flags = file.InodeFlags(); !flags.ok()) {
    failure = flags.status().ToString();
  } else if (Status set = file.SetInodeFlags(*flags | kInodeFlagNoCow); !set.ok()) {
    failure = set.ToString();
  } else if (auto back = file.InodeFlags(); !back.ok()) {
    failure = back.status().ToString();
  } else if ((*back & kInodeFlagNoCow) == 0) {
    // btrfs answers success on a file that already has data, and leaves the
    // flag off: only the read-back tells.
    failure = "FS_IOC_SETFLAGS returned success but the flag is not set";
  }
  if (failure.empty()) {
    return where +
           "the store was made NOCOW (FS_NOCOW_FL) before its blocks were reserved, so they are "
           "overwritten in place and a full disk does not turn mapped writes into SIGBUS (except "
           "on a small --mixed btrfs, whose data and metadata share block groups); btrfs "
           "no longer checksums this file's data (only checkpoint regions carry their own "
           "checksums), and after a snapshot of the subvolume the next write to each block is "
           "copy-on-write again (regionctl unshare rewrites them)";
  }
  return where + "could not make the store NOCOW (" + failure +
         "), so reserved blocks do not stop a full disk from turning a mapped write into SIGBUS";
}

Status CheckSharedExtents(Io& io, File& file, const std::string& path, uint64_t file_size,
                          const OpenOptions& options) {
  // FIEMAP first, for every filesystem: on a 16 MiB store it measured
  // 0.4 us on ext4 and 0.5 us on XFS (2.5 us on btrfs), less than the statfs
  // (0.45 us) that skipping it on ext4 would need. statfs only once
  // something is shared, to tell btrfs from the rest.
  auto shared = file.SharedRanges(0, file_size);
  if (!shared.ok()) {
    // No FIEMAP (tmpfs, an Io that cannot tell): nothing to go on, and
    // refusing would refuse every store there.
    if (options.warnings != nullptr && shared.status().sys_errno() != EOPNOTSUPP) {
      options.warnings->push_back("could not check '" + path +
                                  "' for shared blocks: " + shared.status().ToString());
    }
    return Status::Ok();
  }
  if (shared->empty()) return Status::Ok();
  // statfs of the path, not of the descriptor: the seam has only that, and
  // the inode check before this made sure the path names this file.
  auto fs = io.StatFs(path);
  const bool btrfs = fs.ok() && fs->type_magic == BTRFS_SUPER_MAGIC;
  if (btrfs || options.allow_shared_extents) {
    if (options.warnings != nullptr) {
      options.warnings->push_back(
          "'" + path + "' shares " + SharedSummary(*shared) +
          (btrfs ? " with a snapshot or a reflink copy (btrfs)" : " with another file") + ": " +
          kSharedRisk + " (run regionctl unshare " + path + " to give it blocks of its own)");
    }
    return Status::Ok();
  }
  return Status::Error(StatusCode::kSharedExtents, "open", path,
                       "shares " + SharedSummary(*shared) +
                           " of its blocks with another file (a reflink copy: cp --reflink, or "
                           "cp from coreutils 9+): " +
                           kSharedRisk + "; run 'regionctl unshare " + path +
                           "' (UnshareStore) first, or open with allow_shared_extents");
}

}  // namespace internal

Result<UnshareReport> UnshareStore(const std::string& path, const UnshareOptions& options) {
  Io& io = options.io != nullptr ? *options.io : *Io::Default();
  auto file = OpenStoreFile(io, path, OpenMode::kReadWrite, options.symlinks);
  if (!file.ok()) return file.status();
  File& store = **file;
  if (Status s = store.LockExclusive(); !s.ok()) return s.WithOperation("unshare: lock", path);
  auto locked = store.Stat();
  if (!locked.ok()) return locked.status().WithOperation("unshare: fstat", path);
  auto named = io.StatPath(path);
  if (!named.ok() || named->device != locked->device || named->inode != locked->inode) {
    return Status::Error(StatusCode::kBusy, "unshare: lock", path,
                         "the file at this path was replaced while opening it");
  }
  auto info = ReadValidatedInfo(store, path);
  if (!info.ok()) return info.status();
  auto shared = store.SharedRanges(0, info->file_size);
  if (!shared.ok()) return shared.status().WithOperation("unshare: FIEMAP", path);

  UnshareReport report;
  report.shared_ranges = shared->size();
  report.shared_bytes = internal::TotalBytes(*shared);
  if (shared->empty()) return report;

  report.method = "fallocate";
  std::vector<std::byte> buffer;
  uint64_t done = 0;
  for (const FileRange& range : *shared) {
    for (uint64_t at = range.offset; at < range.offset + range.length;) {
      const uint64_t length = std::min(internal::kUnsharePiece, range.offset + range.length - at);
      if (report.method == "fallocate") {
        Status s = store.UnshareRange(at, length);
        if (!s.ok() && s.sys_errno() == EOPNOTSUPP) {
          report.method = "rewrite";  // btrfs: copy on write, by writing
        } else if (!s.ok()) {
          return s.WithOperation("unshare: fallocate(FALLOC_FL_UNSHARE_RANGE)", path);
        }
      }
      if (report.method == "rewrite") {
        // The same bytes back where they were: readers see no change, and
        // the filesystem gives each written block a new, unshared home.
        buffer.resize(internal::kRewriteChunk);
        for (uint64_t part = at; part < at + length;) {
          const uint64_t size = std::min(internal::kRewriteChunk, at + length - part);
          auto read = store.ReadAt(part, std::span(buffer).first(size));
          if (!read.ok()) return read.status().WithOperation("unshare: read", path);
          if (*read != size) {
            return Status::Error(StatusCode::kCorruption, "unshare: read", path,
                                 "the file is shorter than its superblock says");
          }
          if (Status s = store.WriteAt(part, std::span(buffer).first(size)); !s.ok()) {
            return s.WithOperation("unshare: rewrite", path);
          }
          part += size;
        }
      }
      at += length;
      done += length;
      if (options.progress) options.progress(done, report.shared_bytes);
    }
  }
  if (Status s = store.Sync(); !s.ok()) return s.WithOperation("unshare: fsync", path);
  auto after = store.SharedRanges(0, info->file_size);
  if (!after.ok()) return after.status().WithOperation("unshare: FIEMAP", path);
  report.shared_bytes_after = internal::TotalBytes(*after);
  if (!after->empty()) {
    return Status::Error(StatusCode::kIOError, "unshare", path,
                         "still shares " + internal::SharedSummary(*after) + " after " +
                             report.method + " and fsync");
  }
  return report;
}

}  // namespace regionstore
