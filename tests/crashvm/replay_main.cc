// crashvm_replay: reads a blklogwrites (dm-log-writes) log and lists or
// builds the crash states it allows (crash_states.h).
//
//   crashvm_replay info LOG
//   crashvm_replay list LOG --seed S --max-random N --marker-sector M
//     one line per state on stdout: ID<TAB>description
//   --tear-unit-sectors U (list and build): torn writes keep a multiple of U
//     sectors (default 8: 4 KiB)
//   crashvm_replay build BASE LOG --seed S --max-random N --marker-sector M
//                  --state ID [--state ID ...] --out IMG
//     IMG may hold %d, replaced by the id (needed for more than one state);
//     one line per image: ID<TAB>IMG<TAB>description
//
// Exit 0; 1 on an error (stderr names the file and what is wrong); 2 on a
// bad command line.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "crashvm/crash_states.h"
#include "crashvm/dm_log.h"

namespace regionstore::testing {
namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: crashvm_replay info LOG\n"
               "       crashvm_replay list LOG --seed S --max-random N --marker-sector M\n"
               "                      [--tear-unit-sectors U]\n"
               "       crashvm_replay build BASE LOG --seed S --max-random N --marker-sector M "
               "--state ID [--state ID ...] --out IMG [--tear-unit-sectors U]\n");
  return 2;
}

struct Options {
  std::vector<std::string> positional;
  uint64_t seed = 0, marker_sector = 0;
  size_t max_random = 0;
  uint64_t tear_unit = StateBudget().tear_unit_sectors;
  bool have_seed = false, have_budget = false, have_marker = false;
  std::vector<size_t> states;
  std::string out;
};

bool ParseNumber(const char* text, uint64_t* value) {
  char* end = nullptr;
  errno = 0;
  *value = std::strtoull(text, &end, 10);
  return errno == 0 && end != text && *end == '\0';
}

bool Parse(int argc, char** argv, Options* options) {
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      options->positional.push_back(arg);
      continue;
    }
    if (i + 1 >= argc) return false;
    uint64_t number = 0;
    const char* value = argv[++i];
    if (arg == "--out") {
      options->out = value;
    } else if (!ParseNumber(value, &number)) {
      return false;
    } else if (arg == "--seed") {
      options->seed = number;
      options->have_seed = true;
    } else if (arg == "--max-random") {
      options->max_random = number;
      options->have_budget = true;
    } else if (arg == "--marker-sector") {
      options->marker_sector = number;
      options->have_marker = true;
    } else if (arg == "--tear-unit-sectors" && number > 0) {
      options->tear_unit = number;
    } else if (arg == "--state") {
      options->states.push_back(number);
    } else {
      return false;
    }
  }
  return true;
}

int Info(const std::string& path) {
  Expected<WriteLog> log = ReadWriteLog(path);
  if (!log.ok()) {
    std::fprintf(stderr, "crashvm_replay: %s\n", log.error().c_str());
    return 1;
  }
  uint64_t flushes = 0, writes = 0, bytes = 0, discards = 0, marks = 0;
  for (const LogEntry& entry : log.value().entries) {
    flushes += entry.is_flush();
    discards += entry.is_discard();
    marks += entry.is_mark();
    if (entry.is_write()) {
      ++writes;
      bytes += entry.data_bytes;
    }
  }
  std::printf(
      "entries %zu\nflushes %llu\nwrites %llu\nwrite_bytes %llu\ndiscards %llu\n"
      "marks %llu\nsuper_block_count %llu\nsector_size %u\nend %s\n",
      log.value().entries.size(), static_cast<unsigned long long>(flushes),
      static_cast<unsigned long long>(writes), static_cast<unsigned long long>(bytes),
      static_cast<unsigned long long>(discards), static_cast<unsigned long long>(marks),
      static_cast<unsigned long long>(log.value().super_entries), log.value().sector_size,
      log.value().end_reason.c_str());
  return 0;
}

std::string OutPath(const std::string& pattern, size_t id) {
  const size_t at = pattern.find("%d");
  if (at == std::string::npos) return pattern;
  return pattern.substr(0, at) + std::to_string(id) + pattern.substr(at + 2);
}

int Run(int argc, char** argv) {
  if (argc < 3) return Usage();
  const std::string command = argv[1];
  Options options;
  if (!Parse(argc, argv, &options)) return Usage();
  if (command == "info")
    return options.positional.size() == 1 ? Info(options.positional[0]) : Usage();
  const bool build = command == "build";
  if ((command != "list" && !build) || options.positional.size() != (build ? 2u : 1u) ||
      !options.have_seed || !options.have_budget || !options.have_marker) {
    return Usage();
  }
  if (build && (options.states.empty() || options.out.empty() ||
                (options.states.size() > 1 && options.out.find("%d") == std::string::npos))) {
    return Usage();
  }
  const std::string& log_path = options.positional[build ? 1 : 0];
  Expected<WriteLog> log = ReadWriteLog(log_path);
  if (!log.ok()) {
    std::fprintf(stderr, "crashvm_replay: %s\n", log.error().c_str());
    return 1;
  }
  StateBudget budget;
  budget.max_random = options.max_random;
  budget.tear_unit_sectors = options.tear_unit;
  const std::vector<CrashState> states =
      EnumerateCrashStates(log.value(), options.marker_sector, options.seed, budget);
  if (!build) {
    for (const CrashState& state : states) {
      std::printf("%zu\t%s\n", state.id, state.description.c_str());
    }
    return 0;
  }
  for (size_t id : options.states) {
    if (id >= states.size()) {
      std::fprintf(stderr, "crashvm_replay: %s: no state %zu (this seed and budget give %zu)\n",
                   log_path.c_str(), id, states.size());
      return 1;
    }
    const std::string out = OutPath(options.out, id);
    Expected<ImageStats> made = BuildStateImage(options.positional[0], log_path, log.value(),
                                                states[id], options.marker_sector, out);
    if (!made.ok()) {
      std::fprintf(stderr, "crashvm_replay: %s\n", made.error().c_str());
      return 1;
    }
    std::printf("%zu\t%s\t%s\n", id, out.c_str(), states[id].description.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace regionstore::testing

int main(int argc, char** argv) { return regionstore::testing::Run(argc, argv); }
