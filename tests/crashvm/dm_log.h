// A reader of the dm-log-writes log format, as QEMU's blklogwrites block
// driver writes it: the record of a guest's disk writes, flushes and
// discards, in the order they completed, from which tests rebuild the disk as
// a crash at any point could have left it (crash_states.h).
//
// The layout (all integers little-endian):
//   log sector 0: the super block: magic 0x6a736677736872, version 1, the
//     entry count (u64), the log sector size in bytes (u32); zero padded.
//   then, per entry: one log sector holding its header (sector, sector
//     count, flags, data length: four u64), then its data, padded to whole
//     log sectors: sector count x sector size bytes for a write, data length
//     bytes (a string) for a mark, nothing for a flush or a discard.
// Sectors in an entry count in log sector size units (512 bytes when the log
// was made with log-sector-size=512, as ours are).
//
// The writer updates the super block's count only on a flush (or after
// thousands of writes), so the entries after a crash or a kill outrun it:
// the reader trusts the count for the entries it covers and then scans on
// until an entry does not parse or the file ends.
#ifndef REGIONSTORE_TESTS_CRASHVM_DM_LOG_H_
#define REGIONSTORE_TESTS_CRASHVM_DM_LOG_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace regionstore::testing {

inline constexpr uint64_t kWriteLogMagic = 0x6a736677736872;
inline constexpr uint64_t kWriteLogVersion = 1;

// Entry flags.
inline constexpr uint64_t kLogFlush = 1;      // a cache flush (REQ_PREFLUSH)
inline constexpr uint64_t kLogFua = 2;        // a write durable once it completed
inline constexpr uint64_t kLogDiscard = 4;    // a discard; no data in the log
inline constexpr uint64_t kLogMark = 8;       // a named point; the name is the data
inline constexpr uint64_t kLogMetadata = 16;  // a filesystem metadata write
inline constexpr uint64_t kLogKnownFlags = 31;

// A value or an error message that names the file and what is wrong, in the
// shape of std::expected (which g++ 12 lacks).
template <typename T>
class Expected {
 public:
  Expected(T value) : storage_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  static Expected Failure(std::string message) {
    return Expected(std::in_place_index<1>, std::move(message));
  }
  bool ok() const { return storage_.index() == 0; }
  const T& value() const& { return std::get<0>(storage_); }
  T& value() & { return std::get<0>(storage_); }
  T&& value() && { return std::get<0>(std::move(storage_)); }
  const std::string& error() const { return std::get<1>(storage_); }

 private:
  template <size_t I>
  Expected(std::in_place_index_t<I> index, std::string message)
      : storage_(index, std::move(message)) {}
  std::variant<T, std::string> storage_;
};

struct LogEntry {
  uint64_t index = 0;        // position in the log, from 0
  uint64_t sector = 0;       // first disk sector, in log sector size units
  uint64_t nr_sectors = 0;   // disk sectors written (or discarded)
  uint64_t flags = 0;        // kLog* bits
  uint64_t data_len = 0;     // the header's data length (a mark's name length)
  uint64_t data_offset = 0;  // byte offset of the entry's data in the log file
  uint64_t data_bytes = 0;   // bytes of data at data_offset (0: flush, discard)
  std::string mark;          // a mark's name

  bool is_flush() const { return (flags & kLogFlush) != 0; }
  bool is_discard() const { return (flags & kLogDiscard) != 0; }
  bool is_mark() const { return (flags & kLogMark) != 0; }
  // Carries disk data: not a discard or a mark, and at least one sector.
  bool is_write() const { return nr_sectors > 0 && !is_discard() && !is_mark(); }
};

struct WriteLog {
  uint32_t sector_size = 0;       // bytes per log sector (and per entry sector)
  uint64_t super_entries = 0;     // the entry count in the super block
  uint64_t file_size = 0;         // bytes in the log file
  std::vector<LogEntry> entries;  // in log (completion) order
  // Why the scan stopped: "end of file", or the entry past the super block's
  // count that did not parse and why (a write cut short by the crash).
  std::string end_reason;
};

// Reads the log at `path`: the super block, then every entry.
// Errors (the message names the file): it cannot be opened or read; it is
// shorter than one sector; a bad magic, version or sector size; one of the
// entries the super block counts is truncated or malformed. An entry after
// that count which is truncated or malformed ends the log (end_reason) and is
// not an error.
Expected<WriteLog> ReadWriteLog(const std::string& path);

// The flags as words ("write" for none; "flush", "fua", "discard", "mark",
// "metadata" joined by "+"), for messages.
std::string DescribeFlags(uint64_t flags);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_CRASHVM_DM_LOG_H_
