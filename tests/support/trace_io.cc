#include "support/trace_io.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace regionstore::testing {
namespace {

std::string Range(uint64_t offset, uint64_t length) {
  return " off=" + std::to_string(offset) + " len=" + std::to_string(length);
}

std::string ModeName(OpenMode mode) { return mode == OpenMode::kReadOnly ? "ro" : "rw"; }

// A mapping's calls, as "<Operation> map(<file label>) ...". The futex
// calls' expected value and deadline are left out: the first is what the
// word held (content), the second a time.
class TraceMapping final : public ForwardingMapping {
 public:
  TraceMapping(std::unique_ptr<Mapping> base, TraceIo* trace, std::string label)
      : ForwardingMapping(std::move(base)), trace_(trace), label_(std::move(label)) {}
  ~TraceMapping() override { trace_->Record("Unmap " + label_); }

  Status Sync(uint64_t offset, uint64_t length, SyncKind kind) override {
    Status status = base().Sync(offset, length, kind);
    trace_->Record("Msync " + label_ + Range(offset, length) +
                   (kind == SyncKind::kSync ? " MS_SYNC" : " MS_ASYNC") + TraceOutcome(status));
    return status;
  }
  void PrepareWrite(uint64_t offset, uint64_t length) override {
    trace_->Record("PrepareWrite " + label_ + Range(offset, length));
    base().PrepareWrite(offset, length);
  }
  void ResetPageTables(uint64_t offset, uint64_t length) override {
    trace_->Record("ResetPageTables " + label_ + Range(offset, length));
    base().ResetPageTables(offset, length);
  }
  Status WaitWord(uint64_t offset, uint32_t expected, uint64_t deadline_ns) override {
    Status status = base().WaitWord(offset, expected, deadline_ns);
    trace_->Record("WaitWord " + label_ + " off=" + std::to_string(offset) + TraceOutcome(status));
    return status;
  }
  void WakeWord(uint64_t offset) override {
    trace_->Record("WakeWord " + label_ + " off=" + std::to_string(offset));
    base().WakeWord(offset);
  }

