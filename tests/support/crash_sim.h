// CrashSim: an in-memory Io for one store file that remembers, per 4 KiB
// unit, every content the unit held since its last covering barrier, and
// builds power-loss images from that history (docs/CHECKPOINTS.md, "Why G1-G4 hold").
//
// The "page cache" is one buffer: pread, pwrite and the mapping all see it,
// as on Linux. A memcpy into the mapping makes no call, so the simulator
// learns of it when it next looks: at every call the store makes through the
// seam, and when the test calls Observe() after an operation returns. What a
// unit held between two looks is covered by the byte-wise mixes of the
// versions on either side.
//
// Barriers: fdatasync/fsync make every dirty unit durable; msync(MS_SYNC)
// and a pwritev2(RWF_DSYNC) make the dirty units of their range durable;
// MS_ASYNC makes nothing durable. A barrier made to fail (FailNextBarrier)
// leaves the dirty units of its range clean but not durable, as Linux does
// after a writeback error: the page cache keeps their content, no later
// barrier writes them unless they are written again, and the disk may hold
// any version they had.
#ifndef REGIONSTORE_TESTS_SUPPORT_CRASH_SIM_H_
#define REGIONSTORE_TESTS_SUPPORT_CRASH_SIM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "regionstore/io.h"
#include "support/memory_sidecar.h"

namespace regionstore::testing {

// A root Io, not a wrapper of another (ForwardingIo, regionstore/io.h): its one
// file lives in memory, so there is no Io under it to forward to.
class CrashSim final : public Io {
 public:
  static constexpr uint64_t kUnit = 4096;

  // `image` is the file's content, all of it durable. With `track` false the
  // simulator only serves the bytes (for checking an image: cheaper).
  CrashSim(std::vector<std::byte> image, bool track);
  ~CrashSim() override;

  // Folds what changed since the last look into the unit histories.
  void Observe();
  // Says that [offset, offset + length) was stored to through the mapping.
  // Observe sees only bytes that changed; on Linux any store dirties its
  // page (a write fault on a clean page), same bytes or not, and that
  // matters for a page left clean but not durable by a failed barrier.
  void Touch(uint64_t offset, uint64_t length);
  // Between BeginInFlight and EndInFlight, the last barrier to return is
  // undone at EndInFlight: the operation running then is "in flight" when
  // the power goes, its own barrier never reaching the disk, while earlier
  // barriers that returned before it (a settle's) did.
  // With `after_barrier_happened` false, what the operation wrote after that
  // barrier is undone in the page cache too: the power went during the
  // barrier, so nothing after it ran. Needed where a write after a barrier
  // claims what the barrier made durable (the batch watermark); the default
  // keeps those writes as pending versions, more states for the rest.
  void BeginInFlight();
  void EndInFlight(bool after_barrier_happened = true);
  // The next barrier fails with EIO (see above). With `kill_at_failure`,
  // the page cache as it was when the barrier failed is kept, for
  // RestoreKilledState: what a process killed right then leaves.
  void FailNextBarrier(bool kill_at_failure);
  // Takes the page cache back to the moment the failed barrier returned:
  // whatever the store wrote after it never happened. Call with no store
  // using the simulator in between (the killed handle is destroyed next).
  void RestoreKilledState();
  bool failure_pending() const { return fail_next_barrier_; }
  // Protocol 2's sidecar (PATH.shm) is simulated as a second file, in
  // memory and never tracked: it survives a kill (a reopen on the same
  // simulator) and is gone after a power loss (a new simulator has none).
  // LoseSidecar removes it, as someone deleting it between a kill and the
  // next open would. Call with no store using the simulator.
  void LoseSidecar() { sidecar_.Remove(); }
  bool has_sidecar() const { return sidecar_.exists(); }

  enum class ImageKind {
    kRandom,       // every pending unit: any version, or a mix of two
    kOneStale,     // every pending unit newest, except one random one durable
    kOnlyUnitNew,  // every unit durable, except `unit`: newest
    kOnlyUnitOld,  // every pending unit newest, except `unit`: durable
  };
  // A power-loss image of the file. `unit` is for the kOnlyUnit kinds.
  std::vector<std::byte> Image(std::mt19937_64& rng, ImageKind kind, uint64_t unit = 0) const;
  const std::vector<std::byte>& current() const { return current_; }

  // Io.
  // The one simulated file, whatever the path (but for a path ending in
  // ".shm": the sidecar): it has no links to refuse.
  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override;
  Result<FileStat> StatPath(const std::string& path) override;
  Status FillRandom(std::span<std::byte> out) override;
  Result<FsInfo> StatFs(const std::string& path) override;
  // No other file is simulated: these fail with ENOTSUP (CreateExclusive
  // makes the sidecar), but SyncDirectory, which has no directory entry to
  // make durable, succeeds.
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to, bool replace) override;
  Status Remove(const std::string& path) override;
  Status SyncDirectory(const std::string& directory) override;
  uint64_t PageSize() override { return kUnit; }
  // Every CrashSim is a boot of its own: a power loss is a reboot, so an
  // image opened in a new CrashSim has another boot id, and a store reopened
  // on the same one (a kill, no power loss) has the same.
  Result<std::array<std::byte, 16>> BootId() override { return boot_id_; }
  uint64_t NowUnixNanos() override { return ++clock_; }

  // Called by the simulated file and mapping.
  Status Read(uint64_t offset, std::span<std::byte> out);
  void Write(uint64_t offset, std::span<const std::byte> data);
  // Makes the range durable, or fails as FailNextBarrier asked.
  Status Barrier(uint64_t offset, uint64_t length);
  std::byte* data() { return current_.data(); }
  uint64_t size() const { return current_.size(); }

 private:
  void MakeDurable(uint64_t first_unit, uint64_t end_unit);

  struct Tracking {
    std::vector<std::byte> current;
    std::vector<std::byte> durable;
    std::vector<std::byte> observed;
    std::vector<std::vector<std::vector<std::byte>>> pending;
    std::vector<bool> dirty;
  };
  Tracking Save() const;
  // Takes the tracking back to `saved`, and the page cache too if asked.
  void Restore(Tracking saved, bool page_cache);

  std::array<std::byte, 16> boot_id_{};
  MemorySidecar sidecar_;
  bool track_;
  bool in_flight_ = false;
  std::optional<Tracking> before_last_barrier_;
  bool fail_next_barrier_ = false;
  bool kill_at_failure_ = false;
  std::optional<Tracking> at_failure_;
  uint64_t clock_ = 1'700'000'000'000'000'000;
  std::vector<std::byte> current_;   // the page cache (and the mapping)
  std::vector<std::byte> durable_;   // what stable storage holds for sure
  std::vector<std::byte> observed_;  // current_ at the last look
  // Per unit: contents since it was last made durable, oldest first.
  std::vector<std::vector<std::vector<std::byte>>> pending_;
  // Per unit: written since its last barrier (a barrier that failed leaves
  // it clean, its pending versions kept).
  std::vector<bool> dirty_;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_CRASH_SIM_H_
