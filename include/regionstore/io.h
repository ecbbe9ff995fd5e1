// Io: the seam between regionstore and the operating system.
//
// Only the implementation of Io::Default() calls the OS (open, fallocate,
// pwrite, fdatasync, fsync, msync, rename, flock, mmap). The store calls
// nothing else, so a test can hand the store an Io that records every write
// and flush, owns the "mapping" itself, or fails the Nth call with EIO or
// ENOSPC. The mapping is part of the seam because a memcpy into a MAP_SHARED
// mapping makes no syscall: only the Io that handed it out can see it.
//
// Every failure is a Status carrying the operation, the path and errno.
// EINTR is retried inside the default implementation, short reads and writes
// are continued.
//
// Thread safety: Io::Default() may be used from any thread. A File or Mapping
// may be used from one thread at a time; ReadAt and data() reads may run
// concurrently.
#ifndef REGIONSTORE_IO_H_
#define REGIONSTORE_IO_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "regionstore/export.h"
#include "regionstore/status.h"

namespace regionstore {

// What msync is asked to do.
enum class SyncKind : uint8_t {
  kAsync,  // MS_ASYNC: on Linux, starts nothing
  kSync,   // MS_SYNC: writes the range back and waits
};

// A MAP_SHARED mapping of a whole file. The destructor unmaps; it never
// flushes.
class REGIONSTORE_EXPORT Mapping {
 public:
  virtual ~Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  // First byte of the mapping; the mapping is size() bytes long.
  virtual std::byte* data() = 0;
  virtual uint64_t size() const = 0;
  // msync of [offset, offset + length) of the mapping. `offset` must be a
  // multiple of the page size (the caller rounds; msync fails with EINVAL
  // otherwise). Errors: kIOError with errno (EIO, ENOMEM, ...).
  virtual Status Sync(uint64_t offset, uint64_t length, SyncKind kind) = 0;
  // A hint that [offset, offset + length) is about to be written: the POSIX
  // implementation prefaults it writable in one call
  // (madvise(MADV_POPULATE_WRITE), Linux 5.14+) instead of one fault per
  // page during the copy. `offset` must be a multiple of the page size.
  // Failures are ignored (a hint; an old kernel refuses it with EINVAL). The
  // default does nothing. Store::Write in kSync asks for it
  // (docs/BENCH-LAB.md, "The kept mapping's durable path").
  virtual void PrepareWrite(uint64_t offset, uint64_t length) {
    static_cast<void>(offset);
    static_cast<void>(length);
  }

  // A hint, after a Store::Write in kSync synced [offset, offset + length),
  // that the range will be written again through the mapping, whose
  // page-table entries writeback left write-protected. The POSIX
  // implementation drops the range's page-table entries
  // (madvise(MADV_DONTNEED): on a shared file mapping the data stays in the
  // page cache, dirty or not), so the next write maps a whole folio per
  // fault instead of taking one per page. `offset` must be a multiple of the
  // page size. Failures are ignored (EINVAL on locked pages). The default
  // does nothing. Why, with measurements: docs/BENCH-LAB.md, "The kept
  // mapping's durable path".
  virtual void ResetPageTables(uint64_t offset, uint64_t length) {
    static_cast<void>(offset);
    static_cast<void>(length);
  }

  // A futex on the 32-bit word at `offset` of the mapping (4-byte aligned),
  // for readers that wait for a commit (Store::WaitForNewer). Never
  // FUTEX_PRIVATE_FLAG: the kernel keys a word of a MAP_SHARED file mapping
  // by inode and offset, so a WakeWord through the writer's mapping wakes
  // WaitWord callers in every process that maps the file, each through its
  // own mapping (a read-only one will do: waiting only reads the word).
  //
  // WaitWord sleeps while the word holds `expected`, until a WakeWord, a
  // signal, or `deadline_ns` (Io::MonotonicNanos()'s clock) passes. Returns
  // OK when it was woken, the word did not hold `expected`, a signal
  // interrupted it, or it woke for no reason (callers recheck what they wait
  // for), kTimedOut once the deadline has passed. Errors: kIOError with
  // errno. The default implementation (lib/io) makes the futex call on
  // data() + offset, so a Mapping that owns real memory needs nothing more.
  virtual Status WaitWord(uint64_t offset, uint32_t expected, uint64_t deadline_ns);
  // Wakes every waiter on the word at `offset`. Failures are ignored (a
  // waiter also wakes at its deadline). The default makes the futex call on
  // data() + offset.
  virtual void WakeWord(uint64_t offset);

