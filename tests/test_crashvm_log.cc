// The crash VM's log reader and crash-state builder, on logs written here
// by hand in the dm-log-writes format (docs/CRASH-VM.md, "The log").
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "crashvm/crash_states.h"
#include "crashvm/dm_log.h"
#include "support/files.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

constexpr uint64_t kSector = 512;

// A log as blklogwrites writes it: super block, then per entry a header
// sector and its data in whole sectors.
class LogWriter {
 public:
  // A write of `sectors` sectors at `sector`, every byte `fill`.
  void Write(uint64_t sector, uint64_t sectors, uint8_t fill) {
    Header(sector, sectors, 0, 0);
    bytes_.resize(bytes_.size() + sectors * kSector, std::byte{fill});
    ++count_;
  }
  void Flush() {
    Header(0, 0, kLogFlush, 0);
    ++count_;
  }
  // The bytes, with `super_count` entries in the super block (the writer
  // updates it only on flushes, so it may lag).
  std::vector<std::byte> Bytes(uint64_t super_count, uint64_t magic = kWriteLogMagic) const {
    std::vector<std::byte> out(kSector);
    const uint64_t super[3] = {magic, 1, super_count};
    const uint32_t sector_size = kSector;
    std::memcpy(out.data(), super, sizeof(super));
    std::memcpy(out.data() + 24, &sector_size, sizeof(sector_size));
    out.resize(kSector + bytes_.size());
    std::memcpy(out.data() + kSector, bytes_.data(), bytes_.size());
    return out;
  }
  uint64_t count() const { return count_; }

 private:
  void Header(uint64_t sector, uint64_t sectors, uint64_t flags, uint64_t data_len) {
    const uint64_t fields[4] = {sector, sectors, flags, data_len};
    const size_t at = bytes_.size();
    bytes_.resize(at + kSector);
    std::memcpy(bytes_.data() + at, fields, sizeof(fields));
  }
  std::vector<std::byte> bytes_;
  uint64_t count_ = 0;
};

// Disk of 64 sectors; markers from sector 48.
constexpr uint64_t kDiskSectors = 64;
constexpr uint64_t kMarkerFirst = 48;

LogWriter SampleLog() {
  LogWriter log;
  log.Write(0, 8, 0xa0);   // 0   window 0
  log.Write(48, 1, 0xe0);  // 1   marker
  log.Flush();             // 2
  log.Write(8, 16, 0xa1);  // 3   window 1
  log.Write(0, 2, 0xa2);   // 4
  log.Write(49, 1, 0xe1);  // 5   marker
  log.Write(30, 4, 0xa3);  // 6
  log.Flush();             // 7
  log.Write(40, 8, 0xa4);  // 8   window 2: no closing flush
  log.Write(50, 1, 0xe2);  // 9   marker
  return log;
}

TEST_CASE("crash-VM log: entries past the super block's count are read, a cut tail ends it",
          "[crashvm]") {
  TempDir dir;
  const LogWriter writer = SampleLog();
  std::vector<std::byte> bytes = writer.Bytes(8);  // count as of the last flush
  WriteWholeFile(dir.File("log"), bytes);
  Expected<WriteLog> log = ReadWriteLog(dir.File("log"));
  REQUIRE(log.ok());
  CHECK(log.value().sector_size == kSector);
  CHECK(log.value().super_entries == 8);
  REQUIRE(log.value().entries.size() == 10);
  CHECK(log.value().entries[3].sector == 8);
  CHECK(log.value().entries[3].nr_sectors == 16);
  CHECK(log.value().entries[7].is_flush());
  CHECK_FALSE(log.value().entries[7].is_write());
  CHECK(log.value().end_reason == "end of file");

  // The last entry's data cut short by the crash: the log ends before it.
  bytes.resize(bytes.size() - 100);
  WriteWholeFile(dir.File("cut"), bytes);
  Expected<WriteLog> cut = ReadWriteLog(dir.File("cut"));
  REQUIRE(cut.ok());
  CHECK(cut.value().entries.size() == 9);
  CHECK(cut.value().end_reason.find("entry 9") != std::string::npos);

  // Inside the super block's count the same cut is an error.
  std::vector<std::byte> short_log = writer.Bytes(10);
  short_log.resize(short_log.size() - 100);
  WriteWholeFile(dir.File("short"), short_log);
  Expected<WriteLog> bad_count = ReadWriteLog(dir.File("short"));
  REQUIRE_FALSE(bad_count.ok());
  CHECK(bad_count.error().find(dir.File("short")) != std::string::npos);

  WriteWholeFile(dir.File("magic"), writer.Bytes(8, 0x1234));
  Expected<WriteLog> bad_magic = ReadWriteLog(dir.File("magic"));
  REQUIRE_FALSE(bad_magic.ok());
  CHECK(bad_magic.error().find("bad magic") != std::string::npos);
}

