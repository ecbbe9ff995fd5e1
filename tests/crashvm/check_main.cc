// crashvm_check: the host side of the crash VM, with the library.
//
//   crashvm_check prepare --workload eio --seed S --dir MNT
//     Makes the eio workload's store in MNT (the mounted base image): Create
//     and one durable commit of PreparedPayload(). Prints the disk sector
//     (512-byte units, from FIEMAP) of the first payload block of the slot
//     the guest's next commit will use, where blkdebug fails a write.
//   crashvm_check check --workload W --seed S --dir MNT --image IMG
//                 --marker-sector M --regionctl PATH --label L
//     Checks one crash state, mounted at MNT (its journal replayed), against
//     the plan and the markers in IMG. Prints one `violation: L: ...` line
//     per broken guarantee and `finding: L: ...` for what is worth knowing
//     but promised by nothing (a misleading report). Exit 0: no violation;
//     1: violations; 2: the check itself could not run.
//
// What is checked, per workload: docs/CRASH-VM.md, "Checks".
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "crashvm/marker.h"
#include "crashvm/plan.h"
#include "regionstore/checkpoint.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "slot.h"

extern char** environ;

namespace regionstore::crashvm {
namespace {

struct Args {
  std::string command, workload, dir, image, regionctl, label;
  uint64_t seed = 0, marker_sector = 0;
};

// Assigned to a Result<Store> to close the handle it held (and so release
// the writer's lock) before the next step opens the store again.
Result<Store> Closed() {
  return Status::Error(StatusCode::kInvalidArgument, "crashvm_check", "", "closed");
}

bool IsDurable(Durability mode) {
  return mode == Durability::kSync || mode == Durability::kPwriteFdatasync;
}

std::string Hex(std::span<const std::byte> bytes, size_t max = 8) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < std::min(bytes.size(), max); ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", static_cast<unsigned>(bytes[i]));
    out += buf;
  }
  return out;
}

class Checker {
 public:
  Checker(const Args& args, Plan plan) : args_(args), plan_(std::move(plan)) {}

  int Run() {
    if (!ReadMarkers()) return 2;
    const std::string& w = plan_.base;
    if (w == "commits" || w == "commits-barrier-header-only" || w == "eio" || w == "batches" ||
        w == "batches-record-late" || w == "seen" || w == "seen-recovery-undoes" || w == "sync" ||
        w == "sync-no-barrier" || w == "threads" || w == "threads-follower-early" ||
        w == "threads-covers-late") {
      CheckCommits();
    } else if (w == "raw") {
      CheckRaw();
    } else if (w == "export" || w == "export-no-dirsync") {
      CheckExport();
    } else if (w == "create") {
      CheckCreate();
    } else {
      Error("no check for workload %s", w.c_str());
    }
    if (error_) return 2;
    return violations_ == 0 ? 0 : 1;
  }

 private:
  template <typename... T>
  void Violation(const char* format, T... values) {
    ++violations_;
    std::printf("violation: %s: ", args_.label.c_str());
    std::printf(format, values...);
    std::printf("\n");
  }
  template <typename... T>
  void Finding(const char* format, T... values) {
    std::printf("finding: %s: ", args_.label.c_str());
    std::printf(format, values...);
    std::printf("\n");
  }
  template <typename... T>
  void Error(const char* format, T... values) {
    error_ = true;
    std::printf("error: %s: ", args_.label.c_str());
    std::printf(format, values...);
    std::printf("\n");
  }

  // The markers of the state: returned_ is how many operations had
  // returned (markers come in plan order, so they are a prefix).
  bool ReadMarkers() {
    const int fd = ::open(args_.image.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      Error("open %s: %s", args_.image.c_str(), std::strerror(errno));
      return false;
    }
    std::vector<std::byte> area(plan_.ops.size() * kMarkerSize);
    const ssize_t n = ::pread(fd, area.data(), area.size(),
                              static_cast<off_t>(args_.marker_sector * kMarkerSize));
    ::close(fd);
    if (n != static_cast<ssize_t>(area.size())) {
      Error("read the marker area of %s: %s", args_.image.c_str(),
            n < 0 ? std::strerror(errno) : "short read");
      return false;
    }
    markers_.resize(plan_.ops.size());
    bool gap = false;
    for (size_t i = 0; i < plan_.ops.size(); ++i) {
      markers_[i] = DecodeMarker(
          std::span<const std::byte, kMarkerSize>(&area[i * kMarkerSize], kMarkerSize));
      if (markers_[i] && markers_[i]->op != i) {
        Error("marker %zu names op %u", i, markers_[i]->op);
        return false;
      }
      if (markers_[i] && gap) {
        Error("marker %zu present after a missing one", i);
        return false;
      }
      if (!markers_[i]) gap = true;
      if (markers_[i]) returned_ = i + 1;
    }
    return true;
  }

