#include "common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <limits>
#include <new>
#include <optional>
#include <utility>

#include "regionstore/durability.h"

namespace regionstore::regionctl {
namespace {

// Reads and writes go in chunks: bounded syscalls (write caps at ~2 GiB anyway)
// and, for input of unknown length, bounded over-allocation.
constexpr uint64_t kChunkBytes = uint64_t{1} << 20;

struct SizeUnit {
  std::string_view suffix;
  uint64_t multiplier;
};

// Binary units only: "KB" could mean 1000 or 1024, so it is refused.
constexpr std::array<SizeUnit, 10> kSizeUnits = {{
    {"", 1},
    {"B", 1},
    {"K", uint64_t{1} << 10},
    {"KiB", uint64_t{1} << 10},
    {"M", uint64_t{1} << 20},
    {"MiB", uint64_t{1} << 20},
    {"G", uint64_t{1} << 30},
    {"GiB", uint64_t{1} << 30},
    {"T", uint64_t{1} << 40},
    {"TiB", uint64_t{1} << 40},
}};

Status InvalidSize(std::string message) {
  return Status::Error(StatusCode::kInvalidArgument, "parse size", "", std::move(message));
}

bool IsDecimalUnit(std::string_view unit) {
  if (unit.size() != 2 || (unit[1] != 'B' && unit[1] != 'b')) return false;
  return std::string_view("KkMmGgTtPpEe").find(unit[0]) != std::string_view::npos;
}

char UpperAscii(char letter) {
  return (letter >= 'a' && letter <= 'z') ? static_cast<char>(letter - 'a' + 'A') : letter;
}

// Closes a descriptor this file opened, on every path out of a function.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  // Gives up ownership, so the caller can check close() itself.
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// The code point of the UTF-8 sequence starting at `text[at]` and its length
// in bytes; length 0 for invalid UTF-8 (a stray continuation byte, a
// truncated or overlong sequence, a surrogate, a value above U+10FFFF).
struct CodePoint {
  uint32_t value = 0;
  size_t length = 0;
};

CodePoint DecodeUtf8(std::string_view text, size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) return {lead, 1};
  size_t length = 0;
  uint32_t value = 0;
  uint32_t smallest = 0;  // below this, the sequence is overlong
  if ((lead & 0xe0) == 0xc0) {
    length = 2, value = lead & 0x1fu, smallest = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, value = lead & 0x0fu, smallest = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, value = lead & 0x07u, smallest = 0x10000;
  } else {
    return {};
  }
  if (text.size() - at < length) return {};
  for (size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[at + i]);
    if ((next & 0xc0) != 0x80) return {};
    value = (value << 6) | (next & 0x3fu);
  }
  if (value < smallest || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return {};
  return {value, length};
}

// Code points a terminal acts on instead of showing: controls, and the
// bidirectional overrides that can make a name look like another.
bool ActsOnTerminal(uint32_t code_point) {
  return code_point < 0x20 || (code_point >= 0x7f && code_point <= 0x9f) ||
         (code_point >= 0x202a && code_point <= 0x202e) ||
         (code_point >= 0x2066 && code_point <= 0x2069);
}

void AppendHexByte(std::string& out, unsigned char byte) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  out += "\\x";
  out += kDigits[byte >> 4];
  out += kDigits[byte & 0x0f];
}

}  // namespace

ExitCode ExitCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return ExitCode::kSuccess;
    // The store refused an argument the user typed (offset, length, size).
    case StatusCode::kInvalidArgument:
      return ExitCode::kUsage;
    case StatusCode::kCorruption:
    case StatusCode::kUnsupportedVersion:
      return ExitCode::kInvalidStore;
    case StatusCode::kTornCommit:
      return ExitCode::kTornCommit;
    case StatusCode::kBusy:
      return ExitCode::kBusy;
    case StatusCode::kTimedOut:
      return ExitCode::kTimedOut;
    case StatusCode::kNotFound:
    case StatusCode::kPermissionDenied:
    case StatusCode::kAlreadyExists:
    case StatusCode::kNoSpace:
    case StatusCode::kIOError:
    case StatusCode::kPoisoned:
    // A writer's open refused a store with reflinked blocks: the message
    // names the fix (regionctl unshare PATH).
    case StatusCode::kSharedExtents:
    // A wait noticed that the path now names another file: the message says so.
    case StatusCode::kStoreReplaced:
      return ExitCode::kFailure;
  }
  return ExitCode::kFailure;
}

