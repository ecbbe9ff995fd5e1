/* The C API, compiled as C11 (-std=c11 -Wall -Wextra -Werror -pedantic):
 * every call once on its good path and on its error paths, and durable
 * commits from eight threads through one handle with no lock of the
 * program's (C's threads: POSIX, as C11's are optional). Exits 0 when
 * every check held; prints each failed check with its line. Takes a
 * scratch directory as its only argument. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regionstore/c.h"

static int failures = 0;

#define CHECK(cond)                                                                           \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      ++failures;                                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, \
              rs_last_error());                                                               \
    }                                                                                         \
  } while (0)

static void fill(unsigned char* bytes, size_t length, unsigned seed) {
  for (size_t i = 0; i < length; ++i) bytes[i] = (unsigned char)(seed * 31u + i * 7u);
}

static void test_version(void) {
  char expected[32];
  snprintf(expected, sizeof expected, "%d.%d.%d", RS_VERSION_MAJOR, RS_VERSION_MINOR,
           RS_VERSION_PATCH);
  CHECK(strcmp(rs_version(), expected) == 0);
  CHECK(strcmp(rs_code_name(RS_OK), "ok") == 0);
  CHECK(strcmp(rs_code_name(RS_BUFFER_TOO_SMALL), "buffer too small") == 0);
  CHECK(strcmp(rs_code_name((rs_code)77), "unknown code") == 0);
}

static void test_store(const char* dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/c.rs", dir);
  rs_checkpoint_spec specs[] = {{"state", 8192, RS_LAYOUT_AUTO}, {"step", 8, RS_LAYOUT_COMPACT}};
  rs_create_options options;
  rs_create_options_init(&options);
  CHECK(options.protocol == 2);
  options.checkpoints = specs;
  options.checkpoint_count = 2;
  options.replace_existing = 1;
  CHECK(rs_create(path, 1 << 20, &options) == RS_OK);
  CHECK(rs_create(NULL, 0, NULL) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "path") != NULL);
  options.replace_existing = 0;
  CHECK(rs_create(path, 1 << 20, &options) == RS_ALREADY_EXISTS);

  rs_store* store = NULL;
  CHECK(rs_open(path, 1, NULL, &store) == RS_OK);
  if (store == NULL) return;
  rs_store* second = NULL;
  CHECK(rs_open(path, 1, NULL, &second) == RS_BUSY);
  CHECK(second == NULL);
  CHECK(rs_data_size(store) == 1 << 20);

  /* The data area. */
  unsigned char bytes[4096], back[4096];
  fill(bytes, sizeof bytes, 1);
  for (int mode = RS_NONE; mode <= RS_PWRITE_FDATASYNC; ++mode) {
    CHECK(rs_write(store, 4096u * (unsigned)mode, bytes, sizeof bytes, (rs_durability)mode) ==
          RS_OK);
    CHECK(rs_read(store, 4096u * (unsigned)mode, back, sizeof back) == RS_OK);
    CHECK(memcmp(bytes, back, sizeof bytes) == 0);
  }
  CHECK(rs_write(store, (1 << 20) - 10, bytes, 11, RS_NONE) == RS_INVALID_ARGUMENT);
  CHECK(rs_write(store, 0, bytes, 1, (rs_durability)9) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "durability 9") != NULL);
  CHECK(rs_flush(store, 0, 4 * 4096, RS_SYNC) == RS_OK);
  const void* view = NULL;
  CHECK(rs_view(store, 4096, 4096, &view) == RS_OK);
  CHECK(view != NULL && memcmp(view, bytes, 4096) == 0);
  void* writable = NULL;
  CHECK(rs_mutable_view(store, 8192, 16, &writable) == RS_OK);
  if (writable != NULL) memset(writable, 0x5a, 16);
  CHECK(rs_read(store, 8192, back, 16) == RS_OK);
  CHECK(back[0] == 0x5a && back[15] == 0x5a);

  /* Commits and loads. */
  uint64_t generation = 0;
  CHECK(rs_commit(store, "state", bytes, 5000 > sizeof bytes ? sizeof bytes : 5000, RS_SYNC,
                  &generation) == RS_OK);
  CHECK(generation == 1);
  CHECK(rs_commit(store, "nope", bytes, 1, RS_NONE, NULL) == RS_NOT_FOUND);
  CHECK(rs_commit(store, "step", bytes, 9, RS_NONE, NULL) == RS_INVALID_ARGUMENT);
  rs_meta meta;
  memset(&meta, 0, sizeof meta);
  CHECK(rs_load(store, "state", NULL, 0, &meta) == RS_BUFFER_TOO_SMALL);
  CHECK(meta.length == 4096 && meta.generation == 1);
  CHECK(rs_load(store, "state", back, sizeof back, &meta) == RS_OK);
  CHECK(memcmp(back, bytes, 4096) == 0);
  CHECK(rs_load(store, "step", back, sizeof back, &meta) == RS_NOT_FOUND);

  /* A batch, then one consistent set. */
  unsigned char a[100], b[8];
  fill(a, sizeof a, 2);
  fill(b, sizeof b, 3);
  const rs_batch_member members[] = {{"state", a, sizeof a}, {"step", b, sizeof b}};
  uint64_t generations[2] = {0, 0};
  CHECK(rs_commit_batch(store, members, 2, RS_PWRITE_FDATASYNC, generations) == RS_OK);
  CHECK(generations[0] == 2 && generations[1] == 1);
  const char* names[] = {"state", "step"};
  unsigned char got_a[100], got_b[8];
  void* outs[] = {got_a, got_b};
  size_t capacities[] = {sizeof got_a, sizeof got_b};
  rs_meta metas[2];
  CHECK(rs_load_set(store, names, 2, outs, capacities, metas) == RS_OK);
  CHECK(memcmp(got_a, a, sizeof a) == 0 && memcmp(got_b, b, sizeof b) == 0);
  CHECK(metas[0].generation == 2 && metas[1].generation == 1);
  size_t small[] = {10, 8};
  CHECK(rs_load_set(store, names, 2, outs, small, metas) == RS_BUFFER_TOO_SMALL);

  /* A wait that times out, and one that finds a newer commit at once. */
  CHECK(rs_wait_newer(store, "step", 1, 0, got_b, sizeof got_b, &meta) == RS_TIMED_OUT);
  CHECK(rs_wait_newer(store, "step", 0, 1000, got_b, sizeof got_b, &meta) == RS_OK);
  CHECK(meta.generation == 1);

  /* A streaming commit, then an abandoned one. */
  rs_pending* pending = NULL;
  CHECK(rs_begin_commit(store, "state", 300, &pending) == RS_OK);
  CHECK(rs_pending_append(pending, a, 60) == RS_OK);
  CHECK(rs_pending_append(pending, a + 60, 40) == RS_OK);
  CHECK(rs_pending_finish(pending, 100, RS_NONE, &generation) == RS_OK);
  CHECK(generation == 3);
  CHECK(rs_begin_commit(store, "state", 100000, &pending) == RS_INVALID_ARGUMENT);
  CHECK(pending == NULL);
  CHECK(rs_begin_commit(store, "state", 300, &pending) == RS_OK);
  void* payload = NULL;
  size_t payload_length = 0;
  CHECK(rs_pending_payload(pending, &payload, &payload_length) == RS_OK);
  CHECK(payload_length == 300);
  rs_pending_abort(pending);
  CHECK(rs_load(store, "state", back, sizeof back, &meta) == RS_OK);
  CHECK(meta.generation == 3 && meta.length == 100);

  /* The regions. */
  CHECK(rs_region_count(store) == 2);
  rs_region_info info;
  CHECK(rs_region(store, 1, &info) == RS_OK);
  CHECK(strcmp(info.name, "step") == 0 && info.capacity == 8 && info.has_commit == 1);
  CHECK(rs_region(store, 2, &info) == RS_INVALID_ARGUMENT);
  CHECK(rs_report(store, "state", &info) == RS_OK);
  CHECK(strcmp(info.name, "state") == 0 && info.generation == 3 && info.length == 100);
  CHECK(rs_report(store, "nope", &info) == RS_NOT_FOUND);
  CHECK(strstr(rs_last_error(), "'nope'") != NULL);

  /* The handle's counters: the four writes, then the commits by mode. */
  rs_stats stats;
  CHECK(rs_stats_get(store, &stats) == RS_OK);
  for (int mode = RS_NONE; mode <= RS_PWRITE_FDATASYNC; ++mode) {
    CHECK(stats.by_mode[mode].writes == 1 && stats.by_mode[mode].bytes_written == 4096);
  }
  CHECK(stats.by_mode[RS_SYNC].commits == 1 && stats.by_mode[RS_NONE].commits == 1);
  CHECK(stats.by_mode[RS_PWRITE_FDATASYNC].batches == 1);
  CHECK(stats.by_mode[RS_PWRITE_FDATASYNC].bytes_committed == sizeof a + sizeof b);
  CHECK(stats.poisoned == 0 && stats.failed_flushes == 0);
  rs_close(store);

  /* A reader refuses writes. */
  rs_store* reader = NULL;
  rs_open_options open_options;
  rs_open_options_init(&open_options);
  CHECK(open_options.follow_symlinks == 0 && open_options.wake_waiters == 1 &&
        open_options.allow_shared_extents == 0);
  CHECK(rs_open(path, 0, &open_options, &reader) == RS_OK);
  CHECK(rs_commit(reader, "state", a, 1, RS_NONE, NULL) == RS_INVALID_ARGUMENT);
  rs_close(reader);
  CHECK(rs_open("/nonexistent/c.rs", 0, NULL, &reader) == RS_NOT_FOUND);
  rs_close(NULL);
}

