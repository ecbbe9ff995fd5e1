#include "memory_io.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace regionstore::fuzz {
namespace {

const std::string kPath = "memory";

Status NotHere(const char* call) {
  return Status::FromErrno(ENOTSUP, call, kPath, "the fuzzer's Io holds one file");
}

// The buffer as a mapping: a write to it is a write to the file.
class MemoryMapping final : public Mapping {
 public:
  explicit MemoryMapping(std::span<std::byte> file) : file_(file) {}
  std::byte* data() override { return file_.data(); }
  uint64_t size() const override { return file_.size(); }
  Status Sync(uint64_t offset, uint64_t length, SyncKind) override {
    // msync's own checks; nothing to write back.
    if (offset % 4096 != 0 || offset > file_.size() || length > file_.size() - offset) {
      return Status::FromErrno(EINVAL, "msync", kPath);
    }
    return Status::Ok();
  }
  // No other process maps the buffer: nobody waits, nobody to wake.
  Status WaitWord(uint64_t, uint32_t, uint64_t) override {
    return Status::Error(StatusCode::kTimedOut, "futex", kPath, "no other process maps this file");
  }
  void WakeWord(uint64_t) override {}

 private:
  std::span<std::byte> file_;
};

class MemoryFile final : public File {
 public:
  MemoryFile(MemoryIo& io, OpenMode mode) : io_(io), mode_(mode) {}
  ~MemoryFile() override {
    if (holds_lock_) io_.set_locked(false);
  }
  const std::string& path() const override { return kPath; }
  Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    const std::span<std::byte> file = io_.file();
    if (offset >= file.size()) return uint64_t{0};
    const uint64_t length = std::min<uint64_t>(out.size(), file.size() - offset);
    if (length != 0) std::memcpy(out.data(), file.data() + offset, length);
    return length;
  }
  Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    const std::span<std::byte> file = io_.file();
    if (mode_ != OpenMode::kReadWrite) return Status::FromErrno(EBADF, "pwrite", kPath);
    // A store file never grows: a write past its end is a bug to report.
    if (offset > file.size() || data.size() > file.size() - offset) {
      return Status::FromErrno(EFBIG, "pwrite", kPath, "past the end of the store file");
    }
    if (!data.empty()) std::memcpy(file.data() + offset, data.data(), data.size());
    return Status::Ok();
  }
  Status Allocate(uint64_t, uint64_t) override { return Status::Ok(); }
  Status DataSync() override { return Status::Ok(); }
  Status Sync() override { return Status::Ok(); }
  Status LockExclusive() override {
    if (io_.locked())
      return Status::Error(StatusCode::kBusy, "lock", kPath,
                           "another handle holds the writer's lock");
    io_.set_locked(true);
    holds_lock_ = true;
    return Status::Ok();
  }
  Result<bool> HasWriter() override { return io_.locked(); }
  Result<FileStat> Stat() override { return io_.StatPath(kPath); }
  Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) override {
    if (length != io_.file().size()) return Status::FromErrno(EINVAL, "mmap", kPath);
    if (mode == OpenMode::kReadWrite && mode_ != OpenMode::kReadWrite) {
      return Status::FromErrno(EACCES, "mmap", kPath);
    }
    return std::unique_ptr<Mapping>(std::make_unique<MemoryMapping>(io_.file()));
  }

 private:
  MemoryIo& io_;
  OpenMode mode_;
  bool holds_lock_ = false;
};

}  // namespace

Result<std::unique_ptr<File>> MemoryIo::Open(const std::string& path, OpenMode mode,
                                             SymlinkPolicy) {
  if (testing::MemorySidecar::IsSidecarPath(path)) return sidecar_.Open(path);
  return std::unique_ptr<File>(std::make_unique<MemoryFile>(*this, mode));
}
Result<FileStat> MemoryIo::StatPath(const std::string&) {
  FileStat stat;
  stat.size = file_.size();
  stat.is_regular = true;
  stat.device = 1;
  stat.inode = 1;
  return stat;
}
Result<FsInfo> MemoryIo::StatFs(const std::string&) {
  FsInfo info;
  info.type_name = "memory";
  info.block_size = 4096;
  return info;
}
Result<std::array<std::byte, 16>> MemoryIo::BootId() {
  std::array<std::byte, 16> id;
  id.fill(std::byte{0x42});
  return id;
}
Result<std::vector<std::string>> MemoryIo::ListDirectory(const std::string&) {
  return std::vector<std::string>{kPath};
}
Status MemoryIo::FillRandom(std::span<std::byte> out) {
  std::fill(out.begin(), out.end(), std::byte{0x5a});
  return Status::Ok();
}
Result<std::unique_ptr<File>> MemoryIo::CreateExclusive(const std::string& path) {
  if (testing::MemorySidecar::IsSidecarPath(path)) return sidecar_.Create(path);
  return NotHere("open(O_CREAT|O_EXCL)");
}
Status MemoryIo::Rename(const std::string&, const std::string&, bool) { return NotHere("rename"); }
Status MemoryIo::Remove(const std::string&) { return NotHere("unlink"); }
Status MemoryIo::SyncDirectory(const std::string&) { return Status::Ok(); }

}  // namespace regionstore::fuzz
