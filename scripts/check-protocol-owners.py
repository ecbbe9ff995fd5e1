#!/usr/bin/env python3
"""Checks that only the owners of the protocol's concepts test a protocol feature.

Usage: check-protocol-owners.py [ROOT]   (ROOT: the repository, default: this one)

A store speaks protocol 1 (marks in the store's intent area) or protocol 2
(a sidecar, a batch journal); which one is chosen once, at open, and from then
on only the objects that own a concept (the state shared between processes,
the journal, the batch log, the barrier bookkeeping, the codecs and the
layout code) may ask about it. A line of lib/ outside OWNERS that matches one
of FEATURES, once its comments and string literals are removed, is a feature
test.

A file may hold exactly as many as EXCEPTIONS allows it: the ones it held when
this check was written, to be moved into the owners. The check fails when a
file holds more (each of its hits is printed as `file:line: text`) and when
it holds fewer than its allowance (then it says "lower the exception to N", so
that the allowances only go down). Prints "check-protocol-owners: ok" and
exits 0 when every file holds what it may; otherwise exits 1.
"""
import pathlib
import re
import sys

# --- The data: edit here as the owners take over. -------------------------

# The files that may test protocol features: the owner of each concept, the
# codecs, and the code that says where things are and creates a store. Named
# whether or not they exist yet.
OWNERS = {
    # the state shared between processes, behind one interface
    "lib/shared_state.h", "lib/shared_state.cc",
    # the journal, the batch log and the barrier bookkeeping as objects
    "lib/batch_journal.h", "lib/batch_journal.cc",
    "lib/batch_log.h", "lib/batch_log.cc",
    "lib/ledger.h", "lib/ledger.cc",
    # the codecs
    "lib/intent.h", "lib/intent.cc",
    "lib/sidecar.h", "lib/sidecar.cc",
    "lib/journal.h", "lib/journal.cc",
    "lib/batch.h", "lib/batch.cc",
    # the list of deliberately broken protocols the tests switch on: their
    # names say what they break, and no code tests them here
    "lib/test_hooks.h",
    # where things are, and store creation
    "lib/format.h", "lib/format.cc",
    "lib/store_info.cc",
    "lib/create.h", "lib/create.cc",
}

# Outside the owners: how many feature-testing lines each file holds today.
# Lower a count as the lines move into an owner; remove the entry at zero.
EXCEPTIONS = {
}

# What counts as testing a protocol feature (regular expressions on one line
# of code without its comments and string literals).
FEATURES = [
    # the protocol number itself
    r"\bprotocol\(\)",
    r"\bprotocol_[12]\b",
    r"\bprotocol\s*[!=]=",
    # the superblock's feature flags and the layout they imply
    r"\bkIncompat(BatchLog|Sidecar|Journal)\b",
    r"\binfo\.journal_size\b",
    r"\bjournal_offset\b",
    r"\bbatch_log_offset\b",
    r"\bintent_offset\b",
    r"\bjournal::Offset\(",
    r"\bbatch::LogOffset\(",
    r"\bintent::AreaOffset\(",
    # the sidecar: any name with "sidecar" in it (sidecar, sidecar_read_only,
    # no_sidecar, SidecarEntry, SidecarIsCurrent, kSidecarEntry, the type
    # sidecar::Sidecar), but not the namespace qualifier alone
    r"\b\w*[sS]idecar\w*\b(?!::)",
]

# ---------------------------------------------------------------------------

FEATURE = re.compile("|".join(f"(?:{f})" for f in FEATURES))
SOURCE_SUFFIXES = {".h", ".cc"}


def strip_comments_and_strings(text):
    """The text with // and /* */ comments and "..." and '...' literals blanked.

    Newlines are kept, so line numbers stay those of the file.
    """
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def feature_lines(path):
    """(line number, original text) of each line of `path` that tests a feature."""
    original = path.read_text(encoding="utf-8").splitlines()
    code = strip_comments_and_strings(path.read_text(encoding="utf-8")).splitlines()
    return [(number, original[number - 1].strip())
            for number, line in enumerate(code, start=1) if FEATURE.search(line)]


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                        pathlib.Path(__file__).resolve().parent.parent)
    lib = root / "lib"
    problems = []
    counts = {}
    for path in sorted(lib.rglob("*")):
        if not path.is_file() or path.suffix not in SOURCE_SUFFIXES:
            continue
        name = path.relative_to(root).as_posix()
        if name in OWNERS:
            continue
        hits = feature_lines(path)
        counts[name] = len(hits)
        allowed = EXCEPTIONS.get(name, 0)
        if len(hits) > allowed:
            problems.extend(f"{name}:{number}: {text}" for number, text in hits)
            problems.append(f"{name}: {len(hits)} protocol feature tests outside the owners, "
                            f"{allowed} allowed; move them into an owner (scripts/"
                            f"check-protocol-owners.py says which files own the protocol)")
    for name, allowed in sorted(EXCEPTIONS.items()):
        held = counts.get(name, 0)
        if held < allowed:
            problems.append(f"{name}: {held} protocol feature tests, {allowed} allowed: "
                            f"lower the exception to {held} in scripts/check-protocol-owners.py")

    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("check-protocol-owners: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
