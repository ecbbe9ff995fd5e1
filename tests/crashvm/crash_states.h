// The disk states a crash could leave, from a dm-log-writes log (dm_log.h),
// and the disk images of those states.
//
// A flush makes durable everything that completed before it; between two
// flushes the disk may keep any subset of the writes that completed, in any
// order when they overlap, and the last write it was doing may be torn at a
// sector boundary. So the log splits into windows: window k is the entries
// after the k-th flush up to and including the next flush (or the log's
// end), and a state is "all before window k, then some of window k".
//
// The marker area (sectors from `marker_first_sector` on) is where the
// workload records which of its operations had returned. Those writes are
// the test's knowledge of what the guest was told, not data a crash may
// lose: every state holds every marker write up to the end of its window.
//
// Discards are ignored: our guest does not issue them (`info` counts them).
#ifndef REGIONSTORE_TESTS_CRASHVM_CRASH_STATES_H_
#define REGIONSTORE_TESTS_CRASHVM_CRASH_STATES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "crashvm/dm_log.h"

namespace regionstore::testing {

struct LogWindow {
  size_t first = 0;  // index of its first entry
  size_t end = 0;    // one past its last entry (the flush that closes it, if any)
  // Its writes outside the marker area, in log order: what a crash may lose.
  std::vector<size_t> writes;
  // Its writes in the marker area, in log order: always applied.
  std::vector<size_t> markers;
};

// The windows of `log`, in order; none when the log has no entries. A log
// that ends with a flush has no (empty) window after it.
std::vector<LogWindow> SplitWindows(const WriteLog& log, uint64_t marker_first_sector);

enum class CrashStateKind {
  kFlushBoundary,  // all before the window, nothing of it
  kFullLog,        // every entry
  kSubset,         // a random subset of the window's writes, in log order
  kReorder,        // a random subset in a random order
  kTorn,           // a random prefix of the writes, the last one torn
};

const char* CrashStateKindName(CrashStateKind kind);

struct CrashState {
  size_t id = 0;  // its index in the enumeration
  CrashStateKind kind = CrashStateKind::kFullLog;
  size_t window = 0;      // the window; for kFullLog the number of windows
  size_t prefix_end = 0;  // entries [0, prefix_end) apply in log order
  size_t window_end = 0;  // marker writes in [prefix_end, window_end) apply too
  // Entries of the window applied after the prefix, in this order.
  std::vector<size_t> writes;
  // kTorn: how many of writes.back()'s sectors (0 < torn_sectors <
  // nr_sectors, a multiple of the budget's tear unit) reach the disk; 0
  // otherwise.
  uint64_t torn_sectors = 0;
  std::string description;  // one line: kind, window, entries kept and dropped
};

struct StateBudget {
  // Random states (subset, reorder, torn) in all, at most. The flush
  // boundaries and the full log are always there besides. (A window applied
  // whole is the next window's flush boundary, with fewer markers: not a
  // state of its own.)
  size_t max_random = 100;
  // Random states per window, at most.
  size_t max_random_per_window = 32;
  // A torn write keeps a whole number of these sectors: 8 (4 KiB, the
  // filesystems' block size and a modern drive's physical sector). At 1, a
  // torn ext4 superblock write (4 KiB at sector 0, its checksummed 1 KiB
  // split) leaves a filesystem that does not mount: the filesystem's
  // exposure to a drive that tears inside a block, not something the
  // library can do anything about (docs/CRASH-VM.md).
  uint64_t tear_unit_sectors = 8;
};

// Every state, in this order: a flush boundary per window, the full log,
// then the random subsets, reorderings and torn states, the kinds in turn,
// dealt round-robin over the windows with writes.
// The same (log, marker_first_sector, seed, budget) gives the same list on
// any machine, so a state is rebuilt from the seed and its id.
std::vector<CrashState> EnumerateCrashStates(const WriteLog& log, uint64_t marker_first_sector,
                                             uint64_t seed, const StateBudget& budget);

struct ImageStats {
  uint64_t base_bytes_copied = 0;  // data extents of the base
  uint64_t entries_applied = 0;
  uint64_t log_bytes_applied = 0;
};

// Writes `out_path` (replaced if it exists): a sparse copy of the base image
// (its data extents only, the same size), then the state's entries written
// over it from the log's data: the prefix, the chosen window writes (the
// torn one cut to its first torn_sectors), then the window's marker writes.
// `log` is ReadWriteLog(log_path). The image is not fsynced.
// Errors (the message names the file): a file cannot be opened, read or
// written; an entry writes past the end of the base image; `state` does not
// fit `log`.
Expected<ImageStats> BuildStateImage(const std::string& base_image_path,
                                     const std::string& log_path, const WriteLog& log,
                                     const CrashState& state, uint64_t marker_first_sector,
                                     const std::string& out_path);

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_CRASHVM_CRASH_STATES_H_