  bool Returned(size_t i) const { return i < returned_; }
  bool ReturnedOk(size_t i) const { return Returned(i) && markers_[i]->status == 0; }
  // Issued: returned, or the one in flight when the power went.
  bool Issued(size_t i) const { return i <= returned_; }

  int RegionctlVerify(const std::string& path) {
    const char* argv[] = {args_.regionctl.c_str(), "verify", path.c_str(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, args_.regionctl.c_str(), &actions, nullptr,
                               const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      Error("spawn %s: %s", args_.regionctl.c_str(), std::strerror(rc));
      return -1;
    }
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
      Error("regionctl verify %s did not exit normally", path.c_str());
      return -1;
    }
    return WEXITSTATUS(status);
  }

  // What `regionctl verify` must exit with for this report (README, verify):
  // 3 a damaged region, else 6 a torn one or a failed header beside a valid
  // commit, else 0.
  static int ExpectedVerifyExit(const VerifyReport& report) {
    bool torn = false;
    for (const RegionReport& region : report.regions) {
      if (region.damaged) return 3;
      torn = torn || region.torn;
      for (const SlotReport& slot : region.slots) {
        if (slot.state == SlotState::kIncomplete && slot.generation == 0) torn = true;
      }
    }
    return torn ? 6 : 0;
  }

  // Runs VerifyRegions and regionctl verify; the report, if it could be made.
  std::optional<VerifyReport> Verify(const std::string& path) {
    Result<VerifyReport> report = VerifyRegions(path);
    const int exit = RegionctlVerify(path);
    if (!report.ok()) {
      Violation("VerifyRegions %s: %s", path.c_str(), report.status().ToString().c_str());
      return std::nullopt;
    }
    const int expected = ExpectedVerifyExit(report.value());
    if (exit >= 0 && exit != expected) {
      Violation("regionctl verify %s exited %d, its report says %d", path.c_str(), exit, expected);
    }
    return std::move(report).value();
  }

  // ---- commits, eio, commits-barrier-header-only ----

  struct Candidate {
    std::vector<std::byte> payload;
    uint64_t generation = 0;  // exact when it returned; else 0
    uint64_t above = 0;       // otherwise, it must be above this
    std::string what;
    size_t op = 0;  // the plan's op that committed it
  };

