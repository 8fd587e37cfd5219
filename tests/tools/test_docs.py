#!/usr/bin/python3
"""Unit tests of analysis/docs.py (the docs generator) and analysis/plotutil.py (gap detection)."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "analysis"))
import docs  # noqa: E402
import plotutil  # noqa: E402


class Store(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.saved = docs.STORE
        docs.STORE = self.dir
        data = {"case": "t", "commands": ["qreplay run x"], "code_version": "v1", "date": "d",
                "timings": [{"wall_s": 61.5}],
                "results": {"variants": [{"variant": "a", "th_ns": 2000, "x": 0.5},
                                         {"variant": "b", "th_ns": 5000, "x": 0.0123}]}}
        with open(os.path.join(self.dir, "t.json"), "w") as fh:
            json.dump(data, fh)

    def tearDown(self):
        docs.STORE = self.saved

    def test_inline_values_are_rewritten(self):
        text = "mean <!--v t:results.variants[variant=b].x|pct:.2f-->old<!--/v-->% in " \
               "<!--v t:timings.0.wall_s|s2min:.2f-->?<!--/v--> min"
        out = docs.render_text(text, "doc")
        self.assertEqual(out, "mean <!--v t:results.variants[variant=b].x|pct:.2f-->1.23<!--/v-->%"
                         " in <!--v t:timings.0.wall_s|s2min:.2f-->1.02<!--/v--> min")
        self.assertEqual(docs.render_text(out, "doc"), out)  # idempotent

    def test_a_selection_must_pick_exactly_one(self):
        with self.assertRaises(docs.DocsError):
            docs.value("t:results.variants[th_ns=1].x", "doc")
        with self.assertRaises(docs.DocsError):
            docs.value("t:results.nothing", "doc")
        with self.assertRaises(docs.DocsError):
            docs.value("missing:results.x", "doc")
        with self.assertRaises(docs.DocsError):
            docs.value("t:results.variants[variant=a].x|furlongs:.1f", "doc")

    def test_blocks_are_replaced_and_unknown_blocks_refused(self):
        docs.BLOCKS["test-block"] = lambda: "generated text"
        try:
            text = "a\n<!-- generated: test-block -->\nstale\n<!-- end generated -->\nb\n"
            self.assertEqual(docs.render_text(text, "doc"),
                             "a\n<!-- generated: test-block -->\ngenerated text\n"
                             "<!-- end generated -->\nb\n")
        finally:
            del docs.BLOCKS["test-block"]
        with self.assertRaises(docs.DocsError):
            docs.render_text("<!-- generated: nope -->\n<!-- end generated -->", "doc")

    def test_comparison_ignores_timings_and_volatile_lines_only(self):
        a = {"commands": ["c"], "scenario_sha256": "s", "seed": 1, "code_version": "v1",
             "timings": [{"wall_s": 1}], "stdout": [["x 1", "events 5 in 3.2 s wall"]],
             "results": {"n": 1, "volatile": {"wall": 3}}}
        b = json.loads(json.dumps(a))
        b["code_version"], b["timings"] = "v2", [{"wall_s": 9}]
        b["stdout"][0][1] = "events 5 in 9.9 s wall"
        b["results"]["volatile"]["wall"] = 7
        self.assertEqual(docs.differences(docs.comparable(a), docs.comparable(b)), [])
        b["results"]["n"] = 2
        self.assertEqual(len(docs.differences(docs.comparable(a), docs.comparable(b))), 1)
        b["results"]["n"] = 1
        b["stdout"][0][0] = "x 2"
        self.assertEqual(len(docs.differences(docs.comparable(a), docs.comparable(b))), 1)


class Gaps(unittest.TestCase):
    def test_a_long_silence_is_a_gap_and_regular_spacing_is_not(self):
        t = [0, 1, 2, 3, 4, 5, 500, 501, 502]
        self.assertEqual(list(plotutil.gaps(t)), [5])
        self.assertEqual(list(plotutil.gaps(range(1000))), [])
        self.assertEqual(list(plotutil.gaps([1, 2])), [])


if __name__ == "__main__":
    unittest.main()
