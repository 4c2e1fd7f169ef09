"""``lineage._order`` keeps each input's least path without hashing whole paths: the same inputs as merging the
paths in a set and taking their least, for inputs drawn at random (empty paths, shared prefixes, repeats)."""
from __future__ import annotations

import random

from ledgerflow.compiler.lineage import Input, _order
from ledgerflow.compiler.lineage_walk import KINDS


def _by_sets(inputs):
    merged = {}
    for i in inputs:
        merged.setdefault((i.dataset, i.column, i.kind), set()).update([i.via] if i.via else [])
    out = [Input(ds, col, kind, min(vias) if vias else ()) for (ds, col, kind), vias in merged.items()]
    return sorted(out, key=lambda i: (KINDS.index(i.kind), i.dataset, i.column))


def test_the_least_path_of_each_input_as_a_set_would_give():
    rng = random.Random(11)
    steps = ["p1.2 -> a", "p2.2 -> b", "p3.2 -> c"]
    for _ in range(2000):
        inputs = [Input(rng.choice("xy"), rng.choice("uv"), rng.choice(KINDS),
                        tuple(rng.choice(steps) for _ in range(rng.randrange(0, 4))))
                  for _ in range(rng.randrange(0, 8))]
        assert _order(inputs) == _by_sets(inputs)
