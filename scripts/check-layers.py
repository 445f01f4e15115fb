#!/usr/bin/env python3
"""Checks that every include in src/, include/ and tools/ follows the layers' DAG of
scripts/layers.json (a layer includes its own headers and those of the layers it depends on,
directly or through others), that the DAG has no cycle, that every public header has a source
of its name (or a stated reason), and that docs/architecture.md's folders section names every folder.

Prints one line per violation and exits 1 on any; 0 and a one-line summary otherwise."""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main() -> int:
    with open(os.path.join(ROOT, "scripts/layers.json"), encoding="utf-8") as f:
        spec = json.load(f)
    header_layer, dir_layer = {}, []
    deps = {layer["name"]: layer["deps"] for layer in spec["layers"]}
    problems = []
    # Every layer may use what its deps may use: the closure, found in file order (a dep must be
    # listed before its user, so the DAG has no cycle).
    reach = {}
    for layer in spec["layers"]:
        closure = {layer["name"]}
        for d in layer["deps"]:
            if d not in reach:
                problems.append(f"scripts/layers.json: layer {layer['name']} depends on {d}, "
                                "which is not listed before it")
                continue
            closure |= reach[d]
        reach[layer["name"]] = closure
    for layer in spec["layers"]:
        for h in layer["headers"]:
            header_layer["roofline/" + h] = layer["name"]
        for d in layer["dirs"]:
            dir_layer.append((d.rstrip("/") + "/", layer["name"]))

    def layer_of(path: str):
        if path.startswith("include/"):
            return header_layer.get(path[len("include/"):])
        for prefix, name in dir_layer:
            if path.startswith(prefix):
                return name
        return None

    public = sorted(os.listdir(os.path.join(ROOT, "include/roofline")))
    for h in public:
        if "roofline/" + h not in header_layer:
            problems.append(f"include/roofline/{h}: in no layer of scripts/layers.json")
    files = []
    for top in ("src", "include", "tools/roofline", "fuzz"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for n in names:
                if n.endswith((".cc", ".h", ".cu")):
                    files.append(os.path.relpath(os.path.join(dirpath, n), ROOT))
    checked = 0
    for path in sorted(files):
        mine = layer_of(path)
        if mine is None:
            problems.append(f"{path}: in no layer of scripts/layers.json")
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            theirs = layer_of("include/" + target) if target.startswith("roofline/") \
                else layer_of(target)
            if theirs is None:
                problems.append(f"{path}:{line}: includes {target}, which is in no layer")
            elif theirs not in reach[mine]:
                problems.append(f"{path}:{line}: the {mine} layer includes {target} of the "
                                f"{theirs} layer, which it does not depend on "
                                f"(scripts/layers.json: {mine} depends on "
                                f"{', '.join(deps[mine]) or 'nothing'})")
            checked += 1

    # Every public header has a source of the same name somewhere under src/, or a reason.
    sources = set()
    for dirpath, _, names in os.walk(os.path.join(ROOT, "src")):
        sources.update(os.path.splitext(n)[0] for n in names if n.endswith((".cc", ".cu")))
    reasons = spec["headers_without_a_source_of_their_name"]
    for h in public:
        stem = os.path.splitext(h)[0]
        if stem not in sources and h not in reasons:
            problems.append(f"include/roofline/{h}: no src/**/{stem}.cc and no reason in "
                            "scripts/layers.json")
        if stem in sources and h in reasons:
            problems.append(f"include/roofline/{h}: has {stem}.cc; drop its reason")

    # Every folder of the repository is named in docs/architecture.md's folders section.
    with open(os.path.join(ROOT, "docs/architecture.md"), encoding="utf-8") as f:
        page = f.read()
    start = page.find("## Folders")
    layout = page[start:page.find("\n## ", start + 1)] if start >= 0 else ""
    if not layout:
        problems.append("docs/architecture.md: no '## Folders' section")
    folders = 0
    for dirpath, dirnames, _ in os.walk(ROOT):
        rel = os.path.relpath(dirpath, ROOT)
        dirnames[:] = [d for d in dirnames
                       if not d.startswith(("build", ".venv", "__pycache__", ".git", ".cache"))
                       and not (d.startswith(".") and d != ".ci")]
        if rel == ".":
            continue
        folders += 1
        base = os.path.basename(rel)
        if rel + "/" not in layout and f" {base}/" not in layout and f"({base}/" not in layout:
            problems.append(f"{rel}/: not in docs/architecture.md's folders section")

    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"check-layers: {checked} includes in {len(files)} files follow the DAG of "
          f"{len(spec['layers'])} layers; {len(public)} public headers accounted for; "
          f"{folders} folders in docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
