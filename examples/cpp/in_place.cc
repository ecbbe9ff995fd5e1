// A commit filled in place: the payload is written straight into the
// region's free slot through the mapping (no copy of it anywhere else),
// then published as one commit. Until Finish, readers see the old commit.
#include <cstring>

#include "common.h"

using namespace regionstore;

int main() {
  CreateOptions options;
  options.checkpoints = {{"matrix", 1 << 20}};
  options.replace_existing = true;
  Must(Store::Create("in_place.rgn", 0, options), "create");
  Store store = Must(Store::Open("in_place.rgn", OpenMode::kReadWrite), "open");
  PendingCommit pending = Must(store.BeginCommit("matrix", 1 << 20), "begin commit");
  std::span<std::byte> slot = pending.payload();
  auto* values = reinterpret_cast<float*>(slot.data());
  const size_t count = 1000;
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i) * 0.5f;
  const uint64_t generation =
      Must(pending.Finish(count * sizeof(float), Durability::kPwriteFdatasync), "finish");
  std::vector<std::byte> back;
  Must(store.Load("matrix", back), "load");
  float last = 0;
  std::memcpy(&last, back.data() + (count - 1) * sizeof(float), sizeof last);
  std::printf("in place: generation %llu holds %zu floats, the last %.1f\n",
              static_cast<unsigned long long>(generation), back.size() / sizeof(float), last);
  return back.size() == count * sizeof(float) && last == 499.5f ? 0 : 1;
}
