// TraceIo: an Io that writes one line of text per call the store makes
// through the seam (tests/test_seam_trace.cc compares them with a checked-in
// golden trace). Files are named by role, never by path: the test names each
// path it hands the store ("p2" for the store, "dir" for its directory), and
// TraceIo derives the rest from those names: "p2.shm" for the sidecar,
// "temp(p2)" for a named temp beside "p2" (its random owner suffix dropped),
// "anon(dir)" for a nameless one. Each open file and mapping gets an ordinal
// ("p2#3", "map(p2#3)") in the order they were opened.
//
// A line holds the operation, the file, and the offsets, lengths, flags and
// sync kind the caller passed, then " -> <code>" if the call failed. Never
// the bytes, a time, a process id or anything random. Destroying a file or a
// mapping is a line too ("Close", "Unmap"): it releases a lock or a mapping.
// The TraceIo must outlive every file and mapping it handed out.
//
// Not recorded, because they touch no file and change nothing (caching one
// of them is no protocol change): PageSize, ProcessId, EffectiveUserId,
// BootId, FillRandom, NowUnixNanos, MonotonicNanos, Mapping::data() and
// Mapping::size(), File::path(). They are forwarded. StatFs is recorded, but
// answered with a fixed ext4 description instead of the real one, so that
// the trace does not depend on the filesystem the scratch directory is on.
//
// Thread safety: every call may come from any thread (the log is locked),
// but a trace is only reproducible from a single-threaded workload.
#ifndef REGIONSTORE_TESTS_SUPPORT_TRACE_IO_H_
#define REGIONSTORE_TESTS_SUPPORT_TRACE_IO_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "regionstore/io.h"

namespace regionstore::testing {

class TraceIo final : public ForwardingIo {
 public:
  explicit TraceIo(Io* base = Io::Default()) : ForwardingIo(base) {}

  // Calls on `path` (and on its sidecar and temps) are written as `role`.
  void Name(const std::string& path, const std::string& role);
  // The role a path is written as: a named one, one derived from a named
  // one (see above), or "?<file name>" for a path nobody named.
  std::string RoleOf(const std::string& path) const;

  // Appends a line that is no call: "== <title>", a heading for the part of
  // the workload that follows.
  void Section(const std::string& title);
  // While paused, calls are forwarded and not written (setup the trace
  // leaves out).
  void Pause(bool paused);
  // The lines so far.
  std::vector<std::string> Lines() const;

  // Appends `line` (unless paused). Used by the files and mappings.
  void Record(const std::string& line);
  // "<role>#<n>": the next ordinal for `role`.
  std::string NextLabel(const std::string& role);

  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override;
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to, bool replace) override;
  Status Remove(const std::string& path) override;
  Status SyncDirectory(const std::string& directory) override;
  Result<FileStat> StatPath(const std::string& path) override;
  Result<FsInfo> StatFs(const std::string& path) override;
  Result<std::vector<std::string>> ListDirectory(const std::string& directory) override;
  Result<std::unique_ptr<File>> CreateAnonymous(const std::string& directory) override;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> roles_;  // path -> role
  std::map<std::string, int> ordinals_;       // role -> files opened so far
  std::vector<std::string> lines_;
  bool paused_ = false;
};

// " -> <code name>" for a failed call, "" for a successful one.
std::string TraceOutcome(const Status& status);

// Consecutive identical lines folded into one followed by " x<count>".
std::vector<std::string> FoldRepeats(const std::vector<std::string>& lines);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_TRACE_IO_H_
