#include "support/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <system_error>

#include "bytes.h"
#include "regionstore/io.h"

namespace regionstore::testing {

std::vector<std::byte> ReadWholeFile(const std::string& path) {
  // pread in bulk: a byte-by-byte stream read costs seconds per store under
  // the sanitizers.
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  INFO(path << ": " << error.message());
  REQUIRE(!error);
  return PreadFile(path, 0, size);
}

void WriteWholeFile(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  REQUIRE(out.good());
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::vector<std::byte> PreadFile(const std::string& path, uint64_t offset, uint64_t length) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::vector<std::byte> bytes(length);
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n =
        ::pread(fd, bytes.data() + done, length - done, static_cast<off_t>(offset + done));
    REQUIRE(n > 0);
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  return bytes;
}

void PwriteFile(const std::string& path, uint64_t offset, const std::vector<std::byte>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) ==
          static_cast<ssize_t>(bytes.size()));
  REQUIRE(::close(fd) == 0);
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::vector<std::byte> byte = PreadFile(path, offset, 1);
  byte[0] ^= std::byte{0x40};
  PwriteFile(path, offset, byte);
}

std::vector<std::byte> PatternBytes(uint64_t length, uint64_t seed) {
  std::mt19937_64 generator(seed * 0x9e3779b97f4a7c15ULL + 1);
  std::vector<std::byte> bytes(length);
  for (auto& b : bytes) b = static_cast<std::byte>(generator() & 0xff);
  return bytes;
}

std::string TempNameOf(const std::string& destination, uint64_t pid, const std::string& random,
                       const std::string& boot) {
  std::string owner_boot = boot;
  if (owner_boot.empty()) {
    auto id = Io::Default()->BootId();
    REQUIRE(id.ok());
    owner_boot = internal::HexBytes(std::span<const std::byte>(*id).first(4));
  }
  // Built by appending: GCC 12 warns falsely (-Wstringop-overflow) on "." + std::string.
  const std::filesystem::path path(destination);
  std::string name = ".";
  name += path.filename().string();
  name += ".tmp-";
  name += internal::HexNumber(pid, 8).substr(2);
  name += '-';
  name += owner_boot;
  name += '-';
  name += random;
  return (path.parent_path() / name).string();
}

}  // namespace regionstore::testing
