// The store file before any mapping: opening it as a store, reading and
// validating its superblock and region table with pread (ReadStoreInfo, and
// every Open, VerifyRegions and UnshareStore), and FormatUuid.
#include "regionstore/store_info.h"

#include <cerrno>
#include <memory>
#include <utility>
#include <vector>

#include "bytes.h"
#include "format.h"
#include "store_rep.h"

namespace regionstore {
namespace {

Status Corrupt(const std::string& path, std::string message) {
  return Status::Error(StatusCode::kCorruption, "open", path, std::move(message));
}

}  // namespace

// Opens `path` and rejects what cannot be a store before reading from it.
Result<std::unique_ptr<File>> OpenStoreFile(Io& io, const std::string& path, OpenMode mode,
                                            SymlinkPolicy symlinks) {
  auto file = io.Open(path, mode, symlinks);
  if (!file.ok()) {
    if (file.status().sys_errno() == EISDIR) {
      return Corrupt(path, "is a directory, not a store");
    }
    // Io::Open's only kInvalidArgument: the path is a symbolic link and
    // `symlinks` refused it. Say how to allow it, in words true for every
    // caller (Store::Open, ReadStoreInfo, VerifyRegions, UnshareStore).
    if (file.status().code() == StatusCode::kInvalidArgument) {
      return Status::Error(StatusCode::kInvalidArgument, "open", path,
                           "is a symbolic link; refused unless asked to follow it "
                           "(SymlinkPolicy::kFollow, regionctl --follow-symlinks)");
    }
    return file.status().WithOperation("open", path);
  }
  return file;
}

// Reads and validates superblock and region table with pread only.
Result<StoreInfo> ReadValidatedInfo(File& file, const std::string& path) {
  auto stat = file.Stat();
  if (!stat.ok()) return stat.status();
  if (stat->is_directory) return Corrupt(path, "is a directory, not a store");
  if (!stat->is_regular) return Corrupt(path, "is not a regular file");

  std::vector<std::byte> superblock(format::kSuperblockSize);
  auto read = file.ReadAt(0, superblock);
  if (!read.ok()) return read.status().WithOperation("open: read superblock", path);
  superblock.resize(*read);
  auto decoded = format::DecodeSuperblock(superblock, stat->size, path);
  if (!decoded.ok()) return decoded.status();

  std::vector<std::byte> table(format::RegionTableBytes(decoded->region_count));
  read = file.ReadAt(decoded->info.region_table_offset, table);
  if (!read.ok()) return read.status().WithOperation("open: read region table", path);
  if (*read != table.size()) return Corrupt(path, "region table is cut short");
  if (Status s = format::DecodeRegionTable(table, *decoded, path); !s.ok()) return s;
  return std::move(decoded->info);
}

std::string FormatUuid(const std::array<uint8_t, 16>& uuid) {
  const std::string hex = internal::HexBytes(std::as_bytes(std::span(uuid)));
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

Result<StoreInfo> ReadStoreInfo(const std::string& path, Io* io, SymlinkPolicy symlinks) {
  Io& os = io != nullptr ? *io : *Io::Default();
  auto file = OpenStoreFile(os, path, OpenMode::kReadOnly, symlinks);
  if (!file.ok()) return file.status();
  return ReadValidatedInfo(**file, path);
}

}  // namespace regionstore
