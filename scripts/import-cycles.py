#!/usr/bin/env python3
"""File-level import graph of each crate of the workspace: which source file uses which.

Reads every `use` tree and every inline `crate::`/`super::`/`self::` path outside `#[cfg(test)]` modules and
comments, resolves it to the file that defines the item (following `pub use` re-exports, so `super::Extractor`
leads to the file that defines `Extractor`, not to the `mod.rs` that re-exports it), and prints:
- each file-level import circle (a strongly connected component of the graph: A uses B and B uses A, directly
  or through a chain);
- in the runtime crate, each import from a top-level module to one in a layer above it (the order below).
A module's `mod` declarations and its re-exports of its own children are not uses, and neither is a
module's use of its ancestors (`super::` items of the `mod.rs` that declares it): in Rust a module owns
its children, which see its private items, so parent and child are one unit; circles between siblings
and across subtrees count.

usage: scripts/import-cycles.py [PROJECT_DIR]   -> exit 1 if any circle or upward import.
       scripts/import-cycles.py --self-test     -> checks the reading on small crates made for it."""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CRATES = ["llm-extract/src", "llm-extract-cli/src", "llm-extract-derive/src"]
# The runtime crate's layers, lowest first: a module uses only what lies below it.
LAYERS = [
    "stable_hash", "error", "validate", "schema", "parse", "ground", "document", "llm", "report", "extract", "batch", "prompts", "blocking",
]
ENTRY = ("lib.rs", "main.rs")


