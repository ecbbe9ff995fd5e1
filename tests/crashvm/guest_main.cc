// crashvm_guest: runs one workload's plan (plan.h) inside the crash VM, on
// the filesystem the guest mounted, and after each operation returns writes
// its marker (marker.h) to the marker area of the same disk. Built static:
// the initramfs has nothing but busybox and this program.
//
//   crashvm_guest --workload W --seed S --dir /mnt --marker-device /dev/vda
//                 --marker-sector M
//
// Exit 0 when the plan ran to its end (whatever each operation returned:
// the markers say), 1 when the program itself could not go on (a marker
// write failed, a bad argument). docs/CRASH-VM.md, "Workloads".
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "crashvm/marker.h"
#include "crashvm/plan.h"
#include "regionstore/atomic_file.h"
#include "regionstore/io.h"
#include "regionstore/store.h"
#include "test_hooks.h"

namespace regionstore::crashvm {
namespace {

struct Args {
  std::string workload;
  uint64_t seed = 0;
  std::string dir;
  std::string marker_device;
  uint64_t marker_sector = 0;
};

std::optional<Args> ParseArgs(int argc, char** argv) {
  Args args;
  bool have_sector = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--workload") {
      args.workload = value;
    } else if (flag == "--seed") {
      args.seed = std::strtoull(value, nullptr, 10);
    } else if (flag == "--dir") {
      args.dir = value;
    } else if (flag == "--marker-device") {
      args.marker_device = value;
    } else if (flag == "--marker-sector") {
      args.marker_sector = std::strtoull(value, nullptr, 10);
      have_sector = true;
    } else {
      return std::nullopt;
    }
  }
  if (argc % 2 != 1 || args.workload.empty() || args.dir.empty() || args.marker_device.empty() ||
      !have_sector) {
    return std::nullopt;
  }
  return args;
}

// An export without its directory fsyncs: the export-no-dirsync control.
class NoDirectorySyncIo : public ForwardingIo {
 public:
  Status SyncDirectory(const std::string&) override { return Status(); }
};

// The marker device, opened O_DIRECT: each marker is one 512-byte write
// that reaches the disk (and so the log) before the next operation starts,
// without a flush, so it orders after every write of the operation it
// follows and implies nothing about their durability.
class MarkerWriter {
 public:
  bool Open(const std::string& device, uint64_t first_sector) {
    first_sector_ = first_sector;
    // A regular file stands in for the disk when the tests run a workload
    // on the host (tmpfs and others refuse O_DIRECT, and no log is made).
    struct stat st {};
    const bool regular = ::stat(device.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    fd_ = ::open(device.c_str(), O_WRONLY | O_CLOEXEC | (regular ? 0 : O_DIRECT));
    if (fd_ < 0) {
      std::fprintf(stderr, "crashvm_guest: open %s: %s\n", device.c_str(), std::strerror(errno));
      return false;
    }
    if (::posix_memalign(&buffer_, kMarkerSize, kMarkerSize) != 0) return false;
    return true;
  }
  ~MarkerWriter() {
    if (fd_ >= 0) ::close(fd_);
    std::free(buffer_);
  }

  bool Write(const Marker& marker) {
    auto* bytes = static_cast<std::byte*>(buffer_);
    EncodeMarker(marker, std::span<std::byte, kMarkerSize>(bytes, kMarkerSize));
    const off_t at = static_cast<off_t>((first_sector_ + marker.op) * kMarkerSize);
    const ssize_t n = ::pwrite(fd_, buffer_, kMarkerSize, at);
    if (n != static_cast<ssize_t>(kMarkerSize)) {
      std::fprintf(stderr, "crashvm_guest: marker %u: %s\n", marker.op,
                   n < 0 ? std::strerror(errno) : "short write");
      return false;
    }
    return true;
  }

 private:
  int fd_ = -1;
  void* buffer_ = nullptr;
  uint64_t first_sector_ = 0;
};

Marker MarkerFor(uint32_t op, const Status& status, const std::optional<Store>& store) {
  Marker marker;
  marker.op = op;
  marker.status = static_cast<int32_t>(status.code());
  marker.message = status.ok() ? std::string() : status.ToString();
  marker.poisoned = store.has_value() && store->poisoned();
  return marker;
}

Status OpenWriter(const std::string& path, std::optional<Store>& store, Io* io = nullptr) {
  store.reset();
  Result<Store> opened = Store::Open(path, OpenMode::kReadWrite, {.io = io});
  if (!opened.ok()) return opened.status();
  store.emplace(std::move(opened).value());
  return Status();
}

// The threads workload's writer Io (OpKind::kThreads): once the leading
// thread's commit reached its barrier (Point::kCommitBeforeBarrier), its
// next fdatasync is held after the system call returned, before the
// library sees it return, until Release(): the other threads commit in that
// window, their writes after the call, so the barrier in flight covers none
// of them and the next one must be theirs.
class ThreadsIo : public ForwardingIo {
 public:
  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override {
    auto file = ForwardingIo::Open(path, mode, symlinks);
    if (!file.ok()) return file;
    return std::unique_ptr<File>(new HeldFile(std::move(file).value(), *this));
  }

