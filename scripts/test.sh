#!/usr/bin/env bash
# Installs what is missing, then builds and runs the tests in four passes:
#  - release:    the whole suite (Release); then installs into a scratch
#                prefix and builds and runs the consumer examples against it;
#                then builds the Debian packages, unpacks them and builds the
#                consumers against them, and configures a FetchContent consumer
#                without the tools' dependencies (scripts/check-packages.sh);
#                then installs the Python package into a fresh virtual
#                environment and runs its pytest suite (scripts/test-python.sh);
#                then the real-kernel crash run (scripts/crash-vm.sh: a QEMU
#                guest on ext4, XFS and btrfs, about 1,500 crash states, two
#                workloads at a time, 4-5 minutes);
#  - asan-ubsan: the whole suite under AddressSanitizer + UBSan (the long
#                randomized cases at a quarter of their count);
#  - tsan:       ThreadSanitizer over the cases it can check: threads of one
#                process sharing a store, and regionctl's signal handlers
#                (docs/TESTING.md says why the others are not built there);
#  - fuzz:       the libFuzzer targets (clang-14, ASan+UBSan) from the
#                checked-in seed corpus: the store's for FUZZ_SECONDS (default
#                60), the other two for half of it each, in turn.
# Exits non-zero if any pass fails; every pass always runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/deps.sh --fuzz --crash-vm --python

jobs=$(nproc)
fuzz_seconds=${FUZZ_SECONDS:-60}
failed=()
for preset in release asan-ubsan tsan fuzz; do
  echo "=== ${preset}: configure, build, test"
  configure=(cmake --preset "${preset}")
  test_jobs=${jobs}
  if [[ ${preset} == fuzz ]]; then
    configure+=(-DREGIONSTORE_FUZZ_SECONDS="${fuzz_seconds}")
    test_jobs=2  # the store fuzzer on one core, the other two in turn on the other
  fi
  start=${SECONDS}
  if "${configure[@]}" >/dev/null &&
     cmake --build --preset "${preset}" -j "${jobs}" &&
     ctest --preset "${preset}" -j "${test_jobs}" &&
     { [[ ${preset} != release ]] ||
       { REGIONSTORE_REQUIRE_MAN=1 scripts/check-install.sh "build/${preset}" &&
         scripts/check-packages.sh "build/${preset}" && scripts/test-python.sh "build/${preset}" &&
         scripts/crash-vm.sh --build "build/${preset}"; }; }; then
    if [[ ${preset} == fuzz ]]; then cat build/fuzz/tests/fuzz/work/*/summary.txt; fi
    echo "=== ${preset}: passed in $((SECONDS - start)) s"
  else
    echo "=== ${preset}: FAILED after $((SECONDS - start)) s"
    failed+=("${preset}")
  fi
done
if ((${#failed[@]})); then
  echo "test passes that failed: ${failed[*]}"
  exit 1
fi
echo "all four test passes (release, asan-ubsan, tsan, fuzz) passed"
