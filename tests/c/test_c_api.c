/* The C API, compiled as C11 (-std=c11 -Wall -Wextra -Werror -pedantic):
 * every call once on its good path and on its error paths. Exits 0 when
 * every check held; prints each failed check with its line. Takes a
 * scratch directory as its only argument. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regionstore/c.h"

static int failures = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      ++failures;                                                                \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__,     \
              __LINE__, #cond, rs_last_error());                                 \
    }                                                                            \
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
  CHECK(rs_open(path, 1, &store) == RS_OK);
  if (store == NULL) return;
  rs_store* second = NULL;
  CHECK(rs_open(path, 1, &second) == RS_BUSY);
  CHECK(second == NULL);
  CHECK(rs_data_size(store) == 1 << 20);

  /* The data area. */
  unsigned char bytes[4096], back[4096];
  fill(bytes, sizeof bytes, 1);
  for (int mode = RS_NONE; mode <= RS_PWRITE_FDATASYNC; ++mode) {
    CHECK(rs_write(store, 4096u * (unsigned)mode, bytes, sizeof bytes, (rs_durability)mode) == RS_OK);
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
  rs_close(store);

  /* A reader refuses writes. */
  rs_store* reader = NULL;
  CHECK(rs_open(path, 0, &reader) == RS_OK);
  CHECK(rs_commit(reader, "state", a, 1, RS_NONE, NULL) == RS_INVALID_ARGUMENT);
  rs_close(reader);
  CHECK(rs_open("/nonexistent/c.rs", 0, &reader) == RS_NOT_FOUND);
  rs_close(NULL);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  test_version();
  test_store(argv[1]);
  if (failures != 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("all C API checks passed\n");
  return 0;
}
