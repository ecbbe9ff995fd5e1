#!/usr/bin/python3
"""Turns regionstore_bench's JSON into the region lab's markdown table.

Usage: report.py LAB.json [MORE.json ...] [--commits COMMITS.json] [--chart CHART.png|.svg]
                 [--batch-chart CHART.png|.svg] [--wait-chart CHART.png|.svg]

Reads the median rows (run with --benchmark_repetitions=7; with
--benchmark_report_aggregates_only=true too, or not) of benchmarks named
lab/<arm>/<variant>/<library|raw>/<regime>, and prints, per regime, arm and
variant: library MB/s, raw MB/s, library / raw, the library's extra cost per
update in microseconds, and the lab's published Python figure beside it (from
another machine); then the MADV_POPULATE_WRITE comparison and, if the JSON has
sweep/<arm>/<bytes>/<aligned|unaligned>/<impl> rows, the write-size sweep, and
with storesize/<arm>/<store bytes>/aligned/<impl> rows, the store-size sweep.
Several JSON files are merged (context from the first). MB/s = bytes / median seconds / 1024^2, as in the lab.
Its first lines say what Debian's DEBUG build of Google Benchmark does to a
timing (framework/memcpy rows beside the context's plain-loop figures).
With --commits, adds the checkpoint commit arms (4 KiB, 64 KiB, 1 MiB) beside
raw writes of the same size and the LMDB/SQLite peer ratios ("ours" is a store
made with Store::Create's defaults, protocol 1 a labelled extra), from
regionstore_commit_bench --json, and, when that JSON has it, the writer-open
table (section 4: open + a first 16-byte commit on a store whose big regions
hold 1 GiB commits beside one whose big regions are empty, and after a
SIGKILLed writer). With --chart, also draws MB/s per mode and
size (python3-matplotlib, Debian's, under /usr/bin/python3): the lab's arms
with durable and not durable ones in separate panels, and the write-size
sweep with the commit arms. When the commits JSON has section 6 (batches),
prints its table too, and with --batch-chart draws batches/s per arm for
each batch shape. When it has section 8 (readers that wait), prints what
waking costs a commit and each reader's wake-up latency and CPU, and with
--wait-chart draws them. Without matplotlib the tables still print.
"""

import json
import sys

ARMS = ["pwrite", "pwrite_fdatasync", "msync_sync", "msync_async", "none"]
DURABLE = {"pwrite_fdatasync", "msync_sync"}
VARIANTS = ["oneshot", "longlived", "cleaned"]
REGIMES = ["large_folios", "small_folios"]
SLICE_BYTES = 1024 * 1024
UPDATES = {"oneshot": 1, "longlived": 8, "cleaned": 1}
KEPT_IMPLS = ["raw", "raw_populate", "raw_populate_reset", "library"]
# Chart colours: warm for durable arms, cool for the others.
LINE_COLORS = {
    "pwrite_fdatasync": "#922b21", "msync_sync": "#e74c3c",
    "commit_pwrite_fdatasync": "#d35400", "commit_sync": "#f1c40f",
    "msync_async": "#1f618d", "none": "#5dade2",
    "commit_async": "#117a65", "commit_none": "#48c9b0",
}

# The published region lab's one-shot p50 figures, from its own write-up (not
# in this repository): a Python 3.13.5 harness on another machine. The lab
# published no numbers for its reuse x8 (long-lived) arms.
LAB_ONESHOT = {
    "pwrite": 7821.2,
    "pwrite_fdatasync": 824.3,
    "msync_sync": 536.0,
    "msync_async": 2005.6,
    "none": 1781.2,
}

TO_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def medians(doc):
    """{(arm, variant, impl, regime): median seconds per iteration}."""
    out = {}
    for row in doc.get("benchmarks", []):
        if row.get("run_type") != "aggregate" or row.get("aggregate_name") != "median":
            continue
        if row.get("error_occurred"):
            continue
        # A benchmark with its own minimum time carries it in its name.
        parts = [p for p in row["run_name"].split("/") if not p.startswith("min_time:")]
        if parts[-1] == "real_time":
            parts = parts[:-1]
        if parts[0] == "framework" and len(parts) == 3:
            out[tuple(parts)] = row["real_time"] * TO_SECONDS[row.get("time_unit", "ns")]
            continue
        if parts[0] == "publish" and len(parts) == 3:
            out[tuple(parts)] = row["real_time"] * TO_SECONDS[row.get("time_unit", "ns")]
            continue
        if len(parts) != 5 or parts[0] not in ("lab", "sweep", "storesize"):
            continue
        seconds = row["real_time"] * TO_SECONDS[row.get("time_unit", "ns")]
        key = tuple(parts[1:]) if parts[0] == "lab" else tuple(parts)
        out[key] = seconds
    return out