  void CheckCommits() {
    const std::string path = args_.dir + "/" + plan_.store;
    const bool must_exist = plan_.prepared_on_host || ReturnedOk(0);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      if (must_exist) Violation("the store %s is missing", path.c_str());
      return;
    }
    const size_t regions = plan_.regions.size();
    // Per region: the generation G3 requires, the candidates a Load may
    // return, the newest generation any commit returned.
    std::vector<uint64_t> required(regions, 0), newest(regions, 0);
    std::vector<std::vector<Candidate>> candidates(regions);
    if (plan_.prepared_on_host) {
      required[0] = newest[0] = 1;
      candidates[0].push_back({PreparedPayload(plan_), 1, 0, "the prepared commit", SIZE_MAX});
    }
    std::vector<uint64_t> pending(regions, 0);  // newest returned non-durable
    for (size_t i = 0; i < plan_.ops.size() && Issued(i); ++i) {
      const Op& op = plan_.ops[i];
      if ((op.kind == OpKind::kReopen || op.kind == OpKind::kReopenLoad ||
           op.kind == OpKind::kSync) &&
          ReturnedOk(i)) {
        // An open calls fdatasync, and a Sync is one: every commit returned
        // before it is durable (G4).
        for (size_t r = 0; r < regions; ++r) required[r] = std::max(required[r], pending[r]);
      }
      if (op.kind == OpKind::kSync && Returned(i) && !ReturnedOk(i)) {
        Violation("op %zu: sync failed: %s", i, markers_[i]->message.c_str());
      }
      if (op.kind == OpKind::kReopenLoad && Returned(i)) CheckReopenLoad(i);
      if (op.kind != OpKind::kCommit && op.kind != OpKind::kBatch && op.kind != OpKind::kThreads) {
        continue;
      }
      if (Returned(i) && !ReturnedOk(i) && !op.expect_failure) {
        Violation("op %zu: %s failed: %s", i, std::string(OpKindName(op.kind)).c_str(),
                  markers_[i]->message.c_str());
      } else if (Returned(i) && !ReturnedOk(i) && !markers_[i]->poisoned) {
        Violation("op %zu: a failed commit left the handle unpoisoned", i);
      }
      // A commit, or each member of a batch, as a commit to its region.
      const auto member = [&](uint32_t r, std::vector<std::byte> payload, uint64_t planned,
                              uint64_t returned) {
        Candidate c{std::move(payload), 0, newest[r], "op " + std::to_string(i), i};
        if (ReturnedOk(i)) {
          const uint64_t g = returned;
          if (g <= newest[r]) {
            Violation("op %zu: commit to %s returned generation %llu, not above %llu", i,
                      plan_.regions[r].name.c_str(), static_cast<unsigned long long>(g),
                      static_cast<unsigned long long>(newest[r]));
          }
          if (planned != 0 && g != planned) {
            Violation("op %zu: commit returned generation %llu, the plan counts %llu", i,
                      static_cast<unsigned long long>(g), static_cast<unsigned long long>(planned));
          }
          c.generation = g;
          newest[r] = std::max(newest[r], g);
          // A killed op is in the page cache, not on disk: the next open's
          // fdatasync makes it durable, as it does a kNone commit.
          pending[r] = std::max(pending[r], g);
          if (IsDurable(op.mode) && !op.killed) required[r] = std::max(required[r], g);
        }
        candidates[r].push_back(std::move(c));
      };
      if (op.killed && ReturnedOk(i)) CheckKilledSeen(i);
      if (op.kind == OpKind::kCommit) {
        member(op.region, CommitPayload(plan_, static_cast<uint32_t>(i)), op.generation,
               Returned(i) ? markers_[i]->value : 0);
      } else {
        // The guest fails a batch whose generations are not the plan's.
        for (size_t m = 0; m < op.members.size(); ++m) {
          member(op.members[m].region, MemberPayload(plan_, static_cast<uint32_t>(i), m),
                 op.members[m].generation, op.members[m].generation);
        }
      }
    }
    if (plan_.base == "eio" && Returned(1) && markers_[1]->status == 0) {
      Error("the injected EIO never reached the commit of op 1 (it returned OK)");
      return;
    }

