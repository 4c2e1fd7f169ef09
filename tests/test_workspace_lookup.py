"""``Workspace.find_dataset`` / ``find_project`` answer from an index (a workspace of 1,000 projects asks
thousands of times) exactly what a walk of the list answers: the first whose id or name matches, through
appends, replacements in place and a list replaced whole. And the period filter, parsed once, is each caller's
own tree."""
from __future__ import annotations

import random

from ledgerflow.compiler import periods
from ledgerflow.compiler.model import Workspace, WorkspaceConfig


class Item:
    def __init__(self, id_: str, name: str):
        self.id, self.name = id_, name


def _walk(items, ref):
    return next((i for i in items if i.id == ref or i.name == ref), None)


def test_the_index_answers_what_a_walk_answers_through_every_change():
    rng = random.Random(48)
    names = [f"n{k}" for k in range(12)]
    ws = Workspace(root="/nowhere", config=WorkspaceConfig(name="w", default_resolver=None, resolvers={}), datasets=[], projects=[])
    for step in range(3000):
        move = rng.random()
        if move < 0.3:
            ws.datasets.append(Item(rng.choice(names), rng.choice(names)))  # an id may be another's name
        elif move < 0.45 and ws.datasets:
            ws.datasets[rng.randrange(len(ws.datasets))] = Item(rng.choice(names), rng.choice(names))
        elif move < 0.5 and ws.datasets:
            del ws.datasets[rng.randrange(len(ws.datasets))]
        elif move < 0.52:
            ws.datasets = [Item(rng.choice(names), rng.choice(names)) for _ in range(rng.randrange(5))]
        ref = rng.choice(names + ["absent"])
        assert ws.find_dataset(ref) is _walk(ws.datasets, ref), step


def test_the_period_filter_is_the_callers_own_tree():
    first = periods.period_filter("period")
    text = first.sql("spark")
    from sqlglot import exp
    first.find(exp.Column).replace(exp.column("other"))  # the caller changes its tree
    again = periods.period_filter("period")
    assert again.sql("spark") == text and again is not first
    assert not any(node.meta for node in again.walk())  # no parser positions of a text no user wrote
    assert periods.period_filter("snapshot") is None


def test_a_comment_of_printable_text_is_written_as_the_escaping_rule_writes_it():
    """``render.comment``'s shortcut for text with nothing to escape gives what the character-by-character rule
    gives, for text drawn from characters of every kind (controls, separators, marks, astral, backslashes)."""
    from ledgerflow.compiler import render
    pool = "ab Zé€\u00a0\u2028\u2029\u0085\x0b\x0c\r\n\t\\\u200b\u202e\U0001f600\ue000\x7f;'\"*/"
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 8)))
        body = "".join(render._visible(ch) for ch in text)
        if text.endswith("\\"):
            body = body[:-2] + "\\x5c"
        assert render.comment(text) == f"-- {body}", repr(text)
