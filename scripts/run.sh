#!/usr/bin/env bash
# The main job: installs what is missing, builds in Release, then on a 16 MiB
# store under build/release/lab writes 1 MiB at data offset 2 MiB in each
# durability mode (checking each by reading it back), shows the store with
# `regionctl inspect`, runs the region lab (bench/regionstore_bench: one-shot and
# long-lived arms, library beside raw syscalls, interleaved, then the sweeps) and
# the checkpoint commit benchmark's quick run (commits beside raw writes, LMDB and
# SQLite, a writer's open on a store holding 1 GiB commits, and batch commits of
# 16 x 4 KiB and 4 x 64 KiB beside LMDB and SQLite transactions; "ours" in every
# table is a store made with Store::Create's defaults, protocol 1 a labelled
# extra), then the clean-pages benchmark (commits into dirty pages and into
# pages writeback cleaned, beside the kernel's floors) and the training-loop
# benchmark (a loop of fixed steps checkpointing its state by the cookbook's
# atomic file replace, by a blocking durable commit and by a pipelined one)
# and the group-commit benchmark (durable 4 KiB commits from 1 to 8 threads
# through one handle, beside the raw system calls, RocksDB, LMDB and
# SQLite), and prints their
# tables with bench/report.py (the clean-pages tables as they come), which also draws the charts
# (build/release/lab/lab-bench.png, batch-bench.png and wait-bench.png).
# REGIONSTORE_BENCH_DIR moves the lab's files (default: build/release/lab).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/deps.sh --bench

cmake --preset release >/dev/null
# Only what this job runs: the test suite, the fuzz targets and the crash-VM
# programs are the test command's (scripts/test.sh).
cmake --build --preset release -j "$(nproc)" \
  --target regionctl regionstore_bench regionstore_commit_bench regionstore_clean_pages_bench \
  regionstore_training_bench regionstore_group_commit_bench

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
bench_dir="${REGIONSTORE_BENCH_DIR:-${lab}}"
echo "== the region lab (bench/regionstore_bench): 16 MiB store, 1 MiB at data offset 2 MiB, arms"
echo "   pwrite, pwrite_fdatasync, msync_sync, msync_async, none; one-shot and long-lived (x8);"
echo "   library and raw syscalls interleaved at random, 7 repetitions, medians; two folio regimes"
echo "   (files in ${bench_dir}; console output in ${lab}/lab-bench.txt and lab-sweep.txt)"
echo "   Google Benchmark's \"Library was built as DEBUG\" below is Debian's build of the framework"
echo "   (no NDEBUG in its own code; ours is Release): the report's third line measures its effect."
REGIONSTORE_BENCH_DIR="${bench_dir}" "${build}/bench/regionstore_bench" \
  --benchmark_repetitions=7 --benchmark_min_time=0.15 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
  --benchmark_out="${lab}/lab-bench.json" --benchmark_out_format=json \
  --benchmark_format=console > "${lab}/lab-bench.txt"
# The sweeps, shorter (3 repetitions): write sizes 4 KiB to 4 MiB, aligned and
# not; then the 1 MiB update on stores of 16 MiB, 256 MiB and 2 GiB (created,
# then removed at exit: 2 GiB of disk for a few seconds).
REGIONSTORE_LAB_SWEEPS=1 REGIONSTORE_LAB_STORE_SIZES=16,256,2048 \
REGIONSTORE_BENCH_DIR="${bench_dir}" "${build}/bench/regionstore_bench" \
  --benchmark_filter='^(sweep|storesize)/' --benchmark_repetitions=3 --benchmark_min_time=0.05 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
  --benchmark_out="${lab}/lab-sweep.json" --benchmark_out_format=json \
  --benchmark_format=console > "${lab}/lab-sweep.txt"
