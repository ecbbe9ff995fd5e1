/* regionstore's C API (C11; no C++ in this header): opaque handles, and
 * every call that can fail returns an rs_code. No exception and no abort
 * crosses it. A failed call leaves its message for the calling thread:
 * rs_last_error() returns it until that thread's next call that returns an
 * rs_code.
 *
 * The semantics are the C++ API's (regionstore/store.h), named the same way:
 * rs_commit is Store::Commit, rs_load is Store::Load, and so on. Lengths are
 * size_t in memory and uint64_t in the file. docs/C-API.md has a complete
 * example and the contract of each durability mode. */
#ifndef REGIONSTORE_C_H_
#define REGIONSTORE_C_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define RS_API __attribute__((visibility("default")))
#else
#define RS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; rs_version() gives the library's. */
#define RS_VERSION_MAJOR 0
#define RS_VERSION_MINOR 15
#define RS_VERSION_PATCH 0

/* The codes are StatusCode's (regionstore/status.h), value for value. */
typedef enum rs_code {
  RS_OK = 0,
  RS_INVALID_ARGUMENT = 1, /* bad offset, length, size or name; nothing changed */
  RS_NOT_FOUND = 2,        /* no such path, region, or no commit yet */
  RS_PERMISSION_DENIED = 3,
  RS_ALREADY_EXISTS = 4,
  RS_CORRUPTION = 5,
  RS_UNSUPPORTED_VERSION = 6,
  RS_NO_SPACE = 7,
  RS_IO_ERROR = 8,
  RS_BUSY = 9,      /* another writer holds the store; or LoadSet raced it */
  RS_POISONED = 10, /* an earlier flush failed: close and reopen */
  RS_TORN_COMMIT = 11,
  RS_SHARED_EXTENTS = 12,
  RS_TIMED_OUT = 13,
  RS_STORE_REPLACED = 14,
  /* C API only: the caller's buffer is too small; the length it needs is
   * in the call's rs_meta (or length) output. Nothing was copied. */
  RS_BUFFER_TOO_SMALL = 100,
  /* C API only: out of memory, or a C++ exception caught at the boundary. */
  RS_INTERNAL = 101
} rs_code;

/* Durability::kNone ... kPwriteFdatasync (regionstore/durability.h). What a
 * crash can lose, per mode, for a call that returned RS_OK:
 *  RS_NONE:  kill -9 loses nothing (the page cache keeps it); power loss can
 *            lose it. A commit stays all-or-nothing either way.
 *  RS_ASYNC: as RS_NONE, plus msync(MS_ASYNC), which on Linux starts no I/O.
 *  RS_SYNC, RS_PWRITE_FDATASYNC: nothing, kill -9 or power loss, if the
 *            device honours cache flushes.
 * A raw write (rs_write) or a store through a view is not atomic: a crash
 * during it can leave some pages old and some new. */
typedef enum rs_durability {
  RS_NONE = 0,
  RS_ASYNC = 1,
  RS_SYNC = 2,
  RS_PWRITE_FDATASYNC = 3
} rs_durability;

typedef enum rs_slot_layout {
  RS_LAYOUT_AUTO = 0,
  RS_LAYOUT_COMPACT = 1,
  RS_LAYOUT_ALIGNED = 2
} rs_slot_layout;

typedef struct rs_store rs_store;
typedef struct rs_pending rs_pending; /* a streaming commit (Store::BeginCommit) */

typedef struct rs_checkpoint_spec {
  const char* name; /* 1 to 64 bytes of UTF-8, NUL-terminated */
  uint64_t capacity;
  rs_slot_layout layout;
} rs_checkpoint_spec;

/* Fill with rs_create_options_init before setting fields. */
typedef struct rs_create_options {
  uint32_t protocol; /* 2 (default) or 1 */
  const rs_checkpoint_spec* checkpoints;
  size_t checkpoint_count;
  int batch_log;         /* protocol 1: reserve a batch log */
  uint64_t journal_size; /* protocol 2: 0 for the default 4 MiB */
  int replace_existing;
} rs_create_options;

