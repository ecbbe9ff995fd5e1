#!/usr/bin/env bash
# run_fuzzer.sh FUZZER SEED_DIR WORK_DIR SECONDS MAX_LEN
#
# Runs one libFuzzer binary for SECONDS from the checked-in seeds in SEED_DIR
# (read only), keeping what it finds in WORK_DIR/corpus and any crashing input
# in WORK_DIR/crash-*; WORK_DIR/summary.txt gets the one-line summary. Fails on a crash, a leak, a sanitizer report or a
# timeout; prints executions and coverage either way.
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3 seconds=$4 max_len=$5
name=$(basename "${fuzzer}")
rm -rf "${work}"
mkdir -p "${work}/corpus"
log="${work}/fuzz.log"
# The store target writes a scratch file per input and a writer's open calls
# fdatasync: on tmpfs that costs nothing.
if [[ -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi
status=0
"${fuzzer}" -max_total_time="${seconds}" -max_len="${max_len}" -timeout=25 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="${work}/" \
  "${work}/corpus" "${seeds}" >"${log}" 2>&1 || status=$?
# The last status line ("#N DONE cov: C ft: F corp: ...") and the final stats.
last=$(grep -E '^#[0-9]+' "${log}" | tail -n 1 || true)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "${log}")
echo "${name}: ${runs:-?} executions in ${seconds} s; ${last}" | tee "${work}/summary.txt"
if ((status != 0)); then
  echo "${name}: FAILED (exit ${status}); the end of its log:"
  tail -n 60 "${log}"
  ls "${work}"/crash-* "${work}"/leak-* "${work}"/timeout-* "${work}"/oom-* 2>/dev/null || true
  exit 1
fi
