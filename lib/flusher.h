// The library's thread for background barriers (Store::StartSync): one per
// writable handle, started by its first background barrier and kept until
// the handle closes, so that a barrier costs a wake-up rather than a thread
// start (about 50-80 µs measured here, more than a 1 MiB copy). It runs
// File::DataSync and nothing else, one call at a time. Internal.
#ifndef REGIONSTORE_LIB_FLUSHER_H_
#define REGIONSTORE_LIB_FLUSHER_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "group_commit.h"
#include "regionstore/io.h"
#include "regionstore/status.h"

namespace regionstore {

// How many fork() calls made this process from the one that first asked
// (counted by a pthread_atfork handler that the first call registers): a
// handle that saw another count is a child's inherited copy.
uint64_t CurrentForkGeneration();

class Flusher {
 public:
  // Starts the thread. Errors: kIOError when no thread can be had.
  static Result<std::unique_ptr<Flusher>> Make();
  // Stops and joins the thread (a call in flight returns first). In a child
  // of fork() (CurrentForkGeneration changed since the handle opened), where
  // the thread does not exist, call Abandon instead.
  ~Flusher();
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;

  // Hands `file->DataSync()` to the thread, to run through `gate`. One
  // call at a time: the one before must have been collected by Collect.
  void Start(File* file, SyncGate* gate);
  // Whether the call Start began has returned.
  bool Done();
  // Waits for the call Start began and returns its result.
  Status Collect();

  // What a forked child does with its copy: leaves it, never locked,
  // never joined (the memory is the child's until it exits or execs).
  static void Abandon(std::unique_ptr<Flusher> flusher);

 private:
  Flusher() = default;
  void Run();

  std::mutex mutex_;
  std::condition_variable wake_;  // the thread: a call or the stop
  std::condition_variable done_;  // the caller: the call returned
  File* request_ = nullptr;
  SyncGate* gate_ = nullptr;
  std::optional<Status> result_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace regionstore

#endif  // REGIONSTORE_LIB_FLUSHER_H_
