#!/usr/bin/env bash
# Checks regionctl's bash completion against a real store: commands, a
# command's flags, --durability's values, region names (also non-ASCII) for
# NAME, --region and --set, and files for a path.
# Usage: check-completion.sh REGIONCTL COMPLETION_FILE SCRATCH_DIR
set -euo pipefail
regionctl=$(cd "$(dirname "${1:?}")" && pwd)/$(basename "$1")
# shellcheck source=/dev/null
source "${2:?}"
scratch=${3:?}
mkdir -p "${scratch}"
cd "${scratch}"
"${regionctl}" create store.rs --size 64KiB --checkpoint 'état:1KiB' --checkpoint weights:4KiB \
  --force >/dev/null

failures=0
# complete WORDS... : the replies for the last word, sorted, one line.
complete_line() {
  COMP_WORDS=("${regionctl}" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  _regionctl
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() {
  local want=$1 got
  shift
  got=$(complete_line "$@")
  if [[ ${got} != "${want}" ]]; then
    echo "completion of '$*': got '${got}', want '${want}'" >&2
    failures=$((failures + 1))
  fi
}
expect "commit copy" co
expect "verify" ve
expect "--durability" commit store.rs --dur
expect "pwrite-fdatasync" commit store.rs --durability pw
expect "weights état" commit store.rs ""
expect "état" load store.rs é
expect "weights" dump store.rs --region w
expect "weights=" commit store.rs --set we
expect "store.rs" verify st
expect "weights" commit --durability sync store.rs w
if ((failures)); then
  echo "bash completion: ${failures} checks failed" >&2
  exit 1
fi
echo "bash completion: commands, flags, modes, region names and paths complete"
