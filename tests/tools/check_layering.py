#!/usr/bin/env python3
"""The core's folders call down their floors, as core/README.md's table says.

Usage: check_layering.py SOURCE_ROOT [--readme FILE]

The table (the one whose header starts `| floor | folder |`) lists core/'s
folders from the top floor down. A source file of a folder may include
headers of its own folder and of every folder on a floor below it; a row whose
last cell reads "only `a/b.h`, ..." may include just those headers of the
core. Every folder with sources must be in the table and have a README.md.
Prints each offending include as `path:line: ...` and exits 1 if there is any.
"""

import os
import re
import sys

SOURCE_SUFFIXES = (".c", ".cpp", ".h", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([a-z_/]+)/`\s*\|.*\|\s*(.*?)\s*\|\s*$")


def read_table(readme):
    """[(folder, only)] from the top floor down; `only` is None (every floor
    below) or the set of core headers the folder may include."""
    rows = []
    in_table = False
    with open(readme, encoding="utf-8") as f:
        for line in f:
            if line.startswith("| floor | folder |"):
                in_table = True
                continue
            if not in_table:
                continue
            if not line.startswith("|"):
                break
            m = ROW.match(line)
            if m is None:
                continue  # the |---| line
            folder, allowed = m.group(2), m.group(3)
            only = None
            if allowed.startswith("only"):
                only = set(re.findall(r"`([^`]+)`", allowed))
            rows.append((folder, only))
    return rows


def folder_of(path, folders):
    """The table's folder a core-relative path belongs to (the longest match),
    or None."""
    best = None
    for folder in folders:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def main():
    top = sys.argv[1]
    core = os.path.join(top, "core")
    readme = os.path.join(core, "README.md")
    if "--readme" in sys.argv:
        readme = sys.argv[sys.argv.index("--readme") + 1]
    rows = read_table(readme)
    if not rows:
        print(f"{readme}: no table with the header '| floor | folder | ...'")
        return 1
    floor = {folder: i for i, (folder, _) in enumerate(rows)}
    only = dict(rows)
    problems = []
    source_dirs = set()
    for root, dirs, files in os.walk(core):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, core)
            source_dirs.add(os.path.dirname(rel))
            here = folder_of(rel, floor)
            if here is None:
                continue  # reported once per folder below
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m is None:
                        continue
                    target = m.group(1)
                    there = folder_of(target, floor)
                    if there is None or there == here:
                        continue  # the folder's own, or not a core header
                    where = f"core/{rel}:{number}: includes \"{target}\": "
                    if only[here] is not None:
                        if target not in only[here]:
                            problems.append(where + f"{here}/ may include only " +
                                            ", ".join(sorted(only[here])) + " of the core")
                    elif floor[there] < floor[here]:
                        problems.append(where + f"{there}/ is on floor {floor[there] + 1}, "
                                        f"above {here}/ (floor {floor[here] + 1}): calls go "
                                        "down the floors of core/README.md")
    for folder in sorted(source_dirs):
        if folder == "" or folder_of(folder, floor) is None:
            problems.append(f"core/{folder or '.'}: has sources but is not a folder of "
                            "core/README.md's table")
    for folder in floor:
        if not os.path.isfile(os.path.join(core, folder, "README.md")):
            problems.append(f"core/{folder}/README.md: missing (every folder of the table "
                            "says what it owns)")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} layering problem(s)")
        return 1
    print(f"core/: {len(rows)} floors, every include goes down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
