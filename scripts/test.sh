#!/usr/bin/env bash
# Installs what is missing, then builds and runs the whole test suite twice:
# plain (Release) and under AddressSanitizer + UndefinedBehaviorSanitizer.
# The Release pass also installs into a scratch prefix and builds and runs the
# consumer example against it (CMake package and pkg-config).
# Exits non-zero if either pass fails; both passes always run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/deps.sh

jobs=$(nproc)
failed=()
for preset in release asan-ubsan; do
  echo "=== ${preset}: configure, build, test"
  if cmake --preset "${preset}" >/dev/null &&
     cmake --build --preset "${preset}" -j "${jobs}" &&
     ctest --preset "${preset}" -j "${jobs}" &&
     { [[ ${preset} != release ]] || scripts/check-install.sh "build/${preset}"; }; then
    echo "=== ${preset}: passed"
  else
    echo "=== ${preset}: FAILED"
    failed+=("${preset}")
  fi
done
if ((${#failed[@]})); then
  echo "test passes that failed: ${failed[*]}"
  exit 1
fi
echo "both test passes (release, asan-ubsan) passed"
