#include "temp_file.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "bytes.h"
#include "temp_registry.h"

namespace regionstore::internal {
namespace {

// The start of every temp name beside `path`: "." and its file name (cut
// so that the whole name fits in NAME_MAX), then ".tmp-".
constexpr size_t kOwnerChars = 8 + 1 + 8 + 1 + 8;  // pid, boot id, random
std::string TempPrefix(const std::string& path) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "." + std::string at -O2.
  std::string base = std::filesystem::path(path).filename().string();
  constexpr size_t kAdded = 1 + 5 + kOwnerChars;  // ".", ".tmp-", the owner
  if (base.size() > 255 - kAdded) base.resize(255 - kAdded);
  std::string prefix = ".";
  prefix += base;
  prefix += ".tmp-";
  return prefix;
}

// The first 4 bytes of this boot's id in hex, or "00000000" if it cannot be
// read (a temp named so is never judged by its boot).
constexpr std::string_view kUnknownBoot = "00000000";
std::string BootTag(Io& io) {
  auto boot = io.BootId();
  if (!boot.ok()) return std::string(kUnknownBoot);
  return HexBytes(std::span<const std::byte>(*boot).first(4));
}

// ".<name of path>.tmp-<pid, 8 hex>-<boot, 8 hex>-<8 random hex>" in
// path's directory: the owner's process id and boot tell a later create or
// export whether the temp was abandoned (FindStrayTemps).
Result<std::string> HiddenNameBeside(Io& io, const std::string& path,
                                     const std::string& operation) {
  std::array<std::byte, 4> suffix{};
  if (Status s = io.FillRandom(suffix); !s.ok())
    return s.WithOperation(operation + ": random", path);
  std::string name = TempPrefix(path);
  name += HexNumber(io.ProcessId() & 0xffffffffu, 8).substr(2);
  name += '-';
  name += BootTag(io);
  name += '-';
  name += HexBytes(suffix);
  return (std::filesystem::path(DirectoryOf(path)) / name).string();
}

bool AllHex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// "<pid, 8 hex>-<boot, 8 hex>-<8 random hex>".
bool IsOwnerName(std::string_view owner) {
  return owner.size() == kOwnerChars && owner[8] == '-' && owner[17] == '-' &&
         AllHex(owner.substr(0, 8)) && AllHex(owner.substr(9, 8)) && AllHex(owner.substr(18));
}

// Whether the owner named in `owner` ("<pid>-<boot>-<random>") is gone:
// another boot's process is; one of this boot is once no process has its
// id. An unknown boot (ours or the temp's) says nothing.
bool OwnerGone(Io& io, std::string_view owner, const std::string& boot) {
  const std::string_view pid_hex = owner.substr(0, 8);
  const std::string_view temp_boot = owner.substr(9, 8);
  if (temp_boot == kUnknownBoot || boot == kUnknownBoot) return false;
  if (temp_boot != boot) return true;
  const uint64_t pid = std::stoull(std::string(pid_hex), nullptr, 16);
  if (pid == io.ProcessId()) return false;
  auto alive = io.StatPath("/proc/" + std::to_string(pid));
  return !alive.ok() && alive.status().code() == StatusCode::kNotFound;
}

}  // namespace
}  // namespace regionstore::internal

namespace regionstore {

Result<std::vector<StrayTemp>> FindStrayTemps(const std::string& path, Io* io_or_null) {
  using internal::DirectoryOf;
  Io& io = io_or_null != nullptr ? *io_or_null : *Io::Default();
  const std::string directory = DirectoryOf(path);
  auto names = io.ListDirectory(directory);
  if (!names.ok()) return names.status().WithOperation("list temp files", directory);
  const std::string prefix = internal::TempPrefix(path);
  const std::string boot = internal::BootTag(io);
  std::vector<StrayTemp> stray;
  for (const std::string& name : *names) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string_view owner = std::string_view(name).substr(prefix.size());
    StrayTemp temp;
    temp.path = (std::filesystem::path(directory) / name).string();
    if (internal::IsOwnerName(owner)) {
      if (!internal::OwnerGone(io, owner, boot)) continue;  // alive, or cannot be told
      temp.owner_gone = true;
    } else if (owner.size() == 16 && internal::AllHex(owner)) {
      temp.owner_gone = false;  // named before 0.11: no owner in the name
    } else {
      continue;  // not a name the library gives
    }
    stray.push_back(std::move(temp));
  }
  std::sort(stray.begin(), stray.end(),
            [](const StrayTemp& a, const StrayTemp& b) { return a.path < b.path; });
  return stray;
}

}  // namespace regionstore

