// ForwardingIo, ForwardingFile, ForwardingMapping: an Io, File and Mapping
// that pass every call to another one, for test wrappers that change one or
// two calls and keep the rest. They override every virtual of the seam, so a
// wrapper derived from them cannot miss a call the production path makes
// (a File that does not override WriteGatherAt silently runs the base
// class's WriteAt-per-part emulation instead of the wrapped file's).
#ifndef REGIONSTORE_TESTS_SUPPORT_FORWARDING_IO_H_
#define REGIONSTORE_TESTS_SUPPORT_FORWARDING_IO_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "regionstore/io.h"

namespace regionstore::testing {

class ForwardingIo : public Io {
 public:
  explicit ForwardingIo(Io* base = Io::Default()) : base_(base) {}

  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override {
    return base_->Open(path, mode, symlinks);
  }
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override {
    return base_->CreateExclusive(path);
  }
  Status Rename(const std::string& from, const std::string& to, bool replace) override {
    return base_->Rename(from, to, replace);
  }
  Status Remove(const std::string& path) override { return base_->Remove(path); }
  Status SyncDirectory(const std::string& directory) override {
    return base_->SyncDirectory(directory);
  }
  Result<FileStat> StatPath(const std::string& path) override { return base_->StatPath(path); }
  Status FillRandom(std::span<std::byte> out) override { return base_->FillRandom(out); }
  Result<FsInfo> StatFs(const std::string& path) override { return base_->StatFs(path); }
  Result<std::array<std::byte, 16>> BootId() override { return base_->BootId(); }
  uint64_t ProcessId() override { return base_->ProcessId(); }
  Result<std::vector<std::string>> ListDirectory(const std::string& directory) override {
    return base_->ListDirectory(directory);
  }
  uint64_t PageSize() override { return base_->PageSize(); }
  uint64_t NowUnixNanos() override { return base_->NowUnixNanos(); }
  uint64_t MonotonicNanos() override { return base_->MonotonicNanos(); }
  Result<std::unique_ptr<File>> CreateAnonymous(const std::string& directory) override {
    return base_->CreateAnonymous(directory);
  }

 protected:
  Io* base() const { return base_; }

 private:
  Io* base_;
};

// Owns the Mapping it forwards to.
class ForwardingMapping : public Mapping {
 public:
  explicit ForwardingMapping(std::unique_ptr<Mapping> base) : base_(std::move(base)) {}

  std::byte* data() override { return base_->data(); }
  uint64_t size() const override { return base_->size(); }
  Status Sync(uint64_t offset, uint64_t length, SyncKind kind) override {
    return base_->Sync(offset, length, kind);
  }
  void PrepareWrite(uint64_t offset, uint64_t length) override {
    base_->PrepareWrite(offset, length);
  }
  void ResetPageTables(uint64_t offset, uint64_t length) override {
    base_->ResetPageTables(offset, length);
  }
  Status WaitWord(uint64_t offset, uint32_t expected, uint64_t deadline_ns) override {
    return base_->WaitWord(offset, expected, deadline_ns);
  }
  void WakeWord(uint64_t offset) override { base_->WakeWord(offset); }

 protected:
  Mapping& base() const { return *base_; }

 private:
  std::unique_ptr<Mapping> base_;
};

// Owns the File it forwards to. Map returns the wrapped file's mapping as it
// is; a wrapper that needs to see the mapping's calls overrides Map.
class ForwardingFile : public File {
 public:
  explicit ForwardingFile(std::unique_ptr<File> base) : base_(std::move(base)) {}

  const std::string& path() const override { return base_->path(); }
  Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    return base_->ReadAt(offset, out);
  }
  Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    return base_->WriteAt(offset, data);
  }
  Status WriteGatherAt(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                       bool data_sync) override {
    return base_->WriteGatherAt(offset, parts, data_sync);
  }
  void StartWriteback(uint64_t offset, uint64_t length) override {
    base_->StartWriteback(offset, length);
  }
  Status Allocate(uint64_t offset, uint64_t length) override {
    return base_->Allocate(offset, length);
  }
  Status DataSync() override { return base_->DataSync(); }
  Status Sync() override { return base_->Sync(); }
  Status LockExclusive() override { return base_->LockExclusive(); }
  Result<bool> HasWriter() override { return base_->HasWriter(); }
  Result<FileStat> Stat() override { return base_->Stat(); }
  Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) override {
    return base_->Map(length, mode);
  }
  Status Link(const std::string& path) override { return base_->Link(path); }
  Result<uint32_t> InodeFlags() override { return base_->InodeFlags(); }
  Status SetInodeFlags(uint32_t flags) override { return base_->SetInodeFlags(flags); }
  Result<std::vector<FileRange>> SharedRanges(uint64_t offset, uint64_t length) override {
    return base_->SharedRanges(offset, length);
  }
  Status UnshareRange(uint64_t offset, uint64_t length) override {
    return base_->UnshareRange(offset, length);
  }

 protected:
  File& base() const { return *base_; }

 private:
  std::unique_ptr<File> base_;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_FORWARDING_IO_H_
