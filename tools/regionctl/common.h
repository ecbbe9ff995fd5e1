// Shared pieces of regionctl: exit codes, the size syntax, human-readable
// sizes and whole-buffer input/output on files or the standard streams.
//
// Each subcommand lives in its own cmd_<verb>.cc and registers itself with a
// Setup<Verb>(CLI::App& app, Status& outcome) function; its callback leaves
// the outcome of the command in `outcome` and main() turns that into one line
// on stderr and an exit code.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_COMMON_H_
#define REGIONSTORE_TOOLS_REGIONCTL_COMMON_H_

#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "regionstore/checkpoint.h"
#include "regionstore/status.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"

namespace regionstore::regionctl {

// The exit codes of every subcommand. Other tools drive regionctl and rely on
// these values: never renumber them.
enum class ExitCode : int {
  kSuccess = 0,
  // A failure not listed below: missing file, permission, I/O error, no space,
  // already exists, poisoned store, a store sharing blocks with a reflink copy
  // (StatusCode::kSharedExtents; run regionctl unshare PATH), a checkpoint region with no commit
  // yet (also when a commit was killed before its header was stored).
  kFailure = 1,
  // A bad command line (every CLI11 parse error), or an argument the store
  // rejects (an offset or length outside the data area, a size too large, a
  // bad or duplicate --checkpoint, a region name the store lacks, a payload
  // longer than the region's capacity, a PATH that is a symbolic link without
  // --follow-symlinks, or create --force onto a symbolic link).
  kUsage = 2,
  // The file is not a valid store or its data is damaged: a directory, bad
  // magic, bad checksum, wrong size, a newer incompatible format, a damaged
  // region table, a checkpoint region whose slots hold data but none is valid.
  kInvalidStore = 3,
  // Another writer holds the store's lock; or, for load, the writer kept
  // replacing the slot being read.
  kBusy = 4,
  // load --wait-newer-than: the timeout passed with no newer commit.
  kTimedOut = 5,
  // A checkpoint region's newest commit header is intact but its payload does
  // not match (SlotState::kTorn): a power loss interrupted that commit, or it
  // was damaged after it returned; nothing tells the two apart. verify exits
  // with it when some region is torn and nothing is worse (3 wins); load,
  // export and dump --region when no older commit of the region is intact
  // (StatusCode::kTornCommit; with an older one they return it, exit 0, and
  // warn on stderr).
  kTornCommit = 6,
  // The command did what it was asked, and changed the store (create, commit,
  // import, write, unshare) or its destination (export), but its report on
  // standard output could not be written (a full disk, a closed pipe). The
  // change stands: a script must not retry it. stderr says what failed.
  kChangedReportLost = 7,
};

// The exit code for a failed (or OK) library status.
ExitCode ExitCodeFor(StatusCode code);

// Parses a size or offset: a decimal byte count with an optional binary unit,
// "4096", "64KiB", "16MiB", "1GiB", "2TiB", or the shorthands K, M, G, T
// (also powers of 1024) and B (bytes). Decimal units (KB, MB, ...) are
// refused as ambiguous. Errors: kInvalidArgument, with a message saying what
// is wrong (malformed, ambiguous unit, more than 64 bits).
Result<uint64_t> ParseSize(std::string_view text);

// "auto", "compact" or "aligned" (exactly; SlotLayoutName's spellings), or
// nothing for any other text.
std::optional<SlotLayout> ParseSlotLayout(std::string_view text);

// Parses a --checkpoint value, NAME:CAPACITY[:LAYOUT] ("state:64KiB",
// "log:100:compact"). The name may itself hold ':': if the text after the
// last ':' is a layout (auto, compact, aligned) it is the layout and the
// capacity is the field before it, else it is the capacity and the region
// gets `default_layout`; the name is everything before the capacity's ':'.
// No valid NAME:CAPACITY changes meaning (no capacity is spelled like a
// layout). The name must pass ValidateRegionName and the capacity ParseSize,
// and be at least 1 byte. `path` is the store's and `source` says where the
// text came from ("--checkpoint", "--checkpoints-from 'list.txt' line 3"),
// both for the message. Errors: kInvalidArgument.
Result<CheckpointSpec> ParseCheckpointSpec(const std::string& path, const std::string& text,
                                           SlotLayout default_layout = SlotLayout::kAuto,
                                           const std::string& source = "--checkpoint");

// A CLI11 transform for an option bound to an integer: accepts the ParseSize
// syntax and hands CLI11 the plain byte count. A bad value is a usage error.
CLI::Validator SizeTransform();

// A CLI11 check accepting exactly the spellings ParseDurability accepts.
CLI::Validator DurabilityCheck();

// Adds --follow-symlinks to `command`, a command that opens an existing store
// at PATH: it sets `symlinks` to SymlinkPolicy::kFollow. Without the flag a
// PATH that is itself a symbolic link is refused with kInvalidArgument
// (exit 2), as the library does by default (OpenOptions::symlinks).
void AddFollowSymlinksFlag(CLI::App* command, SymlinkPolicy& symlinks);

// Adds the subcommand `name` to `app`: its one-line `description` and the
// `footer` its --help ends with (examples, exit codes).
CLI::App* AddCommand(CLI::App& app, const std::string& name, const std::string& description,
                     const std::string& footer);

// What every command on an existing store takes: its PATH and whether a
// PATH that is a symbolic link may be followed. Each command's arguments
// derive from it.
struct StoreArgs {
  std::string path;
  SymlinkPolicy symlinks = SymlinkPolicy::kRefuse;
};

// Adds PATH (the store file, required) and --follow-symlinks to `command`.
void AddStoreArguments(CLI::App* command, StoreArgs& args);

// AddStoreArguments, then NAME (the checkpoint region, required).
void AddStoreRegionArguments(CLI::App* command, StoreArgs& args, std::string& name);

// Adds `option` ("--offset") to `command`: a size or offset in the ParseSize
// syntax ("2MiB"), shown as N in the help.
CLI::Option* AddSizeOption(CLI::App* command, const std::string& option, uint64_t& value,
                           const std::string& description);

// Adds --durability MODE to `command`, bound to `durability_name` (its
// default shown), checked by DurabilityCheck; `what` is "write" or "commit".
CLI::Option* AddDurabilityOption(CLI::App* command, std::string& durability_name,
                                 const std::string& what);

// Store::Open(kReadWrite) of the store `args` name, with each warning of the
// open (shared blocks on btrfs, which a full disk can turn into SIGBUS on a
// mapped write) printed on stderr as "regionctl: warning: ...", also when
// the open fails.
Result<Store> OpenWriterPrintingWarnings(const StoreArgs& args);

// "100 B", "64.0 KiB", "39.1 KiB", "1.5 GiB": one decimal, binary units.
// A size that would show as a whole number of units without being one (4095
// bytes as "4.0 KiB") shows its exact count first: "4095 B (~4.0 KiB)".
std::string HumanBytes(uint64_t bytes);

// "4.0 KiB" or "~4.0 KiB": HumanBytes's unit form alone, marked when it
// looks whole but is not; for places that show the exact count beside it,
// and for progress.
std::string ApproximateUnits(uint64_t bytes);

// "1701320280123456789 (2023-11-30T04:58:00Z)": nanoseconds since the epoch
// and the UTC time they stand for.
std::string UnixNanosWithUtc(uint64_t unix_ns);

// "2023-11-30T04:58:00.123456789Z": RFC 3339 in UTC with all nine digits,
// for JSON beside each *_unix_ns number (which exceeds 2^53, the integers a
// JavaScript number or jq holds exactly).
std::string Rfc3339Nanos(uint64_t unix_ns);

// `name` between single quotes, safe to print on a terminal: valid UTF-8
// stays as it is, except control characters (C0, DEL, C1) and the
// bidirectional formatting characters (U+202A..U+202E, U+2066..U+2069),
// whose bytes, like any byte of invalid UTF-8, become \xNN; a backslash or
// a quote gets a backslash. For names read from a store file, which may be
// damaged or crafted.
std::string QuoteName(std::string_view name);

// The entry of the checkpoint region called `name` in `info`. A name the store
// does not have is an argument the store rejects (exit 2), so the error is
// kInvalidArgument, naming the regions the store does have (the first 10).
Result<RegionEntry> FindRegionEntry(const StoreInfo& info, std::string_view name,
                                    const std::string& path, const char* operation);

// Store::Load of region `name` into `payload`. When Load passed over a torn
// newer commit (CheckpointMeta::skipped_torn_generation), prints one
// "regionctl: warning: ..." line on stderr naming it and the generation
// returned. For load, export and dump --region, so the three say the same.
// Errors: those of Store::Load (kNotFound: no commit yet; kCorruption: no
// header passes its checks; kTornCommit: the only intact header is torn).
Result<CheckpointMeta> LoadRegionWarningIfTorn(const Store& store, const std::string& name,
                                               std::vector<std::byte>& payload);
// The warnings LoadRegionWarningIfTorn prints, for a region loaded otherwise
// (load --get, through Store::LoadSet).
void WarnAboutLoaded(const std::string& name, const CheckpointMeta& loaded);

// Called by a command once it has changed the store or its destination, so
// that a failure to write its report afterwards exits with
// ExitCode::kChangedReportLost rather than kFailure.
void SetStoreChanged();
bool StoreChanged();

// Makes sure descriptors 0, 1 and 2 are open before regionctl opens anything
// else: each closed one is opened on /dev/null (standard output on
// /dev/full, so that a report written to it fails visibly), so that a store
// opened later cannot take its number and be read as the input or written as
// the output.
// Remembers which were closed (StandardInputWasClosed, ...). Returns false
// if a closed one could not be opened (no /dev/null): nothing is safe to
// open then.
bool OpenClosedStandardDescriptors();
bool StandardInputWasClosed();
bool StandardOutputWasClosed();

// kInvalidArgument (exit 2) when `destination`, a path (followed through
// symbolic links) or, if empty, standard output, is the store file at
// `store_path` itself (the same device and inode: also through a hard link
// or a shell's `>>`), so that no command writes its output over the store it
// read. OK when they differ, or when `destination` does not exist yet.
// `operation` names the command in the message.
Status RefuseOutputOntoStore(const std::string& store_path, const std::string& destination,
                             const char* operation);

// For viewers (dump): the reader of standard output closed the pipe (EPIPE)
// after taking what it wanted (`| head`). main() then ends with exit 0 and no
// message instead of reporting the failed flush.
void SetStdoutClosedByReader();
bool StdoutClosedByReader();

// The first key of every --json document: the version of its schema
// (docs/schemas/regionctl-VERB.schema.json). It changes when a key is removed
// or renamed or its type or meaning changes; a key may be added without it,
// so a reader ignores keys it does not know (docs/REGIONCTL.md, JSON output).
inline constexpr int kJsonSchemaVersion = 1;

// Prints `document` on standard output, indented, with a newline. Strings
// need not be UTF-8 (paths, names from a damaged file): bad bytes become
// U+FFFD instead of making dump() throw.
void PrintJsonDocument(const nlohmann::ordered_json& document);

// Appends `value` to `out` as PrintJsonDocument prints it `depth` levels deep
// (two spaces a level before each line after the first).
void AppendJson(std::string& out, const nlohmann::ordered_json& value, size_t depth);

// Appends one JSON object to a string in PrintJsonDocument's layout, without
// building a tree: for the 10,000 regions of a large store, where building
// and destroying nlohmann trees took most of inspect --json's time. Keys are
// ASCII literals; strings are escaped as PrintJsonDocument does (bytes that
// are not UTF-8 become U+FFFD). Finish with End().
class JsonObjectWriter {
 public:
  JsonObjectWriter(std::string& out, size_t depth) : out_(out), depth_(depth) { out_ += '{'; }
  JsonObjectWriter(const JsonObjectWriter&) = delete;
  JsonObjectWriter& operator=(const JsonObjectWriter&) = delete;