namespace {
bool g_stdout_closed_by_reader = false;
bool g_store_changed = false;
bool g_stdin_was_closed = false;
bool g_stdout_was_closed = false;

// The device and inode behind an open descriptor, or nothing.
std::optional<std::pair<dev_t, ino_t>> IdentityOf(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

std::optional<std::pair<dev_t, ino_t>> IdentityOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

Status OutputIsTheStore(const std::string& store_path, const std::string& destination,
                        const char* operation) {
  const bool to_stdout = destination.empty();
  std::string message = to_stdout ? "standard output is the store file itself (a `>>` "
                                    "redirection?): its output would overwrite the store"
                                  : "--output is the store itself: writing it would destroy "
                                    "the store; write to another file";
  message += "; nothing written";
  return Status::Error(StatusCode::kInvalidArgument, operation,
                       to_stdout ? store_path : destination, std::move(message));
}
}  // namespace

void SetStdoutClosedByReader() { g_stdout_closed_by_reader = true; }

void SetStoreChanged() { g_store_changed = true; }
bool StoreChanged() { return g_store_changed; }

bool OpenClosedStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open() takes the lowest free number: this one, since the lower ones
    // are open by now. Standard output gets /dev/full where there is one, so
    // that a report written there fails and is reported, not dropped.
    int opened = fd == 1 ? ::open("/dev/full", O_WRONLY) : -1;
    if (opened < 0) opened = ::open("/dev/null", (fd == 0 ? O_RDONLY : O_WRONLY));
    if (opened != fd) {
      if (opened >= 0) ::close(opened);
      return false;
    }
    if (fd == 0) g_stdin_was_closed = true;
    if (fd == 1) g_stdout_was_closed = true;
  }
  return true;
}

bool StandardInputWasClosed() { return g_stdin_was_closed; }
bool StandardOutputWasClosed() { return g_stdout_was_closed; }

Status RefuseOutputOntoStore(const std::string& store_path, const std::string& destination,
                             const char* operation) {
  const auto store = IdentityOf(store_path);
  if (!store.has_value()) return Status::Ok();
  const auto output = destination.empty() ? IdentityOf(STDOUT_FILENO) : IdentityOf(destination);
  if (output.has_value() && *output == *store) {
    return OutputIsTheStore(store_path, destination, operation);
  }
  return Status::Ok();
}

namespace {
constexpr auto kReplaceBadUtf8 = nlohmann::ordered_json::error_handler_t::replace;

void AppendPad(std::string& out, size_t depth) { out.append(2 * depth, ' '); }
}  // namespace

void AppendJson(std::string& out, const nlohmann::ordered_json& value, size_t depth) {
  const std::string text = value.dump(2, ' ', false, kReplaceBadUtf8);
  size_t start = 0;
  for (size_t newline = text.find('\n'); newline != std::string::npos;
       newline = text.find('\n', start)) {
    out.append(text, start, newline + 1 - start);
    AppendPad(out, depth);
    start = newline + 1;
  }
  out.append(text, start);
}

void JsonObjectWriter::Key(std::string_view key) {
  out_ += empty_ ? "\n" : ",\n";
  empty_ = false;
  AppendPad(out_, depth_ + 1);
  out_ += '"';
  out_ += key;
  out_ += "\": ";
}

void JsonObjectWriter::Number(std::string_view key, uint64_t value) {
  Key(key);
  std::array<char, 24> digits{};
  const auto [end, error] = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  out_.append(digits.data(), end);
}

