// Status and Result<T>: errors as values.
//
// Every fallible call in regionstore returns a Status or a Result<T>. A
// failure carries a code (what kind of situation), the operation that failed
// (for example "create: fallocate"), the path involved and, where the OS
// reported it, the errno value and its text. Both types are [[nodiscard]]:
// an ignored error is a compile warning (an error in our own build).
//
// Thread safety: a Status or Result is a plain value; distinct objects may be
// used from distinct threads, one object needs external synchronisation.
#ifndef REGIONSTORE_STATUS_H_
#define REGIONSTORE_STATUS_H_

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "regionstore/export.h"

namespace regionstore {

// What went wrong, named by situation. Stable: tools map these to exit codes.
enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,     // bad offset, length, size or name; nothing was changed
  kNotFound,            // the path does not exist (ENOENT)
  kPermissionDenied,    // EACCES, EPERM, EROFS
  kAlreadyExists,       // create without replace over an existing path
  kCorruption,          // not a store, or its metadata or data is damaged
  kUnsupportedVersion,  // a store written by a newer, incompatible format
  kNoSpace,             // ENOSPC or EDQUOT
  kIOError,             // any other OS error; errno is kept
  kBusy,                // another writer holds the store's lock
  kPoisoned,            // an earlier flush failed; reopen the store
  // A checkpoint region's newest header is intact but its payload does not
  // match, and no older commit of the region is intact: a power loss
  // interrupted that commit, or it was damaged after it returned.
  kTornCommit,
  // A writer's open found blocks of the store shared with another file (an
  // XFS reflink copy): a mapped write into them needs new blocks, and on a
  // full disk that is SIGBUS. Unshare it (UnshareStore, regionctl unshare).
  kSharedExtents,
  // A wait (Store::WaitForNewer) reached its timeout with nothing new.
  kTimedOut,
  // The store's path no longer names the file the handle opened: it was
  // replaced (a rename over it, a store made anew there) or removed. Reopen
  // the path.
  kStoreReplaced,
};

// Short lower-case name of `code`, for example "no space".
REGIONSTORE_EXPORT std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] REGIONSTORE_EXPORT Status {
 public:
  // An OK status.
  Status() = default;

  static Status Ok() { return Status(); }
  // A failure with no OS error behind it.
  static Status Error(StatusCode code, std::string operation, std::string path, std::string message,
                      int sys_errno = 0);
  // A failure reported by the OS: the code is derived from `sys_errno`
  // (ENOENT -> kNotFound, ENOSPC -> kNoSpace, EACCES -> kPermissionDenied,
  // EEXIST -> kAlreadyExists, anything else -> kIOError).
  static Status FromErrno(int sys_errno, std::string operation, std::string path,
                          std::string message = {});

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // The errno the OS reported, 0 if none.
  int sys_errno() const { return sys_errno_; }
  const std::string& operation() const { return operation_; }
  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }

  // The same failure (code, errno, message) attributed to another operation
  // and path, for a caller that knows which step of a larger job failed.
  Status WithOperation(std::string operation, std::string path) const;

  // One line: "<code name>: <operation> '<path>': <message> (<errno text>)".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  int sys_errno_ = 0;
  std::string operation_;
  std::string path_;
  std::string message_;
};

// A value or the Status explaining why there is none; shaped like
// std::expected (which g++ 12 lacks). Accessing value() of a failed Result is
// a programming error (asserted in debug builds).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value)
      : storage_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Status error) : storage_(std::in_place_index<1>, std::move(error)) {  // NOLINT
    assert(!std::get<1>(storage_).ok() && "a Result needs a value or a failed Status");
  }

  bool ok() const { return storage_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // The failure; an OK Status when there is a value.
  Status status() const { return ok() ? Status() : std::get<1>(storage_); }

  T& value() & {
    assert(ok());
    return std::get<0>(storage_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(storage_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(storage_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> storage_;
};

}  // namespace regionstore

#endif  // REGIONSTORE_STATUS_H_