/* Durability after the fact: commits without a barrier stay not durable
 * until rs_sync (or rs_wait_durable) covers them; a reader may do neither.
 * The store has no data area: rs_sync needs none. */
static void test_sync(const char* dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/sync.rs", dir);
  rs_checkpoint_spec specs[] = {{"state", 64 * 1024, RS_LAYOUT_AUTO}, {"step", 8, RS_LAYOUT_AUTO}};
  rs_create_options options;
  rs_create_options_init(&options);
  options.checkpoints = specs;
  options.checkpoint_count = 2;
  options.replace_existing = 1;
  CHECK(rs_create(path, 0, &options) == RS_OK);
  rs_store* store = NULL;
  CHECK(rs_open(path, 1, NULL, &store) == RS_OK);
  if (store == NULL) return;

  unsigned char state[40000], step[8];
  fill(state, sizeof state, 4);
  fill(step, sizeof step, 5);
  uint64_t durable = 99, made_durable = 99, generation = 0;
  CHECK(rs_durable_generation(store, "state", &durable) == RS_OK && durable == 0);
  CHECK(rs_commit(store, "state", state, sizeof state, RS_NONE, &generation) == RS_OK);
  CHECK(generation == 1);
  CHECK(rs_commit(store, "state", state, 100, RS_ASYNC, &generation) == RS_OK);
  CHECK(generation == 2);
  CHECK(rs_commit(store, "step", step, sizeof step, RS_NONE, &generation) == RS_OK);
  CHECK(rs_durable_generation(store, "state", &durable) == RS_OK && durable == 0);
  CHECK(rs_durable_generation(store, "step", &durable) == RS_OK && durable == 0);

  /* One barrier covers both regions' newest commits. */
  rs_stats before, after;
  CHECK(rs_stats_get(store, &before) == RS_OK);
  CHECK(rs_sync(store, &made_durable) == RS_OK);
  CHECK(made_durable == 2);
  CHECK(rs_stats_get(store, &after) == RS_OK);
  CHECK(after.by_mode[RS_PWRITE_FDATASYNC].flushes ==
        before.by_mode[RS_PWRITE_FDATASYNC].flushes + 1);
  CHECK(rs_durable_generation(store, "state", &durable) == RS_OK && durable == 2);
  CHECK(rs_durable_generation(store, "step", &durable) == RS_OK && durable == 1);
  /* Nothing pending: the barrier runs and covers no commit. */
  CHECK(rs_sync(store, &made_durable) == RS_OK && made_durable == 0);
  CHECK(rs_sync(store, NULL) == RS_OK);

  /* A durable commit needs no sync; one without a barrier is waited for. */
  CHECK(rs_commit(store, "step", step, sizeof step, RS_SYNC, &generation) == RS_OK);
  CHECK(rs_durable_generation(store, "step", &durable) == RS_OK && durable == generation);
  CHECK(rs_commit(store, "state", state, 500, RS_NONE, &generation) == RS_OK);
  CHECK(generation == 3);
  CHECK(rs_wait_durable(store, "state", 3) == RS_OK);
  CHECK(rs_durable_generation(store, "state", &durable) == RS_OK && durable == 3);
  CHECK(rs_wait_durable(store, "state", 1) == RS_OK); /* older: at once */
  CHECK(rs_wait_durable(store, "state", 4) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "no commit of generation 4") != NULL);
  CHECK(rs_durable_generation(store, "nope", &durable) == RS_NOT_FOUND);
  CHECK(rs_wait_durable(store, "nope", 1) == RS_NOT_FOUND);

  /* A barrier started in the background covers the commit that returned
   * before it: rs_wait_durable completes that barrier and runs no other
   * (one fdatasync counted in all). */
  CHECK(rs_commit(store, "step", step, sizeof step, RS_NONE, &generation) == RS_OK);
  CHECK(rs_durable_generation(store, "step", &durable) == RS_OK && durable == generation - 1);
  CHECK(rs_stats_get(store, &before) == RS_OK);
  CHECK(rs_start_sync(store) == RS_OK);
  CHECK(rs_wait_durable(store, "step", generation) == RS_OK);
  CHECK(rs_durable_generation(store, "step", &durable) == RS_OK && durable == generation);
  CHECK(rs_stats_get(store, &after) == RS_OK);
  CHECK(after.by_mode[RS_PWRITE_FDATASYNC].flushes ==
        before.by_mode[RS_PWRITE_FDATASYNC].flushes + 1);
  /* Two in a row: the second completes the first. */
  CHECK(rs_start_sync(store) == RS_OK);
  CHECK(rs_start_sync(store) == RS_OK);
  CHECK(rs_sync(store, &made_durable) == RS_OK && made_durable == 0);

  /* A commit left without a barrier at close: the next writer's open makes
   * it durable, and says so. */
  CHECK(rs_commit(store, "state", state, 600, RS_NONE, &generation) == RS_OK);
  CHECK(generation == 4);
  rs_close(store);
  store = NULL;
  CHECK(rs_open(path, 1, NULL, &store) == RS_OK);
  if (store == NULL) return;
  CHECK(rs_durable_generation(store, "state", &durable) == RS_OK && durable == 4);
  rs_close(store);

  /* A reader cannot sync; it reads what the writer published as durable
   * (the writer above settled "state" at its generation 4). */
  rs_store* reader = NULL;
  CHECK(rs_open(path, 0, NULL, &reader) == RS_OK);
  if (reader == NULL) return;
  durable = 0;
  CHECK(rs_durable_generation(reader, "state", &durable) == RS_OK && durable == 4);
  made_durable = 99;
  CHECK(rs_sync(reader, &made_durable) == RS_INVALID_ARGUMENT && made_durable == 99);
  CHECK(rs_wait_durable(reader, "state", 1) == RS_INVALID_ARGUMENT);
  CHECK(rs_start_sync(reader) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "read-only") != NULL);
  rs_close(reader);
}

