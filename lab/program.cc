#include "lab/program.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "lab/die.h"
#include "lab/text_cells.h"

namespace regionstore::bench {

FsInfo PrepareBenchDir(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) Die("cannot create " + dir + ": " + error.message());
  Result<FsInfo> fs = Io::Default()->StatFs(dir);
  if (!fs.ok()) Die(fs.status().ToString());
  return *fs;
}

bool HasRoom(const std::string& dir, uint64_t needed, const std::string& what) {
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(dir, error);
  if (error || space.available >= needed) return true;
  std::printf("### %s: skipped: %s free in %s, %s needed\n\n", what.c_str(),
              SizeName(space.available / kMiB * kMiB).c_str(), dir.c_str(),
              SizeName(needed / kMiB * kMiB).c_str());
  return false;
}

void WriteOutputFile(const std::string& path, const std::string& text, const char* flag) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) Die(std::string("cannot write ") + flag + " file '" + path + "'");
}

}  // namespace regionstore::bench
