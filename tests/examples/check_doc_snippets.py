#!/usr/bin/env python3
"""Every C++ example in the docs and the SDK's headers compiles (a header
example called a column() that does not exist).

Examples are:
  - ```cpp blocks of README.md and docs/*.md. A block with `int main(` is a
    whole program; any other block is statements, compiled inside a function.
    A block right after a line `<!-- not compiled: REASON -->` is skipped (a
    fragment of the core's own sources, say); the reason is printed.
  - In sdk/include/xdev/*.hpp, each run of comment lines indented by three
    spaces (`//   code`) whose first line starts with code. In plugin headers
    (plugin*.h*) the run is namespace-scope plugin code; elsewhere statements.
    Lone `//` lines inside a run belong to it. A run right after a comment
    line that holds `(not compiled: REASON)` is skipped.

Statements may use the names the prelude declares (x, t, w, gpus, ...):
the user's own values and functions an example refers to. Each snippet
keeps its file and line (#line), so an error points at the doc.

Usage: check_doc_snippets.py SOURCE_ROOT CXX [extra compiler flags...]
"""
import pathlib
import re
import subprocess
import sys
import tempfile

SDK_PRELUDE = """\
#include <iostream>
#include <string>
#include <vector>
#include <xdev/xdev.hpp>
#include <xdev/multi_worker.hpp>  // libxdev_mpi's header needs no MPI to compile
// What the examples refer to and a user program would have.
namespace at {  // PyTorch's DLPack functions (declared only: compiled, never linked)
DLManagedTensor* toDLPack(int tensor);
int fromDLPack(DLManagedTensor* managed);
}  // namespace at
xdev::Tensor gradient(const xdev::Tensor& w, const xdev::Tensor& x);
"""
SDK_PARAMS = ("xdev::Tensor x, xdev::Tensor t, xdev::Tensor w, int torch_tensor, "
              "std::vector<xdev::PhysicalDevice> gpus")

PLUGIN_PRELUDE = """\
#include <xdev/plugin_helpers.hpp>
using namespace xdev::plugin_helpers;
// What the examples refer to and a plugin would have.
struct xdev_device_t { const xdev_host_api_t* host; };
struct xdev_stream_t { xdev_device_t* device; };
extern const xdev_plugin_api_t kPluginApi;
"""


def markdown_snippets(path, rel):
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```cpp":
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            previous = lines[i - 1].strip() if i > 0 else ""
            m = re.match(r"<!-- not compiled: (.+) -->", previous)
            code = "\n".join(lines[start:j])
            yield rel, start + 1, code, m.group(1) if m else None, \
                "program" if "int main(" in code else "statements"
            i = j
        i += 1


def header_snippets(path, rel):
    lines = path.read_text().splitlines()
    kind = "plugin" if path.name.startswith("plugin") else "statements"
    i = 0
    while i < len(lines):
        if re.match(r"//   \S", lines[i]):
            start = i
            # One example: indented lines, and lone "//" lines between them.
            while i < len(lines) and (lines[i].startswith("//   ") or (
                    lines[i] == "//" and i + 1 < len(lines) and lines[i + 1].startswith("//   "))):
                i += 1
            previous = lines[start - 1] if start > 0 else ""
            m = re.search(r"\(not compiled: (.+)\)", previous)
            code = "\n".join(line[5:] for line in lines[start:i])
            yield rel, start + 1, code, m.group(1) if m else None, kind
        else:
            i += 1


def translation_unit(snippets, kind):
    out = [SDK_PRELUDE if kind != "plugin" else PLUGIN_PRELUDE]
    for n, (rel, line, code, _, _) in enumerate(snippets):
        if kind == "statements":
            out.append(f"[[maybe_unused]] void snippet_{n}({SDK_PARAMS}) {{\n  {{")
        elif kind == "plugin":
            out.append(f"namespace snippet_{n} {{")
        out.append(f'#line {line} "{rel}"')
        out.append(code)
        out.append("  }\n}" if kind == "statements" else ("}" if kind == "plugin" else ""))
    return "\n".join(out) + "\n"


def main():
    root = pathlib.Path(sys.argv[1])
    cxx = sys.argv[2]
    flags = sys.argv[3:]
    snippets = []
    for path in [root / "README.md"] + sorted((root / "docs").glob("*.md")):
        snippets += markdown_snippets(path, str(path.relative_to(root)))
    for path in sorted((root / "sdk" / "include" / "xdev").glob("*.h*")):
        snippets += header_snippets(path, str(path.relative_to(root)))
    groups = {"statements": [], "plugin": []}
    programs = []
    for s in snippets:
        rel, line, _, skipped, kind = s
        if skipped:
            print(f"skipped {rel}:{line}: {skipped}")
        elif kind == "program":
            programs.append(s)
        else:
            groups[kind].append(s)
    units = [(translation_unit(groups[k], k), [s for s in groups[k]]) for k in groups if groups[k]]
    for p in programs:
        units.append((f'#line {p[1]} "{p[0]}"\n{p[2]}\n', [p]))
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        for n, (text, members) in enumerate(units):
            source = pathlib.Path(work) / f"snippets_{n}.cpp"
            source.write_text(text)
            result = subprocess.run(
                [cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Werror", "-Wno-unused-variable",
                 "-Wno-unused-but-set-variable", "-Wno-unused-result",
                 "-I", str(root / "sdk" / "include"), *flags, str(source)],
                capture_output=True, text=True)
            where = ", ".join(f"{m[0]}:{m[1]}" for m in members)
            if result.returncode != 0:
                failed += 1
                print(f"FAIL: {where}\n{result.stderr}")
            else:
                print(f"ok: {where}")
    compiled = sum(len(m) for _, m in units)
    if compiled == 0:
        print("FAIL: found no example")
        return 1
    print(f"{compiled} examples compiled, {failed} translation units failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
