// The seam trace: a scripted, deterministic workload runs through TraceIo
// (support/trace_io.h), once on a protocol 2 store and once on a protocol 1
// store with a batch log, and the calls it makes through the io seam
// (operation, file by role, offsets, lengths, flags, sync kind) must equal
// tests/golden/seam-trace.txt line for line. It pins what every commit,
// batch, load, wait, open and recovery path asks of the OS, so that a
// refactor that means to change no byte on disk can show it
// changed no call either, and so that a change that does alter a call must
// update the trace on purpose:
//
//   REGIONSTORE_UPDATE_GOLDEN_TRACE=1 build/dev/tests/regionstore_tests "[seam-trace]"
//
// rewrites the file (then review its diff). Without the variable the case
// only reads it, and on a difference fails naming the first differing line
// and writing the whole trace it saw beside the scratch directory
// (tests/scratch/../seam-trace.actual.txt in the build tree) for a diff.
//
// Left out of the workload because the number of calls they make is not
// fixed by the script:
//  - a writer killed or failing inside a barrier (the open that follows
//    rewrites the interrupted commit): the kill would have to land inside
//    one system call;
//  - readers racing a writer (Load's and LoadSet's bounded retries, kBusy);
//  - WaitForNewer woken by a commit from another process, and its
//    rechecks of the path (every WaitOptions::recheck of wall time); the
//    timeout path is kept: it makes one futex wait, which returns at its
//    deadline;
//  - a reader that cannot write the sidecar (it polls every 10 ms);
//  - stray temp files of dead processes (the checks depend on which
//    processes exist).
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "regionstore/checkpoint.h"
#include "regionstore/durability.h"
#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"
#include "support/process.h"
#include "support/skip.h"
#include "support/temp_dir.h"
#include "support/trace_io.h"

namespace regionstore::testing::seam_trace {
namespace {

constexpr const char* kGoldenTrace = REGIONSTORE_GOLDEN_DIR "/seam-trace.txt";
constexpr const char* kUpdateVariable = "REGIONSTORE_UPDATE_GOLDEN_TRACE";

constexpr uint64_t kSmall = 4096;          // compact slots
constexpr uint64_t kMid = 64 * 1024;       // compact slots
constexpr uint64_t kBig = 1024 * 1024;     // 64 KiB-aligned slots
constexpr uint64_t kDataSize = 65536;      // the data area
constexpr uint64_t kJournal = 256 * 1024;  // protocol 2: the smallest journal

constexpr Durability kModes[] = {Durability::kNone, Durability::kAsync, Durability::kSync,
                                 Durability::kPwriteFdatasync};

const char* ModeText(Durability mode) {
  switch (mode) {
    case Durability::kNone:
      return "kNone";
    case Durability::kAsync:
      return "kAsync";
    case Durability::kSync:
      return "kSync";
    case Durability::kPwriteFdatasync:
      return "kPwriteFdatasync";
  }
  return "?";
}

// Byte i of a payload with `salt`: fixed, so every run commits the same bytes.
std::vector<std::byte> Bytes(uint64_t length, uint8_t salt) {
  std::vector<std::byte> bytes(length);
  for (uint64_t i = 0; i < length; ++i) {
    bytes[i] = static_cast<std::byte>((i * 131 + 7 + salt) & 0xff);
  }
  return bytes;
}

void Ok(const Status& status, const std::string& what) {
  INFO(what << ": " << status.ToString());
  REQUIRE(status.ok());
}

template <typename T>
T Take(Result<T> result, const std::string& what) {
  Ok(result.status(), what);
  return std::move(*result);
}

// One protocol's part of the workload. Each step starts a section of the
// trace ("== p2: commit mid kSync"), so a difference is easy to place.
class Workload {
 public:
  Workload(TraceIo& io, const TempDir& dir, uint32_t protocol)
      : io_(io),
        protocol_(protocol),
        role_(std::string("p").append(std::to_string(protocol))),
        path_(dir.File(role_ + ".rgn")),
        copy_path_(dir.File(role_ + "-copy.rgn")) {
    io_.Name(dir.path().string(), "dir");
    io_.Name(path_, role_);
    io_.Name(copy_path_, role_ + "-copy");
  }

  void Run() {
    CreateAndOpen();
    CommitEveryModeAndSize();
    Batches();
    InPlace();
    DataArea();
    Reads();
    Waits();
    CloseAndReopen();
    Copy();
    writer_.reset();
    reader_.reset();
    Verify();
    KilledWriter();
    if (protocol_ == 2) KilledWriterAndRemovedSidecar();
  }

 private:
  void Section(const std::string& title) { io_.Section(role_ + ": " + title); }

  Store OpenTraced(OpenMode mode) {
    OpenOptions options;
    options.io = &io_;
    return Take(Store::Open(path_, mode, options), "open " + path_);
  }