 protected:
  Mapping() = default;
};

// How a store, a File or a Mapping is opened.
enum class OpenMode : uint8_t { kReadOnly, kReadWrite };

// Whether Io::Open goes through a symbolic link at the last component of
// the path. Only the last component: a symbolic link among the directories
// of the path is followed either way (that is what O_NOFOLLOW does).
enum class SymlinkPolicy : uint8_t {
  kRefuse,  // O_NOFOLLOW: a path that is itself a symbolic link is refused
  kFollow,  // open whatever the link points to
};

// What fstat reports that the store needs.
struct FileStat {
  uint64_t size = 0;
  bool is_regular = false;
  bool is_directory = false;
  uint64_t device = 0;
  uint64_t inode = 0;
  // Owner, group and permission bits (st_mode & 07777). An Io that has no
  // owners (the tests' in-memory ones) leaves them 0: root's, granting
  // nothing, which every check of them accepts.
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t mode = 0;
};

// What statfs reports about the filesystem holding a path.
struct FsInfo {
  uint64_t type_magic = 0;  // f_type
  // "ext2/3/4" (one magic number for the three), "xfs", "btrfs", "tmpfs",
  // ... or "0x<magic in hex>". Io::Default()'s StatFs is the one table of
  // these names.
  std::string type_name;
  // Copy-on-write filesystems (btrfs, bcachefs, ZFS) allocate on every write:
  // posix_fallocate does not reserve the blocks a later overwrite needs, so a
  // full disk can still turn a mapped write into SIGBUS.
  bool copy_on_write = false;
  // btrfs whose data and metadata share block groups (mkfs.btrfs --mixed, as
  // small filesystems are often made): there a full disk turns mapped writes
  // into SIGBUS even for a NOCOW file, so Store::Create refuses it. false
  // where the Io cannot tell (BTRFS_IOC_SPACE_INFO failed).
  bool mixed_block_groups = false;
  uint64_t block_size = 0;
  uint64_t available_bytes = 0;  // for unprivileged users
};

// FS_NOCOW_FL (linux/fs.h): btrfs overwrites the file's blocks in place
// instead of copying them on write, and stops checksumming its data. Takes
// effect only if set while the file is empty.
inline constexpr uint32_t kInodeFlagNoCow = 0x00800000;

// A byte range of a file.
struct FileRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool operator==(const FileRange&) const = default;
};

