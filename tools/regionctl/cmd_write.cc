#include "cmd_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/durability.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {
namespace {

struct WriteArgs : StoreArgs {
  uint64_t offset = 0;
  std::string durability_name = "sync";
  std::string input_path;  // empty: standard input
  bool json = false;
};

// Inputs up to this size are read whole before the write; a longer one is
// written a chunk at a time, so memory stays at one chunk whatever its size.
constexpr size_t kChunkBytes = size_t{16} << 20;

Status TooLong(const WriteArgs& args, uint64_t room, uint64_t data_size) {
  return Status::Error(StatusCode::kInvalidArgument, "write", args.path,
                       "the input is longer than the " + std::to_string(room) +
                           " bytes from offset " + std::to_string(args.offset) +
                           " to the end of the data area (" + std::to_string(data_size) +
                           " bytes); nothing written");
}

// A piped input longer than one chunk, held in a nameless temp file
// (O_TMPFILE in $TMPDIR, else /tmp) until its end shows that it fits: a
// pipe does not say its length, and an input refused as too long must leave
// the store as it was. Unlinked from the start, so nothing outlives the
// process.
class Spool {
 public:
  static Result<std::unique_ptr<Spool>> Create() {
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string directory = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
    const int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
      return Status::FromErrno(errno, "write: hold the piped input", directory,
                               "a piped input over 16 MiB is held in a temp file there until "
                               "it is known to fit (set TMPDIR, or give the input with --input "
                               "FILE)");
    }
    return std::unique_ptr<Spool>(new Spool(fd, directory));
  }
  ~Spool() { ::close(fd_); }
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  Status Append(std::span<const std::byte> bytes) {
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t put =
          ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(size_ + done));
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) {
        return Status::FromErrno(put < 0 ? errno : EIO, "write: hold the piped input", directory_,
                                 "in a temp file there; nothing written to the store");
      }
      done += static_cast<size_t>(put);
    }
    size_ += bytes.size();
    return Status::Ok();
  }
  Status ReadAt(uint64_t offset, std::span<std::byte> out) const {
    for (size_t done = 0; done < out.size();) {
      const ssize_t got =
          ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        return Status::FromErrno(got < 0 ? errno : EIO, "write: read back the piped input",
                                 directory_);
      }
      done += static_cast<size_t>(got);
    }
    return Status::Ok();
  }
  uint64_t size() const { return size_; }

 private:
  Spool(int fd, std::string directory) : fd_(fd), directory_(std::move(directory)) {}
  int fd_;
  std::string directory_;
  uint64_t size_ = 0;
};

// Writes the input a chunk at a time from `offset` with Store::Pwrite
// (copies into the mapping would make every page of it resident in this
// process), then makes the whole range durable with one Flush in the
// requested mode, the barrier one Write would end with. `next` fills the
// buffer with the next chunk and returns its length, 0 at the end.
Result<uint64_t> WriteChunks(Store& store, uint64_t offset, Durability durability,
                             std::vector<std::byte>& buffer,
                             const std::function<Result<size_t>(std::span<std::byte>)>& next) {
  uint64_t written = 0;
  for (;;) {
    Result<size_t> got = next(buffer);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    if (Status s = store.Pwrite(offset + written, std::span(buffer).first(*got)); !s.ok()) {
      return s;
    }
    SetStoreChanged();
    written += *got;
  }
  if (Status s = store.Flush(offset, written, durability); !s.ok()) return s;
  return written;
}