  void Number(std::string_view key, uint64_t value);
  void Bool(std::string_view key, bool value);
  void Null(std::string_view key);
  void String(std::string_view key, std::string_view value);
  // Any value, through nlohmann.
  void Json(std::string_view key, const nlohmann::ordered_json& value);
  // Starts the value of `key` and returns the depth it is at, for an
  // object or array the caller appends to out() itself.
  size_t Nested(std::string_view key);
  std::string& out() { return out_; }
  void End();

 private:
  void Key(std::string_view key);

  std::string& out_;
  size_t depth_;
  bool empty_ = true;
};

// PrintJsonDocument for a document with one long array (the regions of a
// store with 10,000 of them): the value of `array_key` in `document` is a
// placeholder, and in its place goes an array of `count` elements, each
// appended by append_element(out, index) at depth 2 (JsonObjectWriter or
// AppendJson), and written out in pieces. Prints the same bytes as
// PrintJsonDocument of the whole document.
void PrintJsonDocumentWithArray(
    const nlohmann::ordered_json& document, std::string_view array_key, size_t count,
    const std::function<void(std::string& out, size_t index)>& append_element);

// The name used in messages for the standard streams.
inline constexpr std::string_view kStdinName = "<stdin>";
inline constexpr std::string_view kStdoutName = "<stdout>";

// What ReadInput read.
struct Input {
  std::vector<std::byte> bytes;
  // True if the input holds more than the limit; `bytes` then holds only the
  // first limit + 1 bytes (enough to say so, without buffering the rest).
  bool exceeds_limit = false;
};

// For a FILE option: '-' means the standard stream (standard input for
// --input, standard output for --output), stored as "", as if the option
// were not given. A file really named "-" is ./-.
CLI::Option* DashMeansStandardStream(CLI::Option* option);

// The terminal columns `text` takes, for padding tables: UTF-8 decoded;
// East Asian wide and fullwidth characters take 2, combining marks 0,
// everything else (and each byte that is not UTF-8) 1.
size_t DisplayWidth(std::string_view text);

// Reads all of the file at `input_path`, or standard input if it is empty,
// stopping one byte past `limit`. Errors: kInvalidArgument if standard input
// was closed when regionctl started ("standard input is closed"); those of
// open/read with the path (kNotFound, kPermissionDenied, kIOError); ENOMEM as
// kIOError if the input does not fit in memory.
Result<Input> ReadInput(const std::string& input_path, uint64_t limit);

// The same input (the file at `input_path`, or standard input if it is
// empty), read chunk by chunk, for payloads regionctl must not hold whole
// (commit and import stream into the slot). Errors of Open and Read: as
// ReadInput's.
class InputReader {
 public:
  static Result<std::unique_ptr<InputReader>> Open(const std::string& input_path);
  ~InputReader();
  InputReader(const InputReader&) = delete;
  InputReader& operator=(const InputReader&) = delete;

