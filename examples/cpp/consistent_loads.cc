// A consistent load: several regions as of one point of the commit history,
// while another process commits batches of them. A reader takes no lock.
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

using namespace regionstore;

int main() {
  CreateOptions options;
  options.checkpoints = {{"a", 64}, {"b", 64}};
  options.replace_existing = true;
  Must(Store::Create("loads.rgn", 0, options), "create");
  const pid_t writer = fork();
  if (writer == 0) {  // the writer: batches that give a and b the same number
    Store store = Must(Store::Open("loads.rgn", OpenMode::kReadWrite), "open");
    for (int i = 1; i <= 2000; ++i) {
      const std::string text = std::to_string(i);
      const std::span<const std::byte> piece[] = {Bytes(text)};
      const BatchMember members[] = {{"a", PayloadPieces(piece, 1)},
                                     {"b", PayloadPieces(piece, 1)}};
      Must(store.CommitBatch(members, Durability::kNone), "commit batch");
    }
    _exit(0);
  }
  Store reader = Must(Store::Open("loads.rgn", OpenMode::kReadOnly), "open");
  int loads = 0, mixed = 0;
  for (bool done = false; !done;) {
    done = waitpid(writer, nullptr, WNOHANG) == writer;
    const std::string_view names[] = {"a", "b"};
    std::vector<std::vector<std::byte>> set;
    Result<std::vector<CheckpointMeta>> metas = reader.LoadSet(names, set);
    if (!metas.ok()) continue;  // kNotFound before the first batch; kBusy if it kept racing
    ++loads;
    if (Text(set[0]) != Text(set[1])) ++mixed;
  }
  std::printf("consistent loads: %d sets loaded beside the writer's batches, %d mixed\n", loads,
              mixed);
  return mixed == 0 ? 0 : 1;
}
