#include "temp_file.h"

#include <array>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <span>

namespace regionstore::internal {

std::string DirectoryOf(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

Result<TempFile> CreateTempBeside(Io& io, const std::string& path, const std::string& operation) {
  std::array<std::byte, 8> suffix{};
  if (Status s = io.FillRandom(suffix); !s.ok()) return s.WithOperation(operation + ": random", path);
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "." + std::string at -O2.
  // At most 255 bytes (NAME_MAX): a long destination name is cut short here.
  std::string base = std::filesystem::path(path).filename().string();
  constexpr size_t kAdded = 1 + 5 + 16;  // ".", ".tmp-", 16 hex digits
  if (base.size() > 255 - kAdded) base.resize(255 - kAdded);
  std::string name = ".";
  name += base;
  name += ".tmp-";
  char two[3];
  for (std::byte b : suffix) {
    std::snprintf(two, sizeof two, "%02x", std::to_integer<unsigned>(b));
    name += two;
  }
  TempFile temp;
  temp.path = (std::filesystem::path(DirectoryOf(path)) / name).string();
  auto file = io.CreateExclusive(temp.path);
  if (!file.ok()) {
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

Status DiscardTemp(Io& io, TempFile& temp, const Status& failure) {
  temp.file.reset();
  Status removed = io.Remove(temp.path);
  if (removed.ok() || removed.code() == StatusCode::kNotFound) return failure;
  // Report the first failure, and say what is left behind.
  return Status::Error(failure.code(), failure.operation(), failure.path(),
                       failure.message() + (failure.message().empty() ? "" : "; ") +
                           "could not remove the temp file '" + temp.path +
                           "': " + removed.ToString(),
                       failure.sys_errno());
}

}  // namespace regionstore::internal
