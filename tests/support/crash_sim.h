// CrashSim: an in-memory Io for one store file that remembers, per 4 KiB
// unit, every content the unit held since its last covering barrier, and
// builds power-loss images from that history (DESIGN.md, "Crash model").
//
// The "page cache" is one buffer: pread, pwrite and the mapping all see it,
// as on Linux. A memcpy into the mapping makes no call, so the simulator
// learns of it when it next looks: at every call the store makes through the
// seam, and when the test calls Observe() after an operation returns. What a
// unit held between two looks is covered by the byte-wise mixes of the
// versions on either side.
//
// Barriers: fdatasync/fsync make every unit durable; msync(MS_SYNC) and a
// pwritev2(RWF_DSYNC) make the units of their range durable; MS_ASYNC makes
// nothing durable.
#ifndef REGIONSTORE_TESTS_SUPPORT_CRASH_SIM_H_
#define REGIONSTORE_TESTS_SUPPORT_CRASH_SIM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "regionstore/io.h"

namespace regionstore::testing {

class CrashSim final : public Io {
 public:
  static constexpr uint64_t kUnit = 4096;

  // `image` is the file's content, all of it durable. With `track` false the
  // simulator only serves the bytes (for checking an image: cheaper).
  CrashSim(std::vector<std::byte> image, bool track);
  ~CrashSim() override;

  // Folds what changed since the last look into the unit histories.
  void Observe();
  // While false, barriers return OK but make nothing durable: the commit
  // running then is "in flight" when the power goes.
  void set_barriers_honoured(bool honoured) { barriers_honoured_ = honoured; }

  enum class ImageKind {
    kRandom,         // every pending unit: any version, or a mix of two
    kOneStale,       // every pending unit newest, except one random one durable
    kOnlyUnitNew,    // every unit durable, except `unit`: newest
    kOnlyUnitOld,    // every pending unit newest, except `unit`: durable
  };
  // A power-loss image of the file. `unit` is for the kOnlyUnit kinds.
  std::vector<std::byte> Image(std::mt19937_64& rng, ImageKind kind, uint64_t unit = 0) const;
  const std::vector<std::byte>& current() const { return current_; }

  // Io.
  // The one simulated file, whatever the path: it has no links to refuse.
  Result<std::unique_ptr<File>> Open(const std::string& path, bool writable,
                                     SymlinkPolicy symlinks) override;
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to, bool replace) override;
  Status Remove(const std::string& path) override;
  Status SyncDirectory(const std::string& directory) override;
  Result<FileStat> StatPath(const std::string& path) override;
  Status FillRandom(std::span<std::byte> out) override;
  Result<FsInfo> StatFs(const std::string& path) override;
  uint64_t PageSize() override { return kUnit; }
  uint64_t NowUnixNanos() override { return ++clock_; }

  // Called by the simulated file and mapping.
  Status Read(uint64_t offset, std::span<std::byte> out);
  void Write(uint64_t offset, std::span<const std::byte> data);
  void Barrier(uint64_t offset, uint64_t length);  // makes the range durable
  std::byte* data() { return current_.data(); }
  uint64_t size() const { return current_.size(); }

 private:
  void MakeDurable(uint64_t first_unit, uint64_t end_unit);

  bool track_;
  bool barriers_honoured_ = true;
  uint64_t clock_ = 1'700'000'000'000'000'000;
  std::vector<std::byte> current_;   // the page cache (and the mapping)
  std::vector<std::byte> durable_;   // what stable storage holds for sure
  std::vector<std::byte> observed_;  // current_ at the last look
  // Per unit: contents since its last barrier, oldest first.
  std::vector<std::vector<std::vector<std::byte>>> pending_;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_CRASH_SIM_H_