/* Fill with rs_open_options_init before setting fields; NULL means these
 * defaults. */
typedef struct rs_open_options {
  int follow_symlinks;      /* 0 (default): a path that is a symbolic link is refused */
  int allow_shared_extents; /* 1: a writer opens a store sharing blocks (XFS reflink) */
  int wake_waiters;         /* 1 (default): wake waiting readers after each commit */
} rs_open_options;

typedef struct rs_meta {
  uint64_t generation;
  uint64_t length;
  uint64_t commit_unix_ns;
  uint64_t skipped_torn_generation;
  uint64_t skipped_incomplete_batch;
} rs_meta;

typedef struct rs_batch_member {
  const char* name;
  const void* data;
  size_t length;
} rs_batch_member;

/* What one durability mode did through one handle since it was opened. */
typedef struct rs_mode_stats {
  uint64_t writes;
  uint64_t bytes_written;
  uint64_t flushes; /* barriers issued: msync, fdatasync, RWF_DSYNC */
  uint64_t flush_nanos;
  uint64_t commits;
  uint64_t bytes_committed;
  uint64_t batches;
} rs_mode_stats;

/* Counters of one handle (StoreStats); nothing of it is in the file. */
typedef struct rs_stats {
  rs_mode_stats by_mode[4]; /* indexed by rs_durability */
  uint64_t failed_flushes;
  uint64_t failed_writes;
  uint64_t batch_log_barriers;
  uint64_t journal_checkpoints;
  int poisoned; /* 1 after a failed flush or write: close and reopen */
} rs_stats;

typedef struct rs_region_info {
  const char* name; /* valid until the store is closed */
  uint64_t capacity;
  int has_commit;
  uint64_t generation;
  uint64_t length;
} rs_region_info;

RS_API const char* rs_version(void);
RS_API const char* rs_last_error(void);
RS_API const char* rs_code_name(rs_code code);

RS_API void rs_create_options_init(rs_create_options* options);
RS_API rs_code rs_create(const char* path, uint64_t data_size, const rs_create_options* options);
RS_API void rs_open_options_init(rs_open_options* options);
/* writable: 1 for the store's one writer (RS_BUSY if another holds it).
 * options may be NULL. */
RS_API rs_code rs_open(const char* path, int writable, const rs_open_options* options,
                       rs_store** out);
RS_API void rs_close(rs_store* store);

RS_API uint64_t rs_data_size(const rs_store* store);
RS_API rs_code rs_write(rs_store* store, uint64_t offset, const void* data, size_t length,
                        rs_durability durability);
RS_API rs_code rs_read(const rs_store* store, uint64_t offset, void* out, size_t length);
RS_API rs_code rs_flush(rs_store* store, uint64_t offset, uint64_t length,
                        rs_durability durability);
/* Durability after the fact (Store::Sync, DurableGeneration, WaitDurable,
 * StartSync; docs/GUARANTEES.md, G4), writer only: RS_INVALID_ARGUMENT on
 * a read-only handle. Each changes the handle, as rs_commit does.
 *
 * rs_sync makes every commit and batch that returned before it, and every
 * raw write, durable with one fdatasync of the file. *regions_made_durable
 * (may be NULL) is how many regions' newest commits made without a barrier
 * of their own (RS_NONE, RS_ASYNC, or in such a batch) it made durable: 0
 * when nothing was pending. RS_IO_ERROR if the fdatasync failed (the store
 * is poisoned: RS_POISONED from then on). */
RS_API rs_code rs_sync(rs_store* store, uint64_t* regions_made_durable);
/* The generation of region `name`'s newest commit known durable through
 * this handle (0 if none): a commit of generation g is durable once this is
 * g or more. RS_NOT_FOUND for an unknown region. */
