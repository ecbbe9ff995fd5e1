#!/usr/bin/env python3
"""Checks that the build draws its dependencies as they are (docs/DESIGN.md,
"lab/"): no target outside tests/ gets an include directory inside tests/, and
no CMake file outside bench/ adds a subdirectory of bench/ (the top level may
add bench/ itself).

    check-cmake.py [ROOT]    ROOT: the source tree (default: this script's)

Prints each offence with its file and line; exits 1 if there is one.
"""
import os
import pathlib
import re
import sys


def calls(text, names):
    """(name, arguments, line) of each call of a command in `names`."""
    pattern = re.compile(r"\b(" + "|".join(names) + r")\s*\(", re.IGNORECASE)
    for match in pattern.finditer(text):
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield match.group(1).lower(), text[match.end():i - 1], text.count("\n", 0, match.start()) + 1


def strip_comments(text):
    return "\n".join(line.split("#", 1)[0] for line in text.split("\n"))


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    offences = []
    files = []
    for directory, subdirectories, names in os.walk(root):
        # Build trees and hidden folders (.git) hold no source CMake files.
        if pathlib.Path(directory) == root:
            subdirectories[:] = [d for d in subdirectories if d != "build" and not d.startswith(".")]
        files += [pathlib.Path(directory) / n for n in names
                  if n == "CMakeLists.txt" or n.endswith(".cmake")]
    for path in sorted(files):
        rel = path.relative_to(root)
        text = strip_comments(path.read_text())
        outside_tests = rel.parts[0] != "tests"
        for name, args, line in calls(text, ["target_include_directories", "include_directories"]):
            # A path into tests/: from the source root, or climbing up to it.
            if outside_tests and re.search(r"(SOURCE_DIR\}|\.\.)/tests(/|\s|\)|$)", args):
                offences.append(f"{rel}:{line}: {name} gives a target an include directory inside tests/")
        for name, args, line in calls(text, ["add_subdirectory"]):
            if rel.parts[0] != "bench" and re.search(r"(^|[/\s{}])bench/\S", args.strip()):
                offences.append(f"{rel}:{line}: adds a subdirectory of bench/ from outside it")
    for offence in offences:
        print("check-cmake: " + offence)
    if not offences:
        print("check-cmake: ok")
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
