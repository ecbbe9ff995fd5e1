#!/usr/bin/env bash
# Checks that every C and C++ file of the repository is formatted as
# .clang-format says, by clang-format-14 (Debian 12's; scripts/deps.sh
# installs it). Another version may format the same file differently, so
# the check pins this one.
#
# Usage: scripts/check-format.sh [ROOT]   (ROOT: the tree, default this one)
# Prints each file that differs, with the first lines of the change, and
# exits 1; prints "check-format: ok (N files)" and exits 0 when none does.
# To fix: clang-format-14 -i FILE... (or scripts/check-format.sh --fix).
set -euo pipefail
fix=0
if [[ ${1:-} == --fix ]]; then fix=1; shift; fi
root=${1:-"$(dirname "${BASH_SOURCE[0]}")/.."}
cd "${root}"
formatter=clang-format-14
if ! command -v "${formatter}" >/dev/null; then
  echo "check-format: ${formatter} is not installed (scripts/deps.sh installs it)" >&2
  exit 2
fi
# The tracked files in a git checkout, every file otherwise (an unpacked
# tarball, a scratch tree).
if git rev-parse --show-toplevel >/dev/null 2>&1 &&
   [[ $(git rev-parse --show-toplevel) == "$(pwd -P)" ]]; then
  mapfile -d '' files < <(git ls-files -z -- '*.c' '*.cc' '*.h')
else
  mapfile -d '' files < <(find . -path ./build -prune -o -path ./.git -prune -o \
    -type f \( -name '*.c' -o -name '*.cc' -o -name '*.h' \) -print0 | sort -z)
fi
if ((fix)); then
  "${formatter}" -i -- "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi
# One clang-format run over every file names the ones that differ (its
# --dry-run warns once per change, "FILE:LINE:COL: error: code should be
# clang-formatted"); only those are formatted again to show the change.
mapfile -t differ < <("${formatter}" --dry-run --Werror -- "${files[@]}" 2>&1 |
  sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
bad=0
for file in "${differ[@]}"; do
  file=${file#./}
  echo "${file}: not formatted as .clang-format says (fix: ${formatter} -i ${file})"
  "${formatter}" "${file}" | diff -u --label "${file}" --label "${file} (formatted)" \
    "${file}" - | sed -n '3,12p' || true
  bad=$((bad + 1))
done
if ((bad)); then
  echo "check-format: ${bad} of ${#files[@]} files differ from ${formatter}'s output"
  exit 1
fi
echo "check-format: ok (${#files[@]} files)"
