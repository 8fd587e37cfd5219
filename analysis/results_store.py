"""The stored result summaries (data/results/CASE.json): where they live, reading and writing them.

Shared by the experiments' runner (experiments/run.py, which writes them) and the renderer
(analysis/render.py, which only reads them)."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
STORE = os.path.join(TOP, "data", "results")
EXPERIMENTS = os.path.join(TOP, "experiments")


class DocsError(Exception):
    pass


def store_path(name):
    return os.path.join(STORE, name + ".json")


def load(name):
    path = store_path(name)
    if not os.path.exists(path):
        raise DocsError("%s: no stored summary (run: ./waf results %s)" % (path, name))
    with open(path) as fh:
        return json.load(fh)


def stored():
    """The names of every stored summary."""
    return sorted(f[:-5] for f in os.listdir(STORE) if f.endswith(".json"))


def write_json(path, data):
    """Write data as JSON at path whole or not at all (a temporary file renamed)."""
    tmp = "%s.partial-%d" % (path, os.getpid())
    try:
        with open(tmp, "w") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def experiments_file(name):
    """experiments/NAME (cases.json, reference.json), parsed, or a DocsError naming what is wrong."""
    path = os.path.join(EXPERIMENTS, name)
    try:
        with open(path) as fh:
            return json.load(fh)
    except OSError as e:
        raise DocsError("%s: %s" % (path, e.strerror))
    except ValueError as e:
        raise DocsError("%s: not JSON: %s" % (path, e))