  // Before the next op's threads start: nothing held.
  void Reset() {
    std::lock_guard lock(mutex_);
    leader_ = std::thread::id();
    armed_ = synced_ = released_ = false;
    followers_at_barrier_ = 0;
  }
  // The calling thread leads: its barrier is held.
  void Lead() {
    std::lock_guard lock(mutex_);
    leader_ = std::this_thread::get_id();
  }
  void Reached(internal::Point point) {
    if (point != internal::Point::kCommitBeforeBarrier) return;
    std::lock_guard lock(mutex_);
    if (std::this_thread::get_id() == leader_) {
      armed_ = true;
    } else {
      ++followers_at_barrier_;
    }
    changed_.notify_all();
  }
  // Waits until the leader's fdatasync returned (and is held).
  void WaitSynced() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return synced_; });
  }
  // Waits until `followers` threads reached their barrier, then lets the
  // leader's fdatasync return.
  void ReleaseAfter(uint32_t followers) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return followers_at_barrier_ >= followers; });
    released_ = true;
    changed_.notify_all();
  }

 private:
  class HeldFile : public ForwardingFile {
   public:
    HeldFile(std::unique_ptr<File> base, ThreadsIo& io)
        : ForwardingFile(std::move(base)), io_(io) {}
    Status DataSync() override {
      Status status = ForwardingFile::DataSync();
      io_.AfterDataSync();
      return status;
    }

   private:
    ThreadsIo& io_;
  };
  void AfterDataSync() {
    std::unique_lock lock(mutex_);
    if (!armed_ || std::this_thread::get_id() != leader_) return;
    armed_ = false;
    synced_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_; });
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread::id leader_;
  bool armed_ = false, synced_ = false, released_ = false;
  uint32_t followers_at_barrier_ = 0;
};
ThreadsIo* g_threads_io = nullptr;
void ReachedForThreads(internal::Point point, uint32_t) {
  if (g_threads_io != nullptr) g_threads_io->Reached(point);
}

// Runs kThreads op `index`: member 0's thread leads; in kPwriteFdatasync
// the others start once its fdatasync returned and commit while the
// library holds it in flight (ThreadsIo); in the other modes all start
// together. A failure or a generation other than the plan's fails the op.
Status CommitInThreads(const Plan& plan, uint32_t index, Store& store, ThreadsIo& io) {
  const Op& op = plan.ops[index];
  std::vector<Status> statuses(op.members.size());
  const auto commit = [&](size_t m) {
    const Member& member = op.members[m];
    Result<uint64_t> generation =
        store.Commit(plan.regions[member.region].name, MemberPayload(plan, index, m), op.mode);
    if (!generation.ok()) {
      statuses[m] = generation.status();
    } else if (generation.value() != member.generation) {
      statuses[m] = Status::Error(StatusCode::kInvalidArgument, "crashvm", "threads",
                                  "member " + std::to_string(m) + " got generation " +
                                      std::to_string(generation.value()) + ", the plan counts " +
                                      std::to_string(member.generation));
    }
  };
  const bool held = op.mode == Durability::kPwriteFdatasync;
  std::vector<std::thread> threads;
  io.Reset();
  threads.emplace_back([&] {
    if (held) io.Lead();
    commit(0);
  });
  if (held) io.WaitSynced();
  for (size_t m = 1; m < op.members.size(); ++m) threads.emplace_back(commit, m);
  if (held) io.ReleaseAfter(static_cast<uint32_t>(op.members.size() - 1));
  for (std::thread& t : threads) t.join();
  for (const Status& status : statuses) {
    if (!status.ok()) return status;
  }
  return Status();
}

// What the reopen's Load found, in value2: 1 the host's prepared payload,
// 2 the failed commit's, 3 anything else, 0 nothing.
uint64_t WhichPayload(const Plan& plan, uint32_t failed_op, const std::vector<std::byte>& got) {
  if (got == PreparedPayload(plan)) return 1;
  if (failed_op < plan.ops.size() && got == CommitPayload(plan, failed_op)) return 2;
  return got.empty() ? 0 : 3;
}

