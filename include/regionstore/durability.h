// Durability: what a write promises once it returns.
#ifndef REGIONSTORE_DURABILITY_H_
#define REGIONSTORE_DURABILITY_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "regionstore/export.h"

namespace regionstore {

// Every mode makes the bytes visible to other processes that map or read the
// file as soon as the call returns (there is one page cache). They differ in
// what a crash can lose. None of them makes a multi-page write atomic: a crash
// during the copy can leave some pages old and some new (use checkpoint
// regions for all-or-nothing updates).
enum class Durability : uint8_t {
  // memcpy into the shared mapping, nothing else; Store::Write of 256 KiB
  // or more: one pwrite into the page cache the mapping shares instead,
  // unless the handle wrote that range in the last 5 s (no write fault per
  // page where writeback cleaned them). A checkpoint Commit chooses likewise
  // (docs/CHECKPOINTS.md, "Commit").
  // Survives kill -9: yes (the page cache keeps it). Power loss: no.
  kNone = 0,
  // As kNone, + msync(MS_ASYNC) on the touched pages.
  // Survives kill -9: yes. Power loss: no. On Linux since 2.6.19 MS_ASYNC
  // starts no I/O at all; treat this mode as kNone with an extra syscall.
  kAsync = 1,
  // Store::Write of 1 MiB or more: memcpy + msync(MS_SYNC) on the touched
  // pages (page-aligned range), the range prefaulted first
  // (madvise(MADV_POPULATE_WRITE), a hint) and its page-table entries
  // dropped after the sync (madvise(MADV_DONTNEED): the data stays in the
  // page cache; the next write maps whole folios instead of taking a
  // write-protect fault per 4 KiB page). Below 1 MiB (and not from the
  // store's own mapping): one pwritev2(RWF_DSYNC), which writes back only
  // the blocks written, where a store through the mapping makes msync
  // write back every folio it touched whole (2 MiB measured for 4 KiB in
  // a fresh store's data area). Flush: msync(MS_SYNC) of the range. Same promise
  // either way: this range only, flushed when the call returns.
  // Survives kill -9: yes. Power loss: yes once the call returns OK, if the
  // device honours cache flushes. A checkpoint Commit in this mode writes
  // with pwritev/pwrite and syncs the slot with msync(MS_SYNC)
  // (docs/CHECKPOINTS.md, "Commit").
  kSync = 2,
  // pwrite at the file offset + fdatasync; the mapping sees the new bytes.
  // Survives kill -9: yes. Power loss: yes once the call returns OK, if the
  // device honours cache flushes. fdatasync also writes back every other
  // dirty page of the file, so it makes earlier kNone writes durable too.
  kPwriteFdatasync = 3,
};

// The CLI spelling: "none", "async", "sync", "pwrite-fdatasync".
REGIONSTORE_EXPORT std::string_view DurabilityName(Durability durability);
// Parses the CLI spelling; std::nullopt for anything else.
REGIONSTORE_EXPORT std::optional<Durability> ParseDurability(std::string_view name);

}  // namespace regionstore

#endif  // REGIONSTORE_DURABILITY_H_
