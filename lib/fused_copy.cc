#include "fused_copy.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>
#endif

namespace regionstore::fused_copy {

#if defined(__x86_64__)
namespace {

// XXH3-64 of an input longer than 240 bytes, with the default secret (as
// specified by xxHash's XXH3, whose output is frozen since 0.8.0): eight
// 64-bit accumulators take the input in 64-byte stripes, the n-th stripe
// of each 1 KiB block keyed by the secret from byte 8n; after each block
// they are scrambled. Every whole stripe that ends before the input's last
// byte is taken so; then the input's last 64 bytes, overlapping, with their
// own key; then the accumulators are merged into one word.
constexpr size_t kStripe = 64;
constexpr size_t kSecretSize = 192;
constexpr size_t kStripesPerBlock = (kSecretSize - kStripe) / 8;
constexpr size_t kScrambleKey = kSecretSize - kStripe;
constexpr size_t kLastStripeKey = kSecretSize - kStripe - 7;
constexpr size_t kMergeKey = 11;

constexpr uint64_t kPrime32_1 = 0x9E3779B1u;
constexpr uint64_t kPrime32_2 = 0x85EBCA77u;
constexpr uint64_t kPrime32_3 = 0xC2B2AE3Du;
constexpr uint64_t kPrime64_1 = 0x9E3779B185EBCA87u;
constexpr uint64_t kPrime64_2 = 0xC2B2AE3D27D4EB4Fu;
constexpr uint64_t kPrime64_3 = 0x165667B19E3779F9u;
constexpr uint64_t kPrime64_4 = 0x85EBCA77C2B2AE63u;
constexpr uint64_t kPrime64_5 = 0x27D4EB2F165667C5u;

// The default secret, from libxxhash itself: the secret it derives from
// seed 0 is the default one.
struct DefaultSecret {
  alignas(64) unsigned char bytes[kSecretSize];
  DefaultSecret() { XXH3_generateSecret_fromSeed(bytes, 0); }
};

const unsigned char* Secret() {
  static const DefaultSecret secret;
  return secret.bytes;
}

__attribute__((target("avx2"), always_inline)) inline __m256i LoadVector(const void* at) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(at));
}

// One stripe, `low` and `high` its two halves, into the accumulators.
__attribute__((target("avx2"), always_inline)) inline void Accumulate(__m256i acc[2], __m256i low,
                                                                      __m256i high,
                                                                      const unsigned char* key) {
  const __m256i halves[2] = {low, high};
  for (int j = 0; j < 2; ++j) {
    const __m256i keyed = _mm256_xor_si256(halves[j], LoadVector(key + 32 * j));
    // The low 32 bits of each keyed word times its high 32 bits, plus the
    // neighbouring word of the stripe (words swapped in pairs).
    const __m256i product = _mm256_mul_epu32(keyed, _mm256_srli_epi64(keyed, 32));
    const __m256i swapped = _mm256_shuffle_epi32(halves[j], _MM_SHUFFLE(1, 0, 3, 2));
    acc[j] = _mm256_add_epi64(acc[j], _mm256_add_epi64(product, swapped));
  }
}

__attribute__((target("avx2"), always_inline)) inline void Scramble(__m256i acc[2],
                                                                    const unsigned char* key) {
  const __m256i prime = _mm256_set1_epi64x(static_cast<long long>(kPrime32_1));
  for (int j = 0; j < 2; ++j) {
    const __m256i mixed = _mm256_xor_si256(acc[j], _mm256_srli_epi64(acc[j], 47));
    const __m256i keyed = _mm256_xor_si256(mixed, LoadVector(key + 32 * j));
    // keyed * kPrime32_1 modulo 2^64, from two 32x32-bit products.
    const __m256i low = _mm256_mul_epu32(keyed, prime);
    const __m256i high = _mm256_mul_epu32(_mm256_srli_epi64(keyed, 32), prime);
    acc[j] = _mm256_add_epi64(low, _mm256_slli_epi64(high, 32));
  }
}

// Copies `count` whole stripes from `in` to `out`, stripe `first` of the
// payload first, and accumulates the values stored.
__attribute__((target("avx2"))) void CopyStripes(__m256i accumulators[2], std::byte* out,
                                                 const std::byte* in, uint64_t first,
                                                 uint64_t count, const unsigned char* secret) {
  // In locals: the stores to `out` could alias `accumulators`, and would
  // make the compiler reload them every stripe.
  __m256i acc[2] = {accumulators[0], accumulators[1]};
  size_t in_block = first % kStripesPerBlock;
  for (uint64_t s = 0; s < count; ++s) {
    __m256i low = LoadVector(in + s * kStripe);
    __m256i high = LoadVector(in + s * kStripe + 32);
    // From here on the stored and the hashed values are these registers:
    // the compiler may not load them from `in` again.
    asm("" : "+x"(low), "+x"(high));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + s * kStripe), low);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + s * kStripe + 32), high);
    Accumulate(acc, low, high, secret + 8 * in_block);
    if (++in_block == kStripesPerBlock) {
      Scramble(acc, secret + kScrambleKey);
      in_block = 0;
    }
  }
  accumulators[0] = acc[0];
  accumulators[1] = acc[1];
}

