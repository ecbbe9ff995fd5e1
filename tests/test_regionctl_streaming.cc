// regionctl commit (one region or a batch) and import stream their input
// into the slot, and write into the data area: the peak resident memory of
// the child (ru_maxrss, through a probe) stays bounded, the bytes land
// byte-exact, and an input too long leaves the region or the data area as
// it was. commit and import: a 512 MiB payload (128 MiB under the
// sanitizers, whose runtimes take tens of MiB of their own), bound 100 MiB.
// write: 128 MiB in every build, bound 32 MiB (more under the sanitizers).
// Tagged [slow]: the filesystem matrix's 2 GiB loop images cannot hold it.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "regionstore/store.h"
#include "support/files.h"
#include "support/store_fixtures.h"
#include "support/temp_dir.h"

#ifdef REGIONCTL_PATH

namespace regionstore::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint64_t kPayloadSize = 128 * kMiB;
#else
constexpr uint64_t kPayloadSize = 512 * kMiB;
#endif
constexpr long kMaxResidentKiB = 100 * 1024;
// write holds one 16 MiB chunk; its bound is tighter where no sanitizer
// runtime adds its own tens of MiB. Under TSan the chunk's shadow memory
// (four times the chunk) comes on top: measured 109 MiB there; holding the
// 128 MiB payload would be over 600 MiB.
#if defined(__SANITIZE_THREAD__)
constexpr long kWriteMaxResidentKiB = 200 * 1024;
#elif defined(__SANITIZE_ADDRESS__)
constexpr long kWriteMaxResidentKiB = kMaxResidentKiB;
#else
constexpr long kWriteMaxResidentKiB = 32 * 1024;
#endif

struct Outcome {
  int exit_code = -1;
  long max_resident_kib = 0;
};

