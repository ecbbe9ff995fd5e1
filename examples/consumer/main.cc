// A program that uses an installed regionstore: creates a store, writes 1 MiB
// at data offset 2 MiB durably, reads it back and checks it.
#include <regionstore/regionstore.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

// An Io of the program's own, wrapping the library's: subclassing the seam
// across the shared-library boundary needs the exported typeinfo and vtable.
class CountingIo final : public regionstore::Io {
 public:
  using Io::StatFs;
  int opens = 0;
  regionstore::Result<std::unique_ptr<regionstore::File>> Open(
      const std::string& path, regionstore::OpenMode mode,
      regionstore::SymlinkPolicy symlinks) override {
    ++opens;
    return base_->Open(path, mode, symlinks);
  }
  regionstore::Result<std::unique_ptr<regionstore::File>> CreateExclusive(
      const std::string& path) override {
    ++opens;
    return base_->CreateExclusive(path);
  }
  regionstore::Status Rename(const std::string& from, const std::string& to,
                             bool replace) override {
    return base_->Rename(from, to, replace);
  }
  regionstore::Status Remove(const std::string& path) override { return base_->Remove(path); }
  regionstore::Status SyncDirectory(const std::string& directory) override {
    return base_->SyncDirectory(directory);
  }
  regionstore::Result<regionstore::FileStat> StatPath(const std::string& path) override {
    return base_->StatPath(path);
  }
  regionstore::Status FillRandom(std::span<std::byte> out) override {
    return base_->FillRandom(out);
  }
  uint64_t PageSize() override { return base_->PageSize(); }
  uint64_t NowUnixNanos() override { return base_->NowUnixNanos(); }

 private:
  regionstore::Io* base_ = regionstore::Io::Default();
};

int main(int argc, char** argv) {
  using namespace regionstore;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s STORE_PATH\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  if (std::strcmp(VersionString(), REGIONSTORE_VERSION_STRING) != 0) {
    std::fprintf(stderr, "header %s but library %s\n", REGIONSTORE_VERSION_STRING, VersionString());
    return 1;
  }

  CountingIo counting_io;
  CreateOptions options;
  options.replace_existing = true;
  options.io = &counting_io;
  if (Status s = Store::Create(path, 16u << 20, options); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  Result<Store> store = Store::Open(path, OpenMode::kReadWrite);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  std::vector<std::byte> slice(1u << 20);
  for (size_t i = 0; i < slice.size(); ++i) slice[i] = static_cast<std::byte>(i * 131 + 7);
  if (Status s = store->Write(2u << 20, slice, Durability::kSync); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::vector<std::byte> back(slice.size());
  if (Status s = store->Read(2u << 20, back); !s.ok() || back != slice) {
    std::fprintf(stderr, "read back failed\n");
    return 1;
  }
  if (counting_io.opens == 0) {
    std::fprintf(stderr, "Create did not go through the program's Io\n");
    return 1;
  }
  std::printf("regionstore %s: wrote and read back 1 MiB at data offset 2 MiB of %s (uuid %s)\n",
              VersionString(), path.c_str(), FormatUuid(store->info().uuid).c_str());
  return 0;
}