void JsonObjectWriter::Bool(std::string_view key, bool value) {
  Key(key);
  out_ += value ? "true" : "false";
}

void JsonObjectWriter::Null(std::string_view key) {
  Key(key);
  out_ += "null";
}

void JsonObjectWriter::String(std::string_view key, std::string_view value) {
  Key(key);
  out_ += nlohmann::ordered_json(value).dump(-1, ' ', false, kReplaceBadUtf8);
}

void JsonObjectWriter::Json(std::string_view key, const nlohmann::ordered_json& value) {
  Key(key);
  AppendJson(out_, value, depth_ + 1);
}

size_t JsonObjectWriter::Nested(std::string_view key) {
  Key(key);
  return depth_ + 1;
}

void JsonObjectWriter::End() {
  if (!empty_) {
    out_ += '\n';
    AppendPad(out_, depth_);
  }
  out_ += '}';
}

void PrintJsonDocument(const nlohmann::ordered_json& document) {
  std::cout << document.dump(2, ' ', false, kReplaceBadUtf8) << '\n';
}

void PrintJsonDocumentWithArray(
    const nlohmann::ordered_json& document, std::string_view array_key, size_t count,
    const std::function<void(std::string& out, size_t index)>& append_element) {
  // Written out in pieces of about 1 MiB: the output never sits whole in memory.
  constexpr size_t kFlushAt = size_t{1} << 20;
  std::string out = "{";
  for (auto item = document.begin(); item != document.end(); ++item) {
    out += item == document.begin() ? "\n  " : ",\n  ";
    out += nlohmann::ordered_json(item.key()).dump(-1, ' ', false, kReplaceBadUtf8);
    out += ": ";
    if (item.key() != array_key) {
      AppendJson(out, item.value(), 1);
      continue;
    }
    if (count == 0) {
      out += "[]";
      continue;
    }
    out += '[';
    for (size_t index = 0; index < count; ++index) {
      out += index == 0 ? "\n    " : ",\n    ";
      append_element(out, index);
      if (out.size() >= kFlushAt) {
        std::cout << out;
        out.clear();
      }
    }
    out += "\n  ]";
  }
  out += document.empty() ? "}\n" : "\n}\n";
  std::cout << out;
}

bool StdoutClosedByReader() { return g_stdout_closed_by_reader; }

Result<uint64_t> ParseSize(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  size_t digit_count = 0;
  uint64_t count = 0;
  bool overflow = false;
  while (digit_count < text.size() && text[digit_count] >= '0' && text[digit_count] <= '9') {
    const auto digit = static_cast<uint64_t>(text[digit_count] - '0');
    overflow = overflow || __builtin_mul_overflow(count, uint64_t{10}, &count) ||
               __builtin_add_overflow(count, digit, &count);
    ++digit_count;
  }
  const std::string_view unit = text.substr(digit_count);
  if (digit_count == 0) {
    return InvalidSize(quoted +
                       " is not a size: expected a byte count with an optional binary unit, "
                       "e.g. 4096, 64KiB, 16MiB, 1GiB (K, M, G, T mean KiB, MiB, GiB, TiB)");
  }
  if (IsDecimalUnit(unit)) {
    return InvalidSize(quoted + " has an ambiguous unit '" + std::string(unit) +
                       "' (1000 or 1024?): write " + std::string(text.substr(0, digit_count)) +
                       UpperAscii(unit[0]) + "iB for powers of 1024, or a plain byte count");
  }
  if (!unit.empty() && (unit[0] == '.' || unit[0] == ',')) {
    return InvalidSize(quoted +
                       " is not a size: fractions are not accepted; use a smaller unit "
                       "(1536MiB, not 1.5GiB)");
  }
  const auto unit_match = std::find_if(kSizeUnits.begin(), kSizeUnits.end(),
                                       [&](const SizeUnit& known) { return known.suffix == unit; });
  if (unit_match == kSizeUnits.end()) {
    return InvalidSize(quoted + " is not a size: unknown unit '" + std::string(unit) +
                       "'; use B, KiB, MiB, GiB, TiB or K, M, G, T (powers of 1024)");
  }
  uint64_t bytes = 0;
  if (overflow || __builtin_mul_overflow(count, unit_match->multiplier, &bytes)) {
    return InvalidSize(quoted + " is too large: sizes must be below 2^64 bytes");
  }
  return bytes;
}

