#!/usr/bin/env python3
"""Resolves every relative link of README.md and docs/*.md: the file (or
directory) it names must exist, and a #fragment must name a heading of that
file (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens).

    check-links.py [ROOT]    ROOT: the source tree (default: this script's)

Prints each broken link with its file and line; exits 1 if there is one.
Links to other sites (a scheme such as https:) are not followed: nothing
outside the repository is reachable from CI.
"""
import pathlib
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def anchors(path):
    """The heading anchors of a markdown file, as GitHub makes them."""
    seen, result = {}, set()
    in_fence = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1))  # a link's text
        slug = re.sub(r"[^\w\- ]", "", text.lower().replace("`", "")).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def links(path):
    """(line number, target) of each link outside code blocks and spans."""
    in_fence = False
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for match in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            yield number, match.group(1)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    documents = [root / "README.md"] + sorted((root / "docs").glob("**/*.md"))
    broken, checked = [], 0
    for document in documents:
        if not document.exists():
            continue
        for number, target in links(document):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # https:, mailto:: not followed
            checked += 1
            file_part, _, fragment = target.partition("#")
            resolved = (document.parent / file_part).resolve() if file_part else document
            where = f"{document.relative_to(root)}:{number}: {target}"
            if not resolved.exists():
                broken.append(f"{where}: no such file")
            elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                broken.append(f"{where}: no heading #{fragment} in {resolved.relative_to(root)}")
            elif root not in resolved.parents and resolved != root:
                broken.append(f"{where}: outside the repository")
    for line in broken:
        print("check-links: " + line)
    if not broken:
        print(f"check-links: ok ({checked} relative links in {len(documents)} documents)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