 private:
  TraceIo* trace_;
  std::string label_;
};

class TraceFile final : public ForwardingFile {
 public:
  TraceFile(std::unique_ptr<File> base, TraceIo* trace, std::string label)
      : ForwardingFile(std::move(base)), trace_(trace), label_(std::move(label)) {}
  // close(), which also releases the file's lock.
  ~TraceFile() override { trace_->Record("Close " + label_); }

  Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    auto read = base().ReadAt(offset, out);
    trace_->Record("ReadAt " + label_ + Range(offset, out.size()) +
                   TraceOutcome(read.ok() ? Status::Ok() : read.status()));
    return read;
  }
  Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    Status status = base().WriteAt(offset, data);
    trace_->Record("WriteAt " + label_ + Range(offset, data.size()) + TraceOutcome(status));
    return status;
  }
  Status WriteGatherAt(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                       bool data_sync) override {
    Status status = base().WriteGatherAt(offset, parts, data_sync);
    uint64_t total = 0;
    std::string sizes;
    for (const auto& part : parts) {
      total += part.size();
      if (!sizes.empty()) sizes += '+';
      sizes += std::to_string(part.size());
    }
    trace_->Record("WriteGatherAt " + label_ + Range(offset, total) + " parts=" + sizes +
                   (data_sync ? " RWF_DSYNC" : "") + TraceOutcome(status));
    return status;
  }
  void StartWriteback(uint64_t offset, uint64_t length) override {
    trace_->Record("StartWriteback " + label_ + Range(offset, length));
    base().StartWriteback(offset, length);
  }
  Status WaitWriteback(uint64_t offset, uint64_t length) override {
    Status status = base().WaitWriteback(offset, length);
    trace_->Record("WaitWriteback " + label_ + Range(offset, length) + TraceOutcome(status));
    return status;
  }
  Status Allocate(uint64_t offset, uint64_t length) override {
    Status status = base().Allocate(offset, length);
    trace_->Record("Allocate " + label_ + Range(offset, length) + TraceOutcome(status));
    return status;
  }
  Status DataSync() override {
    Status status = base().DataSync();
    trace_->Record("DataSync " + label_ + TraceOutcome(status));
    return status;
  }
  Status Sync() override {
    Status status = base().Sync();
    trace_->Record("Sync " + label_ + TraceOutcome(status));
    return status;
  }
  Status LockExclusive() override {
    Status status = base().LockExclusive();
    trace_->Record("LockExclusive " + label_ + TraceOutcome(status));
    return status;
  }
  Result<bool> HasWriter() override {
    auto has = base().HasWriter();
    trace_->Record("HasWriter " + label_ +
                   (has.ok() ? (*has ? " yes" : " no") : TraceOutcome(has.status())));
    return has;
  }
  Result<FileStat> Stat() override {
    auto stat = base().Stat();
    trace_->Record("Stat " + label_ + TraceOutcome(stat.ok() ? Status::Ok() : stat.status()));
    return stat;
  }
  Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) override {
    auto mapping = base().Map(length, mode);
    trace_->Record("Map " + label_ + " len=" + std::to_string(length) + " " + ModeName(mode) +
                   TraceOutcome(mapping.ok() ? Status::Ok() : mapping.status()));
    if (!mapping.ok()) return mapping.status();
    return std::unique_ptr<Mapping>(
        std::make_unique<TraceMapping>(std::move(*mapping), trace_, "map(" + label_ + ")"));
  }
  Status Link(const std::string& path) override {
    Status status = base().Link(path);
    trace_->Record("Link " + label_ + " " + trace_->RoleOf(path) + TraceOutcome(status));
    return status;
  }
  Result<uint32_t> InodeFlags() override {
    auto flags = base().InodeFlags();
    trace_->Record("InodeFlags " + label_ +
                   TraceOutcome(flags.ok() ? Status::Ok() : flags.status()));
    return flags;
  }
  Status SetInodeFlags(uint32_t flags) override {
    Status status = base().SetInodeFlags(flags);
    trace_->Record("SetInodeFlags " + label_ + " flags=" + std::to_string(flags) +
                   TraceOutcome(status));
    return status;
  }
  Result<std::vector<FileRange>> SharedRanges(uint64_t offset, uint64_t length) override {
    auto ranges = base().SharedRanges(offset, length);
    trace_->Record("SharedRanges " + label_ + Range(offset, length) +
                   TraceOutcome(ranges.ok() ? Status::Ok() : ranges.status()));
    return ranges;
  }
  Status UnshareRange(uint64_t offset, uint64_t length) override {
    Status status = base().UnshareRange(offset, length);
    trace_->Record("UnshareRange " + label_ + Range(offset, length) + TraceOutcome(status));
    return status;
  }
  // The owner's ids are the running user's: whether each is given is
  // recorded, not its value.
  Status SetOwner(std::optional<uint32_t> uid, std::optional<uint32_t> gid) override {
    Status status = base().SetOwner(uid, gid);
    trace_->Record("SetOwner " + label_ + (uid ? " uid" : "") + (gid ? " gid" : "") +
                   TraceOutcome(status));
    return status;
  }
  Status SetPermissions(uint32_t mode) override {
    Status status = base().SetPermissions(mode);
    char octal[16];
    std::snprintf(octal, sizeof octal, "%04o", mode & 07777u);
    trace_->Record("SetPermissions " + label_ + " mode=" + octal + TraceOutcome(status));
    return status;
  }

 private:
  TraceIo* trace_;
  std::string label_;
};

// ".<name>.tmp-<owner>" -> "<name>", or "" when `file_name` is no temp name.
std::string TempOwnerName(std::string_view file_name) {
  const size_t tmp = file_name.find(".tmp-");
  if (file_name.empty() || file_name[0] != '.' || tmp == std::string_view::npos) return "";
  return std::string(file_name.substr(1, tmp - 1));
}

}  // namespace

std::string TraceOutcome(const Status& status) {
  if (status.ok()) return "";
  return " -> " + std::string(StatusCodeName(status.code()));
}

std::vector<std::string> FoldRepeats(const std::vector<std::string>& lines) {
  std::vector<std::string> folded;
  for (size_t i = 0; i < lines.size();) {
    size_t end = i + 1;
    while (end < lines.size() && lines[end] == lines[i]) ++end;
    folded.push_back(end - i == 1 ? lines[i] : lines[i] + " x" + std::to_string(end - i));
    i = end;
  }
  return folded;
}

void TraceIo::Name(const std::string& path, const std::string& role) {
  std::lock_guard lock(mutex_);
  roles_[path] = role;
}