namespace {
Status BadCheckpoint(const std::string& path, const std::string& source, const std::string& text,
                     const std::string& why) {
  std::string message = source;
  message += ' ';
  message += QuoteName(text);
  message += ": ";
  message += why;
  return Status::Error(StatusCode::kInvalidArgument, "create", path, std::move(message));
}

// A misspelt layout ("compat") lands where a capacity is expected; say that
// it is neither rather than only "not a size".
bool LooksLikeAWord(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char letter) {
    return (letter >= 'a' && letter <= 'z') || (letter >= 'A' && letter <= 'Z');
  });
}
}  // namespace

std::optional<SlotLayout> ParseSlotLayout(std::string_view text) {
  for (const SlotLayout layout : {SlotLayout::kAuto, SlotLayout::kCompact, SlotLayout::kAligned}) {
    if (text == SlotLayoutName(layout)) return layout;
  }
  return std::nullopt;
}

// "state:64KiB" -> {"state", 65536, default_layout}; "log:v2:100:compact" ->
// {"log:v2", 100, kCompact}. Fields are taken from the right, so a name may
// hold ':'.
Result<CheckpointSpec> ParseCheckpointSpec(const std::string& path, const std::string& text,
                                           SlotLayout default_layout, const std::string& source) {
  constexpr const char* kExpected =
      "expected NAME:CAPACITY[:LAYOUT], e.g. state:64KiB or log:100:compact (LAYOUT: auto, "
      "compact or aligned)";
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return BadCheckpoint(path, source, text, kExpected);
  CheckpointSpec spec;
  spec.layout = default_layout;
  const std::optional<SlotLayout> layout =
      ParseSlotLayout(std::string_view(text).substr(colon + 1));
  size_t capacity_end = text.size();
  if (layout.has_value()) {
    spec.layout = *layout;
    capacity_end = colon;
    colon = colon == 0 ? std::string::npos : text.rfind(':', colon - 1);
    if (colon == std::string::npos) return BadCheckpoint(path, source, text, kExpected);
  }
  spec.name = text.substr(0, colon);
  if (Status name_ok = ValidateRegionName(spec.name); !name_ok.ok()) {
    return BadCheckpoint(path, source, text, name_ok.message());
  }
  const std::string_view capacity_text =
      std::string_view(text).substr(colon + 1, capacity_end - colon - 1);
  Result<uint64_t> capacity = ParseSize(capacity_text);
  if (!capacity.ok()) {
    if (!layout.has_value() && LooksLikeAWord(capacity_text)) {
      return BadCheckpoint(path, source, text,
                           QuoteName(capacity_text) +
                               " is neither a capacity (e.g. 64KiB) nor a slot layout (auto, "
                               "compact, aligned)");
    }
    return BadCheckpoint(path, source, text, capacity.status().message());
  }
  if (*capacity == 0) {
    return BadCheckpoint(path, source, text, "the capacity must be at least 1 byte");
  }
  spec.capacity = *capacity;
  return spec;
}

CLI::Validator SizeTransform() {
  return {[](std::string& text) -> std::string {
            Result<uint64_t> size = ParseSize(text);
            if (!size.ok()) return size.status().message();
            text = std::to_string(*size);
            return {};
          },
          "", "size"};
}

void AddFollowSymlinksFlag(CLI::App* command, SymlinkPolicy& symlinks) {
  command->add_flag_callback(
      "--follow-symlinks", [&symlinks] { symlinks = SymlinkPolicy::kFollow; },
      "Open the store a symbolic link PATH points to (refused by default, so a "
      "planted link cannot redirect the command to another file)");
}

