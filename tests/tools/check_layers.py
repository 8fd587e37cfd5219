#!/usr/bin/python3
"""The shape of the code, checked on its sources (CI runs it as the ctest `layers`).

1. Layers: every core source and header includes only headers of its own layer or of a layer the
   build lets it link (core/CMakeLists.txt: QR_LAYER_DEPS_*, read from there), and the analyses
   layer never reaches the truth layer, directly or through another layer.
   core/all/include/qreplay/qreplay.h, outside the layers, includes every public header.
2. No include cycle between modules: a module is a source with its header (foo.c + foo.h); an edge
   A -> B is an include of B's header in A's source or header. Any cycle is printed and fails.
3. The program, the ns-3 module and the testbed runtime include no private core header.
4. Every public function of the core has a doc comment: a comment ends just above it, or above the
   group of declarations (and #defines) it stands in.
5. No core source includes a header by a relative path ("../"), which would reach another layer
   around the build's link lines.
6. Every public function of the core has a caller (in the core, the program, the ns-3 module,
   the testbed, the benchmarks or the tests).
7. No call cycle between the core's sources, by symbol: an edge A.c -> B.c is a call in A.c of a
   function B.c defines (not static); any cycle is printed and fails. Calls through a function
   pointer (a source's next packet, an engine) are not edges: that is how data flows down
   without a lower module naming a higher one.

Exit status 0 when all hold, 1 with every violation listed. `--graph` prints the module graph
(DOT) instead. Usage: check_layers.py [--graph] [SOURCE_DIR]
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
DECL = re.compile(r"^(?:const |unsigned |struct )?[a-z_][a-z_0-9 *]*\b(qr_[a-z0-9_]+)\(")


# What the library must not call: it writes result files and returns errors; the program prints,
# starts processes and exits.
FORBIDDEN = re.compile(r"\b(printf|puts|putchar|fork|vfork|_exit|exit|abort|system|popen|execl|execlp|"
                       r"execv|execvp)\s*\(|\bstd(out|err)\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(\\.|[^\"\\])*\"", re.S)


def layer_deps(cmake_text):
    """The layers in build order and each layer's direct dependencies, from core/CMakeLists.txt."""
    m = re.search(r"set\(QR_LAYERS ([a-z ]+)\)", cmake_text)
    if not m:
        raise SystemExit("check_layers: core/CMakeLists.txt has no set(QR_LAYERS ...)")
    layers = m.group(1).split()
    deps = {}
    for layer in layers:
        d = re.search(r"set\(QR_LAYER_DEPS_%s ?([a-z ]*|\"\")\)" % layer, cmake_text)
        if not d:
            raise SystemExit("check_layers: no QR_LAYER_DEPS_%s in core/CMakeLists.txt" % layer)
        deps[layer] = [x for x in d.group(1).replace('"', "").split() if x]
    return layers, deps


def reachable(deps, layer):
    """The layers `layer` may use: itself and everything below it."""
    seen, todo = set(), [layer]
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(deps[x])
    return seen


def core_files(core):
    """{path: (layer, module)} for every .c and public/private .h of the core."""
    out = {}
    for layer in sorted(os.listdir(core)):
        base = os.path.join(core, layer)
        if not os.path.isdir(base) or layer == "all":
            continue
        for root, _, files in os.walk(base):
            for f in files:
                if f.endswith((".c", ".h")):
                    out[os.path.join(root, f)] = (layer, os.path.splitext(f)[0])
    return out


