// Checkpoint commits: each all or nothing after a kill or a power loss, each
// with a generation one above the last; Load returns the newest.
#include "common.h"

using namespace regionstore;

int main() {
  CreateOptions options;
  options.checkpoints = {{"config", 4096}};
  options.replace_existing = true;
  Must(Store::Create("commits.rgn", 0, options), "create");
  Store store = Must(Store::Open("commits.rgn", OpenMode::kReadWrite), "open");
  for (const char* text : {"v1", "v2", "v3"}) {
    // kNone: survives kill -9 (the page cache has it), not a power loss;
    // kSync or kPwriteFdatasync: survives both once it returns.
    const uint64_t generation =
        Must(store.Commit("config", Bytes(text), Durability::kSync), "commit");
    std::printf("commits: '%s' is generation %llu\n", text,
                static_cast<unsigned long long>(generation));
  }
  std::vector<std::byte> newest;
  const CheckpointMeta meta = Must(store.Load("config", newest), "load");
  std::printf("commits: load gives '%s', generation %llu\n", Text(newest).c_str(),
              static_cast<unsigned long long>(meta.generation));
  return Text(newest) == "v3" && meta.generation == 3 ? 0 : 1;
}