CLI::App* AddCommand(CLI::App& app, const std::string& name, const std::string& description,
                     const std::string& footer) {
  CLI::App* command = app.add_subcommand(name, description);
  command->footer(footer);
  return command;
}

void AddStoreArguments(CLI::App* command, StoreArgs& args) {
  command->add_option("PATH", args.path, "Path of the store file")->required()->type_name("");
  AddFollowSymlinksFlag(command, args.symlinks);
}

void AddStoreRegionArguments(CLI::App* command, StoreArgs& args, std::string& name) {
  AddStoreArguments(command, args);
  command->add_option("NAME", name, "Name of the checkpoint region")->required()->type_name("");
}

CLI::Option* AddSizeOption(CLI::App* command, const std::string& option, uint64_t& value,
                           const std::string& description) {
  return command->add_option(option, value, description)
      ->type_name("N")
      ->transform(SizeTransform());
}

CLI::Option* AddDurabilityOption(CLI::App* command, std::string& durability_name,
                                 const std::string& what) {
  return command
      ->add_option(
          "--durability", durability_name,
          "What the " + what + " survives once it returns: none|async|sync|pwrite-fdatasync")
      ->type_name("MODE")
      ->capture_default_str()
      ->check(DurabilityCheck());
}

Result<Store> OpenWriterPrintingWarnings(const StoreArgs& args) {
  std::vector<std::string> warnings;
  Result<Store> store = Store::Open(args.path, OpenMode::kReadWrite,
                                    {.symlinks = args.symlinks, .warnings = &warnings});
  for (const std::string& warning : warnings) {
    std::cerr << "regionctl: warning: " << warning << '\n';
  }
  return store;
}

CLI::Validator DurabilityCheck() {
  return {[](std::string& text) -> std::string {
            if (ParseDurability(text).has_value()) return {};
            return "unknown durability '" + text + "': use none, async, sync or pwrite-fdatasync";
          },
          "", "durability"};
}

namespace {
// The unit form of `bytes` (at least 1024), and false if it looks like a
// whole number of units but is not one.
std::pair<std::string, bool> UnitForm(uint64_t bytes) {
  constexpr std::array<const char*, 6> kUnits = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  // Step up before "%.1f" would print 1024.0 of the smaller unit.
  while (value >= 1023.95 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%.1f %s", value, kUnits[unit]);
  // "39.1 KiB" is plainly rounded; "4.0 KiB" looks like a whole unit, and is
  // misleading unless it is one (a multiple of 1024^k bytes).
  const std::string shown = text.data();
  const bool looks_whole = shown.find(".0 ") != std::string::npos;
  const unsigned unit_bits = 10 * static_cast<unsigned>(unit + 1);
  const bool whole = unit_bits < 64 && (bytes & ((uint64_t{1} << unit_bits) - 1)) == 0;
  return {shown, !looks_whole || whole};
}
}  // namespace

std::string HumanBytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  auto [units, exact] = UnitForm(bytes);
  if (exact) return units;
  return std::to_string(bytes) + " B (~" + units + ")";
}

std::string ApproximateUnits(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  auto [units, exact] = UnitForm(bytes);
  return exact ? units : "~" + units;
}

std::string UnixNanosWithUtc(uint64_t unix_ns) {
  std::string text = std::to_string(unix_ns);
  const auto seconds = static_cast<std::time_t>(unix_ns / 1000000000);
  std::tm utc{};
  std::array<char, 32> formatted{};
  if (::gmtime_r(&seconds, &utc) != nullptr &&
      std::strftime(formatted.data(), formatted.size(), "%Y-%m-%dT%H:%M:%SZ", &utc) > 0) {
    text += " (";
    text += formatted.data();
    text += ")";
  }
  return text;
}

std::string Rfc3339Nanos(uint64_t unix_ns) {
  const auto seconds = static_cast<std::time_t>(unix_ns / 1000000000);
  std::tm utc{};
  std::array<char, 48> formatted{};
  if (::gmtime_r(&seconds, &utc) == nullptr ||
      std::strftime(formatted.data(), formatted.size(), "%Y-%m-%dT%H:%M:%S", &utc) == 0) {
    return {};
  }
  std::array<char, 16> fraction{};
  std::snprintf(fraction.data(), fraction.size(), ".%09lluZ",
                static_cast<unsigned long long>(unix_ns % 1000000000));
  return std::string(formatted.data()) + fraction.data();
}

