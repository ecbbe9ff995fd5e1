// A deliberately broken protocol (test_hooks.h) for the life of a scope:
// the correct one comes back when the case ends, even on failure.
#ifndef REGIONSTORE_TESTS_SUPPORT_MUTATION_SCOPE_H_
#define REGIONSTORE_TESTS_SUPPORT_MUTATION_SCOPE_H_

#include "test_hooks.h"

namespace regionstore::testing {

struct MutationScope {
  explicit MutationScope(internal::Mutation m) { internal::SetMutation(m); }
  ~MutationScope() { internal::SetMutation(internal::Mutation::kCorrect); }
  MutationScope(const MutationScope&) = delete;
  MutationScope& operator=(const MutationScope&) = delete;
};

}  // namespace regionstore::testing

#endif  // REGIONSTORE_TESTS_SUPPORT_MUTATION_SCOPE_H_