    Result<Store> reader = Store::Open(path, OpenMode::kReadOnly);
    if (!reader.ok()) {
      if (must_exist) Violation("read-only open: %s", reader.status().ToString().c_str());
      return;
    }
    const std::optional<VerifyReport> report = Verify(path);
    std::vector<uint64_t> loaded(regions, 0);
    // The op whose commit each region loaded; SIZE_MAX: none, or not the
    // plan's (the prepared commit).
    std::vector<size_t> loaded_op(regions, SIZE_MAX);
    for (size_t r = 0; r < regions; ++r) {
      const std::string& name = plan_.regions[r].name;
      std::vector<std::byte> got;
      Result<CheckpointMeta> meta = reader.value().Load(name, got);
      if (!meta.ok()) {
        if (required[r] != 0) {
          Violation("region %s: Load failed (%s) though generation %llu was durable", name.c_str(),
                    meta.status().ToString().c_str(), static_cast<unsigned long long>(required[r]));
        } else if (meta.status().code() == StatusCode::kCorruption) {
          Finding(
              "region %s: no durable commit was made, and the region reads as damaged "
              "(every commit lost): %s",
              name.c_str(), meta.status().ToString().c_str());
        } else if (meta.status().code() != StatusCode::kNotFound &&
                   meta.status().code() != StatusCode::kTornCommit) {
          Violation("region %s: Load: %s", name.c_str(), meta.status().ToString().c_str());
        }
        if (report && report->regions[r].has_commit) {
          Violation("region %s: verify reports a commit that Load does not return", name.c_str());
        }
        continue;
      }
      const uint64_t g = meta.value().generation;
      loaded[r] = g;
      if (g < required[r]) {
        Violation("region %s: loaded generation %llu, older than durable generation %llu (G3)",
                  name.c_str(), static_cast<unsigned long long>(g),
                  static_cast<unsigned long long>(required[r]));
      }
      bool matched = false;
      for (const Candidate& c : candidates[r]) {
        if (c.payload != got) continue;
        if (c.generation != 0 ? c.generation == g : g > c.above) {
          matched = true;
          loaded_op[r] = c.op;
          break;
        }
      }
      if (!matched) {
        Violation(
            "region %s: loaded generation %llu (%zu bytes, %s...) is no commit the "
            "workload made with that generation (G1)",
            name.c_str(), static_cast<unsigned long long>(g), got.size(), Hex(got).c_str());
      }
      if (report && (!report->regions[r].has_commit || report->regions[r].generation != g)) {
        Violation("region %s: verify's newest commit is not the one Load returns", name.c_str());
      }
    }
    reader = Closed();
    CheckBatches(loaded_op);
    CheckRecovery(path, loaded, report);
  }

  // All or nothing: a region that loaded batch op i needs every other member
  // of it to hold op i or a later commit to that region, never one from
  // before the batch (or nothing).
  void CheckBatches(const std::vector<size_t>& loaded_op) {
    for (size_t i = 0; i < plan_.ops.size() && Issued(i); ++i) {
      const Op& op = plan_.ops[i];
      if (op.kind != OpKind::kBatch) continue;
      const Member* holder = nullptr;
      for (const Member& m : op.members) {
        if (loaded_op[m.region] == i) holder = &m;
      }
      if (holder == nullptr) continue;
      for (const Member& m : op.members) {
        const size_t got = loaded_op[m.region];
        if (got != SIZE_MAX && got >= i) continue;
        Violation(
            "batch op %zu is split: region %s holds it, region %s holds %s from before it "
            "(all or nothing)",
            i, plan_.regions[holder->region].name.c_str(), plan_.regions[m.region].name.c_str(),
            got == SIZE_MAX ? "no commit" : ("op " + std::to_string(got)).c_str());
      }
    }
  }

  // A killed op (the seen workload): what the guest's reader was given
  // after the kill is the whole op, at its planned generations.
  void CheckKilledSeen(size_t i) {
    const Op& op = plan_.ops[i];
    const Marker& m = *markers_[i];
    if (op.kind == OpKind::kCommit && (m.value2 != 2 || m.value != op.generation)) {
      Violation(
          "op %zu: after the kill before its barrier, a reader was given generation %llu, "
          "payload %llu (2 the killed commit), not the published commit (generation %llu)",
          i, static_cast<unsigned long long>(m.value), static_cast<unsigned long long>(m.value2),
          static_cast<unsigned long long>(op.generation));
    }
    if (op.kind == OpKind::kBatch && m.value != op.members.size()) {
      Violation(
          "op %zu: after the kill before its barrier, a reader was given %llu of the %zu "
          "members of the published batch",
          i, static_cast<unsigned long long>(m.value), op.members.size());
    }
  }

  // The reopen in the guest after a failed commit (eio) or a killed one
  // (seen): what the writer's open left.
  void CheckReopenLoad(size_t i) {
    const Marker& m = *markers_[i];
    if (m.status != 0) {
      Finding("op %zu: the reopen after the failed commit failed in the guest: %s", i,
              m.message.c_str());
      return;
    }
    size_t before = i;
    while (before > 0 && !plan_.ops[before - 1].killed && !plan_.ops[before - 1].expect_failure) {
      --before;
    }
    if (before > 0 && plan_.ops[before - 1].killed) {
      // Readers were given the killed commit: the recovery keeps it.
      const Op& killed = plan_.ops[before - 1];
      if (m.value2 != 2 || m.value != killed.generation) {
        Violation(
            "op %zu: the writer's open after the kill of op %zu loads generation %llu, payload "
            "%llu (2 the killed commit): the recovery took back a commit readers were given "
            "(generation %llu)",
            i, before - 1, static_cast<unsigned long long>(m.value),
            static_cast<unsigned long long>(m.value2),
            static_cast<unsigned long long>(killed.generation));
      }
      return;
    }
    if (!(m.value2 == 1 && m.value == 1) && !(m.value2 == 2 && m.value == 2)) {
      Violation(
          "op %zu: the reopen loaded generation %llu, payload %llu (1 previous, 2 failed, "
          "3 other), not the previous or the failed commit byte-exact",
          i, static_cast<unsigned long long>(m.value), static_cast<unsigned long long>(m.value2));
    }
  }

  // A writer opens the state, loads what the reader loaded, commits a new
  // generation durably, and a new reader finds it.
  void CheckRecovery(const std::string& path, const std::vector<uint64_t>& loaded,
                     const std::optional<VerifyReport>& report) {
    Result<Store> writer = Store::Open(path, OpenMode::kReadWrite);
    if (!writer.ok()) {
      Violation("writer open after the crash: %s", writer.status().ToString().c_str());
      return;
    }
    std::vector<uint64_t> fresh(plan_.regions.size(), 0);
    for (size_t r = 0; r < plan_.regions.size(); ++r) {
      const std::string& name = plan_.regions[r].name;
      std::vector<std::byte> got;
      Result<CheckpointMeta> meta = writer.value().Load(name, got);
      const uint64_t g = meta.ok() ? meta.value().generation : 0;
      if (g != loaded[r]) {
        Violation("region %s: the writer loads generation %llu, the reader loaded %llu",
                  name.c_str(), static_cast<unsigned long long>(g),
                  static_cast<unsigned long long>(loaded[r]));
      }
      Result<uint64_t> next =
          writer.value().Commit(name, AfterRecoveryPayload(plan_, r), Durability::kPwriteFdatasync);
      if (!next.ok()) {
        Violation("region %s: commit after recovery: %s", name.c_str(),
                  next.status().ToString().c_str());
        continue;
      }
      fresh[r] = next.value();
      uint64_t floor = loaded[r];
      if (report) {
        for (const SlotReport& slot : report->regions[r].slots)
          floor = std::max(floor, slot.generation);
      }
      if (fresh[r] <= floor) {
        Violation("region %s: the commit after recovery got generation %llu, not above %llu",
                  name.c_str(), static_cast<unsigned long long>(fresh[r]),
                  static_cast<unsigned long long>(floor));
      }
    }
    writer = Closed();
    Result<Store> again = Store::Open(path, OpenMode::kReadOnly);
    if (!again.ok()) {
      Violation("reopen after the recovery commits: %s", again.status().ToString().c_str());
      return;
    }
    for (size_t r = 0; r < plan_.regions.size(); ++r) {
      if (fresh[r] == 0) continue;
      std::vector<std::byte> got;
      Result<CheckpointMeta> meta = again.value().Load(plan_.regions[r].name, got);
      if (!meta.ok() || meta.value().generation != fresh[r] ||
          got != AfterRecoveryPayload(plan_, static_cast<uint32_t>(r))) {
        Violation("region %s: the commit after recovery does not load back byte-exact",
                  plan_.regions[r].name.c_str());
      }
    }
  }

  // ---- raw ----

  void CheckRaw() {
    const std::string path = args_.dir + "/" + plan_.store;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      if (ReturnedOk(0)) Violation("the store %s is missing", path.c_str());
      return;
    }
    Result<StoreInfo> info = ReadStoreInfo(path);
    if (!info.ok()) {
      Violation("ReadStoreInfo: %s", info.status().ToString().c_str());
      return;
    }
    Verify(path);
    const uint64_t size = plan_.data_size;
    std::vector<std::byte> data(size);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const ssize_t n =
        fd < 0 ? -1 : ::pread(fd, data.data(), size, static_cast<off_t>(info.value().data_offset));
    if (fd >= 0) ::close(fd);
    if (n != static_cast<ssize_t>(size)) {
      Violation("read the data area: %s", n < 0 ? std::strerror(errno) : "short read");
      return;
    }
    // durable[b]: the op index + 1 of the newest write whose bytes at b a
    // returned barrier covered (0: none, the byte must be 0 or later data).
    std::vector<uint32_t> durable(size, 0);
    std::vector<uint32_t> writes;  // returned write ops, in order
    for (size_t i = 0; i < plan_.ops.size() && ReturnedOk(i); ++i) {
      const Op& op = plan_.ops[i];
      const bool whole_file = op.mode == Durability::kPwriteFdatasync &&
                              (op.kind == OpKind::kWrite || op.kind == OpKind::kFlush);
      if (op.kind == OpKind::kWrite) writes.push_back(static_cast<uint32_t>(i));
      if (whole_file) {
        // fdatasync of the file: every write so far.
        for (uint32_t w : writes) {
          const Op& wo = plan_.ops[w];
          std::fill(durable.begin() + wo.offset, durable.begin() + wo.offset + wo.size, w + 1);
        }
      } else if (op.kind == OpKind::kWrite && op.mode == Durability::kSync) {
        std::fill(durable.begin() + op.offset, durable.begin() + op.offset + op.size, i + 1);
      } else if (op.kind == OpKind::kFlush && op.mode == Durability::kSync) {
        // msync of the range: the newest write of each byte in it.
        for (uint32_t w : writes) {
          const Op& wo = plan_.ops[w];
          const uint64_t lo = std::max(wo.offset, op.offset);
          const uint64_t hi = std::min(wo.offset + wo.size, op.offset + op.size);
          for (uint64_t b = lo; b < hi; ++b) durable[b] = w + 1;
        }
      }
    }
    uint64_t bad = 0, first_bad = 0;
    for (uint64_t b = 0; b < size; ++b) {
      const uint32_t d = durable[b];
      bool ok = d == 0 ? data[b] == std::byte{0} : data[b] == RawByte(plan_, d - 1, b);
      for (size_t i = d; !ok && i < plan_.ops.size() && Issued(i); ++i) {
        const Op& op = plan_.ops[i];
        if (op.kind == OpKind::kWrite && b >= op.offset && b < op.offset + op.size &&
            data[b] == RawByte(plan_, static_cast<uint32_t>(i), b)) {
          ok = true;
        }
      }
      if (!ok && bad++ == 0) first_bad = b;
    }
    if (bad != 0) {
      const uint32_t d = durable[first_bad];
      Violation(
          "%llu data-area bytes hold neither their durable write nor a later one; the "
          "first at offset %llu (durable: %s)",
          static_cast<unsigned long long>(bad), static_cast<unsigned long long>(first_bad),
          d == 0 ? "none" : ("op " + std::to_string(d - 1)).c_str());
    }
  }

  // ---- export ----

  void CheckExport() {
    const std::string path = args_.dir + "/out.bin";
    size_t newest = SIZE_MAX;
    for (size_t i = 0; i < plan_.ops.size(); ++i) {
      if (ReturnedOk(i)) newest = i;
      if (Returned(i) && markers_[i]->status != 0) {
        Violation("op %zu: export failed: %s", i, markers_[i]->message.c_str());
      }
    }
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      if (newest != SIZE_MAX)
        Violation("%s is missing after export op %zu returned", path.c_str(), newest);
      return;
    }
    std::vector<std::byte> got(std::filesystem::file_size(path, ec));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const ssize_t n = fd < 0 ? -1 : ::pread(fd, got.data(), got.size(), 0);
    if (fd >= 0) ::close(fd);
    if (n != static_cast<ssize_t>(got.size())) {
      Violation("read %s: %s", path.c_str(), n < 0 ? std::strerror(errno) : "short read");
      return;
    }
    for (size_t i = 0; i < plan_.ops.size() && Issued(i); ++i) {
      if (got == ExportBytes(plan_, static_cast<uint32_t>(i))) {
        if (newest != SIZE_MAX && i < newest) {
          Violation("%s holds export op %zu, older than op %zu whose call returned", path.c_str(),
                    i, newest);
        }
        return;
      }
    }
    Violation("%s (%zu bytes, %s...) is no export's whole content", path.c_str(), got.size(),
              Hex(got).c_str());
  }

  // ---- create ----

  void CheckCreate() {
    std::map<std::string, std::vector<size_t>> by_path;
    for (size_t i = 0; i < plan_.ops.size(); ++i) {
      by_path[plan_.ops[i].path].push_back(i);
      if (Returned(i) && markers_[i]->status != 0) {
        Violation("op %zu: create failed: %s", i, markers_[i]->message.c_str());
      }
    }
    for (const auto& [name, ops] : by_path) {
      const std::string path = args_.dir + "/" + name;
      size_t newest = SIZE_MAX;
      for (size_t i : ops) {
        if (ReturnedOk(i)) newest = i;
      }
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) {
        if (newest != SIZE_MAX)
          Violation("%s is missing after op %zu returned", path.c_str(), newest);
        continue;
      }
      Result<StoreInfo> info = ReadStoreInfo(path);
      if (!info.ok()) {
        Violation("%s is a half-made store: %s", path.c_str(), info.status().ToString().c_str());
        continue;
      }
      size_t which = SIZE_MAX;
      for (size_t i : ops) {
        if (Issued(i) && plan_.ops[i].size == info.value().data_size) which = i;
      }
      if (which == SIZE_MAX) {
        Violation("%s has data size %llu, no store the workload created there", path.c_str(),
                  static_cast<unsigned long long>(info.value().data_size));
        continue;
      }
      if (newest != SIZE_MAX && which < newest) {
        Violation("%s is the store of op %zu, older than op %zu whose call returned", path.c_str(),
                  which, newest);
      }
      const std::optional<VerifyReport> report = Verify(path);
      if (report) {
        for (const RegionReport& region : report->regions) {
          if (region.has_commit || region.damaged || region.torn) {
            Violation("%s: a new store's region %s is not empty", path.c_str(),
                      region.name.c_str());
          }
        }
        if (report->regions.size() != plan_.regions.size()) {
          Violation("%s has %zu regions, not %zu", path.c_str(), report->regions.size(),
                    plan_.regions.size());
        }
      }
      std::vector<std::byte> data(info.value().data_size);
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      const ssize_t n = fd < 0 ? -1
                               : ::pread(fd, data.data(), data.size(),
                                         static_cast<off_t>(info.value().data_offset));
      if (fd >= 0) ::close(fd);
      if (n != static_cast<ssize_t>(data.size()) ||
          std::any_of(data.begin(), data.end(), [](std::byte b) { return b != std::byte{0}; })) {
        Violation("%s: the data area of a new store is not all zero and readable", path.c_str());
      }
    }
  }

  const Args& args_;
  const Plan plan_;
  std::vector<std::optional<Marker>> markers_;
  size_t returned_ = 0;
  uint64_t violations_ = 0;
  bool error_ = false;
};

