#include "support/commit_payloads.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "support/process.h"

namespace regionstore::testing {

// splitmix64's finaliser: a cheap, well-mixed function of one word.
uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t PayloadWord(const CommitId& id, uint64_t key, uint64_t index) {
  return index == 0 ? id.generation : Mix64(key + index);
}

void FillPayload(const CommitId& id, uint64_t size, std::vector<std::byte>& out) {
  out.resize(size);
  const uint64_t key = id.Key();
  for (uint64_t offset = 0, index = 0; offset < size; offset += 8, ++index) {
    const uint64_t word = PayloadWord(id, key, index);
    std::memcpy(out.data() + offset, &word, std::min<uint64_t>(8, size - offset));
  }
}

uint64_t FirstMismatch(const CommitId& id, std::span<const std::byte> bytes) {
  const uint64_t key = id.Key();
  for (uint64_t offset = 0, index = 0; offset < bytes.size(); offset += 8, ++index) {
    const uint64_t word = PayloadWord(id, key, index);
    const uint64_t n = std::min<uint64_t>(8, bytes.size() - offset);
    if (std::memcmp(bytes.data() + offset, &word, n) != 0) {
      for (uint64_t i = 0; i < n; ++i) {
        if (bytes[offset + i] != static_cast<std::byte>((word >> (8 * i)) & 0xff)) {
          return offset + i;
        }
      }
    }
  }
  return bytes.size();
}

uint64_t FirstWord(std::span<const std::byte> bytes) {
  uint64_t word = 0;
  if (!bytes.empty()) std::memcpy(&word, bytes.data(), std::min<size_t>(8, bytes.size()));
  return word;
}

std::string DescribeChild(int wait_status) {
  return DescribeWait(wait_status, "see ChildError in support/commit_payloads.h");
}

uint64_t SeedOr(uint64_t fixed) {
  if (const char* env = std::getenv("REGIONSTORE_CRASH_SEED"); env != nullptr && *env != '\0') {
    return std::strtoull(env, nullptr, 0);
  }
  return fixed;
}

}  // namespace regionstore::testing
