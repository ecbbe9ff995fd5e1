// libFuzzer's entry point for one target, chosen at compile time with
// -DREGIONSTORE_FUZZ_TARGET=<function in fuzz_targets.h>.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return regionstore::fuzz::REGIONSTORE_FUZZ_TARGET({data, size});
}