// Commits kBatch op `index`, each member's payload cut into pieces
// (PieceCuts); a generation other than the plan's is a failure.
Status CommitBatch(const Plan& plan, uint32_t index, Store& store) {
  const Op& op = plan.ops[index];
  std::vector<std::vector<std::byte>> payloads;
  std::vector<std::vector<std::span<const std::byte>>> pieces;
  std::vector<BatchMember> members;
  for (size_t m = 0; m < op.members.size(); ++m) {
    payloads.push_back(MemberPayload(plan, index, m));
    const std::span<const std::byte> whole(payloads.back());
    std::vector<std::span<const std::byte>> cut;
    uint64_t at = 0;
    for (uint64_t c : PieceCuts(plan, index, m)) {
      cut.push_back(whole.subspan(at, c - at));
      at = c;
    }
    cut.push_back(whole.subspan(at));
    pieces.push_back(std::move(cut));
  }
  for (size_t m = 0; m < op.members.size(); ++m) {
    members.push_back({plan.regions[op.members[m].region].name, pieces[m]});
  }
  Result<std::vector<uint64_t>> generations = store.CommitBatch(members, op.mode);
  if (!generations.ok()) return generations.status();
  for (size_t m = 0; m < op.members.size(); ++m) {
    if (generations.value()[m] != op.members[m].generation) {
      return Status::Error(StatusCode::kInvalidArgument, "crashvm", "batch",
                           "member " + std::to_string(m) + " got generation " +
                               std::to_string(generations.value()[m]) + ", the plan counts " +
                               std::to_string(op.members[m].generation));
    }
  }
  return Status();
}

// Where the child of a killed op dies (RunKilled).
internal::Point g_kill_point = internal::Point::kCommitBeforeBarrier;
void KillAtPoint(internal::Point point, uint32_t) {
  if (point == g_kill_point) ::raise(SIGKILL);
}

// A killed op (Op::killed): the guest's writer is closed (one writer at a
// time), a child opens the store as the writer and runs the op until it is
// published, and is SIGKILLed before its barrier. Then the guest loads, as a
// reader, what the child left: for a commit, value is the generation loaded
// and value2 which payload (WhichPayload: 2 the killed commit's); for a
// batch, value counts the members that load their batch payload at the
// batch's generation. OK once the child died at the point; the marker
// holds what the reader saw.
Status RunKilled(const Plan& plan, uint32_t index, const std::string& path,
                 std::optional<Store>& store, Marker& marker) {
  const Op& op = plan.ops[index];
  store.reset();
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid < 0) return Status::FromErrno(errno, "fork", path);
  if (pid == 0) {
    g_kill_point = op.kind == OpKind::kBatch ? internal::Point::kBatchBeforeBarrier
                                             : internal::Point::kCommitBeforeBarrier;
    internal::SetPointHook(KillAtPoint);
    std::optional<Store> child;
    Status status = OpenWriter(path, child);
    if (status.ok() && op.kind == OpKind::kBatch) status = CommitBatch(plan, index, *child);
    if (status.ok() && op.kind == OpKind::kCommit) {
      status =
          child->Commit(plan.regions[op.region].name, CommitPayload(plan, index), op.mode).status();
    }
    std::fprintf(stderr, "crashvm_guest: op %u: the child was not killed: %s\n", index,
                 status.ToString().c_str());
    ::_exit(status.ok() ? 3 : 4);
  }
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return Status::FromErrno(errno, "waitpid", path);
  }
  if (!WIFSIGNALED(wait_status) || WTERMSIG(wait_status) != SIGKILL) {
    return Status::Error(StatusCode::kIOError, "crashvm", path,
                         "the child writer was not killed before the barrier (wait status " +
                             std::to_string(wait_status) + ")");
  }
  Result<Store> reader = Store::Open(path, OpenMode::kReadOnly);
  if (!reader.ok()) return reader.status();
  std::vector<std::byte> got;
  if (op.kind == OpKind::kCommit) {
    Result<CheckpointMeta> meta = reader.value().Load(plan.regions[op.region].name, got);
    if (!meta.ok()) return meta.status();
    marker.value = meta.value().generation;
    marker.value2 = WhichPayload(plan, index, got);
    return Status();
  }
  for (size_t m = 0; m < op.members.size(); ++m) {
    Result<CheckpointMeta> meta = reader.value().Load(plan.regions[op.members[m].region].name, got);
    if (meta.ok() && meta.value().generation == op.members[m].generation &&
        got == MemberPayload(plan, index, m)) {
      ++marker.value;
    }
  }
  return Status();
}

