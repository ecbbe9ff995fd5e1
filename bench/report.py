#!/usr/bin/python3
"""Turns regionstore_bench's JSON into the region lab's markdown table.

Usage: report.py LAB.json [MORE.json ...] [--svg CHART.svg]

Reads the median rows (run with --benchmark_repetitions=7; with
--benchmark_report_aggregates_only=true too, or not) of benchmarks named
lab/<arm>/<variant>/<library|raw>/<regime>, and prints, per regime, arm and
variant: library MB/s, raw MB/s, library / raw, the library's extra cost per
update in microseconds, and the lab's published Python figure beside it (from
another machine); then the MADV_POPULATE_WRITE comparison and, if the JSON has
sweep/<arm>/<bytes>/<aligned|unaligned>/<impl> rows, the write-size sweep, and
with storesize/<arm>/<store bytes>/aligned/<impl> rows, the store-size sweep.
Several JSON files are merged (context from the first). MB/s = bytes / median seconds / 1024^2, as in the lab.
With --svg, also writes a bar chart (stdlib only, log scale), durable and
undurable arms in separate groups.
Standard library only.
"""

import json
import math
import sys

ARMS = ["pwrite", "pwrite_fdatasync", "msync_sync", "msync_async", "none"]
DURABLE = {"pwrite_fdatasync", "msync_sync"}
VARIANTS = ["oneshot", "longlived"]
REGIMES = ["large_folios", "small_folios"]
SLICE_BYTES = 1024 * 1024
UPDATES = {"oneshot": 1, "longlived": 8}

# The lab's published one-shot p50 figures (seeds/004: Python 3.13.5, another
# machine, "Verdict up front"). The lab published no numbers for its reuse x8
# (long-lived) arms.
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
        parts = row["run_name"].split("/")
        if parts[-1] == "real_time":
            parts = parts[:-1]
        if len(parts) != 5 or parts[0] not in ("lab", "sweep", "storesize"):
            continue
        seconds = row["real_time"] * TO_SECONDS[row.get("time_unit", "ns")]
        key = tuple(parts[1:]) if parts[0] == "lab" else tuple(parts)
        out[key] = seconds
    return out


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
    populate = [(r, m.get(("msync_sync", "longlived", "raw", r)),
                 m.get(("msync_sync", "longlived", "raw_populate", r))) for r in REGIMES]
    populate = [(r, a, b) for r, a, b in populate if a and b]
    if populate:
        lines.append("")
        lines.append("Kept mapping, msync(MS_SYNC), raw: the copy after each msync takes write "
                     "faults again; MADV_POPULATE_WRITE on the range before the copy takes them "
                     "in one call.")
        lines.append("")
        lines.append("| regime | raw MB/s | raw + MADV_POPULATE_WRITE MB/s | populate / plain |")
        lines.append("| --- | ---: | ---: | ---: |")
        for regime, plain, pop in populate:
            a, b = mbps(plain, "longlived"), mbps(pop, "longlived")
            lines.append(f"| {regime} | {fmt(a)} | {fmt(b)} | {fmt(b / a, 2)} |")
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
            label = f"{size // 1024} KiB" if size < 1024 * 1024 else f"{size // (1024 * 1024)} MiB"
            lines.append(f"| {arm} | {label} | {align} | {fmt(to_mbps(lib))} | {fmt(to_mbps(raw))} "
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


def svg(m, path):
    """A horizontal bar chart, log scale, durable arms first."""
    rows = []
    for durable in (True, False):
        for regime in REGIMES:
            for variant in VARIANTS:
                for arm in ARMS:
                    if (arm in DURABLE) != durable:
                        continue
                    for impl in ("library", "raw"):
                        t = m.get((arm, variant, impl, regime))
                        if t:
                            rows.append((durable, f"{arm} {variant} {impl} ({regime})",
                                         mbps(t, variant)))
    if not rows:
        return
    top = max(r[2] for r in rows)
    lo, hi = 100.0, 10 ** math.ceil(math.log10(top))
    bar_h, label_w, plot_w = 16, 380, 520
    height = 40 + bar_h * len(rows) + 30
    scale = lambda v: plot_w * (math.log10(max(v, lo)) - math.log10(lo)) / (
        math.log10(hi) - math.log10(lo))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + plot_w + 90}" '
           f'height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="10" y="18" font-size="13">regionstore region lab: MB/s (log scale); '
           f'red = durable, blue = not durable</text>']
    y = 30
    for durable, label, value in rows:
        color = "#c0392b" if durable else "#2e86c1"
        out.append(f'<text x="{label_w - 5}" y="{y + 12}" text-anchor="end">{label}</text>')
        out.append(f'<rect x="{label_w}" y="{y + 2}" width="{scale(value):.1f}" '
                   f'height="{bar_h - 4}" fill="{color}"/>')
        out.append(f'<text x="{label_w + scale(value) + 4:.1f}" y="{y + 12}">{value:,.0f}</text>')
        y += bar_h
    decade = lo
    while decade <= hi:
        x = label_w + scale(decade)
        out.append(f'<line x1="{x:.1f}" y1="30" x2="{x:.1f}" y2="{y}" stroke="#999" '
                   f'stroke-dasharray="2,2"/>')
        out.append(f'<text x="{x:.1f}" y="{y + 14}" text-anchor="middle">{decade:,.0f}</text>')
        decade *= 10
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main(argv):
    args = argv[1:]
    svg_path = None
    if "--svg" in args:
        at = args.index("--svg")
        if at + 1 >= len(args):
            print(__doc__, file=sys.stderr)
            return 2
        svg_path = args[at + 1]
        del args[at:at + 2]
    if not args:
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
    if svg_path:
        svg(m, svg_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
