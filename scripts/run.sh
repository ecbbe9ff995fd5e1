#!/usr/bin/env bash
# The main job: installs what is missing, builds in Release, then on a 16 MiB
# store under build/release/lab writes 1 MiB at data offset 2 MiB in each
# durability mode (checking each by reading it back), shows the store with
# `regionctl inspect`, runs the durability benchmark's long-lived arms, then the
# checkpoint commit benchmark's quick run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/deps.sh

cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"

build=build/release
regionctl="${build}/tools/regionctl/regionctl"
lab="${build}/lab"
store="${lab}/lab.rgn"
mkdir -p "${lab}"

echo
echo "== store: ${store} ($(df -T "${lab}" | awk 'NR==2 {print $2}') on $(uname -sr))"
"${regionctl}" create "${store}" --size 16MiB --force
for mode in none async sync pwrite-fdatasync; do
  head -c 1048576 /dev/urandom > "${lab}/slice.bin"
  "${regionctl}" write "${store}" --offset 2MiB --durability "${mode}" --input "${lab}/slice.bin"
  "${regionctl}" read "${store}" --offset 2MiB --length 1MiB --output "${lab}/readback.bin"
  cmp "${lab}/slice.bin" "${lab}/readback.bin"
  echo "   read back 1 MiB at data offset 2 MiB: identical"
done
rm -f "${lab}/slice.bin" "${lab}/readback.bin"

echo
echo "== regionctl inspect ${store}"
"${regionctl}" inspect "${store}"

echo
echo "== durability benchmark: long-lived mapping, 8 x 1 MiB updates at data offset 2 MiB per iteration,"
echo "   7 repetitions; read the _median rows (bytes_per_second is GiB/s = the lab's MB/s / 1024)"
REGIONSTORE_BENCH_DIR="${lab}" "${build}/bench/regionstore_bench" \
  --benchmark_repetitions=7 --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true

echo
echo "== checkpoint commits vs the same syscalls without the library (and LMDB/SQLite when their"
echo "   -dev packages were installed at build time); --quick: 5 interleaved rounds"
REGIONSTORE_BENCH_DIR="${lab}" "${build}/bench/regionstore_commit_bench" --quick