def strip(text):
    """The code of a file without comments, string literals and `#[cfg(test)]` modules."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())
    text = re.sub(r'r(#*)".*?"\1', '""', text, flags=re.S)
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text, flags=re.S)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def expand(tree):
    """The paths of a use tree, each with the name it binds: `a::{b, c::{d as e}, self}` -> (a::b, b),
    (a::c::d, e), (a, a)."""
    tree = re.sub(r"\s+as\s+", "@", tree.strip())
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        path, _, alias = tree.partition("@")
        return [(path, alias or path.split("::")[-1])]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    paths = []
    for part in filter(None, parts):
        for path, name in expand(part):
            if path == "self":
                module = prefix.rstrip(":")
                paths.append((module, name if name != "self" else module.split("::")[-1]))
            else:
                paths.append((prefix + path, name))
    return paths


class Crate:
    def __init__(self, src):
        self.src = src
        self.files = {}  # module path (tuple) -> file
        for dp, _, fs in os.walk(src):
            for f in fs:
                if not f.endswith(".rs"):
                    continue
                rel = os.path.relpath(os.path.join(dp, f), src)
                parts = rel[:-3].split(os.sep)
                if parts[-1] == "mod" or (len(parts) == 1 and f in ENTRY):
                    parts = parts[:-1]
                self.files.setdefault(tuple(parts), rel)
        self.code = {m: strip(open(os.path.join(src, f)).read()) for m, f in self.files.items()}
        # Items a module declares inline (`mod x { ... }` without a file) count as the module's own.
        self.reexports = {m: self.read_reexports(m) for m in self.files}

    def read_reexports(self, module):
        names = {}
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", self.code[module]):
            for path, name in expand(m.group(1)):
                segs = [s for s in path.split("::") if s]
                if segs:
                    names[name] = segs
        return names

    def resolve(self, module, segs, seen=None):
        """The module that defines what `segs`, written in `module`, names (None if outside the crate)."""
        seen = seen or set()
        if not segs:
            return None
        head, rest = segs[0], segs[1:]
        if head == "crate":
            base = ()
        elif head == "super":
            base = module[:-1]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif head == "self":
            base = module
        elif module + (head,) in self.files:
            base, rest = module + (head,), rest
        else:
            return None
        # The longest module prefix that is a file.
        while rest and base + (rest[0],) in self.files:
            base, rest = base + (rest[0],), rest[1:]
        if rest and rest[0] in self.reexports.get(base, {}) and (base, rest[0]) not in seen:
            seen.add((base, rest[0]))
            target = self.resolve(base, self.reexports[base][rest[0]], seen)
            if target is not None:
                return target
        return base

    def edges(self):
        graph = {}
        for module, code in self.code.items():
            targets = set()
            for m in re.finditer(r"\buse\s+([^;]+);", code):
                is_reexport = re.search(r"\bpub(?:\([^)]*\))?\s+$", code[max(0, m.start() - 20):m.start()])
                for path, _ in expand(m.group(1)):
                    segs = [s for s in path.split("::") if s]
                    target = self.resolve(module, segs)
                    # A module re-exporting its own descendants is their facade, not their user.
                    if is_reexport and target and target[: len(module)] == module:
                        continue
                    targets.add(target)
            body = re.sub(r"\buse\s+[^;]+;", "", code)
            for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", body):
                targets.add(self.resolve(module, m.group(1).split("::")))
            targets.discard(None)
            # A module and its ancestors are one unit (see the docstring).
            graph[module] = {t for t in targets if module[: len(t)] != t}
        return graph


def circles(graph):
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
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
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def main(root):
    problems = 0
    for rel in CRATES:
        src = os.path.join(root, rel)
        if not os.path.isdir(src):
            continue
        crate = Crate(src)
        graph = crate.edges()
        for comp in circles(graph):
            problems += 1
            files = [crate.files[m] for m in comp]
            chain = "; ".join(
                f"{crate.files[a]} -> {crate.files[b]}" for a in comp for b in sorted(graph[a]) if b in comp
            )
            print(f"{rel}: circle of {len(files)} files: {chain}")
        if rel == "llm-extract/src":
            for a, targets in sorted(graph.items()):
                for b in sorted(targets):
                    la, lb = (a[:1] or ("",))[0], (b[:1] or ("",))[0]
                    if la in LAYERS and lb in LAYERS and LAYERS.index(lb) > LAYERS.index(la):
                        problems += 1
                        print(f"{rel}: upward import: {crate.files[a]} -> {crate.files[b]} ({la} uses {lb})")
    print(f"import-cycles: {problems} problem(s)")
    return 1 if problems else 0


def self_test():
    """Small crates with known graphs: each must read as stated, or the check itself is broken."""
    import contextlib
    import io
    import tempfile

    cases = {
        # A circle through a `use` group, a re-export and an inline path.
        "circle": ({
            "lib.rs": "mod a;\nmod b;\nmod c;\n",
            "a.rs": "use crate::{b::{Thing as Other}, c};\nfn f() -> Other { todo!() }\n",
            "b.rs": "pub use crate::c::Thing;\n",
            "c.rs": "pub struct Thing;\nfn g() { crate::a::f(); }\n",
        }, 1),
        # A parent re-exporting its child and the child using the parent's item: one unit, no circle;
        # the use inside a test module and the one in a comment do not count either.
        "unit": ({
            "lib.rs": "mod m;\nmod n;\n",
            "m/mod.rs": "mod child;\npub use child::Item;\npub struct Base;\n"
                        "fn make() -> self::child::Item { todo!() }\n",
            "m/child.rs": "use super::Base;\npub struct Item(Base);\n"
                          "// use crate::n::X;\n#[cfg(test)]\nmod tests {\n    use crate::n::X;\n}\n",
            "n.rs": "use crate::m::Item;\npub struct X;\n",
        }, 0),
        # A lower layer using a higher one.
        "upward": ({
            "lib.rs": "mod parse;\nmod extract;\n",
            "parse.rs": "use crate::extract::Thing;\n",
            "extract.rs": "pub struct Thing;\n",
        }, 1),
    }
    failed = 0
    for name, (files, expected) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            for path, text in files.items():
                full = os.path.join(root, "llm-extract", "src", path)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w") as f:
                    f.write(text)
            with contextlib.redirect_stdout(io.StringIO()) as out:
                main(root)
            problems = int(re.search(r"(\d+) problem", out.getvalue()).group(1))
            if problems != expected:
                failed += 1
                print(f"self-test {name}: {problems} problem(s), expected {expected}\n{out.getvalue()}")
    print(f"import-cycles self-test: {len(cases) - failed} of {len(cases)} cases read as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(ROOT))
