"""How `ledgerflow diff --data` compares the two sides (issue 31 point 5, its cost): the counts no longer come
from a per-row status string, and the sample rows are still the first ten differing rows by _row_id; while the
diff computes, the join of the two sides is a shuffled hash join (no sort of either side) and the session's
settings are restored after.

The repository is test_diff_data.py's (C0 the finance sample, C1 a corrected GBP rate).
"""
from __future__ import annotations

from decimal import Decimal

from ledgerflow.adapters.diff import data_command
from ledgerflow.adapters.diff.data_diff import data_diff

from test_diff_data import repo  # noqa: F401  (the module's repository fixture)
from test_diff_data_shared import diff_noting_checkpoints


def test_sample_rows_are_the_first_ten_differing_rows_in_row_id_order(spark):
    """14 rows differ among 30 (changed, added, removed, and a BASE row without a _row_id, which sorts first);
    the samples are the 10 first by _row_id, each with the columns that changed."""
    schema = "_row_id string, name string, amount decimal(10,2)"
    d = Decimal
    base = [(f"r{i:02d}", "n", d(i)) for i in range(30)] + [(None, "orphan", d("1.00"))]
    head = [(f"r{i:02d}", "n", d(i) + (1 if i % 3 == 0 else 0)) for i in range(30) if i not in (4, 25)]
    head += [("r05x", "new", d("9.00"))]
    o = data_diff({"o": spark.createDataFrame(base, schema)}, {"o": spark.createDataFrame(head, schema)}).outputs[0]
    assert (o.added, o.removed, o.changed) == (1, 3, 10)  # r05x; r04, r25 and the orphan; r00, r03, ..., r27
    assert [(s.row_id, s.status) for s in o.samples] == [
        (None, "removed"), ("r00", "changed"), ("r03", "changed"), ("r04", "removed"), ("r05x", "added"),
        ("r06", "changed"), ("r09", "changed"), ("r12", "changed"), ("r15", "changed"), ("r18", "changed")]
    assert o.samples[1].values == {"amount": (d("0"), d("1"))}
    assert o.samples[3].values == {"name": ("n", None), "amount": (d("4"), None)}


def test_the_sides_are_joined_by_a_shuffled_hash_join_and_the_settings_restored(spark, repo, monkeypatch):
    before = {k: spark.conf.get(k, None) for k in data_command.COMPARISON_SETTINGS}
    kept = diff_noting_checkpoints(repo, monkeypatch)
    joined = [frame for frame in kept if "b0" in frame.columns]
    final = joined[0]._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
    join = next(line for line in final.splitlines() if "Join" in line and "Broadcast" not in line)
    assert "ShuffledHashJoin" in join and "FullOuter" in join, final
    assert {k: spark.conf.get(k, None) for k in data_command.COMPARISON_SETTINGS} == before
