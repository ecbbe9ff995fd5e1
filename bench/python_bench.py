#!/usr/bin/env python3
"""Commits from Python beside the same commits made from C++, LMDB (python3-lmdb)
and SQLite (sqlite3), in one interleaved run.

    VENV/bin/python bench/python_bench.py [--dir DIR] [--rounds 7] [--quick]

Run it with the interpreter of a virtual environment the package was
installed into (README, "Python"). Arms, each a store or database of its own
in DIR (default: the current directory; removed afterwards):
  py-none       Store.commit(name, data, 'none') from Python (4 KiB only)
  cpp-none      the same commits made from C++ in one call (Store._time_commits)
  py-pfd        Store.commit(..., 'pwrite-fdatasync') from Python
  cpp-pfd       the same from C++
  py-sync       Store.commit(..., 'sync') from Python
  cpp-sync      the same from C++
  lmdb          one put per write transaction, default sync (fsync at commit)
  sqlite        INSERT OR REPLACE of one row per transaction, WAL, synchronous=FULL
Each round runs every arm in a shuffled order, a batch of calls each, and
times every call alone; a round's figure is the arm's median call, the
table's the median over rounds. Beside each durable arm: device write
requests and KiB per call, from /proc/diskstats of the directory's device.
Prints the table; --json FILE also writes it as JSON.
"""

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

import lmdb

import regionstore

SIZES = {"4 KiB": 4096, "1 MiB": 1 << 20}