  void CreateAndOpen() {
    Section("create");
    CreateOptions options;
    options.io = &io_;
    options.protocol = protocol_;
    options.batch_log = protocol_ == 1;
    options.journal_size = protocol_ == 2 ? kJournal : 0;
    options.checkpoints = {{"small", kSmall, SlotLayout::kAuto},
                           {"mid", kMid, SlotLayout::kAuto},
                           {"big", kBig, SlotLayout::kAuto}};
    Ok(Store::Create(path_, kDataSize, options), "create");
    Section("open the writer");
    writer_.emplace(OpenTraced(OpenMode::kReadWrite));
    Section("open a reader");
    reader_.emplace(OpenTraced(OpenMode::kReadOnly));
  }

  void CommitEveryModeAndSize() {
    uint8_t salt = 1;
    for (Durability mode : kModes) {
      for (const auto& [name, size] :
           {std::pair{"small", kSmall}, std::pair{"mid", kMid}, std::pair{"big", kBig}}) {
        Section(std::string("commit ") + name + " " + ModeText(mode));
        Take(writer_->Commit(name, Bytes(size, salt++), mode), "commit");
      }
    }
    Section("commit in pieces kSync");
    const std::vector<std::byte> head = Bytes(100, 40);
    const std::vector<std::byte> tail = Bytes(kMid - 100, 41);
    const std::span<const std::byte> pieces[] = {head, tail};
    Take(writer_->CommitPieces("mid", pieces, Durability::kSync), "commit pieces");
  }

  std::vector<uint64_t> Batch(const std::vector<std::pair<std::string_view, uint64_t>>& members,
                              Durability mode, uint8_t salt) {
    std::vector<std::vector<std::byte>> payloads;
    for (const auto& member : members) payloads.push_back(Bytes(member.second, salt++));
    std::vector<std::span<const std::byte>> pieces(payloads.begin(), payloads.end());
    std::vector<BatchMember> batch;
    for (size_t i = 0; i < members.size(); ++i) {
      batch.push_back({members[i].first, PayloadPieces(&pieces[i], 1)});
    }
    return Take(writer_->CommitBatch(batch, mode), "batch");
  }

  void Batches() {
    // In protocol 2 a durable batch whose record fits in half the journal
    // is journaled; the fourth in a row finds the journal full.
    for (Durability mode : {Durability::kSync, Durability::kPwriteFdatasync}) {
      Section(std::string("small durable batch ") + ModeText(mode));
      Batch({{"small", kSmall}, {"mid", kMid}}, mode, 50);
    }
    const uint64_t checkpoints_before = writer_->Stats().journal_checkpoints;
    for (int i = 0; i < 4; ++i) {
      Section(std::string("small durable batch kSync, repeat ").append(std::to_string(i + 1)));
      Batch({{"small", kSmall}, {"mid", kMid}}, Durability::kSync, 60);
    }
    if (protocol_ == 2) {
      INFO("the journaled batches must fill the journal once");
      CHECK(writer_->Stats().journal_checkpoints > checkpoints_before);
    }
    for (Durability mode : {Durability::kSync, Durability::kPwriteFdatasync}) {
      Section(std::string("large durable batch (the batch log's path) ") + ModeText(mode));
      Batch({{"small", kSmall}, {"big", kBig}}, mode, 70);
    }
    for (Durability mode : {Durability::kNone, Durability::kAsync}) {
      Section(std::string("batch ") + ModeText(mode));
      Batch({{"small", kSmall}, {"mid", kMid}}, mode, 80);
    }
    // 34 batches with no whole-file barrier: the batch log reuses a unit
    // that needs a durable watermark first.
    const uint64_t log_barriers_before = writer_->Stats().batch_log_barriers;
    Section("34 small kNone batches");
    for (int i = 0; i < 34; ++i) Batch({{"small", 8}, {"mid", 8}}, Durability::kNone, 90);
    INFO("the kNone batches must make the batch log reuse a unit");
    CHECK(writer_->Stats().batch_log_barriers > log_barriers_before);
  }