std::string QuoteName(std::string_view name) {
  std::string quoted = "'";
  for (size_t at = 0; at < name.size();) {
    const CodePoint code_point = DecodeUtf8(name, at);
    if (code_point.length == 0) {
      AppendHexByte(quoted, static_cast<unsigned char>(name[at]));
      ++at;
      continue;
    }
    if (ActsOnTerminal(code_point.value)) {
      for (size_t i = 0; i < code_point.length; ++i) {
        AppendHexByte(quoted, static_cast<unsigned char>(name[at + i]));
      }
    } else {
      if (name[at] == '\\' || name[at] == '\'') quoted += '\\';
      quoted.append(name.substr(at, code_point.length));
    }
    at += code_point.length;
  }
  quoted += '\'';
  return quoted;
}

Result<RegionEntry> FindRegionEntry(const StoreInfo& info, std::string_view name,
                                    const std::string& path, const char* operation) {
  for (const RegionEntry& region : info.regions) {
    if (region.name == name) return region;
  }
  std::string message = "no checkpoint region named ";
  message += QuoteName(name);
  if (info.regions.empty()) {
    message += "; the store has no checkpoint regions";
  } else {
    // A store may have a million regions: name the first few only.
    constexpr size_t kNamesShown = 10;
    message += "; the store has ";
    const size_t shown = std::min(info.regions.size(), kNamesShown);
    for (size_t index = 0; index < shown; ++index) {
      if (index > 0) message += ", ";
      message += QuoteName(info.regions[index].name);
    }
    if (shown < info.regions.size()) {
      message += " and " + std::to_string(info.regions.size() - shown) +
                 " more (regionctl inspect lists them)";
    }
  }
  return Status::Error(StatusCode::kInvalidArgument, operation, path, std::move(message));
}

void WarnAboutLoaded(const std::string& name, const CheckpointMeta& loaded) {
  if (loaded.skipped_torn_generation != 0) {
    // A warning, not a failure: the older commit is intact and is what an
    // application reopening the store gets too.
    std::cerr << "regionctl: warning: region " << QuoteName(name) << ": its newest commit "
              << "(generation " << loaded.skipped_torn_generation
              << ") has an intact header but its payload does not match (a power loss "
                 "interrupted it, or it was damaged after it returned); returned the older "
                 "generation "
              << loaded.generation << " instead\n";
    std::cerr.flush();
  } else if (loaded.invalid_header_slots != 0) {
    std::cerr << "regionctl: warning: region " << QuoteName(name) << ": "
              << loaded.invalid_header_slots << " slot header"
              << (loaded.invalid_header_slots == 1 ? " fails" : "s fail")
              << " its checks (damage, or a power loss while it was written; it may have held a "
                 "newer commit than generation "
              << loaded.generation << ", returned): run `regionctl verify`\n";
    std::cerr.flush();
  }
}

Result<CheckpointMeta> LoadRegionWarningIfTorn(const Store& store, const std::string& name,
                                               std::vector<std::byte>& payload) {
  Result<CheckpointMeta> loaded = store.Load(name, payload);
  if (loaded.ok()) WarnAboutLoaded(name, *loaded);
  return loaded;
}

