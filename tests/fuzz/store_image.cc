#include "store_image.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace regionstore::fuzz {
namespace {

uint64_t TakeLE(std::span<const uint8_t>& input, size_t width) {
  uint64_t value = 0;
  const size_t n = std::min(width, input.size());
  for (size_t i = 0; i < n; ++i) value |= uint64_t{input[i]} << (8 * i);
  input = input.subspan(n);
  return value;
}

void PutLE(std::vector<uint8_t>& out, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

}  // namespace

Image DecodeImage(std::span<const uint8_t> input) {
  Image image;
  image.flags = static_cast<uint8_t>(TakeLE(input, 1));
  image.file_size = std::min(TakeLE(input, 4), kMaxImageFileSize);
  while (input.size() >= 6) {
    Record record;
    record.offset = TakeLE(input, 4);
    // Two statements: as one call's arguments, input.size() could be read
    // before TakeLE shrinks `input` (g++ does that), and a record cut short
    // by the end of the input would then read 2 bytes past it.
    const size_t declared = TakeLE(input, 2);
    const size_t length = std::min<size_t>(declared, input.size());
    const auto* first = reinterpret_cast<const std::byte*>(input.data());
    record.bytes.assign(first, first + length);
    input = input.subspan(length);
    image.records.push_back(std::move(record));
  }
  return image;
}

std::vector<uint8_t> EncodeImage(std::span<const std::byte> file, uint8_t flags) {
  constexpr size_t kMergeGap = 16;
  constexpr size_t kMaxRecord = 65535;
  std::vector<uint8_t> out;
  out.push_back(flags);
  PutLE(out, file.size(), 4);
  size_t i = 0;
  while (i < file.size()) {
    if (file[i] == std::byte{0}) {
      ++i;
      continue;
    }
    // A run starts at i; extend it while the next non-zero byte is near.
    size_t end = i + 1;
    size_t zeros = 0;
    while (end < file.size() && end - i < kMaxRecord && zeros < kMergeGap) {
      zeros = file[end] == std::byte{0} ? zeros + 1 : 0;
      ++end;
    }
    end -= zeros;  // no trailing zeros
    PutLE(out, i, 4);
    PutLE(out, end - i, 2);
    for (size_t k = i; k < end; ++k) out.push_back(std::to_integer<uint8_t>(file[k]));
    i = end;
  }
  return out;
}

bool WriteImage(const Image& image, const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = ::ftruncate(fd, static_cast<off_t>(image.file_size)) == 0;
  for (const Record& record : image.records) {
    if (!ok || record.offset >= image.file_size) continue;
    const size_t length = static_cast<size_t>(
        std::min<uint64_t>(record.bytes.size(), image.file_size - record.offset));
    ok = ::pwrite(fd, record.bytes.data(), length, static_cast<off_t>(record.offset)) ==
         static_cast<ssize_t>(length);
  }
  ok = ::close(fd) == 0 && ok;
  return ok;
}

}  // namespace regionstore::fuzz
