// Debian's static libxxhash.a has the portable XXH3 functions but not the
// x86 dispatch entry points the library calls (lib/ includes
// xxh_x86dispatch.h; the dispatcher lives only in the shared object). The
// static guest program gets them here, forwarding to the portable code: the
// checksums are the same, only the SIMD choice differs.
#include <xxhash.h>

extern "C" {
XXH64_hash_t XXH3_64bits_dispatch(const void* input, size_t len);
XXH_errorcode XXH3_64bits_update_dispatch(XXH3_state_t* state, const void* input, size_t len);

XXH64_hash_t XXH3_64bits_dispatch(const void* input, size_t len) { return XXH3_64bits(input, len); }
XXH_errorcode XXH3_64bits_update_dispatch(XXH3_state_t* state, const void* input, size_t len) {
  return XXH3_64bits_update(state, input, len);
}
}
