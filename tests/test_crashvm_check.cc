// The crash VM's checker has teeth: each workload runs to its end on the
// host (the guest program, a regular file for its marker area), the checker
// passes it, and then one deliberate break of what the workload was told
// (a durable commit's payload, a durable raw write, an export, a created
// store) makes it report a violation. The VM itself runs in
// scripts/crash-vm.sh; docs/CRASH-VM.md.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "crashvm/marker.h"
#include "crashvm/plan.h"
#include "regionstore/checkpoint.h"
#include "regionstore/store_info.h"
#include "slot.h"
#include "support/files.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace regionstore::testing {
namespace {

#if defined(CRASHVM_GUEST_PATH) && defined(CRASHVM_CHECK_PATH) && defined(REGIONCTL_PATH)

struct HostRun {
  TempDir dir;
  std::string workload;
  uint64_t seed;
  std::string markers = dir.File("markers.img");
  std::string data = dir.File("fs");

  HostRun(std::string w, uint64_t s) : workload(std::move(w)), seed(s) {
    std::filesystem::create_directory(data);
    const crashvm::Plan plan = crashvm::MakePlan(workload, seed);
    WriteWholeFile(markers, std::vector<std::byte>(plan.ops.size() * crashvm::kMarkerSize));
    const ProcessResult ran = RunProcess(
        CRASHVM_GUEST_PATH, {"--workload", workload, "--seed", std::to_string(seed), "--dir", data,
                             "--marker-device", markers, "--marker-sector", "0"});
    INFO(ran.stdout_bytes << ran.stderr_bytes);
    REQUIRE(ran.exit_code == 0);
  }