/* Every call given a NULL where it needs a pointer: RS_INVALID_ARGUMENT with
 * the parameter's name, never a crash. */
static void test_nulls(const char* dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/nulls.rs", dir);
  rs_checkpoint_spec specs[] = {{"r", 64, RS_LAYOUT_AUTO}};
  rs_create_options options;
  rs_create_options_init(&options);
  options.replace_existing = 1;
  options.checkpoint_count = 1;
  CHECK(rs_create(path, 4096, &options) == RS_INVALID_ARGUMENT); /* checkpoints NULL */
  CHECK(strstr(rs_last_error(), "checkpoints") != NULL);
  specs[0].name = NULL;
  options.checkpoints = specs;
  CHECK(rs_create(path, 4096, &options) == RS_INVALID_ARGUMENT);
  specs[0].name = "r";
  specs[0].layout = (rs_slot_layout)3;
  CHECK(rs_create(path, 4096, &options) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "layout 3") != NULL);
  specs[0].layout = RS_LAYOUT_AUTO;
  CHECK(rs_create(path, 4096, &options) == RS_OK);
  CHECK(rs_open(path, 1, NULL, NULL) == RS_INVALID_ARGUMENT);
  rs_store* store = NULL;
  CHECK(rs_open(NULL, 1, NULL, &store) == RS_INVALID_ARGUMENT && store == NULL);
  CHECK(rs_open(path, 1, NULL, &store) == RS_OK);
  if (store == NULL) return;
  unsigned char byte = 1;
  uint64_t generation = 0;
  rs_meta meta;
  rs_region_info info;
  rs_stats stats;
  const void* view = NULL;
  void* writable = NULL;
  rs_pending* pending = NULL;
  CHECK(rs_data_size(NULL) == 0);
  CHECK(rs_write(NULL, 0, &byte, 1, RS_NONE) == RS_INVALID_ARGUMENT);
  CHECK(rs_write(store, 0, NULL, 1, RS_NONE) == RS_INVALID_ARGUMENT);
  CHECK(rs_write(store, 0, NULL, 0, RS_NONE) == RS_OK); /* nothing to write */
  CHECK(rs_read(NULL, 0, &byte, 1) == RS_INVALID_ARGUMENT);
  CHECK(rs_read(store, 0, NULL, 1) == RS_INVALID_ARGUMENT);
  CHECK(rs_read(store, 4096, &byte, 1) == RS_INVALID_ARGUMENT);
  CHECK(rs_flush(NULL, 0, 1, RS_SYNC) == RS_INVALID_ARGUMENT);
  CHECK(rs_flush(store, 0, 1, (rs_durability)-1) == RS_INVALID_ARGUMENT);
  CHECK(rs_flush(store, 4000, 200, RS_SYNC) == RS_INVALID_ARGUMENT);
  CHECK(rs_view(NULL, 0, 1, &view) == RS_INVALID_ARGUMENT);
  CHECK(rs_view(store, 0, 1, NULL) == RS_INVALID_ARGUMENT);
  CHECK(rs_view(store, 4095, 2, &view) == RS_INVALID_ARGUMENT);
  CHECK(rs_mutable_view(NULL, 0, 1, &writable) == RS_INVALID_ARGUMENT);
  CHECK(rs_mutable_view(store, 0, 1, NULL) == RS_INVALID_ARGUMENT);
  CHECK(rs_mutable_view(store, 1, 4096, &writable) == RS_INVALID_ARGUMENT);
  CHECK(rs_commit(NULL, "r", &byte, 1, RS_NONE, &generation) == RS_INVALID_ARGUMENT);
  CHECK(rs_commit(store, NULL, &byte, 1, RS_NONE, &generation) == RS_INVALID_ARGUMENT);
  CHECK(rs_commit(store, "r", NULL, 1, RS_NONE, &generation) == RS_INVALID_ARGUMENT);
  CHECK(rs_commit(store, "r", &byte, 1, (rs_durability)4, &generation) == RS_INVALID_ARGUMENT);
  CHECK(rs_load(NULL, "r", &byte, 1, &meta) == RS_INVALID_ARGUMENT);
  CHECK(rs_load(store, NULL, &byte, 1, &meta) == RS_INVALID_ARGUMENT);
  CHECK(rs_load(store, "r", NULL, 1, &meta) == RS_INVALID_ARGUMENT);
  CHECK(rs_commit_batch(NULL, NULL, 0, RS_NONE, NULL) == RS_INVALID_ARGUMENT);
  CHECK(rs_commit_batch(store, NULL, 1, RS_NONE, NULL) == RS_INVALID_ARGUMENT);
  rs_batch_member member = {NULL, &byte, 1};
  CHECK(rs_commit_batch(store, &member, 1, RS_NONE, NULL) == RS_INVALID_ARGUMENT);
  member.name = "r";
  member.data = NULL;
  CHECK(rs_commit_batch(store, &member, 1, RS_NONE, NULL) == RS_INVALID_ARGUMENT);
  member.data = &byte;
  CHECK(rs_commit_batch(store, &member, 1, (rs_durability)7, NULL) == RS_INVALID_ARGUMENT);
  CHECK(rs_commit_batch(store, &member, 1, RS_NONE, NULL) == RS_OK);
  const char* names[] = {NULL};
  void* outs[] = {&byte};
  size_t capacities[] = {1};
  CHECK(rs_load_set(NULL, names, 1, outs, capacities, &meta) == RS_INVALID_ARGUMENT);
  CHECK(rs_load_set(store, NULL, 1, outs, capacities, &meta) == RS_INVALID_ARGUMENT);
  CHECK(rs_load_set(store, names, 1, outs, capacities, &meta) == RS_INVALID_ARGUMENT);
  names[0] = "r";
  void* null_outs[] = {NULL};
  CHECK(rs_load_set(store, names, 1, null_outs, capacities, &meta) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "out buffer") != NULL);
  names[0] = "missing";
  CHECK(rs_load_set(store, names, 1, outs, capacities, &meta) == RS_NOT_FOUND);
  /* A timeout too long for nanoseconds waits without limit: here the commit
   * is already there, so it returns at once. */
  CHECK(rs_wait_newer(store, "r", 0, INT64_MAX, &byte, 1, &meta) == RS_OK);
  CHECK(rs_commit_batch(store, &member, 100000, RS_NONE, NULL) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "at most 254") != NULL);
  CHECK(rs_wait_newer(NULL, "r", 0, 0, &byte, 1, &meta) == RS_INVALID_ARGUMENT);
  CHECK(rs_wait_newer(store, NULL, 0, 0, &byte, 1, &meta) == RS_INVALID_ARGUMENT);
  CHECK(rs_wait_newer(store, "r", 0, 0, NULL, 1, &meta) == RS_INVALID_ARGUMENT);
  CHECK(rs_wait_newer(store, "r", 0, 0, NULL, 0, &meta) == RS_BUFFER_TOO_SMALL);
  CHECK(meta.length == 1);
  CHECK(rs_begin_commit(store, "r", 1, NULL) == RS_INVALID_ARGUMENT);
  CHECK(rs_begin_commit(NULL, "r", 1, &pending) == RS_INVALID_ARGUMENT && pending == NULL);
  CHECK(rs_begin_commit(store, NULL, 1, &pending) == RS_INVALID_ARGUMENT);
  CHECK(rs_begin_commit(store, "missing", 1, &pending) == RS_NOT_FOUND);
  CHECK(rs_pending_append(NULL, &byte, 1) == RS_INVALID_ARGUMENT);
  CHECK(rs_pending_payload(NULL, &writable, capacities) == RS_INVALID_ARGUMENT);
  CHECK(rs_pending_finish(NULL, 0, RS_NONE, NULL) == RS_INVALID_ARGUMENT);
  rs_pending_abort(NULL);
  CHECK(rs_begin_commit(store, "r", 4, &pending) == RS_OK);
  CHECK(rs_pending_append(pending, NULL, 1) == RS_INVALID_ARGUMENT);
  CHECK(rs_pending_append(pending, "12345", 5) == RS_INVALID_ARGUMENT); /* past max_length */
  CHECK(rs_pending_payload(pending, NULL, NULL) == RS_INVALID_ARGUMENT);
  /* A bad mode still ends (and frees) the pending commit; nothing is committed. */
  CHECK(rs_pending_finish(pending, 0, (rs_durability)5, NULL) == RS_INVALID_ARGUMENT);
  CHECK(rs_load(store, "r", &byte, 1, &meta) == RS_OK && meta.generation == 1);
  CHECK(rs_region(NULL, 0, &info) == RS_INVALID_ARGUMENT);
  CHECK(rs_region(store, 0, NULL) == RS_INVALID_ARGUMENT);
  CHECK(rs_report(NULL, "r", &info) == RS_INVALID_ARGUMENT);
  CHECK(rs_report(store, NULL, &info) == RS_INVALID_ARGUMENT);
  CHECK(rs_report(store, "r", NULL) == RS_INVALID_ARGUMENT);
  CHECK(rs_sync(NULL, &generation) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "store is NULL") != NULL);
  CHECK(rs_durable_generation(NULL, "r", &generation) == RS_INVALID_ARGUMENT);
  CHECK(rs_durable_generation(store, NULL, &generation) == RS_INVALID_ARGUMENT);
  CHECK(rs_durable_generation(store, "r", NULL) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "generation is NULL") != NULL);
  CHECK(rs_wait_durable(NULL, "r", 1) == RS_INVALID_ARGUMENT);
  CHECK(rs_wait_durable(store, NULL, 1) == RS_INVALID_ARGUMENT);
  CHECK(rs_start_sync(NULL) == RS_INVALID_ARGUMENT);
  CHECK(strstr(rs_last_error(), "store is NULL") != NULL);
  CHECK(rs_stats_get(NULL, &stats) == RS_INVALID_ARGUMENT);
  CHECK(rs_stats_get(store, NULL) == RS_INVALID_ARGUMENT);
  CHECK(rs_region_count(NULL) == 0);
  /* A successful call clears the last error. */
  CHECK(rs_stats_get(store, &stats) == RS_OK);
  CHECK(strcmp(rs_last_error(), "") == 0);
  rs_close(store);
  /* Not a store: corruption, not a crash. */
  FILE* junk = fopen(path, "wb");
  CHECK(junk != NULL);
  if (junk != NULL) {
    static unsigned char zeros[65536];
    fwrite(zeros, 1, sizeof zeros, junk);
    fclose(junk);
  }
  CHECK(rs_open(path, 0, NULL, &store) == RS_CORRUPTION);
  CHECK(store == NULL);
  rs_create_options_init(NULL);
  rs_open_options_init(NULL);
}