def find_cycles(graph):
    """Every elementary cycle's representative (one per strongly connected component of size > 1,
    or a self-loop), as a list of nodes: Tarjan's algorithm, then a path through the component."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            strong(v)
    cycles = []
    for comp in comps:
        members = set(comp)
        start = comp[0]
        # a shortest way back to start inside the component (breadth first)
        prev, frontier = {start: None}, [start]
        found = None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph.get(v, ())):
                    if w == start:
                        found = v
                        break
                    if w in members and w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            frontier = nxt
        path, v = [], found
        while v is not None:
            path.append(v)
            v = prev[v]
        cycles.append(list(reversed(path)) + [start])
    return cycles


def check(src):
    core = os.path.join(src, "core")
    with open(os.path.join(core, "CMakeLists.txt")) as fh:
        layers, deps = layer_deps(fh.read())
    files = core_files(core)
    # where each header lives
    header_layer = {}
    for path, (layer, _) in files.items():
        if path.endswith(".h") and os.sep + "include" + os.sep + "qreplay" + os.sep in path:
            header_layer["qreplay/" + os.path.basename(path)] = layer
    private = {os.path.basename(p) for p in files if p.endswith(".h") and "/include/" not in p}
    problems = []
    graph = {}
    for path, (layer, module) in sorted(files.items()):
        if layer not in deps:
            problems.append("%s: folder core/%s is no layer of core/CMakeLists.txt" %
                            (os.path.relpath(path, src), layer))
            continue
        allowed = reachable(deps, layer)
        with open(path, errors="replace") as fh:
            text = fh.read()
        node = "%s/%s" % (layer, module)
        graph.setdefault(node, set())
        for inc in INCLUDE.findall(text):
            if ".." in inc.split("/"):
                problems.append("%s: includes %s by a relative path: a layer's headers are "
                                "reached as qreplay/NAME.h, through what the build links" %
                                (os.path.relpath(path, src), inc))
                continue
            if inc.startswith("qreplay/"):
                target = header_layer.get(inc)
                if target is None:
                    problems.append("%s: includes %s, which no layer has" %
                                    (os.path.relpath(path, src), inc))
                    continue
                if target not in allowed:
                    problems.append("%s (layer %s) includes %s of layer %s: a layer includes only "
                                    "its own headers and those of %s" %
                                    (os.path.relpath(path, src), layer, inc, target,
                                     ", ".join(sorted(allowed - {layer})) or "no other layer"))
                dst = "%s/%s" % (target, os.path.splitext(os.path.basename(inc))[0])
                if dst != node:
                    graph[node].add(dst)
    # every public function declared under a comment
    for path, (layer, module) in sorted(files.items()):
        if not path.endswith(".h") or "/include/qreplay/" not in path:
            continue
        with open(path, errors="replace") as fh:
            lines = fh.read().split("\n")
        for i, line in enumerate(lines):
            m = DECL.match(line)
            if not m or line.startswith("static"):
                continue
            k = i - 1
            while k >= 0 and lines[k].strip() and not lines[k].rstrip().endswith("*/") and \
                    not lines[k].startswith(("typedef struct", "}", "{")):
                k -= 1
            if k < 0 or not lines[k].rstrip().endswith("*/"):
                problems.append("%s:%d: %s has no doc comment" %
                                (os.path.relpath(path, src), i + 1, m.group(1)))
    # the umbrella header (core/all) includes every public header
    umbrella = os.path.join(core, "all", "include", "qreplay", "qreplay.h")
    if os.path.exists(umbrella):
        with open(umbrella) as fh:
            has = set(INCLUDE.findall(fh.read()))
        for h in sorted(set(header_layer) - has - {"qreplay/qreplay.h"}):
            problems.append("core/all/include/qreplay/qreplay.h does not include %s" % h)
    else:
        problems.append("core/all/include/qreplay/qreplay.h is missing")
    if "analyses" in deps and "truth" in reachable(deps, "analyses"):
        problems.append("core/CMakeLists.txt: the analyses layer links the truth layer")
    for cyc in find_cycles(graph):
        problems.append("include cycle: " + " -> ".join(cyc))
    # the library never prints to the terminal, starts a process or ends one: that is the program's
    for path, (layer, _) in sorted(files.items()):
        if not path.endswith(".c"):
            continue
        with open(path, errors="replace") as fh:
            code = COMMENT.sub(" ", fh.read())
        for m in FORBIDDEN.finditer(code):
            problems.append("%s:%d: %s in the library (printing, processes and exits belong to the "
                            "program)" % (os.path.relpath(path, src),
                                          code.count("\n", 0, m.start()) + 1, m.group(0).strip()))
    # the program and the runtimes see public headers only
    for top in ("program", "ns3-module", "testbed", "bench"):
        for root, _, fs in os.walk(os.path.join(src, top)):
            for f in fs:
                if not f.endswith((".c", ".h", ".cc")):
                    continue
                p = os.path.join(root, f)
                with open(p, errors="replace") as fh:
                    for inc in INCLUDE.findall(fh.read()):
                        if os.path.basename(inc) in private and not inc.startswith("qreplay/") \
                                and not os.path.exists(os.path.join(root, inc)):
                            problems.append("%s: includes the core's private header %s" %
                                            (os.path.relpath(p, src), inc))
    problems += uncalled(src, files)
    calls = call_graph(src, files)
    for cyc in find_cycles(calls):
        problems.append("call cycle: " + " -> ".join(cyc))
    return layers, deps, graph, problems


DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(qri?_\w+)\s*\([^;{}]*\)\s*\{", re.M)
CALL = re.compile(r"\b(qri?_\w+)\s*\(")


def call_graph(src, files):
    """{source: set of sources whose functions it calls} over the core's .c files, by symbol."""
    code, defined_in = {}, {}
    for path in sorted(files):
        if not path.endswith(".c"):
            continue
        rel = os.path.relpath(path, src)
        with open(path, errors="replace") as fh:
            code[rel] = COMMENT.sub(" ", fh.read())
        for name in DEFINITION.findall(code[rel]):
            defined_in.setdefault(name, rel)
    graph = {}
    for rel, text in code.items():
        graph[rel] = {defined_in[n] for n in CALL.findall(text)
                      if n in defined_in and defined_in[n] != rel}
    return graph