def device_of(path):
    """The /proc/diskstats name of the block device holding `path`, or None."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if int(fields[0]) == major and int(fields[1]) == minor:
                return fields[2]
    return None


def disk_writes(device):
    """(write requests, sectors written) of `device` so far."""
    if device is None:
        return (0, 0)
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == device:
                return (int(fields[7]), int(fields[9]))
    return (0, 0)


def filesystem_of(path):
    try:
        return subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", path], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


class Arms:
    def __init__(self, directory, size):
        self.size = size
        self.data = os.urandom(size)
        self.path = os.path.join(directory, f"py-bench-{size}.rs")
        regionstore.create(self.path, 4096, {"r": size}, replace=True)
        self.store = regionstore.open(self.path, "rw")
        self.lmdb_dir = os.path.join(directory, f"py-bench-{size}.lmdb")
        os.makedirs(self.lmdb_dir, exist_ok=True)
        self.env = lmdb.open(self.lmdb_dir, map_size=1 << 30)
        self.sqlite_path = os.path.join(directory, f"py-bench-{size}.sqlite")
        self.db = sqlite3.connect(self.sqlite_path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS kv (k INTEGER PRIMARY KEY, v BLOB)")

    def close(self):
        self.store.close()
        self.env.close()
        self.db.close()
        for path in (self.path, self.path + ".shm", self.sqlite_path, self.sqlite_path + "-wal",
                     self.sqlite_path + "-shm"):
            if os.path.exists(path):
                os.remove(path)
        shutil.rmtree(self.lmdb_dir, ignore_errors=True)

    def timed(self, call, count):
        nanos = []
        for _ in range(count):
            start = time.perf_counter_ns()
            call()
            nanos.append(time.perf_counter_ns() - start)
        return nanos

    def run(self, arm, count):
        data, store = self.data, self.store
        if arm.startswith("cpp-"):
            mode = {"cpp-none": "none", "cpp-pfd": "pwrite-fdatasync", "cpp-sync": "sync"}[arm]
            return store._time_commits("r", data, mode, count)
        if arm.startswith("py-"):
            mode = {"py-none": "none", "py-pfd": "pwrite-fdatasync", "py-sync": "sync"}[arm]
            return self.timed(lambda: store.commit("r", data, mode), count)
        if arm == "lmdb":
            def put():
                with self.env.begin(write=True) as txn:
                    txn.put(b"r", data)
            return self.timed(put, count)
        if arm == "sqlite":
            def insert():
                self.db.execute("BEGIN")
                self.db.execute("INSERT OR REPLACE INTO kv VALUES (1, ?)", (data,))
                self.db.execute("COMMIT")
            return self.timed(insert, count)
        raise ValueError(arm)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", default=".", help="where the stores and databases go")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 rounds, fewer calls")
    parser.add_argument("--json", help="also write the table here")
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds
    directory = tempfile.mkdtemp(prefix="regionstore-py-bench-", dir=args.dir)
    device = device_of(directory)
    durable = ["py-pfd", "cpp-pfd", "py-sync", "cpp-sync", "lmdb", "sqlite"]
    plan = {"4 KiB": ["py-none", "cpp-none"] + durable, "1 MiB": durable}
    calls = {"py-none": 20000, "cpp-none": 20000}
    durable_calls = {"4 KiB": 40 if args.quick else 100, "1 MiB": 10 if args.quick else 30}
    medians = {(size, arm): [] for size in plan for arm in plan[size]}
    io = {(size, arm): [0, 0, 0] for size in plan for arm in plan[size]}  # calls, requests, sectors
    try:
        arms = {size: Arms(directory, SIZES[size]) for size in plan}
        for size, arm_set in arms.items():  # warm up: first commits, files, page cache
            for arm in plan[size]:
                arm_set.run(arm, 3)
        for _ in range(rounds):
            order = [(size, arm) for size in plan for arm in plan[size]]
            random.shuffle(order)
            for size, arm in order:
                count = calls.get(arm, durable_calls[size])
                before = disk_writes(device)
                nanos = arms[size].run(arm, count)
                after = disk_writes(device)
                medians[(size, arm)].append(statistics.median(nanos))
                io[(size, arm)][0] += count
                io[(size, arm)][1] += after[0] - before[0]
                io[(size, arm)][2] += after[1] - before[1]
        for arm_set in arms.values():
            arm_set.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)

    def us(size, arm):
        return statistics.median(medians[(size, arm)]) / 1000

    print(f"Python commits beside C++, LMDB and SQLite: {rounds} interleaved rounds, medians")
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, Linux {platform.release()}, "
          f"{filesystem_of(args.dir)} on {device or '?'}; Python {platform.python_version()}, "
          f"regionstore {regionstore.version()}, py-lmdb {lmdb.__version__}, "
          f"SQLite {sqlite3.sqlite_version}")
    rows = []
    print(f"{'size':6} {'arm':9} {'µs/call':>10} {'calls/s':>9} {'req/call':>9} {'KiB/call':>9}")
    for size in plan:
        for arm in plan[size]:
            count, requests, sectors = io[(size, arm)]
            value = us(size, arm)
            row = {"size": size, "arm": arm, "us_per_call": round(value, 3),
                   "calls_per_s": round(1e6 / value, 1),
                   "write_requests_per_call": round(requests / count, 2),
                   "kib_written_per_call": round(sectors * 512 / 1024 / count, 1)}
            rows.append(row)
            print(f"{size:6} {arm:9} {value:10.2f} {row['calls_per_s']:9.0f} "
                  f"{row['write_requests_per_call']:9.2f} {row['kib_written_per_call']:9.1f}")
    print()
    print("targets:")
    overhead = us("4 KiB", "py-none") - us("4 KiB", "cpp-none")
    print(f"  4 KiB 'none' commit, Python minus C++: {overhead:.2f} µs (target <= 1 µs)")
    targets = {"python_none_overhead_us": round(overhead, 3)}
    for size in plan:
        for mode in ("pfd", "sync"):
            rate = us(size, f"cpp-{mode}") / us(size, f"py-{mode}")
            print(f"  {size} durable ({mode}): Python/C++ rate {rate:.2f} (target >= 0.9 at 1 MiB); "
                  f"Python/LMDB rate {us(size, 'lmdb') / us(size, f'py-{mode}'):.2f} (target >= 1); "
                  f"Python/SQLite rate {us(size, 'sqlite') / us(size, f'py-{mode}'):.2f}")
            targets[f"{size} {mode} python_over_cpp_rate"] = round(rate, 3)
            targets[f"{size} {mode} python_over_lmdb_rate"] = round(
                us(size, "lmdb") / us(size, f"py-{mode}"), 3)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": rounds, "rows": rows, "targets": targets}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