Result<Input> ReadInput(const std::string& input_path, uint64_t limit) {
  Result<std::unique_ptr<InputReader>> reader = InputReader::Open(input_path);
  if (!reader.ok()) return reader.status();
  // One byte past the limit is enough to know the input does not fit.
  const uint64_t wanted = limit == std::numeric_limits<uint64_t>::max() ? limit : limit + 1;
  Input input;
  try {
    // A regular file says how big it is: allocate once.
    input.bytes.reserve(std::min((*reader)->RegularFileSize(), wanted));
    while (input.bytes.size() < wanted) {
      const size_t filled = input.bytes.size();
      const size_t chunk = std::min(wanted - filled, kChunkBytes);
      input.bytes.resize(filled + chunk);
      Result<size_t> got = (*reader)->Read(std::span(input.bytes).subspan(filled, chunk));
      if (!got.ok()) return got.status();
      input.bytes.resize(filled + *got);
      if (*got < chunk) break;
    }
  } catch (const std::bad_alloc&) {
    return Status::FromErrno(
        ENOMEM, "read input", (*reader)->name(),
        "the input does not fit in memory (" + std::to_string(input.bytes.size()) + " bytes read)");
  }
  input.exceeds_limit = input.bytes.size() > limit;
  return input;
}

Result<std::unique_ptr<InputReader>> InputReader::Open(const std::string& input_path) {
  const bool from_stdin = input_path.empty();
  std::string name = from_stdin ? std::string(kStdinName) : input_path;
  if (from_stdin && StandardInputWasClosed()) {
    return Status::Error(StatusCode::kInvalidArgument, "read input", name,
                         "standard input is closed: give the input with --input FILE, or "
                         "redirect it (< FILE)");
  }
  if (from_stdin) {
    return std::unique_ptr<InputReader>(new InputReader(STDIN_FILENO, false, std::move(name)));
  }
  const int fd = ::open(input_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open input", name);
  return std::unique_ptr<InputReader>(new InputReader(fd, true, std::move(name)));
}

InputReader::~InputReader() {
  if (owned_) ::close(fd_);
}

bool InputReader::IsRegularFile() const {
  struct stat file_stat {};
  return ::fstat(fd_, &file_stat) == 0 && S_ISREG(file_stat.st_mode);
}

uint64_t InputReader::RegularFileSize() const {
  struct stat file_stat {};
  if (::fstat(fd_, &file_stat) != 0 || !S_ISREG(file_stat.st_mode) || file_stat.st_size < 0) {
    return 0;
  }
  return static_cast<uint64_t>(file_stat.st_size);
}

Result<size_t> InputReader::Read(std::span<std::byte> buffer) {
  size_t filled = 0;
  while (filled < buffer.size()) {
    const ssize_t got = ::read(fd_, buffer.data() + filled, buffer.size() - filled);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "read input", name_);
    }
    if (got == 0) break;
    filled += static_cast<size_t>(got);
  }
  return filled;
}

OutputFile::OutputFile(int fd, bool to_stdout, bool created, std::string path, std::string name)
    : fd_(fd),
      to_stdout_(to_stdout),
      created_(created),
      path_(std::move(path)),
      name_(std::move(name)) {}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      to_stdout_(other.to_stdout_),
      created_(std::exchange(other.created_, false)),
      written_(other.written_),
      path_(std::move(other.path_)),
      name_(std::move(other.name_)) {}

OutputFile::~OutputFile() {
  if (!to_stdout_ && fd_ >= 0) ::close(fd_);
}

Result<OutputFile> OutputFile::Open(const std::string& output_path, const std::string& store_path) {
  const bool to_stdout = output_path.empty();
  const std::string name = to_stdout ? std::string(kStdoutName) : output_path;
  if (to_stdout && StandardOutputWasClosed()) {
    return Status::Error(StatusCode::kInvalidArgument, "write output", name,
                         "standard output is closed: give the destination with --output FILE, "
                         "or redirect it (> FILE); nothing written");
  }
  int fd = STDOUT_FILENO;
  bool created = false;
  if (!to_stdout) {
    // No O_TRUNC yet: the descriptor is compared with the store first, so a
    // destination that is the store (by any name) is refused untouched. A
    // FIFO blocks here until its reader opens it, as `cat > fifo` does.
    // O_EXCL first, to know whether this call made the file (Discard).
    fd = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    created = fd >= 0;
    if (fd < 0 && errno == EEXIST) fd = ::open(output_path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(errno, "open output", name);
  }
  OutputFile output(fd, to_stdout, created, output_path, name);
  if (const auto store = IdentityOf(store_path); store.has_value() && IdentityOf(fd) == store) {
    output.Discard();
    return OutputIsTheStore(store_path, output_path, "write output");
  }
  return output;
}

std::optional<std::pair<dev_t, ino_t>> OutputFile::regular_identity() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return std::pair(st.st_dev, st.st_ino);
}

