#!/usr/bin/env python3
"""Checks that every #include between the project's folders follows the directions written in
ARCHITECTURE.md (the fenced block marked `layers`). Exit status 0 when they all do; 1 with one
line per include that breaks them, or when the written rules themselves go in a circle.

Each rule line reads `MODULE: USES...`. A module is a folder (every file below it that no longer
module takes) or, ending in .h, a single header. `FOLDER/*` makes each subfolder of FOLDER a module
of its own with that rule (unless it has a rule of its own), so siblings may not include each
other; in a USES list it stands for every one of those subfolders. A module may include itself,
what it lists, and whatever those may include in turn. `-` lists nothing. Tests are not checked:
they may include anything they test.

Usage: scripts/check-layers.py [ROOT]   (ROOT defaults to the repository holding this script)
"""
import os
import re
import sys

SOURCE_DIRS = ("scheduler", "plugins", "policy", "config", "bench", "fuzz")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_rules(root):
    text = open(os.path.join(root, "ARCHITECTURE.md"), encoding="utf-8").read()
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    if block is None:
        sys.exit("ARCHITECTURE.md: no ```layers block")
    rules = {}
    for number, line in enumerate(block.group(1).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        module, _, uses = line.partition(":")
        module = module.strip()
        if not _ or module in rules:
            sys.exit(f"ARCHITECTURE.md layers line {number}: bad or repeated rule: {line}")
        rules[module] = [u for u in uses.split() if u != "-"]
    return expand_wildcards(root, rules)


def expand_wildcards(root, rules):
    """Gives each subfolder of a `FOLDER/*` rule its own rule, and spells out `FOLDER/*` uses."""
    members = {}
    for module in [m for m in rules if m.endswith("/*")]:
        folder = module[:-2]
        subfolders = sorted(entry.name for entry in os.scandir(os.path.join(root, folder))
                            if entry.is_dir())
        members[module] = [f"{folder}/{name}" for name in subfolders]
        for member in members[module]:
            rules.setdefault(member, rules[module])
        del rules[module]
    for module, uses in rules.items():
        spelled = []
        for used in uses:
            spelled += [m for m in members.get(used, [used]) if m != module]
        rules[module] = spelled
        for used in spelled:
            if used not in rules:
                sys.exit(f"ARCHITECTURE.md layers: {module} uses {used}, which has no rule")
    return rules


def module_of(path, rules):
    """The rule that governs `path`: the file itself, else its longest folder prefix."""
    if path in rules:
        return path
    best = None
    for module in rules:
        if module.endswith(".h"):
            continue
        if path.startswith(module.rstrip("/") + "/") and (best is None or len(module) > len(best)):
            best = module
    return best


def closure(rules):
    """module -> every module it may include (itself included); exits on a circle of rules."""
    allowed, visiting = {}, set()

    def visit(module, trail):
        if module in allowed:
            return allowed[module]
        if module in visiting:
            sys.exit("ARCHITECTURE.md layers go in a circle: " + " -> ".join(trail + [module]))
        visiting.add(module)
        reach = {module}
        for used in rules[module]:
            reach |= visit(used, trail + [module])
        visiting.discard(module)
        allowed[module] = reach
        return reach

    for module in rules:
        visit(module, [])
    return allowed


def source_files(root):
    for top in SOURCE_DIRS:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".h", ".cc")):
                    yield os.path.relpath(os.path.join(folder, name), root)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    rules = read_rules(root)
    allowed = closure(rules)
    problems, checked = [], 0
    for path in source_files(root):
        source = module_of(path, rules)
        if source is None:
            problems.append(f"{path}: no rule in ARCHITECTURE.md covers this file")
            continue
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if not match or not os.path.exists(os.path.join(root, match.group(1))):
                    continue  # a system or third-party header
                checked += 1
                target = module_of(match.group(1), rules)
                if target is None or target not in allowed[source]:
                    problems.append(f"{path}:{number}: {source} may not include "
                                    f"{match.group(1)} ({target or 'no rule'})")
    for problem in problems:
        print(problem)
    print(f"{checked} includes checked against {len(rules)} rules: "
          f"{len(problems) or 'no'} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