def framework_line(m, ctx):
    """One line on Google Benchmark's "Library was built as DEBUG" warning:
    the same stamped memcpy timed through the framework and through a plain
    steady_clock loop in the same process (bench/lab_bench.cc,
    FrameworkMemcpy)."""
    cells = []
    for size in (4096, SLICE_BYTES):
        timed = m.get(("framework", "memcpy", str(size)))
        plain = ctx.get(f"plain_memcpy_{size}_ns")
        if timed is None or plain is None:
            return ""
        timed_ns, plain_ns = timed * 1e9, float(plain)
        unit, scale = ("ns", 1) if size < SLICE_BYTES else ("µs", 1e-3)
        cells.append(f"{label_of(size)} {fmt(timed_ns * scale, 1)} {unit} through it, "
                     f"{fmt(plain_ns * scale, 1)} {unit} in a plain steady_clock loop "
                     f"({fmt(timed_ns / plain_ns, 2)}x)")
    return ("Google Benchmark's \"Library was built as DEBUG\" warning: Debian's libbenchmark "
            "is compiled without NDEBUG, which adds checks in its own code between timed "
            "batches; ours is built Release. Measured in this run, the same stamped memcpy: "
            + "; ".join(cells) + ".")


def mbps(seconds, variant):
    return UPDATES[variant] * SLICE_BYTES / seconds / (1024 * 1024)