RS_API rs_code rs_durable_generation(rs_store* store, const char* name, uint64_t* generation);
/* Returns once commit `generation` of region `name` (or a newer one) is
 * durable: at once if it is, after the barrier in flight (rs_start_sync)
 * if that covers it, else after an rs_sync. RS_INVALID_ARGUMENT for a
 * generation this handle never issued. */
RS_API rs_code rs_wait_durable(rs_store* store, const char* name, uint64_t generation);
/* Starts rs_sync's fdatasync on a library thread and returns at once
 * (Store::StartSync): it covers what an rs_sync would. The handle completes
 * it at its next call that finds it done (a commit, rs_write, rs_flush,
 * rs_sync, rs_durable_generation, rs_wait_durable) or must wait for it:
 * another barrier (one is in flight at a time; rs_start_sync completes the
 * one before), a commit whose region has no free slot left, rs_wait_durable
 * for a commit it covers, rs_close. rs_durable_generation counts the
 * commits it covers once it is completed. A failed background fdatasync is
 * returned (RS_IO_ERROR) by the call that completes it and poisons the
 * store. The thread makes the fdatasync and nothing else. Threads: every
 * call may run beside any other on the same handle but rs_close, as the
 * C++ Store's (regionstore/store.h, "Threads and processes"); durable
 * commits from several threads of a protocol 2 store share barriers. */
RS_API rs_code rs_start_sync(rs_store* store);
/* Views point into the store's mapping until rs_close. */
RS_API rs_code rs_view(const rs_store* store, uint64_t offset, uint64_t length, const void** out);
RS_API rs_code rs_mutable_view(rs_store* store, uint64_t offset, uint64_t length, void** out);

RS_API rs_code rs_commit(rs_store* store, const char* name, const void* data, size_t length,
                         rs_durability durability, uint64_t* generation);
/* Copies the newest valid commit into out[0, capacity). RS_BUFFER_TOO_SMALL
 * (meta->length says how much) if it does not fit; out may be NULL with
 * capacity 0 to ask the length. */
RS_API rs_code rs_load(const rs_store* store, const char* name, void* out, size_t capacity,
                       rs_meta* meta);
RS_API rs_code rs_commit_batch(rs_store* store, const rs_batch_member* members, size_t count,
                               rs_durability durability, uint64_t* generations);
RS_API rs_code rs_load_set(const rs_store* store, const char* const* names, size_t count,
                           void* const* outs, const size_t* capacities, rs_meta* metas);
/* Waits up to timeout_ms (negative: no limit) for a commit of `name` newer
 * than `generation`, and copies it as rs_load does. RS_TIMED_OUT if none
 * came. */
RS_API rs_code rs_wait_newer(const rs_store* store, const char* name, uint64_t generation,
                             int64_t timeout_ms, void* out, size_t capacity, rs_meta* meta);

/* A pending commit borrows its store: finish or abort it before rs_close. */
RS_API rs_code rs_begin_commit(rs_store* store, const char* name, uint64_t max_length,
                               rs_pending** out);
RS_API rs_code rs_pending_append(rs_pending* pending, const void* data, size_t length);
RS_API rs_code rs_pending_payload(rs_pending* pending, void** data, size_t* length);
/* Both end the pending commit and free it, whatever they return. */
RS_API rs_code rs_pending_finish(rs_pending* pending, uint64_t length, rs_durability durability,
                                 uint64_t* generation);
RS_API void rs_pending_abort(rs_pending* pending);

/* The regions in the order of the store's table: rs_region by index,
 * rs_report by name (RS_NOT_FOUND if the store has none of that name). */
RS_API size_t rs_region_count(const rs_store* store);
RS_API rs_code rs_region(const rs_store* store, size_t index, rs_region_info* info);
RS_API rs_code rs_report(const rs_store* store, const char* name, rs_region_info* info);
RS_API rs_code rs_stats_get(const rs_store* store, rs_stats* stats);

#ifdef __cplusplus
}
#endif

#endif /* REGIONSTORE_C_H_ */
