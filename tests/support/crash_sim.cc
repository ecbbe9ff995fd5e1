#include "support/crash_sim.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace regionstore::testing {
namespace {

// The simulated file and its mapping are roots too: their bytes are the
// simulator's page cache, not another File's or Mapping's.
class SimMapping final : public Mapping {
 public:
  explicit SimMapping(CrashSim& sim) : sim_(sim) {}
  std::byte* data() override { return sim_.data(); }
  uint64_t size() const override { return sim_.size(); }
  Status Sync(uint64_t offset, uint64_t length, SyncKind kind) override {
    if (offset % CrashSim::kUnit != 0 || offset > size() || length > size() - offset) {
      return Status::FromErrno(EINVAL, "msync", "sim");
    }
    sim_.Observe();
    if (kind == SyncKind::kSync) return sim_.Barrier(offset, length);
    return Status::Ok();
  }

 private:
  CrashSim& sim_;
};

class SimFile final : public File {
 public:
  explicit SimFile(CrashSim& sim) : sim_(sim) {}
  const std::string& path() const override { return path_; }
  Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    if (offset >= sim_.size()) return uint64_t{0};
    const uint64_t length = std::min<uint64_t>(out.size(), sim_.size() - offset);
    if (Status s = sim_.Read(offset, out.first(length)); !s.ok()) return s;
    return length;
  }
  Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    if (offset > sim_.size() || data.size() > sim_.size() - offset) {
      return Status::FromErrno(ENOSPC, "pwrite", path_, "the simulated file does not grow");
    }
    sim_.Write(offset, data);
    return Status::Ok();
  }
  Status WriteGatherAt(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                       bool data_sync) override {
    uint64_t at = offset;
    for (std::span<const std::byte> part : parts) {
      if (Status s = WriteAt(at, part); !s.ok()) return s;
      at += part.size();
    }
    // RWF_DSYNC: this range only.
    if (data_sync) return sim_.Barrier(offset, at - offset);
    return Status::Ok();
  }
  Status Allocate(uint64_t, uint64_t) override { return Status::Ok(); }
  Status DataSync() override {
    sim_.Observe();
    return sim_.Barrier(0, sim_.size());
  }
  Status Sync() override { return DataSync(); }
  Status LockExclusive() override { return Status::Ok(); }
  Result<FileStat> Stat() override { return sim_.StatPath(path_); }
  Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode) override {
    if (length != sim_.size()) return Status::FromErrno(EINVAL, "mmap", path_);
    return std::unique_ptr<Mapping>(std::make_unique<SimMapping>(sim_));
  }

 private:
  CrashSim& sim_;
  std::string path_ = "sim";
};

Status Unsupported(const char* what) {
  return Status::FromErrno(ENOTSUP, what, "sim", "not simulated");
}

}  // namespace

CrashSim::CrashSim(std::vector<std::byte> image, bool track)
    : track_(track), current_(std::move(image)) {
  static std::atomic<uint64_t> boots{0};
  const uint64_t boot = ++boots;
  std::memcpy(boot_id_.data(), &boot, sizeof boot);
  if (track_) {
    durable_ = current_;
    observed_ = current_;
    pending_.resize((current_.size() + kUnit - 1) / kUnit);
    dirty_.assign(pending_.size(), false);
  }
}

CrashSim::~CrashSim() = default;

void CrashSim::Observe() {
  if (!track_) return;
  for (uint64_t u = 0; u < pending_.size(); ++u) {
    const uint64_t start = u * kUnit;
    const uint64_t length = std::min(kUnit, current_.size() - start);
    if (std::memcmp(current_.data() + start, observed_.data() + start, length) == 0) continue;
    pending_[u].emplace_back(current_.begin() + static_cast<ptrdiff_t>(start),
                             current_.begin() + static_cast<ptrdiff_t>(start + length));
    std::memcpy(observed_.data() + start, current_.data() + start, length);
    dirty_[u] = true;
  }
}