// An open file descriptor. The destructor closes it (which releases its lock).
class REGIONSTORE_EXPORT File {
 public:
  virtual ~File() = default;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // The path this file was opened by, for error messages.
  virtual const std::string& path() const = 0;
  // pread into `out` until full or end of file; returns the bytes read.
  virtual Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) = 0;
  // pwrite all of `data` at `offset`. Errors: kNoSpace, kIOError.
  virtual Status WriteAt(uint64_t offset, std::span<const std::byte> data) = 0;
  // Writes `parts` end to end from `offset` in one call (pwritev; a short
  // write is continued, and then `data_sync` costs an fdatasync). With
  // `data_sync`, the range is on stable storage when this returns
  // (pwritev2 with RWF_DSYNC: writeback and device flush of this range only;
  // where the kernel or filesystem refuses the flag, pwritev then fdatasync).
  // The default implementation calls WriteAt per part, then DataSync(), so
  // an Io written before this existed keeps working. Errors: as WriteAt and
  // DataSync.
  virtual Status WriteGatherAt(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                               bool data_sync);
  // A hint that [offset, offset + length) was just written and will be made
  // durable by a barrier soon: the POSIX implementation starts its writeback
  // now (sync_file_range(SYNC_FILE_RANGE_WRITE)), so the device can work
  // while the caller computes something. Not a barrier: it flushes no device
  // cache and writes no metadata. Failures are ignored (the barrier that
  // follows reports any I/O error). The default does nothing. Durable commits
  // of 64 KiB or more call it for their payload before hashing it, so the
  // hash overlaps the write (docs/BENCH-CHECKPOINTS.md has the figures).
  virtual void StartWriteback(uint64_t offset, uint64_t length) {
    static_cast<void>(offset);
    static_cast<void>(length);
  }
  // Waits until [offset, offset + length) is written to the device, starting
  // the writeback of any of it still dirty (sync_file_range with WAIT_BEFORE,
  // WRITE and WAIT_AFTER): what a commit reports as written back. Not a
  // barrier either: no device cache flush, no metadata. A failure is a lost
  // write (Linux reports a writeback error once, to whichever call asks
  // first, so the caller must treat it as the barrier's). Where the call is
  // missing or does not apply (ENOSYS, EPERM, EINVAL, ESPIPE) it waits for
  // nothing and returns OK, as the default does.
  virtual Status WaitWriteback(uint64_t offset, uint64_t length) {
    static_cast<void>(offset);
    static_cast<void>(length);
    return Status::Ok();
  }
  // posix_fallocate: reserves every block of the range. Errors: kNoSpace.
  virtual Status Allocate(uint64_t offset, uint64_t length) = 0;
  // fdatasync. Store::StartSync calls it on a thread of the library's while
  // the handle's thread goes on with other calls on the same File (WriteAt,
  // WriteGatherAt, ReadAt, StartWriteback) and on its Mapping: an
  // implementation must allow that one call to run beside them.
  virtual Status DataSync() = 0;
  virtual Status Sync() = 0;  // fsync
  // Takes the exclusive single-writer lock (flock LOCK_EX, non-blocking).
  // Errors: kBusy if another open file description holds it.
  // The POSIX implementation also takes an open-file-description record
  // lock (F_OFD_SETLK) beside the flock, for HasWriter.
  virtual Status LockExclusive() = 0;
  // Whether some open file description holds the writer's lock
  // (LockExclusive), tested without taking anything (F_OFD_GETLK), so no
  // writer's open can fail for it. A reader uses it to tell a dead writer's
  // leftovers from a live writer's work. The default fails with kIOError
  // (EOPNOTSUPP: this Io cannot tell), and so does a kernel without OFD
  // locks; callers treat that as "a writer may be alive".
  virtual Result<bool> HasWriter();
  virtual Result<FileStat> Stat() = 0;
  // Maps [0, length) of the file MAP_SHARED, read-write (kReadWrite, which
  // needs a file opened so) or read-only, from this descriptor (never by
  // reopening the path).
  virtual Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) = 0;
  // Gives a file made by Io::CreateAnonymous the name `path` (linkat); never
  // replaces: kAlreadyExists if `path` exists. On any failure the file stays
  // nameless. The default fails with kIOError (EOPNOTSUPP): only a file from
  // CreateAnonymous can be linked. Errors: kAlreadyExists, kNotFound,
  // kPermissionDenied, kNoSpace, kIOError.
  virtual Status Link(const std::string& path);

  // --- Copy-on-write filesystems. Each default fails with kIOError and
  // errno EOPNOTSUPP ("this Io cannot tell"), so an Io written before these
  // existed keeps working: callers treat that as "unknown", never as a fault.

  // The inode flags (ioctl FS_IOC_GETFLAGS), for example kInodeFlagNoCow.
  // Errors: kIOError (ENOTTY or EOPNOTSUPP where the filesystem has none).
  virtual Result<uint32_t> InodeFlags();
  // Sets the inode flags (ioctl FS_IOC_SETFLAGS). Success does not prove the
  // flag took: btrfs accepts FS_NOCOW_FL on a file that already has data and
  // silently leaves it off; read it back with InodeFlags(). Errors: kIOError,
  // kPermissionDenied.
  virtual Status SetInodeFlags(uint32_t flags);
  // The ranges of [offset, offset + length) whose blocks are shared with
  // another file or a snapshot (FIEMAP, FIEMAP_EXTENT_SHARED), in file order,
  // adjacent ones merged. Costs one ioctl per 64 extents of the range,
  // whatever its size. Errors: kIOError (EOPNOTSUPP: no FIEMAP here).
  virtual Result<std::vector<FileRange>> SharedRanges(uint64_t offset, uint64_t length);
  // Gives [offset, offset + length) blocks of its own, copying what is
  // shared (fallocate FALLOC_FL_UNSHARE_RANGE; XFS since Linux 4.9). Errors:
  // kNoSpace (no room for the copies; nothing is lost, the range stays
  // shared), kIOError (EOPNOTSUPP: btrfs and ext4 lack the call).
  virtual Status UnshareRange(uint64_t offset, uint64_t length);

  // --- Ownership. Each default fails with kIOError and errno EOPNOTSUPP.

  // fchown(uid or -1, gid or -1): a missing value is left as it is.
  // Errors: kPermissionDenied (EPERM: not root, or a group the caller is not
  // in), kIOError.
  virtual Status SetOwner(std::optional<uint32_t> uid, std::optional<uint32_t> gid);
  // fchmod(mode & 07777). Errors: kPermissionDenied, kIOError.
  virtual Status SetPermissions(uint32_t mode);

 protected:
  File() = default;
};

