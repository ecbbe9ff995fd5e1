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
# Before the passes, scripts/check-format.sh: every C and C++ file formatted
# by clang-format-14 as .clang-format says.
# Exits non-zero if any pass fails; every pass always runs.
#
# --quick: the loop to run before a commit (docs/TESTING.md, "The quick
# loop"): the format check, then in the Release build the regionstore_tests
# cases labelled "quick" (every library and regionctl case but the kill
# loops, power-loss simulators, big stores and benchmark smokes: ctest -L
# quick), with no filesystem matrix, sanitizer, Python or crash-VM pass.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=$(nproc)

if [[ ${1:-} == --quick ]]; then
  scripts/deps.sh
  start=${SECONDS}
  scripts/check-format.sh
  cmake --preset release >/dev/null
  cmake --build --preset release -j "${jobs}" --target regionstore_tests
  ctest --preset release -j "${jobs}" -L quick
  echo "=== quick: passed in $((SECONDS - start)) s (the full run is scripts/test.sh)"
  exit 0
elif (($#)); then
  echo "usage: scripts/test.sh [--quick]" >&2
  exit 2
fi

scripts/deps.sh --fuzz --crash-vm --python

fuzz_seconds=${FUZZ_SECONDS:-60}
failed=()
echo "=== format: scripts/check-format.sh"
if ! scripts/check-format.sh; then
  failed+=(format)
fi
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
  echo "test steps that failed: ${failed[*]}"
  exit 1
fi
echo "the format check and all four test passes (release, asan-ubsan, tsan, fuzz) passed"
