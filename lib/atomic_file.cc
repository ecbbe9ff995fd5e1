#include "regionstore/atomic_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "temp_file.h"

namespace regionstore {
namespace {

// Writes go in chunks: bounded syscalls, and a kill or a failure lands
// between two of them as often as inside one.
constexpr uint64_t kChunkBytes = uint64_t{1} << 20;

}  // namespace

Status ReplaceFileAtomically(const std::string& path, std::span<const std::byte> data,
                             const ReplaceOptions& options) {
  Io& io = options.io != nullptr ? *options.io : *Io::Default();
  if (auto existing = io.StatPath(path); existing.ok() && existing->is_directory) {
    return Status::FromErrno(EISDIR, "replace", path, "is a directory, not a file");
  } else if (existing.ok() && !existing->is_regular) {
    // The rename would put a regular file where a FIFO's reader waits, or
    // where a device was.
    return Status::Error(StatusCode::kInvalidArgument, "replace", path,
                         "is not a regular file (a FIFO, a device or a socket): replacing it "
                         "would put a regular file in its place; write into it instead");
  }
  auto temp = internal::CreateTempBeside(io, path, "replace");
  if (!temp.ok()) return temp.status();

  auto build = [&]() -> Status {
    for (uint64_t offset = 0; offset < data.size(); offset += kChunkBytes) {
      const uint64_t length = std::min<uint64_t>(kChunkBytes, data.size() - offset);
      if (Status s = temp->file->WriteAt(offset, data.subspan(offset, length)); !s.ok()) {
        return s.WithOperation("replace: write temp file", path);
      }
    }
    if (options.durable) {
      if (Status s = temp->file->Sync(); !s.ok()) return s.WithOperation("replace: fsync", path);
    }
    return internal::PublishTemp(io, *temp, path, /*replace=*/true, options.durable, "replace");
  };
  if (Status s = build(); !s.ok()) return internal::DiscardTemp(io, *temp, s);
  if (options.durable) {
    if (Status s = io.SyncDirectory(internal::DirectoryOf(path)); !s.ok()) {
      // In place, but the new name may not survive a power loss yet.
      return s.WithOperation(
          "replace: fsync directory (the new file is in place; it may not survive a power "
          "loss yet)",
          path);
    }
  }
  return Status::Ok();
}

}  // namespace regionstore
