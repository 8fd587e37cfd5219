#!/usr/bin/python3
"""The docs hold together (CI runs it as the ctest `docs.links`).

1. Every relative link of every Markdown file of the tree ([text](path#anchor)) names a file that
   exists, and its anchor names a heading of that file (GitHub's slugs) or an <a id="..."> in it.
2. Every command of the program (program/main.c's table) has a guide section: a heading of a
   docs/*.md file that names it as `qreplay COMMAND` or `COMMAND` in code.
3. README.md is a front door: at most 200 lines.

Exit status 0 when all hold, 1 with every problem listed. Usage: check_docs.py [SOURCE_DIR]
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ANCHOR = re.compile(r'<a\s+(?:id|name)="([^"]+)"')
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(text):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to -."""
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_and_links(path):
    """The anchors a Markdown file defines and the links it makes (outside code fences)."""
    anchors, links, seen = set(), [], {}
    fenced = False
    with open(path, errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            m = HEADING.match(line)
            if m:
                s = slug(m.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                anchors.add(s if k == 0 else "%s-%d" % (s, k))
            anchors.update(ANCHOR.findall(line))
            for a, b in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                links.append((n, a or b))
    return anchors, links


def markdown_files(src):
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "--cached", "--others",
                              "--exclude-standard", "*.md"], capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(r, f), src) for r, _, fs in os.walk(src)
               for f in fs if f.endswith(".md") and "/build" not in r]
    return sorted(f for f in out if not f.startswith(("build", ".snakemake")))


def commands(src):
    with open(os.path.join(src, "program", "main.c")) as fh:
        text = fh.read()
    return [c for c in re.findall(r'\{"([a-z-]+)",\s*"', text) if c != "testbed-agent"]


def check(src):
    problems = []
    files = markdown_files(src)
    cache = {}

    def info(path):
        if path not in cache:
            cache[path] = anchors_and_links(path)
        return cache[path]

    for rel in files:
        path = os.path.join(src, rel)
        _, links = info(path)
        for line, target in links:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                if file_part else path
            if not os.path.abspath(dest).startswith(os.path.abspath(src) + os.sep):
                continue  # outside the tree (../shared/): not ours to check
            if not os.path.exists(dest):
                problems.append("%s:%d: link to %s: no such file" % (rel, line, target))
                continue
            if anchor and dest.endswith(".md") and anchor not in info(dest)[0]:
                problems.append("%s:%d: link to %s: %s has no heading or anchor '%s'" %
                                (rel, line, target, os.path.relpath(dest, src), anchor))
    # every command has its guide section
    headings = []
    for rel in files:
        if rel.startswith("docs/"):
            with open(os.path.join(src, rel), errors="replace") as fh:
                headings += [(rel, l) for l in fh if HEADING.match(l)]
    for c in commands(src):
        pat = re.compile(r"`(qreplay )?%s`" % re.escape(c))
        if not any(pat.search(h) for _, h in headings):
            problems.append("command %s has no guide section (a docs/*.md heading naming "
                            "`qreplay %s`)" % (c, c))
    with open(os.path.join(src, "README.md")) as fh:
        n = sum(1 for _ in fh)
    if n > 200:
        problems.append("README.md has %d lines: the front door takes at most 200" % n)
    return files, problems


def main(argv):
    src = os.path.abspath(argv[0] if argv else os.path.join(os.path.dirname(__file__), "..", ".."))
    files, problems = check(src)
    for p in problems:
        print("check_docs: " + p)
    print("%d Markdown files, %d commands, %d problems" % (len(files), len(commands(src)),
                                                          len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
