// The fuzz targets, as plain functions. libfuzzer_entry.cc turns each into a
// libFuzzer binary (clang, the `fuzz` preset); tests/test_fuzz_corpus.cc
// replays the seed corpus and every regression input through them in the
// ordinary test suite (any compiler, any sanitizer).
//
// Each returns 0 and never throws. A finding is a crash, a sanitizer report,
// or a broken invariant, which the target reports on stderr before calling
// abort(): an input the library accepted that breaks a promise (a region
// outside the file, Load disagreeing with verify, a commit that does not
// read back), or an error of a kind the API does not list.
#ifndef REGIONSTORE_TESTS_FUZZ_FUZZ_TARGETS_H_
#define REGIONSTORE_TESTS_FUZZ_FUZZ_TARGETS_H_

#include <cstdint>
#include <span>

namespace regionstore::fuzz {

// A store image (store_image.h) held in memory (memory_io.h), then every
// reader of a store file: ReadStoreInfo, VerifyRegions headers-only and
// full, a read-only Store with List, Load and View, and (by flag) a writer's
// open with recovery and a commit that must read back, changing bytes only
// where the format lets it.
int StoreFile(std::span<const uint8_t> input);
// The same checks on a real file in TMPDIR through Io::Default(): the corpus
// replay runs both, so the POSIX Io sees every input too.
int StoreFileOnDisk(std::span<const uint8_t> input);

// slot::DecodeHeader on 64 header bytes, for the region, slot and capacity
// in the input's first 16 bytes (the region index's top bit: recompute the
// header checksum first, so mutated fields reach the checks behind it). A
// header it accepts must re-encode to the same bytes.
int SlotHeader(std::span<const uint8_t> input);

// regionctl's argument parsing: ParseSize, ParseCheckpointSpec, QuoteName,
// ParseDurability and HumanBytes; the first byte picks one, the rest is the
// text.
int CliParse(std::span<const uint8_t> input);

}  // namespace regionstore::fuzz

#endif  // REGIONSTORE_TESTS_FUZZ_FUZZ_TARGETS_H_
