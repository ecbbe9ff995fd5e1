// A reader in another process that waits for the next commit: woken by the
// writer (one futex call), no polling.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "common.h"

using namespace regionstore;

int main() {
  CreateOptions options;
  options.checkpoints = {{"snapshot", 1024}};
  options.replace_existing = true;
  Must(Store::Create("waiting.rgn", 0, options), "create");
  Store writer = Must(Store::Open("waiting.rgn", OpenMode::kReadWrite), "open");
  Must(writer.Commit("snapshot", Bytes("first"), Durability::kNone), "commit");
  const pid_t child = fork();
  if (child == 0) {
    Store reader = Must(Store::Open("waiting.rgn", OpenMode::kReadOnly), "open");
    std::vector<std::byte> next;
    // Waits for a commit newer than generation 1, up to 30 s.
    const CheckpointMeta meta =
        Must(reader.WaitForNewer("snapshot", 1, std::chrono::seconds(30), next), "wait");
    std::printf("waiting reader: woken by generation %llu: '%s'\n",
                static_cast<unsigned long long>(meta.generation), Text(next).c_str());
    std::fflush(stdout);  // _exit does not flush stdio
    _exit(Text(next) == "second" ? 0 : 1);
  }
  Must(writer.Commit("snapshot", Bytes("second"), Durability::kNone), "commit");
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
