#include "temp_file.h"

#include <array>
#include <cstddef>
#include <filesystem>
#include <span>

#include "bytes.h"
#include "temp_registry.h"

namespace regionstore::internal {
namespace {

// ".<name of path>.tmp-<16 random hex digits>" in path's directory.
Result<std::string> HiddenNameBeside(Io& io, const std::string& path,
                                     const std::string& operation) {
  std::array<std::byte, 8> suffix{};
  if (Status s = io.FillRandom(suffix); !s.ok())
    return s.WithOperation(operation + ": random", path);
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "." + std::string at -O2.
  // At most 255 bytes (NAME_MAX): a long destination name is cut short here.
  std::string base = std::filesystem::path(path).filename().string();
  constexpr size_t kAdded = 1 + 5 + 16;  // ".", ".tmp-", 16 hex digits
  if (base.size() > 255 - kAdded) base.resize(255 - kAdded);
  std::string name = ".";
  name += base;
  name += ".tmp-";
  name += HexBytes(suffix);
  return (std::filesystem::path(DirectoryOf(path)) / name).string();
}

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