  // Fills `buffer` as far as the input goes (retrying short reads and
  // EINTR); returns how many bytes it holds, fewer than its size only at the
  // end of the input, 0 there.
  Result<size_t> Read(std::span<std::byte> buffer);
  // The input's name in messages: the path, or "standard input".
  const std::string& name() const { return name_; }
  // The size of a regular file, else 0 (a pipe, a terminal, a device).
  uint64_t RegularFileSize() const;
  // Whether the input is a regular file (standard input too, when it is
  // redirected from one).
  bool IsRegularFile() const;

 private:
  InputReader(int fd, bool owned, std::string name)
      : fd_(fd), owned_(owned), name_(std::move(name)) {}

  int fd_;
  bool owned_;
  std::string name_;
};

// A destination opened and checked but not written yet (OutputFile::Open),
// so that a command with several outputs can check every one before it
// writes any. Move-only; the destructor closes it.
class OutputFile {
 public:
  // Opens `output_path` for writing (created, mode 0644 before umask, if
  // missing; nothing truncated yet), or standard output if it is empty, and
  // refuses a destination that is the store at `store_path` by any name.
  // Errors: as WriteOutput's before its first byte.
  static Result<OutputFile> Open(const std::string& output_path, const std::string& store_path);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Truncates a regular file, then writes all of `data` (fsynced first with
  // `sync_regular_file`) and closes. Once per file.
  Status Write(std::span<const std::byte> data, bool sync_regular_file = false);
  // Removes the file if Open created it and Write never ran: a command that
  // fails after opening its outputs leaves none of them behind.
  void Discard();
  // The destination's device and inode (standard output's too), if it is a
  // regular file; nullopt for a FIFO, a device (/dev/null), a socket, or
  // when fstat fails. Two outputs with the same identity would truncate and
  // overwrite each other; non-regular ones are written in turn.
  std::optional<std::pair<dev_t, ino_t>> regular_identity() const;
  const std::string& name() const { return name_; }

 private:
  OutputFile(int fd, bool to_stdout, bool created, std::string path, std::string name);
  int fd_ = -1;
  bool to_stdout_ = false;
  bool created_ = false;
  bool written_ = false;
  std::string path_;
  std::string name_;
};

// Writes all of `data` to the file at `output_path` (created, mode 0644
// before umask, or truncated if it is a regular file; a FIFO or a device is
// written as it is), or to standard output if it is empty. No fsync. The
// destination is compared with the store at `store_path` on the descriptor
// itself, before anything is truncated or written (RefuseOutputOntoStore).
// With `sync_regular_file`, a regular destination is fsynced before the
// close. Errors: kInvalidArgument (the destination is the store; standard
// output was closed when regionctl started), those of open/write/fsync/close
// with the path.
Status WriteOutput(const std::string& output_path, std::span<const std::byte> data,
                   const std::string& store_path, bool sync_regular_file = false);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_COMMON_H_
