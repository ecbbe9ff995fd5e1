#include "regionstore/status.h"

#include <cerrno>
#include <cstring>

namespace regionstore {
namespace {

StatusCode CodeForErrno(int sys_errno) {
  switch (sys_errno) {
    case ENOENT:
    case ENOTDIR:
      return StatusCode::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return StatusCode::kPermissionDenied;
    case EEXIST:
      return StatusCode::kAlreadyExists;
    case ENOSPC:
    case EDQUOT:
      return StatusCode::kNoSpace;
    default:
      // EINVAL and EAGAIN from the OS are I/O failures here: kInvalidArgument
      // is kept for the store's own argument checks and kBusy for a held
      // lock, because tools map those to fixed exit codes.
      return StatusCode::kIOError;
  }
}

}  // namespace

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kPermissionDenied:
      return "permission denied";
    case StatusCode::kAlreadyExists:
      return "already exists";
    case StatusCode::kCorruption:
      return "corruption";
    case StatusCode::kUnsupportedVersion:
      return "unsupported version";
    case StatusCode::kNoSpace:
      return "no space";
    case StatusCode::kIOError:
      return "I/O error";
    case StatusCode::kBusy:
      return "busy";
    case StatusCode::kPoisoned:
      return "poisoned";
    case StatusCode::kTornCommit:
      return "torn commit";
    case StatusCode::kSharedExtents:
      return "shared extents";
    case StatusCode::kTimedOut:
      return "timed out";
    case StatusCode::kStoreReplaced:
      return "store replaced";
  }
  return "unknown";
}

Status Status::Error(StatusCode code, std::string operation, std::string path, std::string message,
                     int sys_errno) {
  assert(code != StatusCode::kOk);
  Status status;
  status.code_ = code;
  status.sys_errno_ = sys_errno;
  status.operation_ = std::move(operation);
  status.path_ = std::move(path);
  status.message_ = std::move(message);
  return status;
}

Status Status::FromErrno(int sys_errno, std::string operation, std::string path,
                         std::string message) {
  return Error(CodeForErrno(sys_errno), std::move(operation), std::move(path), std::move(message),
               sys_errno);
}

Status Status::WithOperation(std::string operation, std::string path) const {
  Status status = *this;
  status.operation_ = std::move(operation);
  status.path_ = std::move(path);
  return status;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string text(StatusCodeName(code_));
  text += ": ";
  text += operation_;
  if (!path_.empty()) {
    text += " '";
    text += path_;
    text += "'";
  }
  if (!message_.empty()) {
    text += ": ";
    text += message_;
  }
  if (sys_errno_ != 0) {
    // strerror is not thread-safe; strerrordesc_np (glibc 2.32+) is.
    const char* description = strerrordesc_np(sys_errno_);
    text += " (";
    text += description != nullptr ? description : "unknown error";
    text += ", errno ";
    text += std::to_string(sys_errno_);
    text += ")";
  }
  return text;
}

}  // namespace regionstore
