// MemorySidecar: protocol 2's sidecar (PATH.shm) for the in-memory Ios of
// the tests (the crash simulator, the store fuzzer's MemoryIo), which hold
// one store file and answer every path with it. A path ending in ".shm" is
// this second file instead: plain memory, no history, nothing synced (the
// sidecar is never synced, and nothing in it outlives a boot). Missing until
// created (CreateExclusive); Remove() makes it missing again, as an unlink
// would, and must not run while anything maps it.
#ifndef REGIONSTORE_TESTS_SUPPORT_MEMORY_SIDECAR_H_
#define REGIONSTORE_TESTS_SUPPORT_MEMORY_SIDECAR_H_

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "regionstore/io.h"

namespace regionstore::testing {

class MemorySidecar {
 public:
  static bool IsSidecarPath(const std::string& path) { return path.ends_with(".shm"); }

  bool exists() const { return bytes_ != nullptr; }
  void Remove() { bytes_.reset(); }

  Result<std::unique_ptr<File>> Open(const std::string& path) {
    if (!bytes_) return Status::FromErrno(ENOENT, "open", path);
    return std::unique_ptr<File>(std::make_unique<SidecarFile>(*bytes_, path));
  }
  Result<std::unique_ptr<File>> Create(const std::string& path) {
    if (bytes_) return Status::FromErrno(EEXIST, "open", path);
    bytes_ = std::make_unique<std::vector<std::byte>>();
    // Room for the size Allocate sets: the buffer never moves once mapped.
    bytes_->reserve(kCapacity);
    return Open(path);
  }

 private:
  static constexpr uint64_t kCapacity = 128 * 1024;  // above sidecar::kSize

  class SidecarMapping final : public Mapping {
   public:
    explicit SidecarMapping(std::vector<std::byte>& bytes) : bytes_(bytes) {}
    std::byte* data() override { return bytes_.data(); }
    uint64_t size() const override { return bytes_.size(); }
    Status Sync(uint64_t, uint64_t, SyncKind) override { return Status::Ok(); }

   private:
    std::vector<std::byte>& bytes_;
  };

  class SidecarFile final : public File {
   public:
    SidecarFile(std::vector<std::byte>& bytes, std::string path)
        : bytes_(bytes), path_(std::move(path)) {}
    const std::string& path() const override { return path_; }
    Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
      if (offset >= bytes_.size()) return uint64_t{0};
      const uint64_t length = std::min<uint64_t>(out.size(), bytes_.size() - offset);
      std::memcpy(out.data(), bytes_.data() + offset, length);
      return length;
    }
    Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
      if (offset > bytes_.size() || data.size() > bytes_.size() - offset) {
        return Status::FromErrno(ENOSPC, "pwrite", path_, "the in-memory sidecar does not grow");
      }
      std::memcpy(bytes_.data() + offset, data.data(), data.size());
      return Status::Ok();
    }
    Status Allocate(uint64_t offset, uint64_t length) override {
      if (offset + length > kCapacity) {
        return Status::FromErrno(ENOSPC, "fallocate", path_, "the in-memory sidecar is full");
      }
      if (offset + length > bytes_.size()) bytes_.resize(offset + length);
      return Status::Ok();
    }
    Status DataSync() override { return Status::Ok(); }
    Status Sync() override { return Status::Ok(); }
    Status LockExclusive() override { return Status::Ok(); }
    Result<FileStat> Stat() override {
      FileStat stat;
      stat.size = bytes_.size();
      stat.is_regular = true;
      stat.device = 1;
      stat.inode = 2;
      return stat;
    }
    Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode) override {
      if (length != bytes_.size()) return Status::FromErrno(EINVAL, "mmap", path_);
      return std::unique_ptr<Mapping>(std::make_unique<SidecarMapping>(bytes_));
    }

   private:
    std::vector<std::byte>& bytes_;
    std::string path_;
  };

  std::unique_ptr<std::vector<std::byte>> bytes_;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_MEMORY_SIDECAR_H_