std::string TraceIo::RoleOf(const std::string& path) const {
  std::lock_guard lock(mutex_);
  if (auto found = roles_.find(path); found != roles_.end()) return found->second;
  if (path.ends_with(".shm")) {
    const std::string store = path.substr(0, path.size() - 4);
    if (auto found = roles_.find(store); found != roles_.end()) return found->second + ".shm";
  }
  const std::filesystem::path as_path(path);
  const std::string owner = TempOwnerName(as_path.filename().string());
  if (!owner.empty()) {
    const std::string beside = (as_path.parent_path() / owner).string();
    if (auto found = roles_.find(beside); found != roles_.end()) {
      return "temp(" + found->second + ")";
    }
  }
  if (path.starts_with("/proc/")) return "/proc/<pid>";
  return "?" + as_path.filename().string();
}

void TraceIo::Section(const std::string& title) {
  std::lock_guard lock(mutex_);
  if (!paused_) lines_.push_back("== " + title);
}

void TraceIo::Pause(bool paused) {
  std::lock_guard lock(mutex_);
  paused_ = paused;
}

std::vector<std::string> TraceIo::Lines() const {
  std::lock_guard lock(mutex_);
  return lines_;
}

void TraceIo::Record(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (!paused_) lines_.push_back(line);
}

std::string TraceIo::NextLabel(const std::string& role) {
  std::lock_guard lock(mutex_);
  return role + "#" + std::to_string(++ordinals_[role]);
}

Result<std::unique_ptr<File>> TraceIo::Open(const std::string& path, OpenMode mode,
                                            SymlinkPolicy symlinks) {
  auto file = base()->Open(path, mode, symlinks);
  const std::string role = RoleOf(path);
  const std::string label = file.ok() ? NextLabel(role) : role;
  Record("Open " + label + " " + ModeName(mode) +
         (symlinks == SymlinkPolicy::kRefuse ? " nofollow" : " follow") +
         TraceOutcome(file.ok() ? Status::Ok() : file.status()));
  if (!file.ok()) return file.status();
  return std::unique_ptr<File>(std::make_unique<TraceFile>(std::move(*file), this, label));
}

Result<std::unique_ptr<File>> TraceIo::CreateExclusive(const std::string& path) {
  auto file = base()->CreateExclusive(path);
  const std::string role = RoleOf(path);
  const std::string label = file.ok() ? NextLabel(role) : role;
  Record("CreateExclusive " + label + TraceOutcome(file.ok() ? Status::Ok() : file.status()));
  if (!file.ok()) return file.status();
  return std::unique_ptr<File>(std::make_unique<TraceFile>(std::move(*file), this, label));
}

Result<std::unique_ptr<File>> TraceIo::CreateAnonymous(const std::string& directory) {
  auto file = base()->CreateAnonymous(directory);
  const std::string role = "anon(" + RoleOf(directory) + ")";
  const std::string label = file.ok() ? NextLabel(role) : role;
  Record("CreateAnonymous " + label + TraceOutcome(file.ok() ? Status::Ok() : file.status()));
  if (!file.ok()) return file.status();
  return std::unique_ptr<File>(std::make_unique<TraceFile>(std::move(*file), this, label));
}

Status TraceIo::Rename(const std::string& from, const std::string& to, bool replace) {
  Status status = base()->Rename(from, to, replace);
  Record("Rename " + RoleOf(from) + " " + RoleOf(to) + (replace ? " replace" : " noreplace") +
         TraceOutcome(status));
  return status;
}

Status TraceIo::Remove(const std::string& path) {
  Status status = base()->Remove(path);
  Record("Remove " + RoleOf(path) + TraceOutcome(status));
  return status;
}

Status TraceIo::SyncDirectory(const std::string& directory) {
  Status status = base()->SyncDirectory(directory);
  Record("SyncDirectory " + RoleOf(directory) + TraceOutcome(status));
  return status;
}

Result<FileStat> TraceIo::StatPath(const std::string& path) {
  auto stat = base()->StatPath(path);
  Record("StatPath " + RoleOf(path) + TraceOutcome(stat.ok() ? Status::Ok() : stat.status()));
  return stat;
}

Result<FsInfo> TraceIo::StatFs(const std::string& path) {
  Record("StatFs " + RoleOf(path));
  FsInfo ext4;
  ext4.type_magic = 0xEF53;
  ext4.type_name = "ext2/3/4";
  ext4.block_size = 4096;
  ext4.available_bytes = uint64_t{1} << 40;
  return ext4;
}

Result<std::vector<std::string>> TraceIo::ListDirectory(const std::string& directory) {
  auto names = base()->ListDirectory(directory);
  Record("ListDirectory " + RoleOf(directory) +
         TraceOutcome(names.ok() ? Status::Ok() : names.status()));
  return names;
}

}  // namespace regionstore::testing
