#!/usr/bin/env python3
"""Checks that docs/DESIGN.md's map names every file of lib/ and include/.

Usage: check-design-map.py [ROOT]   (ROOT: the repository, default: this one)

A file counts as named when its path appears in docs/DESIGN.md in backquotes,
relative to lib/ in the "lib/ files" table (`journal.{h,cc}`, `io/posix_io.cc`)
and as `NAME.h` or a path ending in `regionstore/NAME.h` for a public header. The brace form
`name.{h,cc}` names both files. Prints each file the map leaves out, and the
map's entries that name no file, then exits 1; prints "check-design-map: ok"
and exits 0 when there are none.
"""
import pathlib
import re
import sys

# Files that are build plumbing rather than code a reader looks for.
NOT_MAPPED = {"CMakeLists.txt"}


def expand(name):
    """`journal.{h,cc}` -> ["journal.h", "journal.cc"]; other names as they are."""
    m = re.fullmatch(r"(.*)\{([^}]*)\}(.*)", name)
    if not m:
        return [name]
    return [m.group(1) + part + m.group(3) for part in m.group(2).split(",")]


def lib_table(design):
    """The backquoted first cells of the table under "### lib/ files"."""
    section = re.search(r"^### lib/ files\n(.*?)(?=^#)", design, re.M | re.S)
    if not section:
        return None
    names = []
    for line in section.group(1).splitlines():
        cell = re.match(r"\|\s*`([^`]+)`\s*\|", line)
        if cell:
            names.extend(expand(cell.group(1)))
    return names


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                        pathlib.Path(__file__).resolve().parent.parent)
    design_path = root / "docs/DESIGN.md"
    design = design_path.read_text(encoding="utf-8")
    problems = []

    listed = lib_table(design)
    if listed is None:
        print("docs/DESIGN.md: no \"### lib/ files\" section")
        return 1
    lib = root / "lib"
    present = sorted(str(p.relative_to(lib)) for p in lib.rglob("*")
                     if p.is_file() and p.name not in NOT_MAPPED)
    for name in present:
        if name not in listed:
            problems.append(f"lib/{name}: not in docs/DESIGN.md's \"lib/ files\" table")
    for name in sorted(set(listed)):
        if not (lib / name).is_file():
            problems.append(f"docs/DESIGN.md: \"lib/ files\" names lib/{name}, which does not exist")

    quoted = set()
    for inner in re.findall(r"`([^`\n]+)`", design):
        quoted.update(expand(inner))
    include = root / "include" / "regionstore"
    for header in sorted(include.glob("*.h")):
        if not any(q == header.name or q.endswith(f"regionstore/{header.name}") for q in quoted):
            problems.append(f"include/regionstore/{header.name}: not named in docs/DESIGN.md")

    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("check-design-map: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