TEST_CASE("crash-VM states: windows, a fixed enumeration per seed, images byte-exact",
          "[crashvm]") {
  TempDir dir;
  WriteWholeFile(dir.File("log"), SampleLog().Bytes(8));
  Expected<WriteLog> parsed = ReadWriteLog(dir.File("log"));
  REQUIRE(parsed.ok());
  const WriteLog& log = parsed.value();

  const std::vector<LogWindow> windows = SplitWindows(log, kMarkerFirst);
  REQUIRE(windows.size() == 3);
  CHECK(windows[0].writes == std::vector<size_t>{0});
  CHECK(windows[0].markers == std::vector<size_t>{1});
  CHECK(windows[1].first == 3);
  CHECK(windows[1].end == 8);
  CHECK(windows[1].writes == std::vector<size_t>{3, 4, 6});
  CHECK(windows[2].end == 10);

  StateBudget budget;
  budget.max_random = 12;
  const std::vector<CrashState> states = EnumerateCrashStates(log, kMarkerFirst, 7, budget);
  // Three flush boundaries and the full log, then the random ones.
  REQUIRE(states.size() > 4);
  CHECK(states.size() <= 4 + budget.max_random);
  CHECK(states[0].kind == CrashStateKind::kFlushBoundary);
  CHECK(states[3].kind == CrashStateKind::kFullLog);
  const std::vector<CrashState> again = EnumerateCrashStates(log, kMarkerFirst, 7, budget);
  REQUIRE(again.size() == states.size());
  bool differs = false;
  const std::vector<CrashState> other = EnumerateCrashStates(log, kMarkerFirst, 8, budget);
  for (size_t i = 0; i < states.size(); ++i) {
    CHECK(again[i].description == states[i].description);
    differs = differs || i >= other.size() || other[i].description != states[i].description;
  }
  CHECK(differs);

  // The base: every sector holds its number.
  std::vector<std::byte> base(kDiskSectors * kSector);
  for (uint64_t s = 0; s < kDiskSectors; ++s) {
    std::fill_n(base.begin() + static_cast<std::ptrdiff_t>(s * kSector), kSector,
                static_cast<std::byte>(s));
  }
  WriteWholeFile(dir.File("base"), base);
  // What each state's image must hold, sector by sector.
  auto expect = [&](const CrashState& state) {
    std::vector<std::byte> image = base;
    auto put = [&](size_t index, uint64_t sectors) {
      const LogEntry& e = log.entries[index];
      const std::vector<std::byte> data =
          PreadFile(dir.File("log"), e.data_offset, sectors * kSector);
      std::copy(data.begin(), data.end(),
                image.begin() + static_cast<std::ptrdiff_t>(e.sector * kSector));
    };
    for (size_t i = 0; i < state.prefix_end; ++i) {
      if (log.entries[i].is_write()) put(i, log.entries[i].nr_sectors);
    }
    for (size_t n = 0; n < state.writes.size(); ++n) {
      const bool torn = state.torn_sectors != 0 && n + 1 == state.writes.size();
      put(state.writes[n], torn ? state.torn_sectors : log.entries[state.writes[n]].nr_sectors);
    }
    for (size_t i = state.prefix_end; i < state.window_end; ++i) {
      if (log.entries[i].is_write() && log.entries[i].sector >= kMarkerFirst) put(i, 1);
    }
    return image;
  };
  size_t torn = 0;
  for (const CrashState& state : states) {
    INFO(state.description);
    const std::string out = dir.File("state-" + std::to_string(state.id));
    Expected<ImageStats> made =
        BuildStateImage(dir.File("base"), dir.File("log"), log, state, kMarkerFirst, out);
    REQUIRE(made.ok());
    const std::vector<std::byte> image = ReadWholeFile(out);
    REQUIRE(image.size() == base.size());
    CHECK(image == expect(state));
    if (state.kind == CrashStateKind::kTorn) {
      ++torn;
      CHECK(state.torn_sectors % 8 == 0);
      CHECK(state.torn_sectors < log.entries[state.writes.back()].nr_sectors);
    }
  }
  // Only entry 3 (16 sectors) tears at 4 KiB.
  CHECK(torn >= 1);

  // Hand-checked: the flush boundary of window 2 has windows 0 and 1 whole
  // and window 2's marker, not its data.
  const std::vector<std::byte> boundary = ReadWholeFile(dir.File("state-2"));
  CHECK(boundary[0] == std::byte{0xa2});
  CHECK(boundary[2 * kSector] == std::byte{0xa0});
  CHECK(boundary[30 * kSector] == std::byte{0xa3});
  CHECK(boundary[40 * kSector] == std::byte{40});
  CHECK(boundary[50 * kSector] == std::byte{0xe2});
}

}  // namespace
}  // namespace regionstore::testing