  // The check commits to what it checks (the writer after recovery), so
  // each one gets its own copy of the workload's directory.
  ProcessResult Check() {
    const std::string copy = dir.File("check-" + std::to_string(++checks));
    std::filesystem::copy(data, copy, std::filesystem::copy_options::recursive);
    return RunProcess(
        CRASHVM_CHECK_PATH,
        {"check", "--workload", workload, "--seed", std::to_string(seed), "--dir", copy, "--image",
         markers, "--marker-sector", "0", "--regionctl", REGIONCTL_PATH, "--label", workload});
  }
  int checks = 0;
};

void RequireClean(HostRun& run) {
  const ProcessResult checked = run.Check();
  INFO(checked.stdout_bytes << checked.stderr_bytes);
  CHECK(checked.stdout_bytes.find("violation") == std::string::npos);
  REQUIRE(checked.exit_code == 0);
}

void RequireViolation(HostRun& run, const std::string& words) {
  const ProcessResult checked = run.Check();
  INFO(checked.stdout_bytes << checked.stderr_bytes);
  CHECK(checked.exit_code == 1);
  CHECK(checked.stdout_bytes.find("violation: " + run.workload) != std::string::npos);
  CHECK(checked.stdout_bytes.find(words) != std::string::npos);
}

bool IsDurable(Durability mode) {
  return mode == Durability::kSync || mode == Durability::kPwriteFdatasync;
}

TEST_CASE("crash-VM checker: a durable commit's lost payload is a violation", "[crashvm]") {
  // A seed whose plan ends some region with a durable commit.
  uint64_t seed = 0;
  uint32_t region = 0;
  for (uint64_t s = 1; s < 50 && seed == 0; ++s) {
    const crashvm::Plan plan = crashvm::MakePlan("commits", s);
    for (uint32_t r = 0; r < plan.regions.size() && seed == 0; ++r) {
      const crashvm::Op* last = nullptr;
      for (const crashvm::Op& op : plan.ops) {
        if (op.kind == crashvm::OpKind::kCommit && op.region == r) last = &op;
      }
      if (last != nullptr && IsDurable(last->mode) && last->size > 8) {
        seed = s;
        region = r;
      }
    }
  }
  REQUIRE(seed != 0);
  HostRun run("commits", seed);
  RequireClean(run);

  const std::string store = run.data + "/store.rs";
  Result<VerifyReport> report = VerifyRegions(store);
  REQUIRE(report.ok());
  const RegionReport& newest = report.value().regions[region];
  REQUIRE(newest.has_commit);
  const RegionEntry& entry = report.value().info.regions[region];
  FlipByte(store, slot::PayloadFileOffset(entry, newest.active_slot) + newest.length - 1);
  RequireViolation(run, "durable");
}

TEST_CASE("crash-VM checker: a durable raw write that is not on disk is a violation", "[crashvm]") {
  HostRun run("raw", 7);
  RequireClean(run);
  const crashvm::Plan plan = crashvm::MakePlan("raw", 7);
  // The last kSync write: its bytes are durable and nothing later may
  // cover its last byte... unless it does; take a byte no later write has.
  uint64_t offset = UINT64_MAX;
  for (size_t i = plan.ops.size(); i-- > 0 && offset == UINT64_MAX;) {
    const crashvm::Op& op = plan.ops[i];
    if (op.kind != crashvm::OpKind::kWrite || op.mode != Durability::kSync) continue;
    const uint64_t b = op.offset + op.size - 1;
    bool later = false;
    for (size_t j = i + 1; j < plan.ops.size(); ++j) {
      const crashvm::Op& o = plan.ops[j];
      later =
          later || (o.kind == crashvm::OpKind::kWrite && b >= o.offset && b < o.offset + o.size);
    }
    if (!later) offset = b;
  }
  REQUIRE(offset != UINT64_MAX);
  Result<StoreInfo> info = ReadStoreInfo(run.data + "/store.rs");
  REQUIRE(info.ok());
  FlipByte(run.data + "/store.rs", info.value().data_offset + offset);
  RequireViolation(run, "data-area bytes");
}

TEST_CASE("crash-VM checker: an export older than the one that returned is a violation",
          "[crashvm]") {
  HostRun run("export", 3);
  RequireClean(run);
  const crashvm::Plan plan = crashvm::MakePlan("export", 3);
  WriteWholeFile(run.data + "/out.bin", crashvm::ExportBytes(plan, 0));
  RequireViolation(run, "older than op");
  std::filesystem::remove(run.data + "/out.bin");
  RequireViolation(run, "missing");
}

TEST_CASE("crash-VM checker: a half-made store is a violation", "[crashvm]") {
  HostRun run("create", 5);
  RequireClean(run);
  std::filesystem::resize_file(run.data + "/new-1.rs", 4096);
  RequireViolation(run, "half-made");
}

TEST_CASE("crash-VM checker: a batch split across its regions is a violation", "[crashvm]") {
  // A seed whose plan ends two regions with the same batch: break one of
  // them and the other still holds the batch.
  uint64_t seed = 0;
  size_t batch = 0;
  uint32_t broken = 0;
  for (uint64_t s = 1; s < 50 && seed == 0; ++s) {
    const crashvm::Plan plan = crashvm::MakePlan("batches", s);
    std::vector<size_t> last(plan.regions.size(), SIZE_MAX);
    for (size_t i = 0; i < plan.ops.size(); ++i) {
      const crashvm::Op& op = plan.ops[i];
      if (op.kind == crashvm::OpKind::kCommit) last[op.region] = i;
      for (const crashvm::Member& m : op.members) last[m.region] = i;
    }
    for (size_t i = plan.ops.size(); i-- > 0 && seed == 0;) {
      const crashvm::Op& op = plan.ops[i];
      int newest = 0;
      for (const crashvm::Member& m : op.members) newest += last[m.region] == i ? 1 : 0;
      for (const crashvm::Member& m : op.members) {
        if (newest >= 2 && last[m.region] == i && m.size > 8 && m.generation > 1) {
          seed = s;
          batch = i;
          broken = m.region;
          break;
        }
      }
    }
  }
  REQUIRE(seed != 0);
  HostRun run("batches", seed);
  RequireClean(run);

  // The writer closed cleanly, so its members count on their own; damage
  // to one leaves that region at its commit before the batch.
  const std::string store = run.data + "/store.rs";
  Result<VerifyReport> report = VerifyRegions(store);
  REQUIRE(report.ok());
  const RegionReport& newest = report.value().regions[broken];
  REQUIRE(newest.has_commit);
  const RegionEntry& entry = report.value().info.regions[broken];
  FlipByte(store, slot::PayloadFileOffset(entry, newest.active_slot) + newest.length - 1);
  RequireViolation(run, "batch op " + std::to_string(batch) + " is split");
}

TEST_CASE("crash-VM checker: a recovery that takes back what a reader was given is a violation",
          "[crashvm]") {
  // The seen workload as it runs in the VM: each killed op's reader is given
  // the op, and the next writer's open keeps it.
  HostRun run("seen", 5);
  RequireClean(run);
  const crashvm::Plan plan = crashvm::MakePlan("seen", 5);
  size_t killed = 0;
  for (const crashvm::Op& op : plan.ops) killed += op.killed ? 1 : 0;
  CHECK(killed == 6);
  // Its control: the open before 0.11 undoes them.
  HostRun control("seen-recovery-undoes", 5);
  RequireViolation(control, "the recovery took back a commit readers were given");
}

#endif

TEST_CASE("crash-VM markers round-trip, and a damaged one reads as absent", "[crashvm]") {
  crashvm::Marker marker;
  marker.op = 17;
  marker.status = 8;
  marker.value = 0x1122334455667788ULL;
  marker.value2 = 2;
  marker.poisoned = true;
  marker.message = "I/O error: commit: fdatasync";
  std::vector<std::byte> sector(crashvm::kMarkerSize);
  crashvm::EncodeMarker(
      marker, std::span<std::byte, crashvm::kMarkerSize>(sector.data(), crashvm::kMarkerSize));
  auto decode = [&] {
    return crashvm::DecodeMarker(
        std::span<const std::byte, crashvm::kMarkerSize>(sector.data(), crashvm::kMarkerSize));
  };
  const std::optional<crashvm::Marker> back = decode();
  REQUIRE(back.has_value());
  CHECK(back->op == 17);
  CHECK(back->status == 8);
  CHECK(back->value == 0x1122334455667788ULL);
  CHECK(back->value2 == 2);
  CHECK(back->poisoned);
  CHECK(back->message == marker.message);
  sector[20] ^= std::byte{1};
  CHECK_FALSE(decode().has_value());
  std::fill(sector.begin(), sector.end(), std::byte{0});
  CHECK_FALSE(decode().has_value());
}

TEST_CASE("crash-VM plans are a function of the seed, and payloads name their op", "[crashvm]") {
  for (const std::string& name : crashvm::WorkloadNames()) {
    const crashvm::Plan a = crashvm::MakePlan(name, 11);
    const crashvm::Plan b = crashvm::MakePlan(name, 11);
    REQUIRE_FALSE(a.ops.empty());
    REQUIRE(a.ops.size() == b.ops.size());
    for (size_t i = 0; i < a.ops.size(); ++i) {
      CHECK(a.ops[i].kind == b.ops[i].kind);
      CHECK(a.ops[i].size == b.ops[i].size);
      CHECK(a.ops[i].mode == b.ops[i].mode);
    }
  }
  CHECK(crashvm::MakePlan("no-such-workload", 1).ops.empty());
  const crashvm::Plan plan = crashvm::MakePlan("commits", 11);
  std::vector<std::vector<std::byte>> payloads;
  for (uint32_t i = 0; i < plan.ops.size(); ++i) {
    if (plan.ops[i].kind != crashvm::OpKind::kCommit) continue;
    const std::vector<std::byte> p = crashvm::CommitPayload(plan, i);
    CHECK(p.size() == plan.ops[i].size);
    if (p.size() >= 8) {
      for (const auto& q : payloads) CHECK(q != p);
      payloads.push_back(p);
    }
  }
  CHECK(payloads.size() > 10);
}

}  // namespace
}  // namespace regionstore::testing