  void InPlace() {
    const std::vector<std::byte> payload = Bytes(kMid, 100);
    for (Durability mode : {Durability::kSync, Durability::kPwriteFdatasync}) {
      Section(std::string("in-place commit by Append, ") + ModeText(mode));
      PendingCommit pending = Take(writer_->BeginCommit("mid", kMid), "begin commit");
      Ok(pending.Append(std::span(payload).first(kMid / 2)), "append");
      Ok(pending.Append(std::span(payload).subspan(kMid / 2)), "append");
      Take(pending.Finish(mode), "finish");
    }
    for (Durability mode : {Durability::kNone, Durability::kAsync}) {
      Section(std::string("in-place commit through the mapping, ") + ModeText(mode));
      PendingCommit pending = Take(writer_->BeginCommit("small", kSmall), "begin commit");
      std::copy(payload.begin(), payload.begin() + kSmall, pending.payload().begin());
      Take(pending.Finish(kSmall, mode), "finish");
    }
    Section("in-place commit aborted");
    {
      PendingCommit pending = Take(writer_->BeginCommit("small", kSmall), "begin commit");
      pending.Abort();
    }
    for (Durability mode : kModes) {
      Section(std::string("in-place batch ") + ModeText(mode));
      const BatchReservation members[] = {{"small", kSmall}, {"mid", kMid}};
      PendingBatch pending = Take(writer_->BeginBatch(members), "begin batch");
      Ok(pending.Append(0, std::span(payload).first(kSmall)), "append");
      Ok(pending.Append(1, payload), "append");
      Take(pending.Finish(mode), "finish");
    }
  }

  void DataArea() {
    const std::vector<std::byte> bytes = Bytes(8192, 110);
    for (Durability mode : kModes) {
      Section(std::string("data write ") + ModeText(mode));
      Ok(writer_->Write(4096, bytes, mode), "write");
    }
    Section("data pwrite");
    Ok(writer_->Pwrite(16384, bytes), "pwrite");
    for (Durability mode : kModes) {
      Section(std::string("data flush ") + ModeText(mode));
      Ok(writer_->Flush(4096, 20480, mode), "flush");
    }
    Section("data read");
    std::vector<std::byte> out(8192);
    Ok(reader_->Read(4096, out), "read");
    CHECK(out == bytes);
  }

  void Reads() {
    std::vector<std::byte> out;
    for (const char* name : {"small", "mid", "big"}) {
      Section(std::string("load ") + name + " (reader)");
      Take(reader_->Load(name, out), "load");
    }
    Section("load set (reader)");
    const std::string_view names[] = {"small", "mid", "big"};
    std::vector<std::vector<std::byte>> outs;
    Take(reader_->LoadSet(names, outs), "load set");
    Section("list (reader)");
    CHECK(reader_->List().size() == 3);
    Section("load small (writer)");
    Take(writer_->Load("small", out), "load");
  }

  void Waits() {
    std::vector<std::byte> out;
    Section("wait, a newer commit is there");
    const CheckpointMeta meta =
        Take(reader_->WaitForNewer("small", 0, std::chrono::seconds(10), out), "wait");
    Section("wait times out");
    auto timed_out =
        reader_->WaitForNewer("small", meta.generation, std::chrono::milliseconds(100), out);
    CHECK(timed_out.status().code() == StatusCode::kTimedOut);
    Section("commit small kNone after a waiter registered");
    Take(writer_->Commit("small", Bytes(kSmall, 120), Durability::kNone), "commit");
  }

  void CloseAndReopen() {
    Section("close the writer");
    writer_.reset();
    Section("reopen the writer after a clean close");
    writer_.emplace(OpenTraced(OpenMode::kReadWrite));
    Section("first commit after the reopen, small kSync");
    Take(writer_->Commit("small", Bytes(kSmall, 121), Durability::kSync), "commit");
  }

  void Copy() {
    Section("copy (reader, beside the writer)");
    Take(reader_->CopyTo(copy_path_), "copy");
  }

  void Verify() {
    Section("verify");
    VerifyOptions options;
    options.io = &io_;
    Take(VerifyRegions(path_, options), "verify");
    Section("read store info");
    Take(ReadStoreInfo(path_, &io_), "read store info");
  }

  // A child process opens the store as its writer, commits and batches, and
  // exits without closing it (as a kill -9 would leave it). Its calls are
  // not traced; the parent's next open recovers.
  void KillWriterInChild(bool batches) {
    io_.Pause(true);
    const std::string path = path_;
    const int exit_code = RunInChild([&] {
      auto store = Store::Open(path, OpenMode::kReadWrite);
      if (!store.ok()) return 1;
      const std::vector<std::byte> small = Bytes(kSmall, 130);
      const std::vector<std::byte> mid = Bytes(kMid, 131);
      if (!store->Commit("small", small, Durability::kNone).ok()) return 2;
      if (batches) {
        const std::span<const std::byte> small_piece[] = {small};
        const std::span<const std::byte> mid_piece[] = {mid};
        const BatchMember members[] = {{"small", small_piece}, {"mid", mid_piece}};
        if (!store->CommitBatch(members, Durability::kSync).ok()) return 3;
        if (!store->CommitBatch(members, Durability::kNone).ok()) return 4;
      }
      if (!store->Commit("mid", mid, Durability::kNone).ok()) return 5;
      _exit(0);  // no close: the store's destructor never runs
    });
    io_.Pause(false);
    REQUIRE(exit_code == 0);
  }