namespace regionstore::internal {

int RemoveAbandonedTemps(Io& io, const std::string& path) {
  auto stray = FindStrayTemps(path, &io);
  if (!stray.ok()) return 0;
  int removed = 0;
  for (const StrayTemp& temp : *stray) {
    if (temp.owner_gone && io.Remove(temp.path).ok()) ++removed;
  }
  return removed;
}

namespace {

void ForgetName(TempFile& temp) {
  UnregisterTemp(temp.registry_slot);
  temp.registry_slot = -1;
  temp.path.clear();
}

}  // namespace

std::string DirectoryOf(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

Result<TempFile> CreateTempBeside(Io& io, const std::string& path, const std::string& operation) {
  // Temps a killed process left beside this destination go first.
  static_cast<void>(RemoveAbandonedTemps(io, path));
  TempFile temp;
  if (auto anonymous = io.CreateAnonymous(DirectoryOf(path)); anonymous.ok()) {
    temp.file = std::move(*anonymous);
    temp.anonymous = true;
    return temp;
  }
  auto name = HiddenNameBeside(io, path, operation);
  if (!name.ok()) return name.status();
  temp.path = std::move(*name);
  // Recorded before it exists, so that no signal can find it created but
  // unrecorded. (A handler running before the create unlinks a name nobody
  // holds: the random suffix makes a stranger's file there implausible.)
  temp.registry_slot = RegisterTemp(temp.path);
  auto file = io.CreateExclusive(temp.path);
  if (!file.ok()) {
    ForgetName(temp);
    if (file.status().code() == StatusCode::kNotFound) {
      return Status::Error(StatusCode::kNotFound, operation + ": create temp file", path,
                           "the directory '" + DirectoryOf(path) + "' does not exist",
                           file.status().sys_errno());
    }
    return file.status().WithOperation(operation + ": create temp file", path);
  }
  temp.file = std::move(*file);
  return temp;
}

Status PublishTemp(Io& io, TempFile& temp, const std::string& path, bool replace, bool durable,
                   const std::string& operation) {
  if (temp.anonymous && temp.path.empty()) {
    std::string target = path;
    if (replace) {
      // linkat never replaces: give the file a hidden name of its own, then
      // rename that over `path`, as a named temp would be.
      auto name = HiddenNameBeside(io, path, operation);
      if (!name.ok()) return name.status();
      target = std::move(*name);
      temp.registry_slot = RegisterTemp(target);
    }
    if (Status s = temp.file->Link(target); !s.ok()) {
      UnregisterTemp(temp.registry_slot);
      temp.registry_slot = -1;
      return s.WithOperation(operation + ": link", path);
    }
    if (replace) temp.path = std::move(target);  // DiscardTemp removes it from here on
    if (durable) {
      if (Status s = temp.file->Sync(); !s.ok()) {
        return s.WithOperation(replace ? operation + ": fsync after link"
                                       : operation +
                                             ": fsync after link (the file is in place at this "
                                             "path; its name may not survive a power loss)",
                               path);
      }
    }
    if (!replace) {
      temp.file.reset();
      return Status::Ok();
    }
  }
  temp.file.reset();  // close before publishing
  if (Status s = io.Rename(temp.path, path, replace); !s.ok()) {
    return s.WithOperation(operation + ": rename", path);
  }
  ForgetName(temp);
  return Status::Ok();
}

Status DiscardTemp(Io& io, TempFile& temp, const Status& failure) {
  temp.file.reset();  // an anonymous temp without a name goes here
  if (temp.path.empty()) return failure;
  const std::string path = temp.path;
  Status removed = io.Remove(path);
  ForgetName(temp);
  if (removed.ok() || removed.code() == StatusCode::kNotFound) return failure;
  // Report the first failure, and say what is left behind.
  return Status::Error(failure.code(), failure.operation(), failure.path(),
                       failure.message() + (failure.message().empty() ? "" : "; ") +
                           "could not remove the temp file '" + path + "': " + removed.ToString(),
                       failure.sys_errno());
}

}  // namespace regionstore::internal