# Checkpoint commits at 4 KiB, 64 KiB and 1 MiB beside raw writes of the same
# size, and LMDB/SQLite; --quick: 5 interleaved rounds (full report in
# commit-bench.md, including the page-cache folio section the table leaves out).
# Then the writer open (section 4, 21 rounds): two stores of ~6 GiB each (two
# 1 GiB regions of three slots, and a 4 KiB one), one holding 1 GiB commits,
# created, filled and removed again: ~12 GiB of disk for 30-45 s here, almost
# all of it Store::Create's zero-fill; skipped, saying so, without the room.
# Then batches (section 6): 16 x 4 KiB and 4 x 64 KiB, a few seconds; working
# in place (section 7, ~20 s); readers that wait (section 8, a few seconds).
REGIONSTORE_BENCH_DIR="${bench_dir}" "${build}/bench/regionstore_commit_bench" --quick \
  --json="${lab}/commit-bench.json" > "${lab}/commit-bench.md"
# Commits into dirty and into clean pages (bench/clean_pages_bench.cc): one
# region the size of the state (4 KiB to 256 MiB), Commit kNone/kAsync and
# Store::Write kNone/kAsync beside pwrite + XXH3 and MADV_POPULATE_WRITE +
# memcpy + XXH3 into a region of the same file, the durable arms and their
# floor; 7 interleaved rounds per regime, ~40 s and ~3.4 GiB of disk for a
# few seconds (a size without the room is skipped, saying so).
REGIONSTORE_BENCH_DIR="${bench_dir}" "${build}/bench/regionstore_clean_pages_bench" \
  --json="${lab}/clean-pages-bench.json" > "${lab}/clean-pages-bench.md"
# A training loop of 5 ms steps checkpointing a 16 MiB and a 256 MiB state
# every K steps, K set so that the interval is twice a blocking durable
# commit's time (bench/training_loop_bench.cc): no checkpoint, a copy into
# memory, the cookbook (temp file, fsync, rename, fsync dir), Commit
# kPwriteFdatasync, Commit kNone + StartSync; 4 interleaved rounds, ~50 s
# and ~2.1 GiB of disk for a few seconds (skipped, saying so, without it).
REGIONSTORE_BENCH_DIR="${bench_dir}" "${build}/bench/regionstore_training_bench" \
  --json="${lab}/training-bench.json" > "${lab}/training-bench.md"
# Durable 4 KiB commits from 1, 2, 4 and 8 threads, each to its own region
# (bench/group_commit_bench.cc): ours (every thread calling one handle,
# whose durable commits share barriers), the same calls serialised by a
# mutex, 16-region batches, raw pwrite + fdatasync serialised, the raw
# group commit floor (one fdatasync shared by every write completed before
# it began), LMDB, SQLite and RocksDB; 5 interleaved rounds of 300 ms, ~55 s.
REGIONSTORE_BENCH_DIR="${bench_dir}" "${build}/bench/regionstore_group_commit_bench" \
  --json="${lab}/group-commit-bench.json" > "${lab}/group-commit-bench.md"
echo
# Debian's python3 (python3-matplotlib is installed for it), whatever is first on PATH.
/usr/bin/python3 bench/report.py "${lab}/lab-bench.json" "${lab}/lab-sweep.json" \
  --commits "${lab}/commit-bench.json" --chart "${lab}/lab-bench.png" \
  --batch-chart "${lab}/batch-bench.png" --wait-chart "${lab}/wait-bench.png"
echo
echo "== commits into dirty and into clean pages (bench/clean_pages_bench.cc)"
cat "${lab}/clean-pages-bench.md"
echo
echo "== a training loop that checkpoints (bench/training_loop_bench.cc)"
cat "${lab}/training-bench.md"
echo
echo "== many committing threads (bench/group_commit_bench.cc)"
cat "${lab}/group-commit-bench.md"
echo
echo "(charts: ${lab}/lab-bench.png, batch-bench.png, wait-bench.png; JSON: ${lab}/lab-bench.json, lab-sweep.json,"
echo " commit-bench.json, clean-pages-bench.json, training-bench.json, group-commit-bench.json; console output:"
echo " lab-bench.txt, lab-sweep.txt, commit-bench.md, clean-pages-bench.md, training-bench.md, group-commit-bench.md)"
