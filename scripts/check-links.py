#!/usr/bin/env python3
"""Checks that no layer's static library calls into a layer it does not depend on: every
symbol of the project (namespace roofline) that libroofline_<layer>.a needs is defined in that
layer or in a layer of its dependency closure (scripts/layers.json). An include against the DAG
is caught by check-layers.py; this catches a declaration written by hand or a link order that
happens to work.

    scripts/check-links.py BUILD_DIR

Prints one line per symbol used against the DAG and exits 1 on any; 0 and a summary otherwise."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def symbols(archive: str, undefined: bool) -> set:
    flags = ["-u"] if undefined else ["--defined-only"]
    out = subprocess.run(["nm", "-C", "--no-sort", *flags, archive], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        if not line or line.endswith(":"):
            continue
        parts = line.split(None, 2) if not undefined else line.split(None, 1)
        if undefined:
            name = parts[-1]
        else:
            if len(parts) < 3 or parts[1] in ("V", "v", "W", "w", "u"):
                continue  # weak and inline definitions are in every user: not a dependency
            name = parts[2]
        if "roofline::" in name:
            names.add(name)
    return names


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[-3].strip(), file=sys.stderr)
        return 2
    build = sys.argv[1]
    with open(os.path.join(ROOT, "scripts/layers.json"), encoding="utf-8") as f:
        spec = json.load(f)
    reach, defined, problems, checked = {}, {}, [], 0
    for layer in spec["layers"]:
        name = layer["name"]
        reach[name] = {name}.union(*(reach[d] for d in layer["deps"]))
        archive = os.path.join(build, f"libroofline_{name}.a")
        if name == "tools":
            continue
        if not os.path.exists(archive):
            problems.append(f"{archive}: missing (build the library first)")
            continue
        defined[name] = symbols(archive, undefined=False)
    for layer in spec["layers"]:
        name = layer["name"]
        if name not in defined:
            continue
        archive = os.path.join(build, f"libroofline_{name}.a")
        allowed = set().union(*(defined[d] for d in reach[name] if d in defined))
        for sym in sorted(symbols(archive, undefined=True)):
            checked += 1
            if sym in allowed:
                continue
            owner = [d for d, syms in defined.items() if sym in syms]
            if owner:
                problems.append(f"libroofline_{name}.a uses {sym} of the {owner[0]} layer, "
                                f"which {name} does not depend on (scripts/layers.json)")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"check-links: {checked} uses of the project's symbols in {len(defined)} layer "
          "archives stay within each layer's dependencies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
