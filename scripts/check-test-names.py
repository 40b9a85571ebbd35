#!/usr/bin/env python3
"""Checks that every Catch2 test name survives ctest: catch_discover_tests passes each name back
to the test binary as a filter, so a name that starts with '-' is read as an option and a ';'
splits it into two ctest tests, and neither runs. Prints each bad name with its file and line;
exits 1 when there is one."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
name = re.compile(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"')
bad = []
for path in sorted(root.joinpath("tests").rglob("*.cc")):
    text = path.read_text(encoding="utf-8", errors="replace")
    for match in name.finditer(text):
        test = match.group(1)
        if test.startswith("-") or ";" in test:
            line = text.count("\n", 0, match.start()) + 1
            bad.append(f"{path.relative_to(root)}:{line}: \"{test}\": a test name may not start "
                       "with '-' nor hold ';' (ctest cannot run it)")
print("\n".join(bad) if bad else "every test name can be run by ctest")
sys.exit(1 if bad else 0)
