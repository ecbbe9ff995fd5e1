// Writes land at exactly data_offset + offset, in every mode, and each mode
// makes exactly the syscalls it documents.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <limits>
#include <tuple>

#include "regionstore/store.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"
#include "support/test_io.h"

namespace regionstore::testing {
namespace {

uint64_t AlignDown(uint64_t value, uint64_t alignment) { return value & ~(alignment - 1); }
uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return AlignDown(value + alignment - 1, alignment);
}

TEST_CASE("Writes land at data_offset + offset in every mode, and only there",
          "[store][write][long]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  // Not a page multiple, so a write ending on the last byte ends mid-page.
  const uint64_t data_size = 4 * kMiB + 3;
  const uint64_t page = Io::Default()->PageSize();
  MustCreate(path, data_size);

  // (offset, length): page-aligned and not, empty, one byte, crossing a page
  // boundary, ending on the last byte of the data area, the lab's 2 MiB.
  const std::vector<std::pair<uint64_t, uint64_t>> cases = {
      {0, 0},
      {0, 1},
      {page, 1},
      {page - 1, 2},
      {page + 5, 0},
      {3 * page + 7, 2 * page + 3},
      {2 * kMiB, 1 * kMiB},
      {data_size - 1, 1},
      {data_size - page - 3, page + 3},
      {data_size, 0},
      {5, page},
  };
  uint64_t seed = 0;
  for (Durability mode : kAllModes) {
    for (auto [offset, length] : cases) {
      ++seed;
      DYNAMIC_SECTION(DurabilityName(mode) << " offset " << offset << " length " << length) {
        TestIo io;
        Store store = MustOpen(path, OpenMode::kReadWrite, &io);
        const std::vector<std::byte> before = ReadWholeFile(path);
        const std::vector<std::byte> data = PatternBytes(length, seed);
        io.ClearLog();

        Status status = store.Write(offset, data, mode);
        INFO(status.ToString());
        REQUIRE(status.ok());

        // A separate descriptor sees the bytes at exactly data_offset + offset
        // and nothing else changed.
        const uint64_t file_offset = store.info().data_offset + offset;
        std::vector<std::byte> expected = before;
        std::copy(data.begin(), data.end(), expected.begin() + static_cast<ptrdiff_t>(file_offset));
        CHECK(PreadFile(path, file_offset, length) == data);
        CHECK(ReadWholeFile(path) == expected);

        // Each mode makes exactly its syscalls; msync gets the page-aligned
        // range covering exactly the touched pages.
        const auto msyncs = io.Msyncs();
        const auto writes = io.Writes();
        // kSync below 1 MiB is one pwritev2(RWF_DSYNC) (counted as a write
        // and a data sync); from 1 MiB on, memcpy + msync(MS_SYNC).
        const bool dsync_write = mode == Durability::kSync && length < kMiB;
        const bool async_or_sync =
            mode == Durability::kAsync || (mode == Durability::kSync && !dsync_write);
        // kNone and kAsync from 256 KiB on write by one pwrite (no fault
        // per page where writeback cleaned the pages).
        const bool by_pwrite =
            (mode == Durability::kNone || mode == Durability::kAsync) && length >= 256 * kKiB;
        if (by_pwrite) {
          REQUIRE(writes.size() == 1);
          CHECK(writes[0].offset == file_offset);
          CHECK(writes[0].length == length);
          CHECK(io.Count(Op::kDataSync) == 0);
          CHECK(msyncs.size() == (mode == Durability::kAsync ? 1u : 0u));
          if (!msyncs.empty()) CHECK(msyncs[0].kind == SyncKind::kAsync);
        } else if (length == 0 || mode == Durability::kNone) {
          CHECK(msyncs.empty());
          CHECK(writes.empty());
          CHECK(io.Count(Op::kDataSync) == 0);
        } else if (async_or_sync) {
          REQUIRE(msyncs.size() == 1);
          CHECK(msyncs[0].offset % page == 0);
          CHECK(msyncs[0].offset == AlignDown(file_offset, page));
          CHECK(msyncs[0].length == AlignUp(file_offset + length, page) - msyncs[0].offset);
          CHECK(msyncs[0].kind == (mode == Durability::kSync ? SyncKind::kSync : SyncKind::kAsync));
          CHECK(writes.empty());
          CHECK(io.Count(Op::kDataSync) == 0);
        } else {
          REQUIRE(writes.size() == 1);
          CHECK(writes[0].offset == file_offset);
          CHECK(writes[0].length == length);
          CHECK(io.Count(Op::kDataSync) == 1);
          CHECK(msyncs.empty());
        }
        // Only an MS_SYNC drops the page-table entries, over the same range.
        const auto resets = io.PageTableResets();
        if (mode == Durability::kSync && length > 0 && !dsync_write) {
          REQUIRE(resets.size() == 1);
          CHECK(resets[0].offset == msyncs[0].offset);
          CHECK(resets[0].length == msyncs[0].length);
        } else {
          CHECK(resets.empty());
        }

        // The mapping, Read and View agree with the file.
        std::vector<std::byte> read_back(length);
        REQUIRE(store.Read(offset, read_back).ok());
        CHECK(read_back == data);
        auto view = store.View(offset, length);
        REQUIRE(view.ok());
        CHECK(std::equal(view->begin(), view->end(), data.begin(), data.end()));
      }
    }
  }
}

TEST_CASE("A kSync Write from the store's own view copies as memmove, through the mapping",
          "[store][write]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 64 * kKiB);
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  const std::vector<std::byte> data = PatternBytes(8 * kKiB, 7);
  REQUIRE(store.Write(0, data, Durability::kNone).ok());
  auto view = store.View(0, data.size());
  REQUIRE(view.ok());
  io.ClearLog();
  // Source [0, 8 KiB) and destination [100, 8 KiB + 100) overlap: a
  // forward memcpy (what the kernel's pwrite does) would repeat the first
  // 100 bytes.
  REQUIRE(store.Write(100, *view, Durability::kSync).ok());
  CHECK(io.Writes().empty());
  CHECK(io.Msyncs().size() == 1);
  std::vector<std::byte> read_back(data.size());
  REQUIRE(store.Read(100, read_back).ok());
  CHECK(read_back == data);
  CHECK(PreadFile(path, store.info().data_offset + 100, data.size()) == data);
}

TEST_CASE("Writes outside the data area fail with kInvalidArgument and change nothing",
          "[store][write]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  const uint64_t data_size = 64 * kKiB + 3;  // not a page multiple
  MustCreate(path, data_size);
  const std::vector<std::byte> before = ReadWholeFile(path);
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  io.ClearLog();
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const std::vector<std::byte> two = PatternBytes(2, 1);

  for (Durability mode : kAllModes) {
    for (auto [offset, length] : std::vector<std::pair<uint64_t, size_t>>{
             {data_size, 1}, {data_size - 1, 2}, {data_size + 1, 0}, {max, 2}, {max - 1, 2}}) {
      INFO(DurabilityName(mode) << " offset " << offset << " length " << length);
      Status status = store.Write(offset, std::span(two).first(length), mode);
      CHECK(status.code() == StatusCode::kInvalidArgument);
      CHECK_THAT(status.message(), Catch::Contains("outside the data area"));
      CHECK(store.Flush(offset, length == 0 ? 1 : length + max / 2, mode).code() ==
            StatusCode::kInvalidArgument);
    }
  }
  std::vector<std::byte> out(2);
  CHECK(store.Read(data_size - 1, out).code() == StatusCode::kInvalidArgument);
  CHECK(store.View(max, 2).status().code() == StatusCode::kInvalidArgument);
  CHECK(io.Msyncs().empty());
  CHECK(io.Writes().empty());
  CHECK(io.Count(Op::kDataSync) == 0);
  CHECK_FALSE(store.poisoned());
  CHECK(ReadWholeFile(path) == before);
}

TEST_CASE("Flush makes several kNone writes durable with one barrier", "[store][write]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 1 * kMiB);
  const uint64_t page = Io::Default()->PageSize();
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  io.ClearLog();
  for (uint64_t i = 0; i < 4; ++i) {
    REQUIRE(store.Write(10 + i * page, PatternBytes(100, i), Durability::kNone).ok());
  }
  CHECK(io.Msyncs().empty());
  REQUIRE(store.Flush(10, 3 * page + 100, Durability::kSync).ok());
  const auto msyncs = io.Msyncs();
  REQUIRE(msyncs.size() == 1);
  CHECK(msyncs[0].offset == store.info().data_offset);
  CHECK(msyncs[0].length == 4 * page);
  CHECK(msyncs[0].kind == SyncKind::kSync);
  // A durable Flush drops the page-table entries of the pages it synced,
  // so that the next stores there map whole folios rather than take a
  // write-protect fault per page.
  auto resets = io.PageTableResets();
  REQUIRE(resets.size() == 1);
  CHECK(resets[0].offset == msyncs[0].offset);
  CHECK(resets[0].length == msyncs[0].length);

  REQUIRE(store.Flush(page + 1, 2 * page, Durability::kPwriteFdatasync).ok());
  CHECK(io.Count(Op::kDataSync) == 1);
  resets = io.PageTableResets();
  REQUIRE(resets.size() == 2);
  CHECK(resets[1].offset == store.info().data_offset + page);
  CHECK(resets[1].length == 3 * page);
  // Undurable and empty flushes drop nothing.
  REQUIRE(store.Flush(0, store.data_size(), Durability::kNone).ok());
  REQUIRE(store.Flush(0, store.data_size(), Durability::kAsync).ok());
  REQUIRE(store.Flush(0, 0, Durability::kSync).ok());
  REQUIRE(store.Flush(0, 0, Durability::kPwriteFdatasync).ok());
  CHECK(io.Msyncs().size() == 2);
  CHECK(io.PageTableResets().size() == 2);
  for (uint64_t i = 0; i < 4; ++i) {
    CHECK(PreadFile(path, store.info().data_offset + 10 + i * page, 100) == PatternBytes(100, i));
  }
}

TEST_CASE("Pwrite writes through the file, not the mapping, and a Flush makes it durable",
          "[store][write]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 1 * kMiB);
  TestIo io;
  Store store = MustOpen(path, OpenMode::kReadWrite, &io);
  const auto view = store.View(0, store.data_size());
  REQUIRE(view.ok());
  io.ClearLog();
  const auto data = PatternBytes(3 * 4096 + 5, 8);
  REQUIRE(store.Pwrite(4096 - 3, data).ok());
  // One pwrite at the data offset, no barrier; the mapping sees it at once.
  const auto writes = io.Writes();
  REQUIRE(writes.size() == 1);
  CHECK(writes[0].offset == store.info().data_offset + 4096 - 3);
  CHECK(writes[0].length == data.size());
  CHECK(io.Msyncs().empty());
  CHECK(io.Count(Op::kDataSync) == 0);
  CHECK(std::equal(data.begin(), data.end(), view->begin() + 4096 - 3));
  CHECK(store.Stats().of(Durability::kNone).bytes_written == data.size());
  REQUIRE(store.Flush(4096 - 3, data.size(), Durability::kPwriteFdatasync).ok());
  CHECK(io.Count(Op::kDataSync) == 1);
  CHECK(PreadFile(path, store.info().data_offset + 4096 - 3, data.size()) == data);
  // Bounds and a failed pwrite, as Write.
  CHECK(store.Pwrite(store.data_size() - 1, PatternBytes(2, 1)).code() ==
        StatusCode::kInvalidArgument);
  io.FailNth(Op::kWriteAt, 1, EIO);
  CHECK(store.Pwrite(0, PatternBytes(10, 2)).code() == StatusCode::kIOError);
  CHECK(store.Pwrite(0, PatternBytes(10, 2)).code() == StatusCode::kPoisoned);
  Store reader = MustOpen(path, OpenMode::kReadOnly);
  CHECK(reader.Pwrite(0, PatternBytes(10, 2)).code() == StatusCode::kInvalidArgument);
}

// After MS_SYNC the library drops the range's page-table entries
// (MADV_DONTNEED). On a shared file mapping that must lose nothing: the bytes
// stay in the page cache, a view taken before keeps showing them, and the next
// writes through the mapping (in any mode) land.
TEST_CASE("Dropping page tables after kSync loses no byte and keeps the mapping writable",
          "[store][write]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 4 * kMiB);
  Store store = MustOpen(path, OpenMode::kReadWrite);
  const uint64_t offset = 1 * kMiB + 100;  // not page-aligned: partial first and last page
  const uint64_t length = 1 * kMiB;
  auto view = store.View(offset, length);
  REQUIRE(view.ok());
  const uint64_t file_offset = store.info().data_offset + offset;
  for (uint64_t round = 0; round < 8; ++round) {
    const Durability mode = kAllModes[round % 4];
    const auto data = PatternBytes(length, round);
    REQUIRE(store.Write(offset, data, Durability::kSync).ok());
    CHECK(std::equal(view->begin(), view->end(), data.begin(), data.end()));
    // Overwrite the middle in another mode, through the same mapping.
    const auto middle = PatternBytes(length / 2, 100 + round);
    REQUIRE(store.Write(offset + length / 4, middle, mode).ok());
    REQUIRE(store.Flush(offset, length, Durability::kSync).ok());
    auto expected = data;
    std::copy(middle.begin(), middle.end(), expected.begin() + static_cast<ptrdiff_t>(length / 4));
    CHECK(PreadFile(path, file_offset, length) == expected);
    CHECK(std::equal(view->begin(), view->end(), expected.begin(), expected.end()));
  }
  // The bytes around the range were never touched.
  CHECK(PreadFile(path, file_offset - 100, 100) == std::vector<std::byte>(100));
  CHECK(PreadFile(path, file_offset + length, 100) == std::vector<std::byte>(100));
}

TEST_CASE("A read-only store refuses writes and flushes", "[store][write]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 64 * kKiB);
  Store store = MustOpen(path, OpenMode::kReadOnly);
  CHECK_FALSE(store.writable());
  Status status = store.Write(0, PatternBytes(10, 1), Durability::kNone);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(status.message(), Catch::Contains("read-only"));
  CHECK(store.Flush(0, 10, Durability::kSync).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Data written in one handle is there after reopening", "[store][write]") {
  TempDir dir;
  const std::string path = dir.File("s.rgn");
  MustCreate(path, 16 * kMiB);
  const auto data = PatternBytes(1 * kMiB, 42);
  {
    Store store = MustOpen(path, OpenMode::kReadWrite);
    REQUIRE(store.Write(2 * kMiB, data, Durability::kNone).ok());
  }
  Store again = MustOpen(path, OpenMode::kReadOnly);
  std::vector<std::byte> out(data.size());
  REQUIRE(again.Read(2 * kMiB, out).ok());
  CHECK(out == data);
}

}  // namespace
}  // namespace regionstore::testing