class REGIONSTORE_EXPORT Io {
 public:
  virtual ~Io() = default;

  // The POSIX implementation. Lives for the whole process; never delete it.
  static Io* Default();

  // open(O_CLOEXEC), O_RDONLY or O_RDWR as `mode` says; with SymlinkPolicy::kRefuse
  // also O_NOFOLLOW. Errors: kInvalidArgument (kRefuse, and the last
  // component of `path` is a symbolic link, dangling or not; no errno: the
  // message says so), kNotFound, kPermissionDenied, kIOError (errno kept;
  // ELOOP: a loop, or more than 40 links, while resolving `path`).
  virtual Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                             SymlinkPolicy symlinks) = 0;
  // open(O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600). Never follows a
  // symbolic link at `path`: with O_EXCL, a link there (dangling or not)
  // fails with kAlreadyExists and its target is not touched.
  // Errors: kAlreadyExists, kNotFound (no such directory), kPermissionDenied.
  virtual Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) = 0;
  // rename(from, to); without `replace`, fails with kAlreadyExists rather than
  // replace an existing `to` (renameat2 RENAME_NOREPLACE, or link + unlink
  // where the filesystem lacks it).
  virtual Status Rename(const std::string& from, const std::string& to, bool replace) = 0;
  // unlink(path).
  virtual Status Remove(const std::string& path) = 0;
  // fsync of a directory, so a rename inside it survives power loss.
  virtual Status SyncDirectory(const std::string& directory) = 0;
  // stat(path) without opening it (follows symlinks).
  virtual Result<FileStat> StatPath(const std::string& path) = 0;
  // Fills `out` with random bytes (getrandom).
  virtual Status FillRandom(std::span<std::byte> out) = 0;
  // statfs(path). The default implementation asks Io::Default(), so an Io
  // that only wraps another need not override it.
  virtual Result<FsInfo> StatFs(const std::string& path);
  // The identity of the running boot: the 16 bytes of the UUID in
  // /proc/sys/kernel/random/boot_id, new at every boot. A writer tags its
  // intent marks with it (docs/CHECKPOINTS.md): a mark from another boot
  // says nothing about today's page cache. The default implementation asks
  // Io::Default(). Errors: kIOError, kNotFound (no /proc), kCorruption (the
  // file does not hold a UUID).
  virtual Result<std::array<std::byte, 16>> BootId();
  // The runtime page size (sysconf(_SC_PAGESIZE)).
  virtual uint64_t PageSize() = 0;
  // This process's id (getpid). Temp files carry it in their names, so that
  // a later create beside them can tell an abandoned one from a live one.
  // The default implementation asks Io::Default().
  virtual uint64_t ProcessId();
  // This process's effective user id (geteuid). The default implementation
  // asks Io::Default().
  virtual uint32_t EffectiveUserId();
  // The names in `directory` (readdir), without "." and "..", in no order.
  // The default implementation asks Io::Default(). Errors: kNotFound,
  // kPermissionDenied, kIOError.
  virtual Result<std::vector<std::string>> ListDirectory(const std::string& directory);
  // CLOCK_REALTIME in nanoseconds since the Unix epoch.
  virtual uint64_t NowUnixNanos() = 0;
  // CLOCK_MONOTONIC in nanoseconds, the clock of Mapping::WaitWord's
  // deadlines. The default implementation asks Io::Default().
  virtual uint64_t MonotonicNanos();
  // A nameless file in `directory` (open(O_TMPFILE | O_RDWR | O_CLOEXEC),
  // mode 0600): it cannot outlive its last descriptor until File::Link names
  // it. The POSIX implementation also checks, before returning, that Link
  // will be able to name it (through /proc/self/fd, or linkat AT_EMPTY_PATH
  // where the caller may use it), so a caller that falls back to a named
  // temp does so before writing anything. The returned file's path() is
  // `directory`. The default fails with kIOError (EOPNOTSUPP), so an Io
  // written before this existed (or one that must see every file by name,
  // like a crash simulator) gets named temp files through CreateExclusive.
  // Errors: kIOError with EOPNOTSUPP (the filesystem has no O_TMPFILE, or
  // the file could not be linked later), EISDIR or EINVAL (a kernel without
  // O_TMPFILE); kNotFound, kPermissionDenied, kNoSpace.
  virtual Result<std::unique_ptr<File>> CreateAnonymous(const std::string& directory);

 protected:
  Io() = default;
};

