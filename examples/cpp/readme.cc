// The README's example (section "Example"), as a program: a test checks that
// the README shows this function's code, and ctest runs the program.
#include <regionstore/regionstore.h>

#include <cstdio>
#include <string>
#include <vector>

// --- the README's example, from here ---
#include <regionstore/regionstore.h>
using namespace regionstore;

Status SaveAndLoad(std::span<const std::byte> state) {
  CreateOptions options;
  options.checkpoints = {{"state", 64 << 10}};  // one region of up to 64 KiB
  if (Status s = Store::Create("app.rgn", 16 << 20, options); !s.ok()) return s;
  Result<Store> store = Store::Open("app.rgn", OpenMode::kReadWrite);
  if (!store.ok()) return store.status();  // kBusy: another writer holds it
  // Raw bytes in the 16 MiB data area: durable once this returns, not atomic.
  if (Status s = store->Write(2 << 20, state, Durability::kSync); !s.ok()) return s;
  // A checkpoint: all or nothing, durable once this returns.
  Result<uint64_t> generation = store->Commit("state", state, Durability::kPwriteFdatasync);
  if (!generation.ok()) return generation.status();
  // Or commit at the cost of a copy, and make it durable later: one Sync()
  // covers every commit that returned before it.
  if (Result<uint64_t> later = store->Commit("state", state, Durability::kNone); !later.ok()) {
    return later.status();
  }
  if (Result<SyncReport> synced = store->Sync(); !synced.ok()) return synced.status();
  std::vector<std::byte> copy;  // a reader in any process can do this, without a lock
  return store->Load("state", copy).status();
}
// --- to here ---

int main() {
  const std::string text = "the application's state";
  const std::vector<std::byte> state(reinterpret_cast<const std::byte*>(text.data()),
                                     reinterpret_cast<const std::byte*>(text.data()) + text.size());
  if (Status s = SaveAndLoad(state); !s.ok()) {
    std::fprintf(stderr, "readme example: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("readme example: saved and loaded %zu bytes in app.rgn\n", state.size());
  return 0;
}
