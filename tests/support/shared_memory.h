// Memory shared between a test and the children it forks: for the crash
// tests, which watch a child's progress word and SIGKILL it mid-commit.
#ifndef REGIONSTORE_TESTS_SUPPORT_SHARED_MEMORY_H_
#define REGIONSTORE_TESTS_SUPPORT_SHARED_MEMORY_H_

#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <new>
#include <type_traits>

namespace regionstore::testing {

// Anonymous MAP_SHARED memory made before fork(), so parent and children see
// the same words. Holds one T (placement-new'd, trivially destructible).
template <typename T>
class SharedMemory {
  static_assert(std::is_trivially_destructible_v<T>);

 public:
  SharedMemory() {
    memory_ = ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(memory_ != MAP_FAILED);
    value_ = new (memory_) T();
  }
  ~SharedMemory() { ::munmap(memory_, sizeof(T)); }
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  T& operator*() const { return *value_; }
  T* operator->() const { return value_; }

 private:
  void* memory_ = nullptr;
  T* value_ = nullptr;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_SHARED_MEMORY_H_
