#!/usr/bin/env python3
"""The figures of an `llm-extract doc` run (BENCHMARKS.md, "The book"), from the chunks it saved for
resuming: chunks finished, items, grounded values exact at their offsets, tokens, and the recall of a
list of people written beforehand (one name per line).

    scripts/doc-figures.py DOCUMENT STATE_DIR [PEOPLE.txt]

STATE_DIR is `${XDG_CACHE_HOME:-~/.cache}/llm-extract/doc/<hash>/` of the run (it is removed when a run
ends with no failed chunk, so stop the run, or copy the directory, before it ends). A person counts as
present if the full name occurs in the part read (whitespace runs as one space), and as found if an
extracted person's name holds the surname, or the full name where a family shares the surname.
"""
import glob
import json
import re
import sys


def main(document, state_dir, people_file=None):
    text = open(document, encoding="utf-8", newline="").read().encode()
    end = chunks = items = exact = at_offsets = tokens = 0
    grounded = 0
    names = set()
    for path in glob.glob(f"{state_dir}/*.json"):
        chunk = json.load(open(path))
        chunks += 1
        end = max(end, chunk["bytes"]["end"])
        tokens += chunk["usage"]["prompt_tokens"] + chunk["usage"]["completion_tokens"]
        for value, spans in chunk["items"]:
            items += 1
            if value.get("kind") == "person":
                names.add(re.sub(r"\s+", " ", value.get("name", "")))
            for span in spans:
                grounded += 1
                if span["match"]["kind"] == "exact":
                    exact += 1
                    found = text[span["bytes"]["start"]:span["bytes"]["end"]].decode("utf-8", "replace")
                    at_offsets += found == span["value"]
    print(f"chunks {chunks}, bytes 0..{end} of {len(text)}, items {items}, grounded values {grounded}, "
          f"exact {exact}, exact at their offsets {at_offsets}, tokens {tokens}")
    if people_file:
        covered = re.sub(r"\s+", " ", text[:end].decode("utf-8", "ignore"))
        people = [line.strip() for line in open(people_file) if line.strip()]
        surnames = {}
        for person in people:
            surnames.setdefault(person.split()[-1], []).append(person)
        present = [p for p in people if p in covered]
        def found(person):
            key = person if len(surnames[person.split()[-1]]) > 1 else person.split()[-1]
            return any(key in name for name in names)
        hits = [p for p in present if found(p)]
        print(f"people present {len(present)}, found {len(hits)}; missed: {[p for p in present if p not in hits]}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(*sys.argv[1:4])
