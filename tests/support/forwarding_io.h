// ForwardingIo: an Io that passes every call to another Io, for test Ios
// that change one or two calls and keep the rest.
#ifndef REGIONSTORE_TESTS_SUPPORT_FORWARDING_IO_H_
#define REGIONSTORE_TESTS_SUPPORT_FORWARDING_IO_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "regionstore/io.h"

namespace regionstore::testing {

class ForwardingIo : public Io {
 public:
  explicit ForwardingIo(Io* base = Io::Default()) : base_(base) {}

  Result<std::unique_ptr<File>> Open(const std::string& path, bool writable,
                                     SymlinkPolicy symlinks) override {
    return base_->Open(path, writable, symlinks);
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
  uint64_t PageSize() override { return base_->PageSize(); }
  uint64_t NowUnixNanos() override { return base_->NowUnixNanos(); }

 protected:
  Io* base() const { return base_; }

 private:
  Io* base_;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_FORWARDING_IO_H_
