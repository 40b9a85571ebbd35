#!/usr/bin/env python3
"""scripts/check-layers.py on small trees: it passes the directions it is given, and reports an
include that runs against them, a file no rule covers, a plugin including a sibling, and rules that
go in a circle."""
import os
import subprocess
import sys
import tempfile
import unittest

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                       "check-layers.py")

RULES = """
```layers
scheduler/util: -
scheduler/api: scheduler/util
scheduler/client/event_handler.h: scheduler/api
scheduler/client: scheduler/client/event_handler.h
scheduler/core: scheduler/client/event_handler.h
plugins/*: scheduler/api
plugins/registry: plugins/*
```
"""


class CheckLayersTest(unittest.TestCase):
    def tree(self, files, rules=RULES):
        root = tempfile.mkdtemp()
        with open(os.path.join(root, "ARCHITECTURE.md"), "w") as f:
            f.write(rules)
        for path, includes in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write("".join(f'#include "{i}"\n' for i in includes))
        return root

    def check(self, root):
        return subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)

    def base(self):
        return {"scheduler/util/log.h": [], "scheduler/api/pod.h": ["scheduler/util/log.h"],
                "scheduler/client/event_handler.h": ["scheduler/api/pod.h"],
                "scheduler/client/rest.h": ["scheduler/client/event_handler.h"],
                "scheduler/core/scheduler.cc": ["scheduler/client/event_handler.h",
                                                "scheduler/util/log.h", "vector"],
                "plugins/a/a.h": ["scheduler/api/pod.h"], "plugins/b/b.h": [],
                "plugins/registry/registry.cc": ["plugins/a/a.h", "plugins/b/b.h"]}

    def test_includes_that_follow_the_rules_pass(self):
        result = self.check(self.tree(self.base()))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_an_include_against_the_rules_is_reported_with_its_line(self):
        files = self.base()
        files["scheduler/api/pod.h"] = ["scheduler/util/log.h", "scheduler/core/scheduler.cc"]
        result = self.check(self.tree(files))
        self.assertEqual(result.returncode, 1)
        self.assertIn("scheduler/api/pod.h:2: scheduler/api may not include "
                      "scheduler/core/scheduler.cc (scheduler/core)", result.stdout)

    def test_one_header_of_a_room_does_not_open_the_whole_room(self):
        files = self.base()
        files["scheduler/core/scheduler.cc"] = ["scheduler/client/rest.h"]
        result = self.check(self.tree(files))
        self.assertEqual(result.returncode, 1)
        self.assertIn("scheduler/core may not include scheduler/client/rest.h", result.stdout)

    def test_a_plugin_may_not_include_another_plugin(self):
        files = self.base()
        files["plugins/b/b.h"] = ["plugins/a/a.h"]
        result = self.check(self.tree(files))
        self.assertEqual(result.returncode, 1)
        self.assertIn("plugins/b may not include plugins/a/a.h (plugins/a)", result.stdout)

    def test_a_file_no_rule_covers_is_reported(self):
        files = self.base()
        files["config/config.h"] = []
        result = self.check(self.tree(files))
        self.assertEqual(result.returncode, 1)
        self.assertIn("config/config.h: no rule in ARCHITECTURE.md covers this file", result.stdout)

    def test_rules_that_go_in_a_circle_are_refused(self):
        rules = "```layers\nscheduler/util: scheduler/api\nscheduler/api: scheduler/util\n```\n"
        result = self.check(self.tree(self.base(), rules))
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("go in a circle", result.stderr)


if __name__ == "__main__":
    unittest.main()