// The disk sector of byte `offset` of the file at `path` (FIEMAP).
std::optional<uint64_t> PhysicalSector(const std::string& path, uint64_t offset) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  alignas(struct fiemap) char buf[sizeof(struct fiemap) + sizeof(struct fiemap_extent)] = {};
  auto* map = reinterpret_cast<struct fiemap*>(buf);
  map->fm_start = offset;
  map->fm_length = 1;
  map->fm_flags = FIEMAP_FLAG_SYNC;
  map->fm_extent_count = 1;
  const int rc = ::ioctl(fd, FS_IOC_FIEMAP, map);
  ::close(fd);
  if (rc != 0 || map->fm_mapped_extents != 1) return std::nullopt;
  const struct fiemap_extent& e = map->fm_extents[0];
  if (offset < e.fe_logical || (e.fe_flags & FIEMAP_EXTENT_UNKNOWN) != 0) return std::nullopt;
  return (e.fe_physical + (offset - e.fe_logical)) / 512;
}

int Prepare(const Args& args, const Plan& plan) {
  const std::string path = args.dir + "/" + plan.store;
  CreateOptions options;
  options.checkpoints = plan.regions;
  Status status = Store::Create(path, plan.data_size, options);
  Result<Store> store =
      status.ok() ? Store::Open(path, OpenMode::kReadWrite) : Result<Store>(status);
  Result<uint64_t> g = store.ok()
                           ? store.value().Commit(plan.regions[0].name, PreparedPayload(plan),
                                                  Durability::kPwriteFdatasync)
                           : Result<uint64_t>(store.status());
  if (!g.ok()) {
    std::fprintf(stderr, "crashvm_check prepare: %s\n", g.status().ToString().c_str());
    return 2;
  }
  store = Closed();
  // The slot the next commit takes: commit once more on a copy and ask.
  const std::string copy = args.dir + "/.probe.rs";
  std::error_code ec;
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing, ec);
  Result<Store> probe =
      ec ? Result<Store>(Status::Error(StatusCode::kIOError, "copy", copy, ec.message()))
         : Store::Open(copy, OpenMode::kReadWrite);
  Result<uint64_t> g2 = probe.ok() ? probe.value().Commit(plan.regions[0].name,
                                                          PreparedPayload(plan), Durability::kNone)
                                   : Result<uint64_t>(probe.status());
  Result<RegionReport> where =
      g2.ok() ? probe.value().Report(plan.regions[0].name) : Result<RegionReport>(g2.status());
  Result<StoreInfo> info = ReadStoreInfo(path);
  probe = Closed();
  std::filesystem::remove(copy, ec);
  if (!where.ok() || !info.ok()) {
    std::fprintf(stderr, "crashvm_check prepare: %s\n",
                 (!where.ok() ? where.status() : info.status()).ToString().c_str());
    return 2;
  }
  const RegionEntry& entry = info.value().regions[0];
  const uint64_t payload = slot::PayloadFileOffset(entry, where.value().active_slot);
  const std::optional<uint64_t> sector = PhysicalSector(path, payload);
  if (!sector) {
    std::fprintf(stderr, "crashvm_check prepare: FIEMAP of %s at %llu failed\n", path.c_str(),
                 static_cast<unsigned long long>(payload));
    return 2;
  }
  std::printf("%llu\n", static_cast<unsigned long long>(*sector));
  return 0;
}