void OutputFile::Discard() {
  if (created_ && !written_) static_cast<void>(::unlink(path_.c_str()));
  created_ = false;
}

Status OutputFile::Write(std::span<const std::byte> data, bool sync_regular_file) {
  written_ = true;
  if (!to_stdout_) {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return Status::FromErrno(errno, "fstat output", name_);
    if (S_ISREG(st.st_mode) && ::ftruncate(fd_, 0) != 0) {
      return Status::FromErrno(errno, "truncate output", name_);
    }
    sync_regular_file = sync_regular_file && S_ISREG(st.st_mode);
  }
  size_t written = 0;
  while (written < data.size()) {
    const size_t chunk = std::min<size_t>(data.size() - written, kChunkBytes);
    const ssize_t put = ::write(fd_, data.data() + written, chunk);
    if (put < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(
          errno, "write output", name_,
          std::to_string(written) + " of " + std::to_string(data.size()) + " bytes written");
    }
    written += static_cast<size_t>(put);
  }
  if (sync_regular_file && ::fsync(fd_) != 0) {
    return Status::FromErrno(errno, "fsync output", name_);
  }
  if (!to_stdout_) {
    // close() can report a deferred write error (NFS, quota); it is not retried
    // on EINTR because Linux has already released the descriptor.
    if (::close(std::exchange(fd_, -1)) != 0) {
      return Status::FromErrno(errno, "close output", name_);
    }
  }
  return Status::Ok();
}

Status WriteOutput(const std::string& output_path, std::span<const std::byte> data,
                   const std::string& store_path, bool sync_regular_file) {
  Result<OutputFile> output = OutputFile::Open(output_path, store_path);
  if (!output.ok()) return output.status();
  return output->Write(data, sync_regular_file);
}

CLI::Option* DashMeansStandardStream(CLI::Option* option) {
  return option->transform([](std::string value) { return value == "-" ? std::string() : value; },
                           "", "");
}

namespace {

// One UTF-8 sequence at `text[*at]`: its code point, advancing *at; nullopt
// (advancing one byte) for a byte that does not start a valid sequence.
std::optional<char32_t> NextCodePoint(std::string_view text, size_t* at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(*at);
  size_t length = 0;
  char32_t point = 0;
  if (lead < 0x80) {
    ++*at;
    return lead;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2;
    point = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    point = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    point = lead & 0x07;
  } else {
    ++*at;
    return std::nullopt;
  }
  if (*at + length > text.size()) {
    ++*at;
    return std::nullopt;
  }
  for (size_t i = 1; i < length; ++i) {
    if ((byte(*at + i) & 0xC0) != 0x80) {
      ++*at;
      return std::nullopt;
    }
    point = (point << 6) | (byte(*at + i) & 0x3F);
  }
  *at += length;
  return point;
}

bool IsCombining(char32_t c) {
  return (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) ||
         (c >= 0x1DC0 && c <= 0x1DFF) || (c >= 0x200B && c <= 0x200F) ||
         (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE00 && c <= 0xFE0F) ||
         (c >= 0xFE20 && c <= 0xFE2F);
}

bool IsWide(char32_t c) {
  return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) ||
         (c >= 0x3041 && c <= 0x33FF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
         (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
         (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
         (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD);
}

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t at = 0; at < text.size();) {
    const std::optional<char32_t> point = NextCodePoint(text, &at);
    if (!point) {
      ++width;
    } else if (IsWide(*point)) {
      width += 2;
    } else if (!IsCombining(*point)) {
      ++width;
    }
  }
  return width;
}

}  // namespace regionstore::regionctl
