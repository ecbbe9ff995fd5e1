// A read-only handle whose "mapping" is the writer's own, for the tests
// that let ThreadSanitizer watch a reader race the writer.
#ifndef REGIONSTORE_TESTS_SUPPORT_BORROWED_MAPPING_H_
#define REGIONSTORE_TESTS_SUPPORT_BORROWED_MAPPING_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "regionstore/io.h"
#include "regionstore/store.h"

namespace regionstore::testing {

// A read-only handle whose "mapping" is the writer's own: the Io opens the
// file as usual but hands out the writer's mapping instead of a new one.
// Then reader and writer touch the same addresses, which is the only way
// ThreadSanitizer can see the race between a Load and a Commit (it tracks
// addresses, not file pages).
//
// BorrowedMapping is a root Mapping, not a forwarding wrapper: there is no
// mapping under it, only the writer's memory.
class BorrowedMapping final : public Mapping {
 public:
  BorrowedMapping(std::byte* data, uint64_t size) : data_(data), size_(size) {}
  std::byte* data() override { return data_; }
  uint64_t size() const override { return size_; }
  Status Sync(uint64_t, uint64_t, SyncKind) override { return Status::Ok(); }

 private:
  std::byte* data_;
  uint64_t size_;
};

class BorrowingFile final : public ForwardingFile {
 public:
  BorrowingFile(std::unique_ptr<File> file, std::byte* data, uint64_t size)
      : ForwardingFile(std::move(file)), data_(data), size_(size) {}
  Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) override {
    if (mode == OpenMode::kReadWrite || length != size_) {
      return Status::Error(StatusCode::kInvalidArgument, "map", path(), "not the borrowed mapping");
    }
    return std::unique_ptr<Mapping>(std::make_unique<BorrowedMapping>(data_, size_));
  }

 private:
  std::byte* data_;
  uint64_t size_;
};

class BorrowingIo final : public ForwardingIo {
 public:
  BorrowingIo(std::byte* data, uint64_t size) : data_(data), size_(size) {}
  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override {
    auto file = base()->Open(path, mode, symlinks);
    if (!file.ok()) return file.status();
    return std::unique_ptr<File>(std::make_unique<BorrowingFile>(std::move(*file), data_, size_));
  }

 private:
  std::byte* data_;
  uint64_t size_;
};

// A read-only handle on the store at `path` that `writer` holds, whose
// mapping is the writer's own; `io` receives the Io it reads through, which
// must outlive the handle. The writer's store needs a data area.
inline Result<Store> OpenOnWritersMapping(Store& writer, const std::string& path,
                                          std::unique_ptr<BorrowingIo>& io) {
  auto view = writer.View(0, 1);
  if (!view.ok()) return view.status();
  // The mapping starts data_offset bytes before the data area.
  auto* base = const_cast<std::byte*>(view->data()) - writer.info().data_offset;
  io = std::make_unique<BorrowingIo>(base, writer.info().file_size);
  OpenOptions options;
  options.io = io.get();
  return Store::Open(path, OpenMode::kReadOnly, options);
}

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_BORROWED_MAPPING_H_