int Run(const Args& args) {
  const Plan plan = MakePlan(args.workload, args.seed);
  if (plan.ops.empty()) {
    std::fprintf(stderr, "crashvm_guest: unknown workload %s\n", args.workload.c_str());
    return 1;
  }
  MarkerWriter markers;
  if (!markers.Open(args.marker_device, args.marker_sector)) return 1;
  if (plan.breakage == Breakage::kBarrierHeaderOnly) {
    internal::SetMutation(internal::Mutation::kBarrierHeaderOnly);
  }
  // In a protocol 2 store durable batches go through the journal, whose
  // record is the commit point: written without RWF_DSYNC, it is as late as
  // protocol 1's record written after the barrier.
  if (plan.breakage == Breakage::kBatchRecordLate) {
    internal::SetMutation(plan.protocol == 2 ? internal::Mutation::kJournalRecordNotSynced
                                             : internal::Mutation::kBatchRecordAfterBarrier);
  }
  if (plan.breakage == Breakage::kRecoveryUndoesSeen) {
    internal::SetMutation(internal::Mutation::kRecoveryUndoesUnfinishedBarrier);
  }
  if (plan.breakage == Breakage::kSyncWithoutBarrier) {
    internal::SetMutation(internal::Mutation::kSyncWithoutBarrier);
  }
  if (plan.breakage == Breakage::kFollowerReturnsEarly) {
    internal::SetMutation(internal::Mutation::kFollowerReturnsEarly);
  }
  if (plan.breakage == Breakage::kGroupCoversLate) {
    internal::SetMutation(internal::Mutation::kGroupCoversLate);
  }
  ThreadsIo threads_io;
  const bool threads_workload = std::any_of(
      plan.ops.begin(), plan.ops.end(), [](const Op& op) { return op.kind == OpKind::kThreads; });
  Io* writer_io = threads_workload ? &threads_io : nullptr;
  if (threads_workload) {
    g_threads_io = &threads_io;
    internal::SetPointHook(ReachedForThreads);
  }
  NoDirectorySyncIo no_dirsync;
  Io* export_io = plan.breakage == Breakage::kNoDirectorySync ? &no_dirsync : nullptr;

  const std::string store_path = args.dir + "/" + plan.store;
  std::optional<Store> store;
  uint32_t last_failed_commit = UINT32_MAX;
  // Writes op i's marker and prints what it returned; false when the marker
  // write failed.
  const auto report = [&](uint32_t i, const Status& status, const Marker& marker) {
    const Op& op = plan.ops[i];
    if (!markers.Write(marker)) return false;
    std::string said = marker.message.empty() ? "ok" : marker.message;
    if (op.killed && status.ok()) {
      said = "killed before its barrier; a reader was given ";
      said += op.kind == OpKind::kCommit
                  ? "generation " + std::to_string(marker.value) +
                        (marker.value2 == 2 ? " (the killed commit)" : " (not the killed commit)")
                  : std::to_string(marker.value) + " of its " + std::to_string(op.members.size()) +
                        " members";
    } else if (op.kind == OpKind::kCommit && status.ok()) {
      said += ", generation " + std::to_string(marker.value);
    }
    if ((op.kind == OpKind::kBatch || op.kind == OpKind::kThreads) && status.ok() && !op.killed) {
      said += ", generations";
      for (const Member& m : op.members) {
        said += ' ' + plan.regions[m.region].name + '=' + std::to_string(m.generation);
      }
    }
    if (op.kind == OpKind::kReopenLoad && marker.status == 0) {
      static const char* const kWhich[] = {"nothing", "the previous commit", "the failed commit",
                                           "neither the previous nor the failed commit"};
      said += ", Load: generation " + std::to_string(marker.value) + ", " +
              kWhich[std::min<uint64_t>(marker.value2, 3)] + " byte-exact";
    }
    if (marker.poisoned) said += ", handle poisoned";
    std::printf("crashvm_guest: op %u %s: %s\n", i, std::string(OpKindName(op.kind)).c_str(),
                said.c_str());
    return true;
  };
  for (uint32_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    Status status;
    Marker marker;
    if (op.killed) {
      Marker seen;
      status = RunKilled(plan, i, store_path, store, seen);
      marker = MarkerFor(i, status, store);
      marker.value = seen.value;
      marker.value2 = seen.value2;
      if (op.kind == OpKind::kCommit) last_failed_commit = i;
      if (!report(i, status, marker)) return 1;
      continue;
    }
    switch (op.kind) {
      case OpKind::kCreateStore: {
        CreateOptions options;
        options.checkpoints = plan.regions;
        options.batch_log = plan.batch_log;
        options.protocol = plan.protocol;
        status = Store::Create(store_path, plan.data_size, options);
        if (status.ok()) status = OpenWriter(store_path, store, writer_io);
        marker = MarkerFor(i, status, store);
        break;
      }
      case OpKind::kCommit: {
        if (!store) {
          status = Status::Error(StatusCode::kInvalidArgument, "crashvm", store_path, "no writer");
          marker = MarkerFor(i, status, store);
          break;
        }
        const std::vector<std::byte> payload = CommitPayload(plan, i);
        Result<uint64_t> generation = store->Commit(plan.regions[op.region].name, payload, op.mode);
        status = generation.status();
        if (!status.ok()) last_failed_commit = i;
        marker = MarkerFor(i, status, store);
        if (generation.ok()) marker.value = generation.value();
        break;
      }
      case OpKind::kBatch: {
        if (!store) {
          status = Status::Error(StatusCode::kInvalidArgument, "crashvm", store_path, "no writer");
          marker = MarkerFor(i, status, store);
          break;
        }
        status = CommitBatch(plan, i, *store);
        marker = MarkerFor(i, status, store);
        break;
      }
      case OpKind::kReopen:
      case OpKind::kReopenLoad: {
        status = OpenWriter(store_path, store, writer_io);
        marker = MarkerFor(i, status, store);
        if (status.ok() && op.kind == OpKind::kReopenLoad) {
          std::vector<std::byte> got;
          Result<CheckpointMeta> meta = store->Load(plan.regions[op.region].name, got);
          if (meta.ok()) {
            marker.value = meta.value().generation;
            marker.value2 = WhichPayload(plan, last_failed_commit, got);
          } else {
            marker.status = static_cast<int32_t>(meta.status().code());
            marker.message = "load: " + meta.status().ToString();
          }
        }
        break;
      }
      case OpKind::kWrite: {
        if (!store) {
          status = Status::Error(StatusCode::kInvalidArgument, "crashvm", store_path, "no writer");
        } else {
          status = store->Write(op.offset, RawBytes(plan, i), op.mode);
        }
        marker = MarkerFor(i, status, store);
        break;
      }
      case OpKind::kFlush: {
        if (!store) {
          status = Status::Error(StatusCode::kInvalidArgument, "crashvm", store_path, "no writer");
        } else {
          status = store->Flush(op.offset, op.size, op.mode);
        }
        marker = MarkerFor(i, status, store);
        break;
      }
      case OpKind::kThreads: {
        if (!store) {
          status = Status::Error(StatusCode::kInvalidArgument, "crashvm", store_path, "no writer");
        } else {
          status = CommitInThreads(plan, i, *store, threads_io);
        }
        marker = MarkerFor(i, status, store);
        break;
      }
      case OpKind::kSync: {
        if (!store) {
          status = Status::Error(StatusCode::kInvalidArgument, "crashvm", store_path, "no writer");
        } else {
          Result<SyncReport> synced = store->Sync();
          status = synced.ok() ? Status() : synced.status();
        }
        marker = MarkerFor(i, status, store);
        break;
      }
      case OpKind::kExport: {
        ReplaceOptions options;
        options.io = export_io;
        status = ReplaceFileAtomically(args.dir + "/" + op.path, ExportBytes(plan, i), options);
        marker = MarkerFor(i, status, store);
        break;
      }
      case OpKind::kCreate:
      case OpKind::kCreateReplace: {
        CreateOptions options;
        options.checkpoints = plan.regions;
        options.replace_existing = op.kind == OpKind::kCreateReplace;
        status = Store::Create(args.dir + "/" + op.path, op.size, options);
        marker = MarkerFor(i, status, store);
        break;
      }
    }
    if (!report(i, status, marker)) return 1;
  }
  store.reset();
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace regionstore::crashvm

int main(int argc, char** argv) {
  const std::optional<regionstore::crashvm::Args> args =
      regionstore::crashvm::ParseArgs(argc, argv);
  if (!args) {
    std::fprintf(stderr,
                 "usage: crashvm_guest --workload W --seed S --dir DIR --marker-device DEV "
                 "--marker-sector M\n");
    return 2;
  }
  return regionstore::crashvm::Run(*args);
}