void CrashSim::MakeDurable(uint64_t first_unit, uint64_t end_unit) {
  for (uint64_t u = first_unit; u < end_unit && u < pending_.size(); ++u) {
    if (!dirty_[u]) continue;  // clean: nothing to write (maybe never written)
    const uint64_t start = u * kUnit;
    const uint64_t length = std::min(kUnit, current_.size() - start);
    std::memcpy(durable_.data() + start, current_.data() + start, length);
    pending_[u].clear();
    dirty_[u] = false;
  }
}

CrashSim::Tracking CrashSim::Save() const {
  return Tracking{current_, durable_, observed_, pending_, dirty_};
}

Status CrashSim::Barrier(uint64_t offset, uint64_t length) {
  if (!track_ || length == 0) return Status::Ok();
  Observe();
  const uint64_t first = offset / kUnit;
  const uint64_t end = (offset + length + kUnit - 1) / kUnit;
  if (fail_next_barrier_) {
    fail_next_barrier_ = false;
    // Linux after a writeback error: the pages are clean, their content
    // stays in the cache, the disk has any version they held.
    for (uint64_t u = first; u < end && u < dirty_.size(); ++u) dirty_[u] = false;
    if (kill_at_failure_) at_failure_ = Save();
    return Status::FromErrno(EIO, "barrier", "sim", "injected writeback error");
  }
  if (in_flight_) before_last_barrier_ = Save();
  MakeDurable(first, end);
  return Status::Ok();
}

void CrashSim::BeginInFlight() {
  in_flight_ = true;
  before_last_barrier_.reset();
}

void CrashSim::Restore(Tracking saved, bool page_cache) {
  if (page_cache) current_ = std::move(saved.current);
  durable_ = std::move(saved.durable);
  observed_ = std::move(saved.observed);
  pending_ = std::move(saved.pending);
  dirty_ = std::move(saved.dirty);
}

void CrashSim::EndInFlight(bool after_barrier_happened) {
  in_flight_ = false;
  if (!before_last_barrier_) return;
  // Back to before the last barrier, keeping what the page cache holds now
  // (every unit written since is one more pending version), or not.
  Restore(std::move(*before_last_barrier_), /*page_cache=*/!after_barrier_happened);
  before_last_barrier_.reset();
  Observe();
}

void CrashSim::FailNextBarrier(bool kill_at_failure) {
  fail_next_barrier_ = true;
  kill_at_failure_ = kill_at_failure;
  at_failure_.reset();
}

void CrashSim::RestoreKilledState() {
  if (!at_failure_) return;
  Restore(std::move(*at_failure_), /*page_cache=*/true);
  at_failure_.reset();
}

Status CrashSim::Read(uint64_t offset, std::span<std::byte> out) {
  if (out.empty()) return Status::Ok();
  std::memcpy(out.data(), current_.data() + offset, out.size());
  return Status::Ok();
}

void CrashSim::Write(uint64_t offset, std::span<const std::byte> data) {
  if (data.empty()) return;
  // Look first, so a mapping write before this call is its own version.
  Observe();
  std::memcpy(current_.data() + offset, data.data(), data.size());
  Observe();
  // A pwrite dirties its pages even when it writes the bytes they hold
  // (the recovery that writes a commit again relies on that).
  Touch(offset, data.size());
}

void CrashSim::Touch(uint64_t offset, uint64_t length) {
  if (!track_ || length == 0) return;
  for (uint64_t u = offset / kUnit; u < (offset + length + kUnit - 1) / kUnit && u < dirty_.size();
       ++u) {
    dirty_[u] = true;
  }
}