  void RecoverAndCommit(const std::string& what) {
    Section("open after " + what + " (recovery)");
    writer_.emplace(OpenTraced(OpenMode::kReadWrite));
    Section("first commit after recovery, small kSync");
    Take(writer_->Commit("small", Bytes(kSmall, 140), Durability::kSync), "commit");
    Section("first batch after recovery, kNone");
    Batch({{"small", 8}, {"mid", 8}}, Durability::kNone, 141);
    Section("close");
    writer_.reset();
  }

  void KilledWriter() {
    KillWriterInChild(true);
    RecoverAndCommit("a killed writer");
  }

  void KilledWriterAndRemovedSidecar() {
    KillWriterInChild(false);
    std::error_code error;
    REQUIRE(std::filesystem::remove(path_ + ".shm", error));
    RecoverAndCommit("a killed writer whose sidecar was removed");
  }

  TraceIo& io_;
  const uint32_t protocol_;
  const std::string role_;
  const std::string path_;
  const std::string copy_path_;
  std::optional<Store> writer_;
  std::optional<Store> reader_;
};

std::vector<std::string> RecordTrace() {
  std::vector<std::string> lines;
  for (uint32_t protocol : {2u, 1u}) {
    TempDir dir;
    TraceIo io;
    Workload(io, dir, protocol).Run();
    for (std::string& line : FoldRepeats(io.Lines())) lines.push_back(std::move(line));
  }
  return lines;
}

constexpr const char* kHeader =
    "# The io seam trace of tests/test_seam_trace.cc's workload (tests/golden/README.md).\n"
    "# Regenerate: REGIONSTORE_UPDATE_GOLDEN_TRACE=1 regionstore_tests \"[seam-trace]\"\n"
    "# '== <store>: <step>' starts a step; every other line is one call through the seam:\n"
    "# <Operation> <file by role>#<n-th opened> [off= len=] [flags] [-> <failure code>] [xN]\n"
    "# p2/p1: the protocol 2/1 store; .shm: its sidecar; temp(X), anon(dir): temp files;\n"
    "# map(F): the mapping of file F. xN: N identical calls in a row.\n";

void WriteTrace(const std::filesystem::path& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::trunc);
  out << kHeader;
  for (const std::string& line : lines) out << line << '\n';
  out.close();
  INFO("writing " << path);
  REQUIRE(out.good());
}

TEST_CASE("The io seam calls of the scripted workload match the golden trace",
          "[seam-trace][golden]") {
  if (Io::Default()->PageSize() != 4096) {
    SKIP_CASE("the golden seam trace was recorded with 4 KiB pages, this machine has "
              << Io::Default()->PageSize());
    return;
  }
  const std::vector<std::string> actual = RecordTrace();
  if (const char* update = std::getenv(kUpdateVariable); update != nullptr && *update == '1') {
    WriteTrace(kGoldenTrace, actual);
    WARN("rewrote " << kGoldenTrace << " (" << actual.size() << " lines): review its diff");
    return;
  }

  std::ifstream in(kGoldenTrace);
  INFO("reading " << kGoldenTrace);
  REQUIRE(in.good());
  std::vector<std::string> expected;
  std::vector<size_t> file_line;  // expected[i] is line file_line[i] of the file
  size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.starts_with("#")) continue;
    expected.push_back(line);
    file_line.push_back(number);
  }

  size_t first = 0;
  while (first < expected.size() && first < actual.size() && expected[first] == actual[first]) {
    ++first;
  }
  if (first == expected.size() && first == actual.size()) {
    SUCCEED("the trace has " << actual.size() << " lines, as checked in");
    return;
  }
  const std::filesystem::path actual_path = ScratchBase().parent_path() / "seam-trace.actual.txt";
  WriteTrace(actual_path, actual);
  std::string section = "(none)";
  for (size_t i = 0; i < first && i < actual.size(); ++i) {
    if (actual[i].starts_with("== ")) section = actual[i];
  }
  const std::string golden_line =
      first < expected.size() ? std::to_string(file_line[first]) : "past the end";
  FAIL("The seam calls differ from "
       << kGoldenTrace << " at its line " << golden_line << ", in step " << section
       << ":\n  expected: " << (first < expected.size() ? expected[first] : "(end)")
       << "\n  actual:   " << (first < actual.size() ? actual[first] : "(end)") << "\n("
       << expected.size() << " lines expected, " << actual.size()
       << " recorded; the whole trace is in " << actual_path.string()
       << "). If the change is meant, rerun with " << kUpdateVariable
       << "=1 to rewrite the golden trace and review its diff.");
}

}  // namespace
}  // namespace regionstore::testing::seam_trace