Status RunWrite(const WriteArgs& args) {
  // DurabilityCheck already refused anything else; this keeps the value honest.
  const std::optional<Durability> durability = ParseDurability(args.durability_name);
  if (!durability.has_value()) {
    return Status::Error(StatusCode::kInvalidArgument, "write", args.path,
                         "unknown durability '" + args.durability_name + "'");
  }
  // Open before reading the input, so a missing, damaged or busy store fails
  // without consuming standard input.
  Result<Store> store = OpenWriterPrintingWarnings(args);
  if (!store.ok()) return store.status();
  const uint64_t data_size = store->data_size();
  if (args.offset > data_size) {
    return Status::Error(StatusCode::kInvalidArgument, "write", args.path,
                         "offset " + std::to_string(args.offset) +
                             " is past the end of the data area (" + std::to_string(data_size) +
                             " bytes)");
  }
  // Nothing changes before the input is known to fit: a regular file says
  // its size; a pipe up to one chunk is read whole, a longer one is held in
  // a spool until its end.
  const uint64_t room = data_size - args.offset;
  Result<std::unique_ptr<InputReader>> opened = InputReader::Open(args.input_path);
  if (!opened.ok()) return opened.status();
  InputReader& input = **opened;
  const uint64_t file_size = input.RegularFileSize();
  if (file_size > room) return TooLong(args, room, data_size);
  std::vector<std::byte> buffer(static_cast<size_t>(std::min<uint64_t>(room + 1, kChunkBytes)));
  Result<size_t> first = input.Read(buffer);
  if (!first.ok()) return first.status();
  uint64_t length = *first;
  if (length > room) return TooLong(args, room, data_size);
  if (length < buffer.size()) {
    // The whole input: one Write, as the API would do it.
    if (Status s = store->Write(args.offset, std::span(buffer).first(length), *durability);
        !s.ok()) {
      return s;
    }
    if (length > 0) SetStoreChanged();
  } else if (file_size > 0) {
    // A regular file that fits: from its first chunk on. One that grows
    // while it is read stops at the room, which the error says.
    bool first_chunk = true;
    uint64_t read_so_far = 0;
    Result<uint64_t> written = WriteChunks(
        *store, args.offset, *durability, buffer, [&](std::span<std::byte> out) -> Result<size_t> {
          size_t got = *first;
          if (!first_chunk) {
            const uint64_t left = room + 1 - read_so_far;
            Result<size_t> next = input.Read(out.first(std::min<uint64_t>(out.size(), left)));
            if (!next.ok()) return next.status();
            got = *next;
          }
          first_chunk = false;
          read_so_far += got;
          if (read_so_far > room) {
            return Status::Error(StatusCode::kInvalidArgument, "write", args.path,
                                 input.name() + " grew past the " + std::to_string(room) +
                                     " bytes to the end of the data area while it was read; " +
                                     std::to_string(read_so_far - got) + " bytes from offset " +
                                     std::to_string(args.offset) +
                                     " were written, the rest refused");
          }
          return got;
        });
    if (!written.ok()) return written.status();
    length = *written;
  } else {
    Result<std::unique_ptr<Spool>> spool = Spool::Create();
    if (!spool.ok()) return spool.status();
    if (Status s = (*spool)->Append(std::span(buffer).first(length)); !s.ok()) return s;
    for (;;) {
      const uint64_t left = room + 1 - (*spool)->size();
      Result<size_t> got =
          input.Read(std::span(buffer).first(std::min<uint64_t>(buffer.size(), left)));
      if (!got.ok()) return got.status();
      if (*got == 0) break;
      if (Status s = (*spool)->Append(std::span(buffer).first(*got)); !s.ok()) return s;
      if ((*spool)->size() > room) return TooLong(args, room, data_size);
    }
    uint64_t replayed = 0;
    Result<uint64_t> written = WriteChunks(
        *store, args.offset, *durability, buffer, [&](std::span<std::byte> out) -> Result<size_t> {
          const size_t chunk =
              static_cast<size_t>(std::min<uint64_t>(out.size(), (*spool)->size() - replayed));
          if (Status s = (*spool)->ReadAt(replayed, out.first(chunk)); !s.ok()) return s;
          replayed += chunk;
          return chunk;
        });
    if (!written.ok()) return written.status();
    length = *written;
  }
  if (args.json) {
    PrintJsonDocument({{"schema_version", kJsonSchemaVersion},
                       {"path", args.path},
                       {"offset", args.offset},
                       {"file_offset", store->info().data_offset + args.offset},
                       {"length", length},
                       {"durability", std::string(DurabilityName(*durability))}});
    return Status::Ok();
  }
  std::cout << "wrote " << length << " bytes at data offset " << args.offset << " (file offset "
            << store->info().data_offset + args.offset << "), durability "
            << DurabilityName(*durability) << '\n';
  return Status::Ok();
}

}  // namespace

void SetupWrite(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<WriteArgs>();
  CLI::App* command = AddCommand(
      app, "write", "Write the bytes of standard input (or --input FILE) at a data-area offset",
      "Example:\n"
      "  head -c 1MiB /dev/urandom | regionctl write state.rs --offset 2MiB --durability sync\n"
      "Durability: none (memcpy), async (+ msync MS_ASYNC, starts nothing on Linux),\n"
      "sync (under 1 MiB one pwritev2 RWF_DSYNC, else + msync MS_SYNC), pwrite-fdatasync\n"
      "(pwrite + fdatasync). A multi-page write\n"
      "is not atomic under a crash. An input too long for the data area is refused before\n"
      "anything is written. An input over 16 MiB is streamed (pwrite 16 MiB at a time, then\n"
      "one barrier in the mode asked for); a piped one is first held in a nameless temp file\n"
      "in $TMPDIR (else /tmp) until its end shows that it fits.");
  AddStoreArguments(command, *args);
  AddSizeOption(command, "--offset", args->offset, "Data-area offset of the first byte")
      ->required();
  AddDurabilityOption(command, args->durability_name, "write");
  DashMeansStandardStream(
      command
          ->add_option("--input", args->input_path,
                       "Read the bytes from FILE, not standard input ('-': standard input)")
          ->type_name("FILE"));
  command->add_flag("--json", args->json, "Print one JSON object instead of a sentence");
  command->callback([args, &outcome] { outcome = RunWrite(*args); });
}

}  // namespace regionstore::regionctl