def fmt(value, digits=0):
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def table(doc):
    m = medians(doc)
    ctx = doc.get("context", {})
    lines = []
    lines.append(
        f"Machine: {ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz, "
        f"{ctx.get('kernel', '?')}, {ctx.get('filesystem', '?')} ({ctx.get('lab_dir', '?')}), "
        f"run {ctx.get('date', '?')}.")
    lines.append("Folio regimes: " + ctx.get("folio_regimes", "?") + ".")
    framework = framework_line(m, ctx)
    if framework:
        lines.append(framework)
    lines.append(
        "MB/s = bytes / median real time of the repetitions / 1024²; one-shot = 1 update per "
        "iteration (open, map, write, sync, unmap, close), long-lived = 8 updates per "
        "iteration on one open store. Extra µs = library minus raw median time per update. "
        "The lab's figures are Python one-shot p50s from another machine, for comparison only.")
    lines.append("")
    lines.append("| regime | arm | variant | durable? | library MB/s | raw MB/s | library / raw "
                 "| extra µs per update | lab (Python, other machine) MB/s |")
    lines.append("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for regime in REGIMES:
        for variant in VARIANTS:
            for arm in ARMS:
                lib = m.get((arm, variant, "library", regime))
                raw = m.get((arm, variant, "raw", regime))
                if lib is None and raw is None:
                    continue
                lib_mbps = mbps(lib, variant) if lib else None
                raw_mbps = mbps(raw, variant) if raw else None
                ratio = lib_mbps / raw_mbps if lib_mbps and raw_mbps else None
                extra = (lib - raw) / UPDATES[variant] * 1e6 if lib and raw else None
                lab = LAB_ONESHOT.get(arm) if variant == "oneshot" else None
                lines.append(
                    f"| {regime} | {arm} | {variant} | {'yes' if arm in DURABLE else 'no'} "
                    f"| {fmt(lib_mbps) if lib else 'n/a (no library mode)'} | {fmt(raw_mbps)} "
                    f"| {fmt(ratio, 2)} | {fmt(extra, 1)} | {fmt(lab, 1)} |")
    floor = m.get(("memcpy", "oneshot", "raw", "no_file"))
    if floor:
        lines.append(f"| – | memcpy 1 MiB (floor) | – | no | – | {fmt(mbps(floor, 'oneshot'))} "
                     "| – | – | – |")
    opened = [m.get(("open_close", "oneshot", impl, "no_update")) for impl in ("library", "raw")]
    if all(opened):
        lines.append("")
        lines.append(
            f"Fixed cost of a one-shot update without the update (open, map the whole file, "
            f"unmap, close): library {opened[0] * 1e6:.1f} µs (Store::Open: open, flock, fstat "
            f"and stat, pread and checksum of the metadata, mmap, recovery scan; then the "
            f"destructor), raw {opened[1] * 1e6:.1f} µs (open, fstat, mmap, munmap, close): the "
            f"library adds **{(opened[0] - opened[1]) * 1e6:.1f} µs** per open/close (target "
            f"≤ 15 µs). The one-shot rows' extra µs also carry the update's own noise; the raw "
            f"pwrite arms map nothing.")
    kept = [(r, [m.get(("msync_sync", "longlived", impl, r)) for impl in KEPT_IMPLS])
            for r in REGIMES]
    kept = [(r, times) for r, times in kept if all(times[:2])]
    if kept:
        lines.append("")
        lines.append("Kept mapping, msync(MS_SYNC), long-lived, 1 MiB: after each msync the "
                     "pages are write-protected and the next copy takes a fault per 4 KiB page. "
                     "raw = the lab's syscalls; + populate = MADV_POPULATE_WRITE before the copy; "
                     "+ reset = also MADV_DONTNEED after the msync, so the next copy maps whole "
                     "folios (the library's kSync does both). MB/s, and the ratio to plain raw.")
        lines.append("")
        lines.append("| regime | raw | raw + populate | raw + populate + reset | library (kSync) "
                     "| populate / raw | populate + reset / raw | library / raw |")
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for regime, times in kept:
            speeds = [mbps(t, "longlived") if t else None for t in times]
            ratios = [s / speeds[0] if s else None for s in speeds[1:]]
            lines.append(f"| {regime} | " + " | ".join(fmt(s) for s in speeds) + " | " +
                         " | ".join(fmt(r, 2) for r in ratios) + " |")
    sweep = sorted({(k[1], int(k[2]), k[3]) for k in m if k[0] == "sweep"},
                   key=lambda t: (ARMS.index(t[0]), t[1], t[2]))
    if sweep:
        lines.append("")
        lines.append("Write-size sweep: long-lived store, large-folio regime, 8 updates per "
                     "iteration at data offset 2 MiB (unaligned: + 100 bytes).")
        lines.append("")
        lines.append("| arm | size | offset | library MB/s | raw MB/s | library / raw "
                     "| library updates/s |")
        lines.append("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
        for arm, size, align in sweep:
            lib = m.get(("sweep", arm, str(size), align, "library"))
            raw = m.get(("sweep", arm, str(size), align, "raw"))
            to_mbps = lambda t: 8 * size / t / (1024 * 1024) if t else None
            ratio = to_mbps(lib) / to_mbps(raw) if lib and raw else None
            ops = 8 / lib if lib else None
            lines.append(f"| {arm} | {label_of(size)} | {align} | {fmt(to_mbps(lib))} | {fmt(to_mbps(raw))} "
                         f"| {fmt(ratio, 2)} | {fmt(ops)} |")
    sizes = sorted({(k[1], int(k[2])) for k in m if k[0] == "storesize"},
                   key=lambda t: (ARMS.index(t[0]), t[1]))
    if sizes:
        lines.append("")
        lines.append("Store-size sweep: the same 1 MiB update at data offset 2 MiB, long-lived, "
                     "large-folio regime, 8 updates per iteration.")
        lines.append("")
        lines.append("| arm | store size | library MB/s | raw MB/s | library / raw |")
        lines.append("| --- | ---: | ---: | ---: | ---: |")
        for arm, size in sizes:
            lib = m.get(("storesize", arm, str(size), "aligned", "library"))
            raw = m.get(("storesize", arm, str(size), "aligned", "raw"))
            lib_mbps = mbps(lib, "longlived") if lib else None
            raw_mbps = mbps(raw, "longlived") if raw else None
            ratio = lib_mbps / raw_mbps if lib_mbps and raw_mbps else None
            lines.append(f"| {arm} | {size // (1024 * 1024):,} MiB | {fmt(lib_mbps)} "
                         f"| {fmt(raw_mbps)} | {fmt(ratio, 2)} |")
    return "\n".join(lines), m


# The published atomic-replace lab's Python figures, from its own write-up
# (not in this repository): ops/s from the p50 batch, Python 3.13.5, overlay
# on a virtio VM, another machine; by arm and payload size. It published no overwrite+fsync at 4 KiB or 64 KiB, and only
# the two unsynced arms at 64 KiB.
LAB_PUBLISH = {
    ("overwrite", 64): 16377, ("replace", 64): 13698,
    ("overwrite_fsync", 64): 4929, ("replace_fsync", 64): 3377,
    ("overwrite", 4096): 16566, ("replace", 4096): 13580,
    ("replace_fsync", 4096): 3376, ("replace_fsync_dirfsync", 4096): 2240,
    ("overwrite", 65536): 5234, ("replace", 65536): 7558,
}
PUBLISH_ARMS = ["overwrite", "overwrite_fsync", "replace", "replace_fsync",
                "replace_fsync_dirfsync", "library_nofsync", "library", "export"]
# What each library arm is compared with: the same steps without the library.
PUBLISH_BASELINE = {"library_nofsync": "replace", "library": "replace_fsync_dirfsync",
                    "export": "library"}


def publish_table(m):
    sizes = sorted({int(k[2]) for k in m if k[0] == "publish"})
    if not sizes:
        return ""
    lines = ["", "Publishing a whole file (the published atomic-replace labs, one in Python and "
             "one in PHP, both on other machines): one "
             "publish per iteration, medians. library = ReplaceFileAtomically (durable: temp, "
             "write, fsync, rename, directory fsync; nofsync: without the fsyncs); export = "
             "Store::Load of a region of that size + library, what `regionctl export` does after "
             "starting. The lab column is the Python lab's ops/s (another machine); the PHP lab "
             "(a small JSON file, another machine) had overwrite 4,127 and temp + rename "
             "5,928 ops/s.", "",
             "| size | arm | µs per publish | publishes/s | vs | ratio (time) | lab (Python) "
             "publishes/s |",
             "| ---: | --- | ---: | ---: | --- | ---: | ---: |"]
    for size in sizes:
        for arm in PUBLISH_ARMS:
            t = m.get(("publish", arm, str(size)))
            if t is None:
                continue
            base = PUBLISH_BASELINE.get(arm)
            bt = m.get(("publish", base, str(size))) if base else None
            lines.append(f"| {label_of(size) if size >= 1024 else f'{size} B'} | {arm} "
                         f"| {fmt(t * 1e6, 1)} | {fmt(1 / t)} | {base or '–'} "
                         f"| {fmt(t / bt, 2) if bt else '–'} "
                         f"| {fmt(LAB_PUBLISH.get((arm, size)))} |")
    return "\n".join(lines)


def commits_table(doc):
    """The checkpoint commit arms beside raw writes of the same size, and the
    peer ratios, from regionstore_commit_bench --json."""
    lines = []
    commits = doc.get("commits") or []
    if commits:
        lines.append("")
        lines.append(
            f"Checkpoint commits beside raw writes of the same size (regionstore_commit_bench on "
            f"{doc.get('filesystem', '?')}, {doc.get('rounds', '?')} interleaved rounds, medians; "
            f"commit = a store made with Store::Create's defaults (protocol "
            f"{doc.get('ours_protocol', '?')}); protocol 1 = the same commit on a protocol 1 "
            f"store, same rounds; commit/raw is the median of the per-round ratios, range in "
            f"brackets; a commit also checksums the payload, writes a 64-byte header and rotates "
            f"over 3 slots).")
        lines.append("")
        lines.append("| arm | size | commit MB/s | commit ops/s | raw MB/s | raw is | commit / raw "
                     "time | protocol 1: commit / raw time |")
        lines.append("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
        for row in commits:
            c, r, ratio = row["commit_ns"], row["raw_ns"], row["commit_over_raw"]
            p1 = row.get("protocol1_over_raw")
            to_mbps = lambda ns: row["size"] / ns * 1e9 / (1 << 20)
            lines.append(
                f"| {row['arm']} | {label_of(row['size'])} | {fmt(to_mbps(c))} | {fmt(1e9 / c)} "
                f"| {fmt(to_mbps(r))} | {row['raw']} | {fmt(ratio['median'], 2)} "
                f"({fmt(ratio['low'], 2)}–{fmt(ratio['high'], 2)}) "
                f"| {ratio_cell(p1) if p1 else '–'} |")
    peers = doc.get("peers")
    if peers:
        lines.append("")
        lines.append("Peers: replace one blob durably and atomically (speed ratios: peer time / "
                     "our time per round, median and range; ours = the faster durable commit of "
                     "a store made with Store::Create's defaults; protocol 1 = the faster on a "
                     "protocol 1 store, same rounds).")
        lines.append("")
        lines.append("| size | ours | ours µs | LMDB / ours | SQLite WAL FULL / ours "
                     "| device floor / ours | protocol 1 µs |")
        lines.append("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for row in peers:
            times = {a["name"]: a["median_ns"] for a in row["arms"]}
            ours = times[row["ours"]]
            p1 = times.get(row.get("protocol1"))
            lines.append(
                f"| {label_of(row['size'])} | {row['ours'].removeprefix('ours: ')} "
                f"| {fmt(ours / 1e3, 1)} | {ratio_cell(row['lmdb_over_ours'])} "
                f"| {ratio_cell(row['sqlite_over_ours'])} | {ratio_cell(row['floor_over_ours'])} "
                f"| {fmt(p1 / 1e3, 1) if p1 else '–'} |")
    elif "peers" in doc:
        lines.append("")
        lines.append("Peers: not built (LMDB and SQLite development files were not installed "
                     "when the benchmark was configured: liblmdb-dev, libsqlite3-dev).")
    return "\n".join(lines)


def open_table(doc):
    """The writer-open section of regionstore_commit_bench --json:
    open + first tiny commit + close, full store beside empty store, bytes
    written by the open, and the next open after a SIGKILLed writer."""
    opened = doc.get("open")
    if not opened:
        return ""
    lines = [""]
    if "skipped" in opened:
        lines.append(f"Writer open (regionstore_commit_bench section 4): {opened['skipped']}.")
        return "\n".join(lines)
    big = opened["big_bytes"] // (1 << 20)
    lines.append(
        f"Writer open (regionstore_commit_bench section 4): Store::Open(kReadWrite) + a first "
        f"{opened['commit_bytes']}-byte kSync commit into a 4 KiB region + close, on a store "
        f"whose two other regions hold {big:,} MiB commits (full) beside the same layout with "
        f"those regions empty; {opened['rounds']} interleaved rounds, warm cache, "
        f"{'SCHED_FIFO' if opened.get('realtime') else 'SCHED_OTHER'}, medians. "
        f"Bytes: what the store read and wrote through its Io. Device: "
        f"{opened.get('device_note', '?')}, the whole device during the open.")
    lines.append("")
    lines.append("| store | open + commit + close µs | open µs | first commit µs "
                 "| open writes B | open reads B | first commit writes B | device KiB written "
                 "during open |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in opened["stores"]:
        lines.append(
            f"| {row['store']} | {fmt(row['total_ns'] / 1e3)} | {fmt(row['open_ns'] / 1e3)} "
            f"| {fmt(row['commit_ns'] / 1e3)} | {fmt(row['open_written'])} "
            f"| {fmt(row['open_read'])} | {fmt(row['commit_written'])} "
            f"| {fmt(row['device_open_kib'])} |")
    ratio = opened["full_over_empty"]
    lines.append("")
    lines.append(f"full / empty (open + commit + close, per-round ratios): "
                 f"{fmt(ratio['median'], 2)} ({fmt(ratio['low'], 2)}–{fmt(ratio['high'], 2)}); "
                 f"target ≤ 1.10 and under 5 ms.")
    lines.append("")
    lines.append("| next open of the full store after a SIGKILLed writer | opens | open µs "
                 "| open writes B (median, max) | device KiB written during open |")
    lines.append("| --- | ---: | ---: | ---: | ---: |")
    for row in opened["kills"]:
        lines.append(
            f"| killed {row['kill']} | {row['opens']} | {fmt(row['open_ns'] / 1e3)} "
            f"| {fmt(row['open_written'])}, {fmt(row['open_written_max'])} "
            f"| {fmt(row['device_open_kib'])} |")
    return "\n".join(lines)


BATCH_COLORS = {
    "commit_batch_sync": "#f1c40f", "commit_batch_pwrite_fdatasync": "#d35400",
    "commit_batch_sync_protocol1": "#c8b7a6", "commit_batch_pwrite_fdatasync_protocol1": "#a89484",
    "floor": "#222222", "floor_protocol1_extents": "#7f7f7f", "lmdb": "#1f618d",
    "sqlite": "#5dade2", "singles_sync": "#117a65", "singles_pwrite_fdatasync": "#48c9b0",
}


def ratio_cell(r):
    return f"{fmt(r['median'], 2)} ({fmt(r['low'], 2)}–{fmt(r['high'], 2)})"


def shape_label(shape):
    return f"{shape['regions']} x {label_of(shape['size'])}"


def batches_table(doc):
    """Section 6 of regionstore_commit_bench --json: one batch of N regions
    of S bytes per operation, beside LMDB, SQLite, the device floor and N
    single commits, with what each asked of the OS and of the device."""
    shapes = doc.get("batches")
    if not shapes:
        return ""
    lines = ["", f"Batches: replace N regions durably and atomically (regionstore_commit_bench "
                 f"section 6 on {doc.get('filesystem', '?')}, {doc.get('rounds', '?')} "
                 f"interleaved rounds, medians; an operation is one batch; ours = "
                 f"commit_batch_* and singles_* on a store made with Store::Create's defaults; "
                 f"*_protocol1 = the same on a protocol 1 store, same rounds; seam: what our "
                 f"arms pwrote per batch through the io seam; device: write requests and KiB per "
                 f"batch).", ""]
    lines.append("| shape | arm | batches/s | regions/s | seam KiB / batch | device requests "
                 "/ batch | device KiB / batch |")
    lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for shape in shapes:
        for arm in shape["arms"]:
            seam = arm.get("seam_write_bytes")
            lines.append(
                f"| {shape_label(shape)} | {arm['arm']} | {fmt(arm['ops_per_s'])} "
                f"| {fmt(arm['regions_per_s'])} | {fmt(seam / 1024) if seam else '-'} "
                f"| {fmt(arm.get('device_write_requests'), 1)} "
                f"| {fmt(arm.get('device_write_kib'))} |")
    lines.append("")
    lines.append("| shape | ratio: the other arm's time / ours (per round) | median (range) |")
    lines.append("| --- | --- | ---: |")
    for shape in shapes:
        ours, p1 = shape["ours"], shape.get("protocol1", "protocol 1")
        for key, label, under in (("lmdb_over_ours", "lmdb", ours),
                                  ("sqlite_over_ours", "sqlite", ours),
                                  ("floor_over_ours", "floor", ours),
                                  ("singles_over_ours", shape["singles"], ours),
                                  ("floor_over_protocol1", "floor", p1),
                                  ("floor_protocol1_extents_over_protocol1",
                                   "floor at protocol 1's extents", p1)):
            r = shape.get(key)
            if r:
                lines.append(f"| {shape_label(shape)} | {label} / {under} | {ratio_cell(r)} |")
    return "\n".join(lines)


def batch_chart(shapes, path):
    """Batches/s per arm, one panel per batch shape, each bar labelled with
    the device write requests per batch. Returns an error text or ""."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no chart: python3-matplotlib is not installed (apt-get install python3-matplotlib)"
    fig, axes = plt.subplots(1, len(shapes), figsize=(13, 4.8), layout="constrained")
    if len(shapes) == 1:
        axes = [axes]
    for ax, shape in zip(axes, shapes):
        arms = shape["arms"]
        for y, arm in enumerate(arms):
            v = arm["ops_per_s"]
            ax.barh(y, v, color=BATCH_COLORS.get(arm["arm"], "black"))
            requests = arm.get("device_write_requests")
            note = f" {v:,.0f}" + (f"  ({requests:.1f} req)" if requests is not None else "")
            ax.text(v, y, note, va="center", fontsize=8)
        ax.set_yticks(range(len(arms)), [a["arm"] for a in arms], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("batches/s (one operation: every region once; singles: N commits)")
        ax.set_xlim(0, max(a["ops_per_s"] for a in arms) * 1.35)
        ax.set_title(f"{shape_label(shape)}: batches/s (req: device write requests per batch)",
                     fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.savefig(path, dpi=110)
    return ""


def wait_table(doc):
    """Section 8 of regionstore_commit_bench --json: what waking waiters
    costs a commit, and how soon a reader in another process has a new
    commit, waiting on the futex or polling."""
    wait = doc.get("wait")
    if not wait:
        return ""
    cost = wait["wake_cost"]
    lines = ["", f"Readers that wait (regionstore_commit_bench section 8 on "
                 f"{doc.get('filesystem', '?')}; readers of a store made with Store::Create's "
                 f"defaults unless named protocol 1): a 4 KiB kNone commit with nobody waiting, "
                 f"ours {fmt(cost['ours_ns'] / 1000, 2)} µs (it wakes only registered waiters); "
                 f"protocol 1 {fmt(cost['protocol1_ns'] / 1000, 2)} µs (futex wake after every "
                 f"commit), {fmt(cost['protocol1_no_wake_ns'] / 1000, 2)} µs with wake_waiters = "
                 f"false.", ""]
    lines.append("| reader in another process | commits | p50 µs | p99 µs | CPU while waiting |")
    lines.append("| --- | ---: | ---: | ---: | ---: |")
    for r in wait["readers"]:
        lines.append(f"| {r['reader']} | {r['commits']} | {fmt(r['p50_ns'] / 1000, 1)} "
                     f"| {fmt(r['p99_ns'] / 1000, 1)} | {fmt(r['cpu_fraction'] * 100, 3)}% |")
    return "\n".join(lines)


def wait_chart(wait, path):
    """Wake-up latency (p50 and p99, log scale) per reader, each labelled
    with its CPU while waiting. Returns an error text or ""."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no chart: python3-matplotlib is not installed (apt-get install python3-matplotlib)"
    readers = wait["readers"]
    fig, ax = plt.subplots(figsize=(9, 3.2), layout="constrained")
    for y, r in enumerate(readers):
        # A negative latency (the reader had the commit before the writer's
        # call returned: the wake is sent inside it) is drawn at 1 µs.
        p50, p99 = r["p50_ns"] / 1000, r["p99_ns"] / 1000
        ax.barh(y - 0.18, max(p50, 1), height=0.34, color="#1f618d",
                label="p50" if y == 0 else None)
        ax.barh(y + 0.18, max(p99, 1), height=0.34, color="#e74c3c",
                label="p99" if y == 0 else None)
        ax.text(max(p50, 1), y - 0.18, f" {p50:,.1f} µs", va="center", fontsize=8)
        ax.text(max(p99, 1), y + 0.18, f" {p99:,.0f} µs   (CPU while waiting: "
                f"{r['cpu_fraction'] * 100:.2f}%)", va="center", fontsize=8)
    ax.set_yticks(range(len(readers)), [r["reader"] for r in readers], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(1, max(r["p99_ns"] for r in readers) / 1000 * 60)
    ax.set_xlabel("µs from the writer's commit returning to the reader holding its copy (log)")
    ax.set_title("Readers that wait: wake-up latency of a reader in another process", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.savefig(path, dpi=110)
    return ""


def chart(m, commits, path):
    """MB/s per mode and size, with python3-matplotlib (PNG or SVG by the
    file name). Top: the lab's 1 MiB update, durable and not durable arms in
    separate panels; bottom: the write-size sweep and the checkpoint commits.
    Returns an error text, or "" when written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        return "no chart: python3-matplotlib is not installed (apt-get install python3-matplotlib)"
    fig = plt.figure(figsize=(13, 11), layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=[1.1, 1])
    colors = {"library": {"large_folios": "#1f4e79", "small_folios": "#5b9bd5"},
              "raw": {"large_folios": "#7f7f7f", "small_folios": "#c9c9c9"}}
    plain = FuncFormatter(lambda v, _: f"{v:,.0f}")
    for column, durable in enumerate((True, False)):
        ax = fig.add_subplot(grid[0, column])
        rows = [(arm, variant) for variant in VARIANTS for arm in ARMS
                if (arm in DURABLE) == durable]
        height = 0.2
        for r, (arm, variant) in enumerate(rows):
            slot = 0
            for impl in ("library", "raw"):
                for regime in REGIMES:
                    t = m.get((arm, variant, impl, regime))
                    y = r + (slot - 1.5) * height
                    slot += 1
                    if t:
                        v = mbps(t, variant)
                        ax.barh(y, v, height=height, color=colors[impl][regime])
                        ax.text(v, y, f" {v:,.0f}", va="center", fontsize=7)
        ax.set_yticks(range(len(rows)), [f"{arm}\n{variant}" for arm, variant in rows],
                      fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("MB/s (MiB/s, log scale)")
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        title = "durable: data on the device when the call returns" if durable else \
            "not durable: data in the page cache only"
        ax.set_title(f"Region lab, 1 MiB update: {title}", fontsize=9,
                     color="#b03a2e" if durable else "#1f618d")
        ax.grid(axis="x", which="both", alpha=0.3)
        floor = m.get(("memcpy", "oneshot", "raw", "no_file"))
        if floor and not durable:
            ax.axvline(mbps(floor, "oneshot"), color="black", linestyle="--", linewidth=1)
            ax.text(mbps(floor, "oneshot"), -0.6, "memcpy 1 MiB ", ha="right", fontsize=7)
        ax.legend([Patch(color=colors[impl][regime]) for impl in ("library", "raw")
                   for regime in REGIMES],
                  [f"{impl}, {regime.replace('_', ' ')}" for impl in ("library", "raw")
                   for regime in REGIMES],
                  loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=8)
    ax = fig.add_subplot(grid[1, :])
    sizes = sorted({int(k[2]) for k in m if k[0] == "sweep"})
    for arm in ARMS:
        for impl, style in (("library", "-"), ("raw", ":")):
            points = [(s, 8 * s / m[("sweep", arm, str(s), "aligned", impl)] / (1 << 20))
                      for s in sizes if ("sweep", arm, str(s), "aligned", impl) in m]
            if points:
                ax.plot(*zip(*points), style, marker="o", color=LINE_COLORS[arm],
                        label=f"{arm} {impl}")
    by_arm = {}
    for row in commits:
        by_arm.setdefault(row["arm"], []).append((row["size"], row["size"] / row["commit_ns"] *
                                                  1e9 / (1 << 20)))
    for arm, points in sorted(by_arm.items()):
        ax.plot(*zip(*sorted(points)), "--", marker="s", color=LINE_COLORS.get(arm, "black"),
                label=arm)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted(set(sizes) | {row["size"] for row in commits})
    ax.set_xticks(ticks, [label_of(s) for s in ticks])
    ax.set_xlabel("update size (aligned; long-lived store, large folios)")
    ax.set_ylabel("MB/s (MiB/s, log scale)")
    ax.yaxis.set_major_formatter(plain)
    ax.set_title("Write-size sweep, MB/s per mode and size (warm colours: durable; cool: not "
                 "durable; solid: library; dotted: raw syscalls; dashed: checkpoint commits)",
                 fontsize=9)
    ax.legend(fontsize=7, ncol=4, loc="lower right")
    ax.grid(which="both", alpha=0.3)
    fig.savefig(path, dpi=110)
    return ""


def label_of(size):
    return f"{size // 1024} KiB" if size < 1024 * 1024 else f"{size // (1024 * 1024)} MiB"


def main(argv):
    args = argv[1:]
    options = {"--chart": None, "--commits": None, "--batch-chart": None, "--wait-chart": None}
    for flag in options:
        if flag in args:
            at = args.index(flag)
            if at + 1 >= len(args):
                print(__doc__, file=sys.stderr)
                return 2
            options[flag] = args[at + 1]
            del args[at:at + 2]
    if not args or any(a.startswith("--") for a in args):
        print(__doc__, file=sys.stderr)
        return 2
    doc = {"benchmarks": []}
    for path in args:
        with open(path, encoding="utf-8") as f:
            part = json.load(f)
        doc.setdefault("context", part.get("context", {}))
        doc["benchmarks"].extend(part.get("benchmarks", []))
    text, m = table(doc)
    if not m:
        print(f"report.py: no lab median rows in {' '.join(args)}", file=sys.stderr)
        return 1
    print(text)
    print(publish_table(m))
    commits = {}
    if options["--commits"]:
        with open(options["--commits"], encoding="utf-8") as f:
            commits = json.load(f)
        print(commits_table(commits))
        for text in (open_table(commits), batches_table(commits), wait_table(commits)):
            if text:
                print(text)
    if options["--chart"]:
        error = chart(m, commits.get("commits") or [], options["--chart"])
        if error:
            print(f"report.py: {error}", file=sys.stderr)
    if options["--batch-chart"]:
        if not commits.get("batches"):
            print("report.py: --batch-chart needs --commits with section 6 (batches)",
                  file=sys.stderr)
            return 1
        error = batch_chart(commits["batches"], options["--batch-chart"])
        if error:
            print(f"report.py: {error}", file=sys.stderr)
    if options["--wait-chart"]:
        if not commits.get("wait"):
            print("report.py: --wait-chart needs --commits with section 8 (readers that wait)",
                  file=sys.stderr)
            return 1
        error = wait_chart(commits["wait"], options["--wait-chart"])
        if error:
            print(f"report.py: {error}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
