#include "lab/folio_census.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "lab/die.h"
#include "lab/raw_io.h"
#include "lab/text_cells.h"

namespace regionstore::bench {

FolioCensus CensusOf(const std::string& path, uint64_t offset, uint64_t length) {
  FolioCensus census;
  const auto page_size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset & ~(page_size - 1);
  const uint64_t end = (offset + length + page_size - 1) & ~(page_size - 1);
  census.pages = (end - start) / page_size;
  const Fd file(path, O_RDONLY | O_CLOEXEC);
  const FileMapping mapping(file.get(), start, end - start, /*writable=*/false, path);
  const auto* bytes = reinterpret_cast<const volatile unsigned char*>(mapping.data());
  std::vector<unsigned char> residency(census.pages);
  if (::mincore(mapping.data(), end - start, residency.data()) != 0) Die(Errno("mincore", path));
  const int pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  const int flags = ::open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
  const auto read_u64 = [](int fd, uint64_t index, uint64_t& out) {
    return ::pread(fd, &out, 8, static_cast<off_t>(index * 8)) == 8;
  };
  constexpr uint64_t kHead = uint64_t{1} << 15;  // KPF_COMPOUND_HEAD
  constexpr uint64_t kTail = uint64_t{1} << 16;  // KPF_COMPOUND_TAIL
  census.available = pagemap >= 0 && flags >= 0;
  if (!census.available) census.why_not = "needs root (/proc/kpageflags)";
  const uint64_t first_virtual = reinterpret_cast<uintptr_t>(mapping.data()) / page_size;
  for (uint64_t i = 0; i < census.pages && census.available; ++i) {
    if ((residency[i] & 1) == 0) continue;
    (void)bytes[i * page_size];  // maps the cached page; reads nothing in
    uint64_t entry = 0;
    if (!read_u64(pagemap, first_virtual + i, entry)) {
      census.available = false;
      census.why_not = "cannot read /proc/self/pagemap";
      break;
    }
    if ((entry >> 63) == 0) continue;  // evicted since mincore
    const uint64_t frame = entry & ((uint64_t{1} << 55) - 1);
    if (frame == 0) {
      census.available = false;
      census.why_not = "frame numbers hidden (needs CAP_SYS_ADMIN)";
      break;
    }
    ++census.resident;
    uint64_t page_flags = 0;
    if (!read_u64(flags, frame, page_flags)) {
      census.available = false;
      census.why_not = "cannot read /proc/kpageflags";
      break;
    }
    if ((page_flags & (kHead | kTail)) != 0) ++census.in_large_folios;
    if ((page_flags & kHead) != 0) {
      uint64_t pages_in_folio = 1;
      uint64_t next = 0;
      while (pages_in_folio < 512 && read_u64(flags, frame + pages_in_folio, next) &&
             (next & kTail) != 0) {
        ++pages_in_folio;
      }
      ++census.folios[pages_in_folio * page_size];
    } else if ((page_flags & kTail) == 0) {
      ++census.folios[page_size];
    }
  }
  if (pagemap >= 0) ::close(pagemap);
  if (flags >= 0) ::close(flags);
  return census;
}

std::string DescribeCensus(const FolioCensus& census) {
  if (!census.available) return "unknown: " + census.why_not;
  std::string text = std::to_string(census.resident);
  text += "/";
  text += std::to_string(census.pages);
  text += " pages cached, ";
  text += census.resident == 0 ? std::string("0")
                               : Fixed(100.0 * static_cast<double>(census.in_large_folios) /
                                           static_cast<double>(census.resident),
                                       0);
  text += "% in large folios (";
  bool first = true;
  for (const auto& [bytes, count] : census.folios) {
    if (!first) text += " ";
    first = false;
    text += std::to_string(count);
    text += "x";
    text += SizeName(bytes);
  }
  if (census.in_large_folios > 0)
    text += first ? "inside larger folios" : " + tails of larger ones";
  text += ")";
  return text;
}

std::string CensusText(const std::string& path, uint64_t offset, uint64_t length) {
  return DescribeCensus(CensusOf(path, offset, length));
}

}  // namespace regionstore::bench
