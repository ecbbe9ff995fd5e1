/* A C program that keeps its state in a regionstore: creates a store with
 * one checkpoint region, commits a record durably, loads it back (asking
 * its length first) and checks it. Usage: c-consumer PATH */
#include <regionstore/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what) {
  fprintf(stderr, "c-consumer: %s: %s\n", what, rs_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH\n", argv[0]);
    return 2;
  }
  rs_checkpoint_spec regions[] = {{"state", 64 * 1024, RS_LAYOUT_AUTO}};
  rs_create_options options;
  rs_create_options_init(&options);
  options.checkpoints = regions;
  options.checkpoint_count = 1;
  options.replace_existing = 1;
  if (rs_create(argv[1], 1 << 20, &options) != RS_OK) return fail("create");

  rs_store* store = NULL;
  if (rs_open(argv[1], 1, NULL, &store) != RS_OK) return fail("open");
  const char record[] = "step 42: loss 0.125";
  uint64_t generation = 0;
  if (rs_commit(store, "state", record, sizeof record, RS_PWRITE_FDATASYNC, &generation) != RS_OK) {
    rs_close(store);
    return fail("commit");
  }

  /* The length first (a NULL buffer of capacity 0), then the bytes. */
  rs_meta meta;
  if (rs_load(store, "state", NULL, 0, &meta) != RS_BUFFER_TOO_SMALL) {
    rs_close(store);
    return fail("load (length)");
  }
  char* back = malloc(meta.length);
  if (back == NULL || rs_load(store, "state", back, meta.length, &meta) != RS_OK ||
      meta.length != sizeof record || memcmp(back, record, sizeof record) != 0) {
    free(back);
    rs_close(store);
    return fail("load");
  }
  printf("c-consumer: regionstore %s, generation %llu: %s\n", rs_version(),
         (unsigned long long)meta.generation, back);
  free(back);
  rs_close(store);
  return 0;
}
