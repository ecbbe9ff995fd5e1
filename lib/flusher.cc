// Flusher: the handle's background-barrier thread (flusher.h).
#include "flusher.h"

#include <pthread.h>

#include <atomic>
#include <system_error>
#include <utility>

namespace regionstore {
namespace {

// Counts the fork() calls of this process's ancestry that made a child:
// a Flusher made under another count belongs to a parent process.
std::atomic<uint64_t> g_fork_generation{0};

void CountFork() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

uint64_t CurrentForkGeneration() {
  static const bool registered = [] {
    return ::pthread_atfork(nullptr, nullptr, CountFork) == 0;
  }();
  static_cast<void>(registered);
  return g_fork_generation.load(std::memory_order_relaxed);
}

Result<std::unique_ptr<Flusher>> Flusher::Make() {
  std::unique_ptr<Flusher> flusher(new Flusher());
  try {
    flusher->thread_ = std::thread([raw = flusher.get()] { raw->Run(); });
  } catch (const std::system_error& e) {
    return Status::Error(StatusCode::kIOError, "start the background barrier's thread", "",
                         e.what());
  }
  return flusher;
}

Flusher::~Flusher() {
  if (!thread_.joinable()) return;  // Make could not start it
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Flusher::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || request_ != nullptr; });
    if (request_ == nullptr) return;  // stopped, nothing asked
    File* const file = request_;
    SyncGate* const gate = gate_;
    lock.unlock();
    Status status = gate->Run([file] { return file->DataSync(); });
    lock.lock();
    request_ = nullptr;
    result_ = std::move(status);
    done_.notify_all();
  }
}

void Flusher::Start(File* file, SyncGate* gate) {
  {
    std::lock_guard lock(mutex_);
    result_.reset();
    request_ = file;
    gate_ = gate;
  }
  wake_.notify_one();
}

bool Flusher::Done() {
  std::lock_guard lock(mutex_);
  return result_.has_value();
}

Status Flusher::Collect() {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return result_.has_value(); });
  Status status = std::move(*result_);
  result_.reset();
  return status;
}

void Flusher::Abandon(std::unique_ptr<Flusher> flusher) {
  // Deliberately leaked: its destructor would lock a mutex the parent's
  // thread may have held at the fork, and join a thread that is not here.
  static_cast<void>(flusher.release());
}

}  // namespace regionstore