std::optional<Args> ParseArgs(int argc, char** argv) {
  if (argc < 2) return std::nullopt;
  Args args;
  args.command = argv[1];
  bool have_seed = false;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--workload")
      args.workload = value;
    else if (flag == "--seed") {
      args.seed = std::strtoull(value.c_str(), nullptr, 10);
      have_seed = true;
    } else if (flag == "--dir")
      args.dir = value;
    else if (flag == "--image")
      args.image = value;
    else if (flag == "--marker-sector")
      args.marker_sector = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--regionctl")
      args.regionctl = value;
    else if (flag == "--label")
      args.label = value;
    else
      return std::nullopt;
  }
  if (argc % 2 != 0 || !have_seed || args.workload.empty() || args.dir.empty()) return std::nullopt;
  if (args.command == "check" && (args.image.empty() || args.regionctl.empty()))
    return std::nullopt;
  if (args.command != "check" && args.command != "prepare") return std::nullopt;
  if (args.label.empty()) args.label = args.workload;
  return args;
}

}  // namespace
}  // namespace regionstore::crashvm

int main(int argc, char** argv) {
  using namespace regionstore::crashvm;
  const std::optional<Args> args = ParseArgs(argc, argv);
  if (!args) {
    std::fprintf(stderr,
                 "usage: crashvm_check prepare --workload eio --seed S --dir MNT\n"
                 "       crashvm_check check --workload W --seed S --dir MNT --image IMG "
                 "--marker-sector M --regionctl PATH [--label L]\n");
    return 2;
  }
  const Plan plan = MakePlan(args->workload, args->seed);
  if (plan.ops.empty()) {
    std::fprintf(stderr, "crashvm_check: unknown workload %s\n", args->workload.c_str());
    return 2;
  }
  if (args->command == "prepare") return Prepare(*args, plan);
  Checker checker(*args, plan);
  const int rc = checker.Run();
  std::fflush(stdout);
  return rc;
}
