#!/usr/bin/python3
"""Unit tests of the published numbers' machinery: experiments/run.py (the runner of the cases in
experiments/cases.json), analysis/render.py (the docs from stored summaries only),
analysis/results_store.py, and analysis/plotutil.py (gap detection)."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "analysis"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "experiments"))
import plotutil  # noqa: E402
import render  # noqa: E402
import results_store  # noqa: E402
import run as runner  # noqa: E402

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


class Store(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.saved = results_store.STORE
        results_store.STORE = self.dir
        data = {"case": "t", "commands": ["qreplay run x"], "code_version": "v1", "date": "d",
                "timings": [{"wall_s": 61.5}],
                "results": {"variants": [{"variant": "a", "th_ns": 2000, "x": 0.5},
                                         {"variant": "b", "th_ns": 5000, "x": 0.0123}]}}
        with open(os.path.join(self.dir, "t.json"), "w") as fh:
            json.dump(data, fh)

    def tearDown(self):
        results_store.STORE = self.saved

    def test_inline_values_are_rewritten(self):
        text = "mean <!--v t:results.variants[variant=b].x|pct:.2f-->old<!--/v-->% in " \
               "<!--v t:timings.0.wall_s|s2min:.2f-->?<!--/v--> min"
        out = render.render_text(text, "doc")
        self.assertEqual(out, "mean <!--v t:results.variants[variant=b].x|pct:.2f-->1.23<!--/v-->%"
                         " in <!--v t:timings.0.wall_s|s2min:.2f-->1.02<!--/v--> min")
        self.assertEqual(render.render_text(out, "doc"), out)  # idempotent

    def test_a_selection_must_pick_exactly_one(self):
        with self.assertRaises(results_store.DocsError):
            render.value("t:results.variants[th_ns=1].x", "doc")
        with self.assertRaises(results_store.DocsError):
            render.value("t:results.nothing", "doc")
        with self.assertRaises(results_store.DocsError):
            render.value("missing:results.x", "doc")
        with self.assertRaises(results_store.DocsError):
            render.value("t:results.variants[variant=a].x|furlongs:.1f", "doc")

    def test_blocks_are_replaced_and_unknown_blocks_refused(self):
        render.BLOCKS["test-block"] = lambda: "generated text"
        try:
            text = "a\n<!-- generated: test-block -->\nstale\n<!-- end generated -->\nb\n"
            self.assertEqual(render.render_text(text, "doc"),
                             "a\n<!-- generated: test-block -->\ngenerated text\n"
                             "<!-- end generated -->\nb\n")
        finally:
            del render.BLOCKS["test-block"]
        with self.assertRaises(results_store.DocsError):
            render.render_text("<!-- generated: nope -->\n<!-- end generated -->", "doc")

    def test_comparison_ignores_timings_and_volatile_lines_only(self):
        a = {"commands": ["c"], "scenario_sha256": "s", "seed": 1, "code_version": "v1",
             "timings": [{"wall_s": 1}], "stdout": [["x 1", "events 5 in 3.2 s wall"]],
             "results": {"n": 1, "volatile": {"wall": 3}}}
        b = json.loads(json.dumps(a))
        b["code_version"], b["timings"] = "v2", [{"wall_s": 9}]
        b["stdout"][0][1] = "events 5 in 9.9 s wall"
        b["results"]["volatile"]["wall"] = 7
        self.assertEqual(runner.differences(runner.comparable(a), runner.comparable(b)), [])
        b["results"]["n"] = 2
        self.assertEqual(len(runner.differences(runner.comparable(a), runner.comparable(b))), 1)
        b["results"]["n"] = 1
        b["stdout"][0][0] = "x 2"
        self.assertEqual(len(runner.differences(runner.comparable(a), runner.comparable(b))), 1)


class Registry(unittest.TestCase):
    """experiments/cases.json is checked before anything runs; references are looked up by name."""

    def with_cases(self, cases):
        saved = results_store.EXPERIMENTS
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "cases.json"), "w") as fh:
            json.dump(cases, fh)
        results_store.EXPERIMENTS = d
        try:
            return runner.cases()
        finally:
            results_store.EXPERIMENTS = saved

    def test_the_shipped_registry_is_valid_and_every_kind_is_known(self):
        cases = runner.cases()
        self.assertIn("k4-default", cases)
        self.assertEqual({c["kind"] for c in cases.values()}, {"quick", "long", "archive"})

    def test_a_bad_case_is_refused_with_its_name(self):
        good = {"kind": "quick", "scenario": "s.ini", "commands": [["x"]], "summary": ["run"]}
        self.assertEqual(self.with_cases({"a": good})["a"]["opts"], {})
        for bad, what in (({"kind": "often"}, "kind"), ({"commands": []}, "commands"),
                          ({"summary": ["nope"]}, "no summary function 'nope'")):
            case = dict(good)
            case.update(bad)
            with self.assertRaises(results_store.DocsError) as e:
                self.with_cases({"a": case})
            self.assertIn("cases.json: a", str(e.exception))
            self.assertIn(what, str(e.exception))

    def test_references_come_from_the_data_file(self):
        self.assertEqual(render.ref("qdiff_mean_30"), "0.78")
        with self.assertRaises(results_store.DocsError):
            render.ref("qdiff_mean_99")

    def test_variants_are_picked_by_their_fields(self):
        vs = [{"mode": "tagged", "th_ns": 5000, "n": 1}, {"mode": "plain", "th_ns": 5000, "n": 2},
              {"mode": "tagged", "th_us": 2, "n": 3}]
        self.assertEqual(render.pick(vs, "plain", 5)["n"], 2)
        self.assertEqual(render.pick(vs, "tagged", 2)["n"], 3)
        with self.assertRaises(results_store.DocsError):
            render.pick(vs, "tagged", 10)

    def test_size_classes_are_ordered_by_size(self):
        self.assertEqual(render.size_classes([">10MB", "1-10MB", "<100KB", "100KB-1MB"]),
                         ["<100KB", "100KB-1MB", "1-10MB", ">10MB"])


class Adopt(unittest.TestCase):
    """run.py adopt: a sweep case from a finished workflow folder."""

    def make_sweep(self, versions, name="fattree-k8-paper", finished=True):
        h5py = runner.h5()
        d = tempfile.mkdtemp()
        os.makedirs(os.path.join(d, "benchmarks"))
        for i, v in enumerate(versions):
            run = os.path.join(d, "load_%d_seed_1" % (10 * (i + 1)))
            os.makedirs(run)
            with h5py.File(os.path.join(run, "results.h5"), "w") as f:
                f.attrs["code_version"] = v
                f.attrs["scenario_name"] = name
            with open(os.path.join(d, "benchmarks", os.path.basename(run) + ".tsv"), "w") as fh:
                fh.write("s\th:m:s\tmax_rss\n%d.5\t0:00:01\t%d.0\n" % (100 + i, 300 + i))
        if finished:
            open(os.path.join(d, "summary.csv"), "w").close()
        return d

    def test_the_kept_folder_sums_the_runs_and_names_their_code(self):
        keep = tempfile.mkdtemp()
        runner.adopt_sweep("k8-paper", self.make_sweep(["v1", "v1", "v1"]), keep)
        with open(os.path.join(keep, "k8-paper", "docs-run.json")) as fh:
            kept = json.load(fh)
        self.assertEqual(kept["code_version"], "v1")
        self.assertEqual(kept["timings"][0]["wall_s"], 100.5 + 101.5 + 102.5)
        self.assertEqual(kept["timings"][0]["peak_rss_mb"], 302.0)
        self.assertTrue(os.path.isdir(os.path.join(keep, "k8-paper", "sweep")))

    def test_mixed_code_unfinished_sweeps_other_scenarios_and_non_sweep_cases_are_refused(self):
        for sweep, case, what in ((self.make_sweep(["v1", "v2"]), "k8-paper", "different code"),
                                  (self.make_sweep(["v1"], finished=False), "k8-paper",
                                   "not finished"),
                                  (self.make_sweep(["v1"], name="other"), "k8-paper", "scenario"),
                                  (self.make_sweep(["v1"]), "k4-default", "not a sweep case")):
            with self.assertRaises(results_store.DocsError) as e:
                runner.adopt_sweep(case, sweep, tempfile.mkdtemp())
            self.assertIn(what, str(e.exception))


class FiguresFromCsv(unittest.TestCase):
    """aggregate.py --from-csv: the sweep figures redrawn from a stored summary table."""

    def run_aggregate(self, *args):
        import subprocess
        return subprocess.run([PYTHON, os.path.join(HERE, "..", "..", "analysis",
                                                         "aggregate.py")] + list(args),
                              capture_output=True, text=True)

    def test_a_table_gives_the_three_figures_and_a_bad_cell_names_its_line(self):
        d = tempfile.mkdtemp()
        table = os.path.join(d, "s.csv")
        head = "load_pct,seed,variant,mode,th_us,qdiff_mean_mtu,qdiff_p99_mtu,drop_error," \
               "false_accepts,false_drops,wrong_locations,runtime_drops\n"
        with open(table, "w") as fh:
            fh.write(head)
            for load in (10, 30):
                for mode in ("plain", "tagged"):
                    for th in (2, 5):
                        fh.write("%d,1,%s_th_%d,%s,%d,1.0,5.0,0.1,3,0,1,40\n" % (load, mode, th,
                                                                              mode, th))
        r = self.run_aggregate("--out", d, "--from-csv", table)
        self.assertEqual(r.returncode, 0, r.stderr)
        for fig in ("sweep_qdiff", "sweep_drop_error", "sweep_error_kinds"):
            self.assertTrue(os.path.getsize(os.path.join(d, "figures", fig + ".png")) > 0)
        with open(table, "a") as fh:
            fh.write("80,1,plain_th_2,plain,2,lots,5.0,0.1,3,0,1,40\n")
        r = self.run_aggregate("--out", d, "--from-csv", table)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("line 10, column qdiff_mean_mtu", r.stderr)


class Gaps(unittest.TestCase):
    def test_a_long_silence_is_a_gap_and_regular_spacing_is_not(self):
        t = [0, 1, 2, 3, 4, 5, 500, 501, 502]
        self.assertEqual(list(plotutil.gaps(t)), [5])
        self.assertEqual(list(plotutil.gaps(range(1000))), [])
        self.assertEqual(list(plotutil.gaps([1, 2])), [])


if __name__ == "__main__":
    unittest.main()