// Runs regionctl with `args` under the probe (support/max_rss_probe.cc: a
// child forked from this big test process would count its memory too), its
// standard input from `input_fd` (or /dev/null), and returns its exit code
// and peak resident memory.
Outcome RunMeasured(const std::vector<std::string>& args, int input_fd) {
  std::vector<std::string> copies = {REGIONSTORE_MAX_RSS_PROBE, REGIONCTL_PATH};
  copies.insert(copies.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : copies) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int result[2];
  REQUIRE(::pipe(result) == 0);
  const pid_t probe = ::fork();
  REQUIRE(probe >= 0);
  if (probe == 0) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(input_fd >= 0 ? input_fd : null_fd, STDIN_FILENO);
    ::dup2(result[1], STDOUT_FILENO);
    ::close(result[0]);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(result[1]);
  std::string report;
  char buffer[256];
  for (ssize_t got; (got = ::read(result[0], buffer, sizeof buffer)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    REQUIRE(got > 0);
    report.append(buffer, static_cast<size_t>(got));
  }
  ::close(result[0]);
  int status = 0;
  REQUIRE(::waitpid(probe, &status, 0) == probe);
  INFO("probe: " << report);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  Outcome outcome;
  REQUIRE(std::sscanf(report.c_str(), "exit %d maxrss_kib %ld", &outcome.exit_code,
                      &outcome.max_resident_kib) == 2);
  return outcome;
}

// Feeds `path`'s bytes (and `extra` more) into a pipe from a forked child;
// returns the read end. The child is reaped by the caller (`writer`).
int PipeFrom(const std::string& path, uint64_t extra, pid_t& writer) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  writer = ::fork();
  REQUIRE(writer >= 0);
  if (writer == 0) {
    ::close(fds[0]);
    ::signal(SIGPIPE, SIG_DFL);
    const int in = ::open(path.c_str(), O_RDONLY);
    std::vector<char> buffer(1 << 20);
    for (;;) {
      const ssize_t got = ::read(in, buffer.data(), buffer.size());
      if (got <= 0) break;
      for (ssize_t done = 0; done < got;) {
        const ssize_t put = ::write(fds[1], buffer.data() + done, static_cast<size_t>(got - done));
        if (put <= 0) ::_exit(1);
        done += put;
      }
    }
    for (uint64_t i = 0; i < extra; ++i) {
      if (::write(fds[1], "x", 1) != 1) ::_exit(1);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  return fds[0];
}

void Reap(pid_t writer) {
  int status = 0;
  REQUIRE(::waitpid(writer, &status, 0) == writer);
}

// RunMeasured with `input`'s bytes (and `extra` more) on a pipe.
Outcome RunMeasuredFromPipe(const std::vector<std::string>& args, const std::string& input,
                            uint64_t extra) {
  pid_t writer = -1;
  const int pipe_fd = PipeFrom(input, extra, writer);
  const Outcome run = RunMeasured(args, pipe_fd);
  ::close(pipe_fd);
  Reap(writer);
  return run;
}

// `size` bytes (whole MiBs) of PatternBytes at `path`, a MiB (of seed
// `seed` + the MiB's number) at a time: never whole in memory.
void WritePatternFile(const std::string& path, uint64_t size, uint64_t seed) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  for (uint64_t done = 0; done < size; done += kMiB) {
    const std::vector<std::byte> chunk = PatternBytes(kMiB, done / kMiB + seed);
    REQUIRE(::pwrite(fd, chunk.data(), chunk.size(), static_cast<off_t>(done)) ==
            static_cast<ssize_t>(kMiB));
  }
  REQUIRE(::close(fd) == 0);
}

TEST_CASE("regionctl commit and import of a large payload stream it, from a file and a pipe",
          "[regionctl][streaming][slow]") {
  TempDir dir;
  const std::string store = dir.File("big.rgn");
  const std::string input = dir.File("payload.bin");
  CreateOptions options;
  options.checkpoints = {{"big", kPayloadSize}, {"small", 100}};
  options.batch_log = true;
  REQUIRE(Store::Create(store, 0, options).ok());
  WritePatternFile(input, kPayloadSize, 1);
  const auto check_loaded = [&](uint64_t generation) {
    Store reader = MustOpen(store, OpenMode::kReadOnly);
    CheckpointMeta meta;
    const std::vector<std::byte> loaded = MustLoad(reader, "big", &meta);
    CHECK(meta.generation == generation);
    REQUIRE(loaded.size() == kPayloadSize);
    CHECK(loaded == ReadWholeFile(input));
  };

  // From a pipe into the empty region, durably; from a file (its open
  // settles the region, reading the 512 MiB commit); from a pipe again,
  // undurably.
  const auto from_pipe = [&](const std::vector<std::string>& args, uint64_t extra) {
    return RunMeasuredFromPipe(args, input, extra);
  };
  const Outcome first = from_pipe({"commit", store, "big", "--durability", "pwrite-fdatasync"}, 0);
  INFO("commit from a pipe, pwrite-fdatasync: peak resident " << first.max_resident_kib << " KiB");
  REQUIRE(first.exit_code == 0);
  CHECK(first.max_resident_kib < kMaxResidentKiB);
  const Outcome second = RunMeasured({"import", store, "big", "--input", input}, -1);
  INFO("import from a file: peak resident " << second.max_resident_kib << " KiB");
  REQUIRE(second.exit_code == 0);
  CHECK(second.max_resident_kib < kMaxResidentKiB);
  const Outcome third = from_pipe({"commit", store, "big", "--durability", "none"}, 0);
  INFO("commit from a pipe, none: peak resident " << third.max_resident_kib << " KiB");
  REQUIRE(third.exit_code == 0);
  CHECK(third.max_resident_kib < kMaxResidentKiB);

  // One byte too many, in a batch (which streams the same way): refused
  // (exit 2), memory still bounded, neither region changed (checked below:
  // generation 3, byte-exact, and nothing in the small one).
  const std::string small = dir.File("small.bin");
  WriteWholeFile(small, PatternBytes(100, 5));
  const Outcome refused =
      from_pipe({"commit", store, "--set", "small=" + small, "--set", "big=-"}, 1);
  CHECK(refused.exit_code == 2);
  CHECK(refused.max_resident_kib < kMaxResidentKiB);
  check_loaded(3);
  Store reader = MustOpen(store, OpenMode::kReadOnly);
  std::vector<std::byte> out;
  CHECK(reader.Load("small", out).status().code() == StatusCode::kNotFound);
}

// write's input: 128 MiB in every build, eight chunks and four times the
// bound on its memory without sanitizers (a copy held whole fails it in
// every build).
constexpr uint64_t kWritePayloadSize = 128 * kMiB;
// The data-area offset every write below starts at: not a multiple of a
// chunk, so chunks straddle folios.
constexpr uint64_t kWriteOffset = 3 * kMiB + 4097;

// Bytes [offset, offset + size) of the store's data area, read back.
std::vector<std::byte> DataArea(const std::string& store, uint64_t offset, uint64_t size) {
  Store reader = MustOpen(store, OpenMode::kReadOnly);
  std::vector<std::byte> out(size);
  REQUIRE(reader.Read(offset, out).ok());
  return out;
}

TEST_CASE(
    "regionctl write of a large input streams it, from a file and a pipe, and refuses one "
    "too long before writing",
    "[regionctl][streaming][slow]") {
  TempDir dir;
  const std::string store = dir.File("big.rgn");
  const std::string input = dir.File("payload.bin");
  const std::string spool_dir = dir.File("spool");
  REQUIRE(std::filesystem::create_directory(spool_dir));
  REQUIRE(Store::Create(store, kWriteOffset + kWritePayloadSize).ok());
  WritePatternFile(input, kWritePayloadSize, 7);
  // The piped input's spool goes to TMPDIR: the test's own directory.
  REQUIRE(::setenv("TMPDIR", spool_dir.c_str(), 1) == 0);
  struct Unset {
    ~Unset() { ::unsetenv("TMPDIR"); }
  } unset;
  const std::string offset = std::to_string(kWriteOffset);
  const auto from_pipe = [&](const std::vector<std::string>& args, uint64_t extra) {
    return RunMeasuredFromPipe(args, input, extra);
  };
  const std::vector<std::byte> before = DataArea(store, kWriteOffset, kWritePayloadSize);

  // One byte too many, from a pipe and from a file: exit 2, nothing written
  // (the data area is still all zeros), memory bounded, no spool left.
  const Outcome piped_long = from_pipe({"write", store, "--offset", offset}, 1);
  CHECK(piped_long.exit_code == 2);
  CHECK(piped_long.max_resident_kib < kWriteMaxResidentKiB);
  const std::string longer = dir.File("longer.bin");
  std::filesystem::copy_file(input, longer);
  {
    const int fd = ::open(longer.c_str(), O_WRONLY | O_APPEND);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "x", 1) == 1);
    REQUIRE(::close(fd) == 0);
  }
  const Outcome file_long =
      RunMeasured({"write", store, "--offset", offset, "--input", longer}, -1);
  CHECK(file_long.exit_code == 2);
  CHECK(DataArea(store, kWriteOffset, kWritePayloadSize) == before);

  // Each mode once, from a pipe (spooled, then a chunk at a time) or from a
  // file, the data area zeroed again between runs so that each proves its
  // own bytes.
  const std::vector<std::byte> expected = ReadWholeFile(input);
  struct Run {
    const char* mode;
    bool piped;
  };
  for (const Run run : {Run{"pwrite-fdatasync", true}, Run{"sync", false}, Run{"none", true}}) {
    INFO("durability " << run.mode << (run.piped ? ", from a pipe" : ", from a file"));
    const std::vector<std::string> args = {"write", store,          "--offset",
                                           offset,  "--durability", run.mode};
    std::vector<std::string> from_file = args;
    from_file.insert(from_file.end(), {"--input", input});
    const Outcome outcome = run.piped ? from_pipe(args, 0) : RunMeasured(from_file, -1);
    INFO("peak resident " << outcome.max_resident_kib << " KiB");
    REQUIRE(outcome.exit_code == 0);
    CHECK(outcome.max_resident_kib < kWriteMaxResidentKiB);
    CHECK(DataArea(store, kWriteOffset, kWritePayloadSize) == expected);
    WARN("write " << run.mode << (run.piped ? " from a pipe" : " from a file") << ": peak resident "
                  << outcome.max_resident_kib << " KiB");
    Store writer = MustOpen(store, OpenMode::kReadWrite);
    REQUIRE(writer.Write(kWriteOffset, std::vector<std::byte>(kWritePayloadSize), Durability::kNone)
                .ok());
  }
  // The spool was nameless: nothing left in TMPDIR.
  CHECK(std::filesystem::is_empty(spool_dir));
}

}  // namespace
}  // namespace regionstore::testing

#endif  // REGIONCTL_PATH