std::vector<std::byte> CrashSim::Image(std::mt19937_64& rng, ImageKind kind, uint64_t unit) const {
  std::vector<std::byte> image = durable_;
  std::vector<uint64_t> pending_units;
  for (uint64_t u = 0; u < pending_.size(); ++u) {
    if (!pending_[u].empty()) pending_units.push_back(u);
  }
  const auto put = [&](uint64_t u, const std::vector<std::byte>& content) {
    std::memcpy(image.data() + u * kUnit, content.data(), content.size());
  };
  const auto newest = [&](uint64_t u) { put(u, pending_[u].back()); };
  switch (kind) {
    case ImageKind::kRandom:
      for (uint64_t u : pending_units) {
        // Versions: the durable one, then each pending one.
        const size_t count = pending_[u].size() + 1;
        const auto version = [&](size_t i) -> std::vector<std::byte> {
          if (i == 0) {
            const auto begin = durable_.begin() + static_cast<ptrdiff_t>(u * kUnit);
            return {begin, begin + static_cast<ptrdiff_t>(pending_[u][0].size())};
          }
          return pending_[u][i - 1];
        };
        const uint64_t choice = rng() % 12;
        size_t a = rng() % count;
        size_t b = rng() % count;
        if (choice < 4 || a == b) {
          put(u, version(rng() % count));
          continue;
        }
        // A mix of two versions: a cut (writeback snapshot during a copy
        // that runs forward, or backward as glibc's memcpy may store the
        // head last), runs of random length, or any byte-wise mix.
        std::vector<std::byte> mixed = version(a);
        const std::vector<std::byte> other = version(b);
        if (choice < 7) {
          const size_t cut = rng() % (mixed.size() + 1);
          std::copy(other.begin(), other.begin() + static_cast<ptrdiff_t>(cut), mixed.begin());
        } else if (choice < 9) {
          bool take = (rng() & 1) != 0;
          for (size_t i = 0; i < mixed.size();) {
            const size_t run = 1 + rng() % 1024;
            for (size_t k = i; k < std::min(mixed.size(), i + run); ++k) {
              if (take) mixed[k] = other[k];
            }
            i += run;
            take = !take;
          }
        } else {
          for (size_t i = 0; i < mixed.size(); ++i) {
            if (rng() & 1) mixed[i] = other[i];
          }
        }
        put(u, mixed);
      }
      break;
    case ImageKind::kOneStale: {
      for (uint64_t u : pending_units) newest(u);
      if (!pending_units.empty()) {
        const uint64_t stale = pending_units[rng() % pending_units.size()];
        std::memcpy(image.data() + stale * kUnit, durable_.data() + stale * kUnit,
                    pending_[stale][0].size());
      }
      break;
    }
    case ImageKind::kOnlyUnitNew:
      if (unit < pending_.size() && !pending_[unit].empty()) newest(unit);
      break;
    case ImageKind::kOnlyUnitOld:
      for (uint64_t u : pending_units) {
        if (u != unit) newest(u);
      }
      break;
  }
  return image;
}

Result<std::unique_ptr<File>> CrashSim::Open(const std::string& path, OpenMode, SymlinkPolicy) {
  if (MemorySidecar::IsSidecarPath(path)) return sidecar_.Open(path);
  return std::unique_ptr<File>(std::make_unique<SimFile>(*this));
}
Result<std::unique_ptr<File>> CrashSim::CreateExclusive(const std::string& path) {
  if (!MemorySidecar::IsSidecarPath(path)) return Unsupported("create");
  return sidecar_.Create(path);
}
Status CrashSim::Rename(const std::string&, const std::string&, bool) {
  return Unsupported("rename");
}
Status CrashSim::Remove(const std::string&) { return Unsupported("unlink"); }
Status CrashSim::SyncDirectory(const std::string&) { return Status::Ok(); }
Result<FileStat> CrashSim::StatPath(const std::string&) {
  FileStat stat;
  stat.size = current_.size();
  stat.is_regular = true;
  stat.device = 1;
  stat.inode = 1;
  return stat;
}
Status CrashSim::FillRandom(std::span<std::byte> out) {
  std::fill(out.begin(), out.end(), std::byte{0x5a});
  return Status::Ok();
}
Result<FsInfo> CrashSim::StatFs(const std::string&) {
  FsInfo info;
  info.type_name = "simulated";
  info.block_size = kUnit;
  return info;
}

}  // namespace regionstore::testing