def uncalled(src, files):
    """Public functions of the core that nothing calls: no use outside their own declaration and
    definition in the core, the program, the ns-3 module, the testbed, the benchmarks or the
    tests."""
    declared = {}
    for path in sorted(files):
        if path.endswith(".h") and "/include/qreplay/" in path:
            with open(path, errors="replace") as fh:
                for i, line in enumerate(fh.read().split("\n")):
                    m = DECL.match(line)
                    if m and not line.startswith("static"):
                        declared.setdefault(m.group(1), "%s:%d" % (os.path.relpath(path, src), i + 1))
    uses = dict.fromkeys(declared, 0)
    word = re.compile(r"\bqr_[a-z0-9_]+\b")
    for top in ("core", "program", "ns3-module", "testbed", "bench", "tests"):
        for root, _, fs in os.walk(os.path.join(src, top)):
            for f in fs:
                if not f.endswith((".c", ".h", ".cc")):
                    continue
                p = os.path.join(root, f)
                public = p.endswith(".h") and "/include/qreplay/" in p
                with open(p, errors="replace") as fh:
                    code = COMMENT.sub(" ", fh.read())
                for line in code.split("\n"):
                    m = DECL.match(line)
                    defined = m.group(1) if m and not public else None
                    for w in word.findall(line):
                        if w in uses and not public and w != defined:
                            uses[w] += 1
    return ["%s: %s is public and nothing calls it" % (where, name)
            for name, where in sorted(declared.items(), key=lambda x: x[1]) if not uses[name]]


def main(argv):
    graph_only = "--graph" in argv
    args = [a for a in argv if a != "--graph"]
    src = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), "..", ".."))
    layers, deps, graph, problems = check(src)
    if graph_only:
        print("digraph core {")
        for v in sorted(graph):
            for w in sorted(graph[v]):
                print('  "%s" -> "%s";' % (v, w))
        print("}")
        return 0
    for p in problems:
        print("check_layers: " + p)
    n_edges = sum(len(v) for v in graph.values())
    print("layers %s: %d modules, %d include edges, no include cycle, no call cycle%s" %
          ("; ".join("%s on %s" % (x, ", ".join(deps[x]) or "nothing") for x in layers),
           len(graph), n_edges, "" if not problems else "; %d problems" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
