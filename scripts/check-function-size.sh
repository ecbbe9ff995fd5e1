#!/usr/bin/env bash
# Checks that no function of the files below is over 100 lines, counted by
# clang-tidy-14's readability-function-size (its LineThreshold: from the line
# of the body's opening brace to that of its closing one, blank and comment
# lines included; no other threshold).
#
# Usage: scripts/check-function-size.sh [BUILD_DIR [FILE...]]
#   BUILD_DIR: a configured build whose compile_commands.json gives each
#              file's flags (default: build/release)
#   FILE:      files to check instead of the list below (relative to the
#              repository or absolute)
# Prints each function over the threshold as FILE:LINE: NAME: N lines, and
# exits 1; prints "check-function-size: ok" and exits 0 when there is none.
# A file clang-tidy cannot parse fails the check with clang-tidy's output.
set -euo pipefail

# The files checked; a missing one is skipped (the owners are being written).
# The files the release 0.13 refactor of the protocol's owners touched.
files=(
  lib/barrier.cc
  lib/batch_commit.cc
  lib/batch_journal.cc
  lib/batch_log.cc
  lib/commit.cc
  lib/commit_in_place.cc
  lib/copy.cc
  lib/create.cc
  lib/ledger.cc
  lib/load.cc
  lib/load_set.cc
  lib/recovery.cc
  lib/shared_state.cc
  lib/store.cc
  lib/verify.cc
  lib/wait.cc
)

threshold=100
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${root}/build/release}
if (($# > 1)); then
  files=("${@:2}")
fi
if [[ ! -f ${build}/compile_commands.json ]]; then
  echo "check-function-size: ${build}/compile_commands.json not found (configure that build first)"
  exit 1
fi
command -v clang-tidy-14 >/dev/null || {
  echo "check-function-size: clang-tidy-14 not found (scripts/deps.sh installs it)"
  exit 1
}

# A file compiled twice (the library's hooked sources, with and without the
# test hooks) has two entries, and clang-tidy would parse it once for each:
# keep the first, in a database of our own.
scratch=$(mktemp -d)
trap 'rm -rf "${scratch}"' EXIT
python3 - "${build}/compile_commands.json" "${scratch}/compile_commands.json" <<'EOF'
import json, sys
seen, kept = set(), []
for entry in json.load(open(sys.argv[1], encoding="utf-8")):
    if entry["file"] not in seen:
        seen.add(entry["file"])
        kept.append(entry)
json.dump(kept, open(sys.argv[2], "w", encoding="utf-8"))
EOF

config="{Checks: '-*,readability-function-size', CheckOptions: [
  {key: readability-function-size.LineThreshold, value: ${threshold}},
  {key: readability-function-size.StatementThreshold, value: 4294967295}]}"
checked=0
over=0
for file in "${files[@]}"; do
  [[ ${file} == /* ]] || file=${root}/${file}
  [[ -f ${file} ]] || continue
  checked=$((checked + 1))
  if ! output=$(clang-tidy-14 -p "${scratch}" --quiet --config="${config}" "${file}" 2>&1); then
    echo "${output}"
    echo "check-function-size: clang-tidy-14 failed on ${file}"
    exit 1
  fi
  # "F:L:C: warning: function 'NAME' exceeds ..." then
  # "F:L:C: note: N lines including whitespace and comments (threshold T)".
  found=$(awk -v root="${root}/" '
    /warning: function .* exceeds recommended size/ {
      split($0, at, ":"); name = $0
      sub(/^[^'\'']*'\''/, "", name); sub(/'\''.*$/, "", name)
      where = at[1] ":" at[2]; sub("^" root, "", where)
    }
    / note: [0-9]+ lines including/ && where != "" {
      n = $0; sub(/.* note: /, "", n); sub(/ .*/, "", n)
      print where ": " name ": " n " lines"; where = ""
    }' <<<"${output}")
  if [[ -n ${found} ]]; then
    echo "${found}"
    over=$((over + $(wc -l <<<"${found}")))
  fi
done
if ((over > 0)); then
  echo "check-function-size: ${over} functions over ${threshold} lines" \
    "(readability-function-size, in ${checked} files)"
  exit 1
fi
echo "check-function-size: ok (${checked} files, no function over ${threshold} lines)"
