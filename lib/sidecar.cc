// The sidecar of a protocol 2 store (sidecar.h): opening it, and the wake
// word's two read-modify-writes.
#include "sidecar.h"

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cow.h"
#include "regionstore/store_info.h"
#include "temp_file.h"

namespace regionstore::sidecar {
namespace {

constexpr const char* kOpen = "open sidecar";

Status NotASidecar(const std::string& path, const std::string& what) {
  return Status::Error(StatusCode::kInvalidArgument, kOpen, path,
                       what +
                           ": not a regionstore sidecar, so it is left alone; move it away "
                           "(a protocol 2 store keeps its waiters' word in PATH.shm)");
}

uint32_t InodeTag(uint64_t device, uint64_t inode) {
  const uint64_t mixed = (inode ^ (device * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
  return static_cast<uint32_t>(mixed >> 32);
}

std::string Octal(uint32_t mode) {
  std::string text;
  for (int shift = 9; shift >= 0; shift -= 3)
    text += static_cast<char>('0' + ((mode >> shift) & 7));
  return text;
}

// Names a user by uid only: the library reads no user database (a static
// program would need NSS's shared libraries for it); `getent passwd UID`
// gives the name.
std::string UserText(uint32_t uid) { return "uid " + std::to_string(uid); }

// What to do about a sidecar the rule refuses or the open is denied.
constexpr const char* kRemedy =
    "; it holds no data: removing it loses nothing, and the next writer to open the store makes "
    "it anew with the store's owner, group and permissions";

// Gives a sidecar this process just made (or found empty, and owns) the
// store's group and permission bits less execute, and the store's owner
// when this process is root. A group this user is not in leaves the file
// its own group, with no group permission.
Status Conform(Io& io, File& file, const FileStat& side, const FileStat& store) {
  std::optional<uint32_t> uid;
  if (io.EffectiveUserId() == 0 && side.uid != store.uid) uid = store.uid;
  std::optional<uint32_t> gid;
  if (side.gid != store.gid) gid = store.gid;
  uint32_t mode = store.mode & 0666;
  if (uid || gid) {
    if (Status s = file.SetOwner(uid, gid); !s.ok()) {
      if (s.sys_errno() == EOPNOTSUPP) return Status::Ok();  // an Io without owners
      if (s.code() != StatusCode::kPermissionDenied) return s;
      mode &= ~0070U;
    }
  }
  if (Status s = file.SetPermissions(mode); !s.ok() && s.sys_errno() != EOPNOTSUPP) return s;
  return Status::Ok();
}

}  // namespace

std::string PathFor(const std::string& store_path) { return store_path + ".shm"; }

std::optional<std::string> TrustProblem(const FileStat& side, const FileStat& store,
                                        uint32_t euid) {
  const std::string mode =
      " (mode " + Octal(side.mode) + ", the store's " + Octal(store.mode) + ")";
  if (side.uid != store.uid && side.uid != 0 && side.uid != euid) {
    return "it belongs to " + UserText(side.uid) + ", not to the store's owner (" +
           UserText(store.uid) + ") nor to this process's user" + mode;
  }
  if ((side.mode & 0002) != 0 && (store.mode & 0002) == 0) {
    return "every user may write it, and not the store" + mode;
  }
  if ((side.mode & 0020) != 0 && ((store.mode & 0020) == 0 || side.gid != store.gid)) {
    return "its group (gid " + std::to_string(side.gid) + ") may write it, and not the store" +
           " (gid " + std::to_string(store.gid) + ")" + mode;
  }
  return std::nullopt;
}

Result<Sidecar> Open(Io& io, const std::string& store_path, const FileStat& store, OpenMode mode,
                     bool create) {
  const std::string path = PathFor(store_path);
  auto file = io.Open(path, mode, SymlinkPolicy::kRefuse);
  bool created = false;
  if (!file.ok() && file.status().code() == StatusCode::kNotFound && create &&
      mode == OpenMode::kReadWrite) {
    file = io.CreateExclusive(path);
    created = file.ok();
    // Another process created it first: open theirs.
    if (!file.ok() && file.status().code() == StatusCode::kAlreadyExists) {
      file = io.Open(path, mode, SymlinkPolicy::kRefuse);
    }
  }
  if (!file.ok() && file.status().code() == StatusCode::kPermissionDenied && create) {
    // The writer's: whose it is, so that the user knows whom to ask, or
    // that it may go. (A reader that may not write it polls instead, and
    // tries once per poll: no user database look-up there.)
    std::string whose;
    if (auto named = io.StatPath(path); named.ok()) {
      whose = ": it belongs to " + UserText(named->uid) + ", mode " + Octal(named->mode);
    }
    return Status::Error(StatusCode::kPermissionDenied, kOpen, path,
                         "permission denied" + whose + kRemedy, file.status().sys_errno());
  }
  if (!file.ok()) return file.status().WithOperation(kOpen, path);
  auto stat = (*file)->Stat();
  if (!stat.ok()) return stat.status().WithOperation(kOpen, path);
  if (!stat->is_regular) return NotASidecar(path, "it is not a regular file");
  const uint32_t euid = io.EffectiveUserId();
  // Judged on the descriptor's own fstat: the file read is the file judged.
  const auto refuse = [&](const std::string& problem) {
    return Status::Error(
        StatusCode::kInvalidArgument, kOpen, path,
        "not trusted: " + problem +
            ". Only users who can write the store may write its sidecar, which steers the "
            "writer's recovery and the readers' consistent loads" +
            kRemedy +
            ". In a directory other users can write (such as one with mode 1777), keep protocol "
            "2 stores in a subdirectory only their users can write");
  };
  if (!created) {
    if (auto problem = TrustProblem(*stat, store, euid)) return refuse(*problem);
  }
  if (stat->size == 0) {
    if (mode == OpenMode::kReadOnly || !create) {
      return Status::Error(StatusCode::kNotFound, kOpen, path,
                           "it is still being created (0 bytes)");
    }
    // Made here, or left empty by a writer that failed before filling it:
    // owner, group and mode first, while nothing is in it.
    if (created || stat->uid == euid) {
      if (Status s = Conform(io, **file, *stat, store); !s.ok())
        return s.WithOperation(kOpen, path);
      stat = (*file)->Stat();
      if (!stat.ok()) return stat.status().WithOperation(kOpen, path);
      if (auto problem = TrustProblem(*stat, store, euid)) return refuse(*problem);
    }
    // Its stores go through a shared mapping, as the store's do, so it gets
    // the store's protection from a full disk (Store::Create): on btrfs
    // FS_NOCOW_FL while it is empty, so that its blocks are overwritten in
    // place; then every block reserved and written. Without that a
    // writeback on a full btrfs makes the next store into it a SIGBUS.
    // Zero-filled: a fresh sidecar's wake word is 0. Only a writer's open
    // gets here, under the store's lock, so nobody uses the file yet. A
    // failure leaves an empty file, which the next writer's open fills.
    const std::string directory = internal::DirectoryOf(path);
    if (const Result<FsInfo> fs = io.StatFs(directory);
        fs.ok() && internal::CanDisableCopyOnWrite(*fs)) {
      // What it says is the store's warning, given at its create.
      static_cast<void>(internal::DisableCopyOnWrite(**file, *fs, directory));
    }
    if (Status s = (*file)->Allocate(0, kSize); !s.ok()) return s.WithOperation(kOpen, path);
    const std::vector<std::byte> zeros(kSize);
    if (Status s = (*file)->WriteAt(0, zeros); !s.ok()) return s.WithOperation(kOpen, path);
  } else if (stat->size != kSize && stat->size != kLegacySize) {
    return NotASidecar(path, "it holds " + std::to_string(stat->size) + " bytes, not " +
                                 std::to_string(kSize) + " (nor an older release's " +
                                 std::to_string(kLegacySize) + ")");
  }
  bool legacy = stat->size == kLegacySize;
  if (legacy && create && mode == OpenMode::kReadWrite) {
    // An older release's: grown in place to this release's size, the
    // durable points zero, before its magic changes below. Only a writer's
    // open gets here, under the store's lock; readers that mapped its first
    // 8 KiB go on using them. Only a sidecar is grown: any other file of
    // that size is left as it was.
    std::array<std::byte, 8> head{};
    auto read = (*file)->ReadAt(kMagicOffset, head);
    if (!read.ok()) return read.status().WithOperation(kOpen, path);
    uint64_t head_magic = 0;
    std::memcpy(&head_magic, head.data(), sizeof head_magic);
    if (*read != head.size() || (head_magic != 0 && head_magic != kLegacyMagic)) {
      return NotASidecar(path, "its first 8 bytes are not the magic");
    }
    if (Status s = (*file)->Allocate(0, kSize); !s.ok()) return s.WithOperation(kOpen, path);
    const std::vector<std::byte> zeros(kSize - kLegacySize);
    if (Status s = (*file)->WriteAt(kLegacySize, zeros); !s.ok()) {
      return s.WithOperation(kOpen, path);
    }
    legacy = false;
  }
  auto mapping = (*file)->Map(legacy ? kLegacySize : kSize, mode);
  if (!mapping.ok()) return mapping.status().WithOperation(kOpen, path);
  auto* magic = reinterpret_cast<uint64_t*>((*mapping)->data() + kMagicOffset);
  uint64_t found = __atomic_load_n(magic, __ATOMIC_ACQUIRE);
  const uint64_t wanted = legacy ? kLegacyMagic : kMagic;
  if (mode == OpenMode::kReadWrite && found != wanted &&
      (found == 0 || (found == kLegacyMagic && create))) {
    // Claims a fresh file (or the grown one); whoever loses the race finds
    // the magic.
    uint64_t expected = found;
    found = __atomic_compare_exchange_n(magic, &expected, wanted, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)
                ? wanted
                : expected;
  }
  if (found != 0 && found != wanted) {
    return NotASidecar(path, "its first 8 bytes are not the magic");
  }
  Sidecar sidecar;
  sidecar.file = std::move(*file);
  sidecar.mapping = std::move(*mapping);
  sidecar.writable = mode == OpenMode::kReadWrite;
  sidecar.device = stat->device;
  sidecar.inode = stat->inode;
  sidecar.inode_tag = InodeTag(stat->device, stat->inode);
  sidecar.durable_points = !legacy;
  return sidecar;
}

bool Advance(Sidecar& sidecar) {
  uint32_t* word = sidecar.wake_word();
  uint32_t old = __atomic_load_n(word, __ATOMIC_RELAXED);
  // Sequentially consistent: the commit's stores (and the publication
  // word's) come before it, and a reader's compare-and-swap is ordered
  // against it.
  while (!__atomic_compare_exchange_n(word, &old, (old + 2) & ~kWaiterBit, true, __ATOMIC_SEQ_CST,
                                      __ATOMIC_RELAXED)) {
  }
  if ((old & kWaiterBit) == 0) return false;
  sidecar.mapping->WakeWord(kWakeOffset);
  return true;
}

std::optional<uint32_t> Register(Sidecar& sidecar, uint32_t seen) {
  if ((seen & kWaiterBit) != 0) return seen;
  uint32_t expected = seen;
  if (__atomic_compare_exchange_n(sidecar.wake_word(), &expected, seen | kWaiterBit, false,
                                  __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    return seen | kWaiterBit;
  }
  return std::nullopt;
}

}  // namespace regionstore::sidecar

namespace regionstore {

std::string SidecarPath(const std::string& store_path) { return sidecar::PathFor(store_path); }

}  // namespace regionstore
