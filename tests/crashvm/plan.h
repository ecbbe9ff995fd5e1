// The crash-VM workloads as plans: every operation, payload and path is a
// pure function of (workload, seed), so the guest that runs a plan and the
// host that checks the crash states of its disk agree on what was asked
// without passing anything but the seed. docs/CRASH-VM.md, "Workloads".
#ifndef REGIONSTORE_TESTS_CRASHVM_PLAN_H_
#define REGIONSTORE_TESTS_CRASHVM_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "regionstore/checkpoint.h"
#include "regionstore/durability.h"

namespace regionstore::crashvm {

enum class OpKind : uint8_t {
  kCreateStore,    // Store::Create(plan.store), then open it as the writer
  kCommit,         // Commit(regions[region], CommitPayload(op), mode)
  kBatch,          // CommitBatch of Op::members, each MemberPayload(op, m) in pieces
  kReopen,         // close the writer, open it again (recovery in the guest)
  kReopenLoad,     // kReopen, then Load(regions[region]): what a failed commit left
  kWrite,          // Write(offset, RawBytes(op), mode)
  kFlush,          // Flush(offset, size, mode)
  kExport,         // ReplaceFileAtomically(path, ExportBytes(op))
  kCreate,         // Store::Create(path, size) of a new store
  kCreateReplace,  // the same with replace_existing
  kSync,           // Store::Sync(): every commit returned before it is durable (G4)
  // Each of Op::members committed (Commit, op.mode) by a thread of its own
  // through the one writer handle, at once: the first member's thread
  // leads, and the others start once its barrier's call returned and commit
  // while the library still holds it in flight (the guest's ThreadsIo), so
  // the next barrier must be theirs.
  kThreads,
};

// A broken variant of the library or of how it is called, run through the
// same pipeline to prove the checks catch it.
enum class Breakage : uint8_t {
  kNone,
  kBarrierHeaderOnly,  // durable commits flush only the header's page
  kNoDirectorySync,    // exports skip every directory fsync
  kBatchRecordLate,    // durable batches write their record after the barrier
  // A writer's open undoes a commit or batch whose barrier never returned,
  // though readers were given it (the rule before 0.11).
  kRecoveryUndoesSeen,
  // Store::Sync returns success without its fdatasync.
  kSyncWithoutBarrier,
  // Durable commits that find another's barrier in flight return at once.
  kFollowerReturnsEarly,
  // A shared barrier counts as covered the commits written during its call.
  kGroupCoversLate,
};

// One region of a kBatch op.
struct Member {
  uint32_t region = 0;  // index into Plan::regions
  uint64_t size = 0;
  uint64_t generation = 0;  // what the batch must return for it
};

struct Op {
  OpKind kind = OpKind::kCommit;
  uint32_t region = 0;  // kCommit, kReopenLoad: index into Plan::regions
  uint64_t offset = 0;  // kWrite, kFlush: data-area offset
  uint64_t size = 0;    // payload, write, flush or export bytes; a created store's data size
  Durability mode = Durability::kNone;
  // kCommit: the generation it must return; 0 when the plan cannot know
  // (after a failed commit, which may or may not come back at the reopen).
  uint64_t generation = 0;
  std::string path;             // kExport, kCreate, kCreateReplace: relative to the directory
  bool expect_failure = false;  // kCommit: a write the disk fails (the eio workload)
  std::vector<Member> members;  // kBatch: distinct regions, in the order committed
  // kCommit, kBatch (durable modes): run by a child writer that is SIGKILLed
  // after the commit is published and before its barrier; then the guest
  // loads what a reader is given (the marker says what it saw).
  bool killed = false;
};

struct Plan {
  std::string workload;
  // The workload without its "-p2" (protocol 2) infix: what the guest runs
  // and the checker checks.
  std::string base;
  uint32_t protocol = 1;  // CreateOptions::protocol of the store
  uint64_t seed = 0;
  Breakage breakage = Breakage::kNone;
  std::string store = "store.rs";  // relative to the directory the guest mounts
  uint64_t data_size = 0;
  bool batch_log = false;  // CreateOptions::batch_log of the store
  std::vector<CheckpointSpec> regions;
  // The eio workload's store is made on the host before the guest boots
  // (its slot is located with FIEMAP there): Create and one durable commit
  // of PreparedPayload() to region 0.
  bool prepared_on_host = false;
  std::vector<Op> ops;
};

// Every workload name MakePlan knows, the negative controls last.
const std::vector<std::string>& WorkloadNames();
bool IsNegativeControl(std::string_view workload);

// The plan of `workload` for `seed`; an empty plan (no ops) for an unknown
// name.
Plan MakePlan(std::string_view workload, uint64_t seed);

// What op `index` (a kCommit) commits: the region's body for this seed with
// a few bytes changed, and the op's index in the first eight bytes (so two
// commits of one region share most bytes, as real checkpoints do, but no
// two payloads of eight bytes or more are equal).
std::vector<std::byte> CommitPayload(const Plan& plan, uint32_t index);
// What kBatch op `index` commits to its member `member` (a position in
// Op::members), made as CommitPayload makes a commit's.
std::vector<std::byte> MemberPayload(const Plan& plan, uint32_t index, size_t member);
// Where the guest cuts a member's payload into the pieces of its gather
// write: offsets into the payload, rising, each at most its size.
std::vector<uint64_t> PieceCuts(const Plan& plan, uint32_t index, size_t member);
// What the host commits to region 0 before an eio run.
std::vector<std::byte> PreparedPayload(const Plan& plan);
// What the host commits after recovering a crash state, to check that the
// next generation is new.
std::vector<std::byte> AfterRecoveryPayload(const Plan& plan, uint32_t region);
// Byte `data_offset` of what kWrite op `index` writes there.
std::byte RawByte(const Plan& plan, uint32_t index, uint64_t data_offset);
std::vector<std::byte> RawBytes(const Plan& plan, uint32_t index);
// What kExport op `index` writes: its index and size in the first 16
// bytes, then bytes of the seed.
std::vector<std::byte> ExportBytes(const Plan& plan, uint32_t index);

std::string_view OpKindName(OpKind kind);

}  // namespace regionstore::crashvm

#endif  // REGIONSTORE_TESTS_CRASHVM_PLAN_H_