enum { kThreads = 8, kThreadRounds = 16, kThreadBytes = 4096 };

struct committer {
  rs_store* store;
  int index;
  int failures;
};

static void thread_payload(unsigned char* bytes, int index, int round) {
  fill(bytes, kThreadBytes, (unsigned)(index * 1000 + round));
}

static void* commit_in_thread(void* argument) {
  struct committer* self = argument;
  char name[16];
  unsigned char bytes[kThreadBytes];
  snprintf(name, sizeof name, "t%d", self->index);
  for (int round = 1; round <= kThreadRounds; ++round) {
    uint64_t generation = 0;
    thread_payload(bytes, self->index, round);
    if (rs_commit(self->store, name, bytes, sizeof bytes, RS_PWRITE_FDATASYNC, &generation) !=
            RS_OK ||
        generation != (uint64_t)round) {
      ++self->failures;
    }
  }
  return NULL;
}

static void test_threads(const char* dir) {
  char path[4096];
  char names[kThreads][16];
  rs_checkpoint_spec specs[kThreads];
  snprintf(path, sizeof path, "%s/threads.rs", dir);
  for (int t = 0; t < kThreads; ++t) {
    snprintf(names[t], sizeof names[t], "t%d", t);
    specs[t].name = names[t];
    specs[t].capacity = kThreadBytes;
    specs[t].layout = RS_LAYOUT_AUTO;
  }
  rs_create_options options;
  rs_create_options_init(&options);
  options.checkpoints = specs;
  options.checkpoint_count = kThreads;
  options.replace_existing = 1;
  CHECK(rs_create(path, 0, &options) == RS_OK);
  rs_store* store = NULL;
  CHECK(rs_open(path, 1, NULL, &store) == RS_OK);
  if (store == NULL) return;
  pthread_t threads[kThreads];
  struct committer committers[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    committers[t].store = store;
    committers[t].index = t;
    committers[t].failures = 0;
    CHECK(pthread_create(&threads[t], NULL, commit_in_thread, &committers[t]) == 0);
  }
  for (int t = 0; t < kThreads; ++t) {
    CHECK(pthread_join(threads[t], NULL) == 0);
    CHECK(committers[t].failures == 0);
  }
  rs_stats stats;
  CHECK(rs_stats_get(store, &stats) == RS_OK);
  CHECK(stats.by_mode[RS_PWRITE_FDATASYNC].commits == kThreads * kThreadRounds);
  CHECK(stats.by_mode[RS_PWRITE_FDATASYNC].flushes <= kThreads * kThreadRounds);
  for (int t = 0; t < kThreads; ++t) {
    unsigned char expected[kThreadBytes];
    unsigned char got[kThreadBytes];
    rs_meta meta;
    thread_payload(expected, t, kThreadRounds);
    CHECK(rs_load(store, names[t], got, sizeof got, &meta) == RS_OK);
    CHECK(meta.generation == kThreadRounds && memcmp(got, expected, sizeof got) == 0);
  }
  rs_close(store);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  test_version();
  test_store(argv[1]);
  test_sync(argv[1]);
  test_nulls(argv[1]);
  test_threads(argv[1]);
  if (failures != 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("all C API checks passed\n");
  return 0;
}
