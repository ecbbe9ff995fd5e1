// The folio census: where a file's pages sit in the page cache, in large
// folios or in 4 KiB ones. It decides what an msync or fdatasync writes back
// and how many faults a kept mapping takes, so the benchmarks print it beside
// their durable arms. Reads /proc/kpageflags, so it needs root; without it
// the census says "unknown" and why.
#ifndef REGIONSTORE_LAB_FOLIO_CENSUS_H_
#define REGIONSTORE_LAB_FOLIO_CENSUS_H_

#include <cstdint>
#include <map>
#include <string>

namespace regionstore::bench {

struct FolioCensus {
  bool available = false;
  std::string why_not;
  uint64_t pages = 0;                   // pages in the range
  uint64_t resident = 0;                // of which in the page cache
  uint64_t in_large_folios = 0;         // of which in a folio larger than one page
  std::map<uint64_t, uint64_t> folios;  // folio bytes -> folios whose head is in range
};

// Maps the range read-only, touches only pages already resident (mincore),
// so nothing is read in, and reads their frames' flags from /proc/kpageflags
// (root only). A large folio is a compound head page followed by tails.
FolioCensus CensusOf(const std::string& path, uint64_t offset, uint64_t length);

// "256/256 pages cached, 100% in large folios (1x1 MiB)".
std::string DescribeCensus(const FolioCensus& census);

// DescribeCensus(CensusOf(...)).
std::string CensusText(const std::string& path, uint64_t offset, uint64_t length);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_FOLIO_CENSUS_H_
