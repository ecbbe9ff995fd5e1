// Publishing a whole file (the public atomic-replace labs' arms, beside
// `regionctl export`): each iteration replaces one file of 64 B, 4 KiB or 64 KiB with
// new content, one of these ways:
//
//   overwrite               open(O_TRUNC), write, close: readers can see a
//                           torn or empty file
//   overwrite_fsync         the same, fsync before close
//   replace                 temp file beside it (unique name), write, close,
//                           rename over it: readers see old or new
//   replace_fsync           the same, fsync of the temp before the rename
//   replace_fsync_dirfsync  and fsync of the directory after it: the
//                           cookbook's durable publish
//   library_nofsync         ReplaceFileAtomically(durable = false): replace
//   library                 ReplaceFileAtomically(durable = true): the
//                           cookbook, plus a random temp name and checks
//   export                  what `regionctl export` does after starting:
//                           Store::Load of a checkpoint region of that size
//                           (an open read-only handle), then library
//
// Benchmarks are named publish/<arm>/<bytes>; bench/report.py puts them in a
// table beside the labs' Python and PHP figures (other machines).
#include "publish_bench.h"

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "lab/raw_io.h"
#include "regionstore/atomic_file.h"
#include "regionstore/store.h"

namespace regionstore::bench {
namespace {

enum class PublishArm {
  kOverwrite,
  kOverwriteFsync,
  kReplace,
  kReplaceFsync,
  kReplaceFsyncDirFsync,
  kLibraryNoFsync,
  kLibrary,
  kExport,
};

const char* ArmName(PublishArm arm) {
  switch (arm) {
    case PublishArm::kOverwrite:
      return "overwrite";
    case PublishArm::kOverwriteFsync:
      return "overwrite_fsync";
    case PublishArm::kReplace:
      return "replace";
    case PublishArm::kReplaceFsync:
      return "replace_fsync";
    case PublishArm::kReplaceFsyncDirFsync:
      return "replace_fsync_dirfsync";
    case PublishArm::kLibraryNoFsync:
      return "library_nofsync";
    case PublishArm::kLibrary:
      return "library";
    case PublishArm::kExport:
      return "export";
  }
  return "?";
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string& PublishDir() {
  static std::string dir;
  return dir;
}

// One raw publish of `data` at `path`; "" or what failed.
std::string RawPublish(PublishArm arm, const std::string& path, const std::string& dir,
                       const std::vector<std::byte>& data, uint64_t serial) {
  const bool overwrite = arm == PublishArm::kOverwrite || arm == PublishArm::kOverwriteFsync;
  const bool fsync = arm != PublishArm::kOverwrite && arm != PublishArm::kReplace;
  const std::string target = overwrite ? path : path + ".tmp-" + std::to_string(serial);
  const int fd =
      ::open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL), 0600);
  if (fd < 0) return Errno("open " + target);
  std::string error;
  if (!WriteAll(fd, data.data(), data.size())) error = Errno("write");
  if (error.empty() && fsync && ::fsync(fd) != 0) error = Errno("fsync");
  if (::close(fd) != 0 && error.empty()) error = Errno("close");
  if (!error.empty() || overwrite) return error;
  if (::rename(target.c_str(), path.c_str()) != 0) return Errno("rename");
  if (arm == PublishArm::kReplaceFsyncDirFsync) {
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return Errno("open " + dir);
    if (::fsync(dir_fd) != 0) error = Errno("fsync directory");
    ::close(dir_fd);
  }
  return error;
}

void Publish(benchmark::State& state, PublishArm arm, uint64_t size) {
  const std::string dir = PublishDir();
  const std::string path = dir + "/" + ArmName(arm) + "-" + std::to_string(size) + ".bin";
  std::vector<std::byte> data(size);
  std::unique_ptr<Store> store;
  const std::string region = "blob";
  if (arm == PublishArm::kExport) {
    const std::string store_path = dir + "/export-" + std::to_string(size) + ".rgn";
    CreateOptions options;
    options.checkpoints = {{region, size}};
    options.replace_existing = true;
    auto opened = Store::Create(store_path, 0, options);
    if (!opened.ok()) return state.SkipWithError(opened.ToString().c_str());
    {
      auto writer = Store::Open(store_path, OpenMode::kReadWrite);
      if (!writer.ok()) return state.SkipWithError(writer.status().ToString().c_str());
      auto committed = writer->Commit(region, data, Durability::kSync);
      if (!committed.ok()) return state.SkipWithError(committed.status().ToString().c_str());
    }
    auto reader = Store::Open(store_path, OpenMode::kReadOnly);
    if (!reader.ok()) return state.SkipWithError(reader.status().ToString().c_str());
    store = std::make_unique<Store>(std::move(*reader));
  }
  uint64_t serial = 0;
  for (auto _ : state) {
    ++serial;
    std::memcpy(data.data(), &serial, std::min<size_t>(sizeof serial, data.size()));
    std::string error;
    switch (arm) {
      case PublishArm::kLibraryNoFsync:
      case PublishArm::kLibrary: {
        ReplaceOptions options;
        options.durable = arm == PublishArm::kLibrary;
        if (Status s = ReplaceFileAtomically(path, data, options); !s.ok()) error = s.ToString();
        break;
      }
      case PublishArm::kExport: {
        auto loaded = store->Load(region, data);
        if (!loaded.ok()) {
          error = loaded.status().ToString();
        } else if (Status s = ReplaceFileAtomically(path, data); !s.ok()) {
          error = s.ToString();
        }
        break;
      }
      default:
        error = RawPublish(arm, path, dir, data, serial);
        break;
    }
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

}  // namespace

std::string RegisterPublish(const std::string& dir) {
  PublishDir() = dir + "/publish";
  if (::mkdir(PublishDir().c_str(), 0700) != 0 && errno != EEXIST) {
    return Errno("mkdir " + PublishDir());
  }
  for (PublishArm arm : {PublishArm::kOverwrite, PublishArm::kOverwriteFsync, PublishArm::kReplace,
                         PublishArm::kReplaceFsync, PublishArm::kReplaceFsyncDirFsync,
                         PublishArm::kLibraryNoFsync, PublishArm::kLibrary, PublishArm::kExport}) {
    for (uint64_t size : {uint64_t{64}, uint64_t{4096}, uint64_t{65536}}) {
      const std::string name = std::string("publish/") + ArmName(arm) + "/" + std::to_string(size);
      benchmark::RegisterBenchmark(name.c_str(), Publish, arm, size)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return "";
}

}  // namespace regionstore::bench
