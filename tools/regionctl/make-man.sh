#!/usr/bin/env bash
# Writes regionctl's man page from the built tool's own --help texts, so the
# two cannot drift: help2man turns `regionctl --help` and `--version` into
# the page, and a COMMANDS section holds every subcommand's --help as printed.
# Usage: make-man.sh REGIONCTL OUTPUT
set -euo pipefail
regionctl=${1:?usage: make-man.sh REGIONCTL OUTPUT}
output=${2:?usage: make-man.sh REGIONCTL OUTPUT}
include=$(mktemp)
trap 'rm -f "${include}"' EXIT

# The subcommands, as `regionctl --help` lists them.
mapfile -t commands < <("${regionctl}" --help |
  awk '/^Subcommands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
((${#commands[@]})) || { echo "make-man: no subcommands in ${regionctl} --help" >&2; exit 1; }

{
  echo "[COMMANDS]"
  for command in "${commands[@]}"; do
    echo ".SS \"regionctl ${command}\""
    echo ".nf"
    # roff: a backslash is \e, and a line starting with . or ' needs \&.
    "${regionctl}" "${command}" --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
    echo ".fi"
  done
  echo "[SEE ALSO]"
  echo "The README and docs/ of regionstore: docs/REGIONCTL.md, docs/FORMAT.md."
} > "${include}"

help2man --no-info --no-discard-stderr --section 1 \
  --name "create, inspect, verify, read and write regionstore files" \
  --include "${include}" --output "${output}" "${regionctl}"
