#include "support/shared_memory.h"

#include <sys/mman.h>

#include <catch2/catch.hpp>

namespace regionstore::testing {

SharedBytes::SharedBytes(size_t size) : size_(size) {
  memory_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(memory_ != MAP_FAILED);
}

SharedBytes::~SharedBytes() { ::munmap(memory_, size_); }

}  // namespace regionstore::testing
