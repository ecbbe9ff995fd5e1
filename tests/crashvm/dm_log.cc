#include "crashvm/dm_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "crashvm/file_io.h"

namespace regionstore::testing {
namespace {

// Both structs are packed little-endian integers at the start of a log
// sector; these are their sizes on disk.
constexpr size_t kSuperBytes = 8 + 8 + 8 + 4;
constexpr size_t kEntryHeaderBytes = 8 * 4;
// A mark's name is a short string; a longer "mark" is a header that is not one.
constexpr uint64_t kMaxMarkBytes = 4096;

uint64_t LoadLe64(const unsigned char* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

uint32_t LoadLe32(const unsigned char* bytes) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

std::string ErrnoText(int err) { return std::strerror(err); }

// pread of exactly `length` bytes. Returns "" or the error.
std::string PreadFully(int fd, unsigned char* out, size_t length, uint64_t offset) {
  if (PreadAll(fd, out, length, offset)) return "";
  if (errno == EIO) return "unexpected end of file or I/O error at byte " + std::to_string(offset);
  return "pread at byte " + std::to_string(offset) + ": " + ErrnoText(errno);
}

// Parses the entry whose header sector starts at `offset`. Returns "" and
// fills `entry`, or why it is not an entry. The file size bounds the data:
// a write whose data the crash cut short is not an entry.
std::string ParseEntry(int fd, uint64_t offset, uint64_t file_size, uint32_t sector_size,
                       LogEntry* entry) {
  if (offset + sector_size > file_size) {
    return "header at byte " + std::to_string(offset) + " is cut off by the end of the file";
  }
  unsigned char header[kEntryHeaderBytes];
  if (std::string error = PreadFully(fd, header, sizeof(header), offset); !error.empty()) {
    return error;
  }
  entry->sector = LoadLe64(header);
  entry->nr_sectors = LoadLe64(header + 8);
  entry->flags = LoadLe64(header + 16);
  entry->data_len = LoadLe64(header + 24);
  const std::string where = "header at byte " + std::to_string(offset);
  if ((entry->flags & ~kLogKnownFlags) != 0) {
    return where + " has unknown flags " + std::to_string(entry->flags);
  }
  // A zero-filled sector (a preallocated or reused tail) reads as a write of
  // nothing: no writer logs that.
  if (entry->flags == 0 && entry->nr_sectors == 0) return where + " is empty (zeros)";
  // Sector counts large enough to overflow byte arithmetic are garbage.
  const uint64_t max_sectors = (uint64_t{1} << 62) / sector_size;
  if (entry->sector > max_sectors || entry->nr_sectors > max_sectors) {
    return where + " has an impossible sector range";
  }
  if (entry->is_mark()) {
    if (entry->data_len > kMaxMarkBytes) {
      return where + " is a mark of " + std::to_string(entry->data_len) + " bytes";
    }
    entry->data_bytes = entry->data_len;
  } else if (entry->is_discard()) {
    entry->data_bytes = 0;
  } else {
    entry->data_bytes = entry->nr_sectors * sector_size;
  }
  entry->data_offset = offset + sector_size;
  // The data must be all there; its padding after the last entry need not be.
  if (entry->data_offset + entry->data_bytes > file_size) {
    return where + ": its " + std::to_string(entry->data_bytes) +
           " data bytes are cut off by the end of the file";
  }
  if (entry->is_mark() && entry->data_bytes > 0) {
    std::vector<unsigned char> name(entry->data_bytes);
    if (std::string error = PreadFully(fd, name.data(), name.size(), entry->data_offset);
        !error.empty()) {
      return error;
    }
    entry->mark.assign(name.begin(), name.end());
    // The kernel stores the terminating NUL in some versions.
    while (!entry->mark.empty() && entry->mark.back() == '\0') entry->mark.pop_back();
  }
  return "";
}

}  // namespace

Expected<WriteLog> ReadWriteLog(const std::string& path) {
  using Result = Expected<WriteLog>;
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Result::Failure(path + ": open: " + ErrnoText(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Result::Failure(path + ": fstat: " + ErrnoText(errno));
  WriteLog log;
  log.file_size = static_cast<uint64_t>(st.st_size);
  if (log.file_size < 512) {
    return Result::Failure(path + ": " + std::to_string(log.file_size) +
                           " bytes, too short for a dm-log-writes super block (512)");
  }
  unsigned char super[kSuperBytes];
  if (std::string error = PreadFully(fd.get(), super, sizeof(super), 0); !error.empty()) {
    return Result::Failure(path + ": " + error);
  }
  const uint64_t magic = LoadLe64(super);
  const uint64_t version = LoadLe64(super + 8);
  log.super_entries = LoadLe64(super + 16);
  log.sector_size = LoadLe32(super + 24);
  if (magic != kWriteLogMagic) {
    char text[96];
    std::snprintf(text, sizeof(text), "bad magic 0x%llx (a dm-log-writes log has 0x%llx)",
                  static_cast<unsigned long long>(magic),
                  static_cast<unsigned long long>(kWriteLogMagic));
    return Result::Failure(path + ": " + text);
  }
  if (version != kWriteLogVersion) {
    return Result::Failure(path + ": unsupported log version " + std::to_string(version));
  }
  // At least 512: a disk sector, and room for a header. Below 2^24 as the
  // writer requires.
  const uint32_t ss = log.sector_size;
  if (ss < 512 || ss >= (uint32_t{1} << 24) || (ss & (ss - 1)) != 0) {
    return Result::Failure(path + ": invalid log sector size " + std::to_string(ss));
  }

  uint64_t offset = ss;  // the first entry follows the super block
  for (uint64_t index = 0;; ++index) {
    if (offset >= log.file_size) {
      if (index < log.super_entries) {
        return Result::Failure(path + ": the super block counts " +
                               std::to_string(log.super_entries) +
                               " entries, the file ends after " + std::to_string(index));
      }
      log.end_reason = "end of file";
      break;
    }
    LogEntry entry;
    entry.index = index;
    std::string why = ParseEntry(fd.get(), offset, log.file_size, ss, &entry);
    if (!why.empty()) {
      const std::string message = "entry " + std::to_string(index) + ": " + why;
      // Within the count the writer had flushed the entry; past it the
      // crash may have cut the entry short, which ends the log.
      if (index < log.super_entries) return Result::Failure(path + ": " + message);
      log.end_reason = message;
      break;
    }
    const uint64_t padded = (entry.data_bytes + ss - 1) / ss * ss;
    offset = entry.data_offset + padded;
    log.entries.push_back(std::move(entry));
  }
  return log;
}

std::string DescribeFlags(uint64_t flags) {
  std::string text;
  auto add = [&text](const char* word) {
    if (!text.empty()) text += "+";
    text += word;
  };
  if ((flags & kLogFlush) != 0) add("flush");
  if ((flags & kLogFua) != 0) add("fua");
  if ((flags & kLogDiscard) != 0) add("discard");
  if ((flags & kLogMark) != 0) add("mark");
  if ((flags & kLogMetadata) != 0) add("metadata");
  if (text.empty()) text = "write";
  return text;
}

}  // namespace regionstore::testing