// ForwardingIo, ForwardingFile, ForwardingMapping: an Io, File and Mapping
// that pass every call to another one. Derive from them to change one or two
// calls and keep the rest (count syscalls, inject a failure, log), as
// leveldb's EnvWrapper is used: they override every virtual of the seam, so a
// wrapper cannot miss a call the store makes (a File that did not override
// WriteGatherAt would silently run the base class's WriteAt-per-part
// emulation instead of the wrapped file's). The tests' TestIo and crash
// helpers and the benchmarks' counting Io derive from them. Header-only.
class ForwardingIo : public Io {
 public:
  explicit ForwardingIo(Io* base = Io::Default()) : base_(base) {}

  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     SymlinkPolicy symlinks) override {
    return base_->Open(path, mode, symlinks);
  }
  Result<std::unique_ptr<File>> CreateExclusive(const std::string& path) override {
    return base_->CreateExclusive(path);
  }
  Status Rename(const std::string& from, const std::string& to, bool replace) override {
    return base_->Rename(from, to, replace);
  }
  Status Remove(const std::string& path) override { return base_->Remove(path); }
  Status SyncDirectory(const std::string& directory) override {
    return base_->SyncDirectory(directory);
  }
  Result<FileStat> StatPath(const std::string& path) override { return base_->StatPath(path); }
  Status FillRandom(std::span<std::byte> out) override { return base_->FillRandom(out); }
  Result<FsInfo> StatFs(const std::string& path) override { return base_->StatFs(path); }
  Result<std::array<std::byte, 16>> BootId() override { return base_->BootId(); }
  uint64_t ProcessId() override { return base_->ProcessId(); }
  uint32_t EffectiveUserId() override { return base_->EffectiveUserId(); }
  Result<std::vector<std::string>> ListDirectory(const std::string& directory) override {
    return base_->ListDirectory(directory);
  }
  uint64_t PageSize() override { return base_->PageSize(); }
  uint64_t NowUnixNanos() override { return base_->NowUnixNanos(); }
  uint64_t MonotonicNanos() override { return base_->MonotonicNanos(); }
  Result<std::unique_ptr<File>> CreateAnonymous(const std::string& directory) override {
    return base_->CreateAnonymous(directory);
  }

 protected:
  Io* base() const { return base_; }

 private:
  Io* base_;
};

