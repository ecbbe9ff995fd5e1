// A batch: several regions committed as one. After a crash every member is
// new or every member is old; a reader's LoadSet never sees half of one.
#include "common.h"

using namespace regionstore;

int main() {
  CreateOptions options;
  options.checkpoints = {{"weights", 1 << 20}, {"optimizer", 1 << 20}, {"step", 8}};
  options.replace_existing = true;
  Must(Store::Create("batches.rgn", 0, options), "create");
  Store store = Must(Store::Open("batches.rgn", OpenMode::kReadWrite), "open");
  const std::string weights(300'000, 'w'), optimizer(200'000, 'o'), step = "step 100";
  const std::span<const std::byte> pieces[] = {Bytes(weights), Bytes(optimizer), Bytes(step)};
  const BatchMember members[] = {{"weights", PayloadPieces(&pieces[0], 1)},
                                 {"optimizer", PayloadPieces(&pieces[1], 1)},
                                 {"step", PayloadPieces(&pieces[2], 1)}};
  // Durable: one journal record and one flush for the whole batch.
  const std::vector<uint64_t> generations =
      Must(store.CommitBatch(members, Durability::kPwriteFdatasync), "commit batch");
  std::printf("batches: committed 3 regions as one, generations %llu %llu %llu\n",
              static_cast<unsigned long long>(generations[0]),
              static_cast<unsigned long long>(generations[1]),
              static_cast<unsigned long long>(generations[2]));
  std::vector<std::byte> back;
  Must(store.Load("step", back), "load");
  return Text(back) == step ? 0 : 1;
}
