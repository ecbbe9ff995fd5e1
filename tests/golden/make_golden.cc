// regionstore_make_golden OUTPUT_DIR
//
// Writes the golden store files (see golden_writer.h and README.md) into
// OUTPUT_DIR, replacing any already there, and prints for each its size, its
// superblock checksum and the XXH3-64 of the whole file: the values
// golden_expected.cc hard-codes. A store marked `archived` is then packed into
// OUTPUT_DIR/<name>.tar.gz with `cmake -E tar` (the CMake that configured
// this build) and the raw file removed.
//
// Run it only for an intended format change: see tests/golden/README.md.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "format.h"
#include "golden/golden_writer.h"

namespace {

// The whole file, or an empty vector (and a message) if it can't be read.
std::vector<std::byte> ReadFile(const std::string& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  std::vector<std::byte> bytes(error ? 0 : size);
  std::ifstream in(path, std::ios::binary);
  if (error ||
      !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    std::cerr << "cannot read " << path << "\n";
    return {};
  }
  return bytes;
}

std::string Hex64(uint64_t value) {
  char buffer[19];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

uint64_t LoadLE64(const std::vector<std::byte>& bytes, size_t offset) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) {
    value |= uint64_t{std::to_integer<uint8_t>(bytes[offset + i])} << (8 * i);
  }
  return value;
}

// Packs `directory`/`name` into `name`.tar.gz beside it and removes it. The
// member's time is the golden creation time, not the generator's run.
// Returns false if cmake fails.
bool Archive(const std::string& directory, const std::string& name) {
  const std::string command = "cd '" + directory +
                              "' && '" REGIONSTORE_CMAKE_COMMAND "' -E tar cfz '" + name +
                              ".tar.gz' --format=gnutar "
                              "'--mtime=2026-05-28 20:26:40 UTC' '" +
                              name + "'";
  if (std::system(command.c_str()) != 0) {
    std::cerr << "failed: " << command << "\n";
    return false;
  }
  std::error_code error;
  std::filesystem::remove(std::filesystem::path(directory) / name, error);
  return !error;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " OUTPUT_DIR\n"
              << "Writes the golden regionstore files (format v1) into OUTPUT_DIR.\n";
    return 2;
  }
  const std::string directory = argv[1];
  for (const auto& store : regionstore::golden::GoldenStores()) {
    if (regionstore::Status s = regionstore::golden::WriteGoldenStore(directory, store); !s.ok()) {
      std::cerr << store.file_name << ": " << s.ToString() << "\n";
      return 1;
    }
    const std::vector<std::byte> bytes = ReadFile(directory + "/" + store.file_name);
    if (bytes.size() < regionstore::format::kSuperblockSize) return 1;
    std::cout << store.file_name << ": " << bytes.size() << " bytes, data_size " << store.data_size
              << ", superblock_checksum "
              << Hex64(LoadLE64(bytes, regionstore::format::kSuperblockChecksumOffset))
              << ", file XXH3-64 " << Hex64(regionstore::format::Checksum(bytes)) << "\n";
    if (store.archived) {
      if (!Archive(directory, store.file_name)) return 1;
      std::cout << "  packed into " << store.file_name << ".tar.gz\n";
    }
  }
  return 0;
}