// Owns the Mapping it forwards to.
class ForwardingMapping : public Mapping {
 public:
  explicit ForwardingMapping(std::unique_ptr<Mapping> base) : base_(std::move(base)) {}

  std::byte* data() override { return base_->data(); }
  uint64_t size() const override { return base_->size(); }
  Status Sync(uint64_t offset, uint64_t length, SyncKind kind) override {
    return base_->Sync(offset, length, kind);
  }
  void PrepareWrite(uint64_t offset, uint64_t length) override {
    base_->PrepareWrite(offset, length);
  }
  void ResetPageTables(uint64_t offset, uint64_t length) override {
    base_->ResetPageTables(offset, length);
  }
  Status WaitWord(uint64_t offset, uint32_t expected, uint64_t deadline_ns) override {
    return base_->WaitWord(offset, expected, deadline_ns);
  }
  void WakeWord(uint64_t offset) override { base_->WakeWord(offset); }

 protected:
  Mapping& base() const { return *base_; }

 private:
  std::unique_ptr<Mapping> base_;
};

// Owns the File it forwards to. Map returns the wrapped file's mapping as it
// is; a wrapper that needs to see the mapping's calls overrides Map.
class ForwardingFile : public File {
 public:
  explicit ForwardingFile(std::unique_ptr<File> base) : base_(std::move(base)) {}

  const std::string& path() const override { return base_->path(); }
  Result<uint64_t> ReadAt(uint64_t offset, std::span<std::byte> out) override {
    return base_->ReadAt(offset, out);
  }
  Status WriteAt(uint64_t offset, std::span<const std::byte> data) override {
    return base_->WriteAt(offset, data);
  }
  Status WriteGatherAt(uint64_t offset, std::span<const std::span<const std::byte>> parts,
                       bool data_sync) override {
    return base_->WriteGatherAt(offset, parts, data_sync);
  }
  void StartWriteback(uint64_t offset, uint64_t length) override {
    base_->StartWriteback(offset, length);
  }
  Status WaitWriteback(uint64_t offset, uint64_t length) override {
    return base_->WaitWriteback(offset, length);
  }
  Status Allocate(uint64_t offset, uint64_t length) override {
    return base_->Allocate(offset, length);
  }
  Status DataSync() override { return base_->DataSync(); }
  Status Sync() override { return base_->Sync(); }
  Status LockExclusive() override { return base_->LockExclusive(); }
  Result<bool> HasWriter() override { return base_->HasWriter(); }
  Result<FileStat> Stat() override { return base_->Stat(); }
  Result<std::unique_ptr<Mapping>> Map(uint64_t length, OpenMode mode) override {
    return base_->Map(length, mode);
  }
  Status Link(const std::string& path) override { return base_->Link(path); }
  Result<uint32_t> InodeFlags() override { return base_->InodeFlags(); }
  Status SetInodeFlags(uint32_t flags) override { return base_->SetInodeFlags(flags); }
  Result<std::vector<FileRange>> SharedRanges(uint64_t offset, uint64_t length) override {
    return base_->SharedRanges(offset, length);
  }
  Status UnshareRange(uint64_t offset, uint64_t length) override {
    return base_->UnshareRange(offset, length);
  }
  Status SetOwner(std::optional<uint32_t> uid, std::optional<uint32_t> gid) override {
    return base_->SetOwner(uid, gid);
  }
  Status SetPermissions(uint32_t mode) override { return base_->SetPermissions(mode); }

 protected:
  File& base() const { return *base_; }

 private:
  std::unique_ptr<File> base_;
};

}  // namespace regionstore

#endif  // REGIONSTORE_IO_H_