uint64_t Mix(uint64_t a, uint64_t b) {
  __extension__ using Wide = unsigned __int128;
  const Wide product = static_cast<Wide>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

uint64_t Word(const unsigned char* at) {
  uint64_t word;
  std::memcpy(&word, at, sizeof word);
  return word;
}

// Walks the pieces as one run of bytes.
class PieceCursor {
 public:
  explicit PieceCursor(std::span<const std::span<const std::byte>> pieces) : pieces_(pieces) {}

  // The rest of the current piece (empty at the end).
  std::span<const std::byte> Rest() {
    while (index_ < pieces_.size() && at_ == pieces_[index_].size()) {
      ++index_;
      at_ = 0;
    }
    return index_ < pieces_.size() ? pieces_[index_].subspan(at_) : std::span<const std::byte>();
  }
  void Skip(size_t bytes) { at_ += bytes; }
  // Copies the next `bytes` bytes, across pieces, to `out`.
  void CopyTo(std::byte* out, uint64_t bytes) {
    while (bytes > 0) {
      const std::span<const std::byte> rest = Rest();
      const size_t take = static_cast<size_t>(std::min<uint64_t>(bytes, rest.size()));
      std::memcpy(out, rest.data(), take);
      out += take;
      bytes -= take;
      at_ += take;
    }
  }

 private:
  std::span<const std::span<const std::byte>> pieces_;
  size_t index_ = 0;
  size_t at_ = 0;
};

__attribute__((target("avx2"))) uint64_t CopyChecksummedAvx2(
    std::byte* out, std::span<const std::span<const std::byte>> pieces, uint64_t length) {
  const unsigned char* secret = Secret();
  __m256i acc[2] = {
      _mm256_setr_epi64x(static_cast<long long>(kPrime32_3), static_cast<long long>(kPrime64_1),
                         static_cast<long long>(kPrime64_2), static_cast<long long>(kPrime64_3)),
      _mm256_setr_epi64x(static_cast<long long>(kPrime64_4), static_cast<long long>(kPrime32_2),
                         static_cast<long long>(kPrime64_5), static_cast<long long>(kPrime32_1))};
  const uint64_t stripes = (length - 1) / kStripe;
  PieceCursor cursor(pieces);
  uint64_t done = 0;
  while (done < stripes) {
    const std::span<const std::byte> rest = cursor.Rest();
    const uint64_t whole = std::min<uint64_t>(rest.size() / kStripe, stripes - done);
    if (whole > 0) {
      CopyStripes(acc, out + done * kStripe, rest.data(), done, whole, secret);
      cursor.Skip(static_cast<size_t>(whole * kStripe));
      done += whole;
      continue;
    }
    // A stripe across pieces: gathered into a private buffer, which alone
    // is then stored and hashed.
    alignas(32) std::byte gathered[kStripe];
    cursor.CopyTo(gathered, kStripe);
    CopyStripes(acc, out + done * kStripe, gathered, done, 1, secret);
    ++done;
  }
  cursor.CopyTo(out + done * kStripe, length - done * kStripe);
  // The last 64 bytes, read back from where they were stored.
  const std::byte* last = out + length - kStripe;
  Accumulate(acc, LoadVector(last), LoadVector(last + 32), secret + kLastStripeKey);

  alignas(32) uint64_t words[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(words), acc[0]);
  _mm256_store_si256(reinterpret_cast<__m256i*>(words + 4), acc[1]);
  uint64_t checksum = length * kPrime64_1;
  for (size_t i = 0; i < 4; ++i) {
    const unsigned char* key = secret + kMergeKey + 16 * i;
    checksum += Mix(words[2 * i] ^ Word(key), words[2 * i + 1] ^ Word(key + 8));
  }
  checksum ^= checksum >> 37;
  checksum *= 0x165667919E3779F9u;
  checksum ^= checksum >> 32;
  return checksum;
}

}  // namespace

bool Available() {
  static const bool available = __builtin_cpu_supports("avx2");
  return available;
}

uint64_t CopyChecksummed(std::byte* out, std::span<const std::span<const std::byte>> pieces,
                         uint64_t length) {
  return CopyChecksummedAvx2(out, pieces, length);
}

#else

bool Available() { return false; }

uint64_t CopyChecksummed(std::byte*, std::span<const std::span<const std::byte>>, uint64_t) {
  std::abort();
}

#endif

}  // namespace regionstore::fused_copy
