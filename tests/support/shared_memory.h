// Memory shared between a test and the children it forks (or its threads):
// for the crash tests, which watch a child's progress word and SIGKILL it
// mid-commit, and the reader processes, whose counters the parent reads.
#ifndef REGIONSTORE_TESTS_SUPPORT_SHARED_MEMORY_H_
#define REGIONSTORE_TESTS_SUPPORT_SHARED_MEMORY_H_

#include <cstddef>
#include <new>
#include <type_traits>

namespace regionstore::testing {

// Anonymous MAP_SHARED memory of `size` bytes, zeroed, made before fork() so
// that parent and children see the same words. Failing to map fails the
// test (Catch REQUIRE).
class SharedBytes {
 public:
  explicit SharedBytes(size_t size);
  ~SharedBytes();
  SharedBytes(const SharedBytes&) = delete;
  SharedBytes& operator=(const SharedBytes&) = delete;
  void* data() const { return memory_; }

 private:
  void* memory_ = nullptr;
  size_t size_ = 0;
};

// Holds one T in SharedBytes (placement-new'd; trivially destructible, since
// a child's exit runs no destructor anyway). Lock-free atomics in it work
// across fork() as between threads.
template <typename T>
class SharedMemory {
  static_assert(std::is_trivially_destructible_v<T>);

 public:
  SharedMemory() : bytes_(sizeof(T)), value_(new (bytes_.data()) T()) {}
  T& operator*() const { return *value_; }
  T* operator->() const { return value_; }

 private:
  SharedBytes bytes_;
  T* value_;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_SHARED_MEMORY_H_
