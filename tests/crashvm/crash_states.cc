#include "crashvm/crash_states.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <set>
#include <tuple>

#include "crashvm/file_io.h"

namespace regionstore::testing {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// "12,14-17,20": entry indices, runs joined.
std::string Compact(std::vector<size_t> indices, bool sort) {
  if (sort) std::sort(indices.begin(), indices.end());
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (sort && j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(indices[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(indices[j]);
    }
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

// A random index below n from a generator whose sequence is fixed by the
// standard (std::mt19937_64), without the library-defined distributions.
size_t Below(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }

}  // namespace

std::vector<LogWindow> SplitWindows(const WriteLog& log, uint64_t marker_first_sector) {
  std::vector<LogWindow> windows;
  LogWindow current;
  bool open = false;
  for (size_t i = 0; i < log.entries.size(); ++i) {
    const LogEntry& entry = log.entries[i];
    if (!open) {
      current = LogWindow();
      current.first = i;
      open = true;
    }
    if (entry.is_write()) {
      (entry.sector >= marker_first_sector ? current.markers : current.writes).push_back(i);
    }
    if (entry.is_flush()) {
      current.end = i + 1;
      windows.push_back(std::move(current));
      open = false;
    }
  }
  if (open) {
    current.end = log.entries.size();
    windows.push_back(std::move(current));
  }
  return windows;
}

const char* CrashStateKindName(CrashStateKind kind) {
  switch (kind) {
    case CrashStateKind::kFlushBoundary:
      return "flush-boundary";
    case CrashStateKind::kFullLog:
      return "full-log";
    case CrashStateKind::kSubset:
      return "subset";
    case CrashStateKind::kReorder:
      return "reorder";
    case CrashStateKind::kTorn:
      return "torn";
  }
  return "?";
}

std::vector<CrashState> EnumerateCrashStates(const WriteLog& log, uint64_t marker_first_sector,
                                             uint64_t seed, const StateBudget& budget) {
  const std::vector<LogWindow> windows = SplitWindows(log, marker_first_sector);
  std::vector<CrashState> states;
  auto add = [&states](CrashState state) {
    state.id = states.size();
    states.push_back(std::move(state));
  };
  for (size_t k = 0; k < windows.size(); ++k) {
    CrashState state;
    state.kind = CrashStateKind::kFlushBoundary;
    state.window = k;
    state.prefix_end = windows[k].first;
    state.window_end = windows[k].end;
    state.description = "flush-boundary window " + std::to_string(k) + ": entries before " +
                        std::to_string(windows[k].first) + ", dropped " +
                        Compact(windows[k].writes, true);
    add(std::move(state));
  }
  {
    CrashState state;
    state.kind = CrashStateKind::kFullLog;
    state.window = windows.size();
    state.prefix_end = state.window_end = log.entries.size();
    state.description = "full-log: " + std::to_string(log.entries.size()) + " entries";
    add(std::move(state));
  }

  // The random states: kinds in turn, windows round-robin, each window at
  // most max_random_per_window, no state twice.
  std::vector<size_t> eligible;
  for (size_t k = 0; k < windows.size(); ++k) {
    if (!windows[k].writes.empty()) eligible.push_back(k);
  }
  std::mt19937_64 rng(seed);
  const uint64_t unit = std::max<uint64_t>(1, budget.tear_unit_sectors);
  std::set<std::tuple<size_t, std::vector<size_t>, uint64_t>> seen;
  std::vector<size_t> per_window(windows.size(), 0);
  size_t made = 0, misses = 0, turn = 0;
  const CrashStateKind kinds[] = {CrashStateKind::kSubset, CrashStateKind::kReorder,
                                  CrashStateKind::kTorn};
  while (!eligible.empty() && made < budget.max_random && misses < 64 * eligible.size()) {
    const size_t k = eligible[turn % eligible.size()];
    const CrashStateKind kind = kinds[(turn / eligible.size()) % 3];
    ++turn;
    if (per_window[k] >= budget.max_random_per_window) {
      ++misses;
      continue;
    }
    const std::vector<size_t>& writes = windows[k].writes;
    CrashState state;
    state.kind = kind;
    state.window = k;
    state.prefix_end = windows[k].first;
    state.window_end = windows[k].end;
    std::vector<size_t> dropped;
    if (kind == CrashStateKind::kSubset || kind == CrashStateKind::kReorder) {
      for (size_t w : writes) (rng() & 1 ? state.writes : dropped).push_back(w);
      if (kind == CrashStateKind::kSubset && dropped.empty()) {
        // At least one dropped, or it is the next flush boundary.
        const size_t victim = Below(rng, state.writes.size());
        dropped.push_back(state.writes[victim]);
        state.writes.erase(state.writes.begin() + static_cast<std::ptrdiff_t>(victim));
      }
      if (kind == CrashStateKind::kReorder) {
        for (size_t i = state.writes.size(); i > 1; --i) {
          std::swap(state.writes[i - 1], state.writes[Below(rng, i)]);
        }
      }
    } else {
      // A prefix of the window's writes, in order, its last one torn.
      std::vector<size_t> tearable;
      for (size_t i = 0; i < writes.size(); ++i) {
        if (log.entries[writes[i]].nr_sectors > unit) tearable.push_back(i);
      }
      if (tearable.empty()) {
        ++misses;
        continue;
      }
      const size_t last = tearable[Below(rng, tearable.size())];
      state.writes.assign(writes.begin(), writes.begin() + static_cast<std::ptrdiff_t>(last) + 1);
      dropped.assign(writes.begin() + static_cast<std::ptrdiff_t>(last) + 1, writes.end());
      state.torn_sectors = unit * (1 + rng() % ((log.entries[writes[last]].nr_sectors - 1) / unit));
    }
    if (state.writes.empty() || !seen.emplace(k, state.writes, state.torn_sectors).second) {
      ++misses;
      continue;
    }
    state.description = std::string(CrashStateKindName(kind)) + " window " + std::to_string(k) +
                        ": applied " + Compact(state.writes, kind != CrashStateKind::kReorder) +
                        ", dropped " + Compact(dropped, true);
    if (kind == CrashStateKind::kTorn) {
      state.description += ", entry " + std::to_string(state.writes.back()) + " torn after " +
                           std::to_string(state.torn_sectors) + " of " +
                           std::to_string(log.entries[state.writes.back()].nr_sectors) + " sectors";
    }
    ++per_window[k];
    ++made;
    add(std::move(state));
  }
  return states;
}

Expected<ImageStats> BuildStateImage(const std::string& base_image_path,
                                     const std::string& log_path, const WriteLog& log,
                                     const CrashState& state, uint64_t marker_first_sector,
                                     const std::string& out_path) {
  using Result = Expected<ImageStats>;
  if (state.prefix_end > log.entries.size() || state.window_end > log.entries.size() ||
      state.prefix_end > state.window_end) {
    return Result::Failure(log_path + ": state " + std::to_string(state.id) +
                           " does not fit this log");
  }
  for (size_t w : state.writes) {
    if (w < state.prefix_end || w >= state.window_end || !log.entries[w].is_write()) {
      return Result::Failure(log_path + ": state " + std::to_string(state.id) + " names entry " +
                             std::to_string(w) + ", not a write of its window");
    }
  }
  Fd base(::open(base_image_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (base.get() < 0) return Result::Failure(Errno(base_image_path + ": open"));
  struct stat st {};
  if (::fstat(base.get(), &st) != 0) return Result::Failure(Errno(base_image_path + ": fstat"));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  Fd logfd(::open(log_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (logfd.get() < 0) return Result::Failure(Errno(log_path + ": open"));
  ::unlink(out_path.c_str());
  Fd out(::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (out.get() < 0) return Result::Failure(Errno(out_path + ": create"));
  if (::ftruncate(out.get(), static_cast<off_t>(size)) != 0) {
    return Result::Failure(Errno(out_path + ": ftruncate"));
  }

  ImageStats stats;
  std::vector<std::byte> buffer(1 << 20);
  // The base's data extents; its holes stay holes.
  for (off_t data = ::lseek(base.get(), 0, SEEK_DATA);
       data >= 0 && static_cast<uint64_t>(data) < size;) {
    off_t hole = ::lseek(base.get(), data, SEEK_HOLE);
    if (hole < 0) hole = static_cast<off_t>(size);
    for (uint64_t at = static_cast<uint64_t>(data); at < static_cast<uint64_t>(hole);) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), hole - at));
      if (!PreadAll(base.get(), buffer.data(), n, at)) {
        return Result::Failure(Errno(base_image_path + ": read"));
      }
      if (!PwriteAll(out.get(), buffer.data(), n, at)) {
        return Result::Failure(Errno(out_path + ": write"));
      }
      stats.base_bytes_copied += n;
      at += n;
    }
    data = ::lseek(base.get(), hole, SEEK_DATA);
  }

  auto apply = [&](size_t index, uint64_t sectors) -> std::string {
    const LogEntry& entry = log.entries[index];
    const uint64_t bytes = sectors * log.sector_size;
    const uint64_t at = entry.sector * log.sector_size;
    if (at + bytes > size) {
      return log_path + ": entry " + std::to_string(index) + " writes past the end of " +
             base_image_path;
    }
    for (uint64_t done = 0; done < bytes;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), bytes - done));
      if (!PreadAll(logfd.get(), buffer.data(), n, entry.data_offset + done)) {
        return Errno(log_path + ": read entry " + std::to_string(index));
      }
      if (!PwriteAll(out.get(), buffer.data(), n, at + done)) return Errno(out_path + ": write");
      done += n;
    }
    ++stats.entries_applied;
    stats.log_bytes_applied += bytes;
    return "";
  };
  for (size_t i = 0; i < state.prefix_end; ++i) {
    if (!log.entries[i].is_write()) continue;
    if (std::string error = apply(i, log.entries[i].nr_sectors); !error.empty()) {
      return Result::Failure(error);
    }
  }
  for (size_t n = 0; n < state.writes.size(); ++n) {
    const size_t i = state.writes[n];
    const bool torn = state.torn_sectors != 0 && n + 1 == state.writes.size();
    if (std::string error = apply(i, torn ? state.torn_sectors : log.entries[i].nr_sectors);
        !error.empty()) {
      return Result::Failure(error);
    }
  }
  for (size_t i = state.prefix_end; i < state.window_end; ++i) {
    const LogEntry& entry = log.entries[i];
    if (!entry.is_write() || entry.sector < marker_first_sector) continue;
    if (std::string error = apply(i, entry.nr_sectors); !error.empty()) {
      return Result::Failure(error);
    }
  }
  return stats;
}

}  // namespace regionstore::testing
