#!/usr/bin/env python3
"""The repository stands alone: no file cites a tracker number (the word "issue"
followed by a number, with or without "#") or notes kept outside the tree. Such
a number means nothing to a reader of the repository; the text should say what
it means instead.

Usage: check_stands_alone.py SOURCE_ROOT
Walks the tree (build and virtual-environment folders, .git and binary files
left out) and prints every offending line as path:line: text.
"""

import os
import re
import sys

PATTERN = re.compile(r"\bissues? ?#?\d+|\b(?:SPEC|DESIGN|STYLE|TOOLCHAIN)\.md\b|\.\./shared\b",
                     re.IGNORECASE)
# Other projects' trackers may be cited by their web address.
ALLOWED = re.compile(r"https?://|github\.com/")
SKIP_DIRS = {".git", "subprojects", "__pycache__", "node_modules", "corpus"}


def skipped(root, name):
    path = os.path.join(root, name)
    return (name in SKIP_DIRS or name.startswith("build") or name.startswith(".mesonpy")
            or os.path.exists(os.path.join(path, "pyvenv.cfg"))
            or os.path.exists(os.path.join(path, "meson-private")))


def main():
    top = sys.argv[1]
    this = os.path.abspath(__file__)
    found = []
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not skipped(root, d))
        for name in sorted(files):
            path = os.path.join(root, name)
            if os.path.abspath(path) == this:
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.readlines()
            except (UnicodeDecodeError, OSError):
                continue  # binary or unreadable: not prose
            for number, line in enumerate(lines, 1):
                if PATTERN.search(line) and not ALLOWED.search(line):
                    found.append(f"{os.path.relpath(path, top)}:{number}: {line.strip()}")
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} line(s) cite a tracker number or notes outside the repository; "
              "say what they mean instead", file=sys.stderr)
        return 1
    print("no tracker numbers or outside notes cited")
    return 0


if __name__ == "__main__":
    sys.exit(main())
