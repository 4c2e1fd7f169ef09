"""Compare two sides' output DataFrames row by row: :func:`data_diff`, independent of the command line
(``diff --data`` calls it on two computed sides; ``restate`` on the published rows and the new ones).

Rows are matched by ``_row_id``, an aggregate output's group-by keys or ``--key`` (a full outer join;
:mod:`.data_keys` chooses); a matched row is ``changed`` when a compared column differs, NULL-safe (``<=>``).
Per output two Spark jobs: one aggregation over the join giving the row counts, the changed rows per column,
the sums of the decimal columns and their gross change (the sum of each row's absolute change; a column copied
from a join is not totalled), per ``--by`` group and overall
(grouping sets: the overall row and the groups come out of the same pass; only groups with a difference
are brought back), and one small query for up to :data:`SAMPLE_ROWS` differing rows, in key order,
over the joined rows the first job kept (a lazy ``localCheckpoint``), so the sides are computed once. (The
sample rows' keys found by the aggregation itself, ``min_by(key, key, 10)``, cost more than this query in a
cold process: the aggregation is then no longer generated code; pipeline P, about 1.7 s of CPU.)
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Mapping, Optional, Sequence

from ...compiler.errors import LedgerflowError
from .data_keys import check_key, choose_match, lacking_columns, quoted  # noqa: F401 (quoted: data_inputs reads it from here)
from .data_result import (IGNORED_COLUMNS, KEY, MAX_GROUPS, SAMPLE_ROWS, ColumnCount, DataDiff, DecimalTotal,
                          GroupChange, OutputDataDiff, SampleRow)


class ByColumnError(LedgerflowError):
    """``--by`` names a column an output lacks (exit 1, nothing computed)."""

    exit_code = 1


def _is_decimal(data_type) -> bool:
    return type(data_type).__name__ == "DecimalType"


def _types(frame) -> dict:
    return {f.name: f.dataType for f in frame.schema.fields}


def check_by(name: str, columns_by_side: Mapping[str, Sequence[str]], by: Sequence[str],
             project: Optional[str] = None) -> None:
    """Refuse ``by`` columns that output ``name`` (of ``project``) lacks on a side (``columns_by_side``: role
    -> its columns)."""
    said = lacking_columns(name, columns_by_side, by, "--by", project)
    if said:
        raise ByColumnError(f"{said} Group by columns every compared output has, or choose the outputs with "
                            "--project.")


def data_diff(base_frames: Mapping[str, object], head_frames: Mapping[str, object], by: Sequence[str] = (),
              seqs: Mapping[str, int] = None, matches: Mapping[str, object] = None, key: Sequence[str] = ()) -> DataDiff:
    """Compare each output of ``head_frames`` with the output of the same name in ``base_frames`` (name ->
    pyspark DataFrame); an output on one side only is ``added`` or ``removed`` with its row count. ``by``:
    columns to total the decimal changes by (every output must have them: :class:`ByColumnError`).
    ``seqs``: output name -> its operation seq, reported. ``matches``: output name -> its
    :class:`...compiler.diff.data_match.OutputMatch` (group-by keys, columns copied from a join); ``key``:
    ``--key``, the columns to match every output's rows by (:mod:`.data_keys`)."""
    seqs, matches = seqs or {}, matches or {}
    names = list(head_frames) + [n for n in base_frames if n not in head_frames]
    for name in names:
        present = {role: [f.name for f in frame.schema.fields] for role, frame in
                   (("base", base_frames.get(name)), ("head", head_frames.get(name))) if frame is not None}
        check_by(name, present, by)
        check_key(name, present, key)
    outputs = []
    for name in names:
        base, head = base_frames.get(name), head_frames.get(name)
        if base is None or head is None:
            rows = (head if base is None else base).count()
            outputs.append(OutputDataDiff(name, "added" if base is None else "removed", seq=seqs.get(name),
                                          base_rows=0 if base is None else rows, head_rows=rows if base is None else 0,
                                          added=rows if base is None else 0, removed=rows if head is None else 0))
        else:
            outputs.append(compare_output(name, base, head, by, seqs.get(name), matches.get(name), key))
    return DataDiff(outputs)


def compare_output(name: str, base, head, by: Sequence[str] = (), seq: int = None, match=None,
                   key: Sequence[str] = ()) -> OutputDataDiff:
    """One output's :class:`OutputDataDiff` (two Spark jobs: the aggregation, the sample rows; one more to see
    that a key other than ``_row_id`` does not repeat)."""
    from pyspark.sql import functions as F

    chosen = choose_match(name, base, head, key, match.group_by if match is not None else ())
    btypes, htypes = _types(base), _types(head)
    copied = set(match.copied) if match is not None else set()
    if chosen.kind == "rows":
        return compare_whole_rows(name, base, head, seq, chosen.note, copied)
    keys = list(chosen.columns)
    compared = [c for c in htypes if c in btypes and c not in keys and c != KEY and c not in IGNORED_COLUMNS]
    decimals = [c for c in compared if _is_decimal(htypes[c]) and _is_decimal(btypes[c])]
    out = OutputDataDiff(name, seq=seq, by=list(by), match=chosen.kind, key=keys, match_note=chosen.note,
                         copied=[c for c in decimals if c in copied],
                         columns_added=[c for c in htypes if c not in btypes and c not in IGNORED_COLUMNS],
                         columns_removed=[c for c in btypes if c not in htypes and c not in IGNORED_COLUMNS])
    # positional aliases: a column's name may hold any character, and the two sides' names meet in one row
    wanted = [*keys, *compared, *[c for c in by if c not in compared and c not in keys]]
    alias = {c: i for i, c in enumerate(wanted)}
    # a key may be NULL (a group's, or a `_row_id` an input carried): a row's presence is a flag of its own
    b = base.select(*[F.col(quoted(c)).alias(f"b{alias[c]}") for c in wanted], F.lit(True).alias("bp"))
    h = head.select(*[F.col(quoted(c)).alias(f"h{alias[c]}") for c in wanted], F.lit(True).alias("hp"))
    if keys == [KEY]:
        on = F.col("b0") == F.col("h0")
    else:  # NULL-safe: a group of NULL keys is a group like any other
        on = F.lit(True)
        for c in keys:
            on = on & F.col(f"b{alias[c]}").eqNullSafe(F.col(f"h{alias[c]}"))
    # kept by the aggregation's job for the sample rows' query, which otherwise computed both sides again
    # (pipeline P: 40% of a diff); Spark frees the kept rows once no frame refers to them
    joined = b.join(h, on, "full_outer").localCheckpoint(eager=False)
    _compare_joined(out, joined, compared, [c for c in decimals if c not in copied], by, alias, htypes, btypes)
    return out


def _compare_joined(out: OutputDataDiff, joined, compared: list[str], decimals: list[str], by: Sequence[str],
                    alias: dict, htypes: dict, btypes: dict) -> None:
    """Fill ``out`` from the full outer join of the two sides' rows (``b<i>``, ``h<i>``: column ``i`` of
    ``alias`` on each side; ``bp``/``hp`` a side's presence). ``decimals``: the
    decimal columns totalled."""
    from pyspark.sql import functions as F

    bk, hk = F.col("bp"), F.col("hp")
    both = bk.isNotNull() & hk.isNotNull()
    differs = {c: both & ~F.col(f"b{alias[c]}").eqNullSafe(F.col(f"h{alias[c]}")) for c in compared}
    any_differs = F.lit(False)
    for cond in differs.values():
        any_differs = any_differs | cond
    # a row's state as the report counts it: removed (no HEAD row), added (no BASE row), changed, same
    removed, added = hk.isNull(), hk.isNotNull() & bk.isNull()
    differing = removed | added | any_differs
    keys = [F.when(hk.isNotNull(), F.col(f"h{alias[c]}")).otherwise(F.col(f"b{alias[c]}")) for c in by]

    def zero(c: str, side: str, types: dict):  # a side without the row (or NULL) counts 0 at the column's type
        return F.coalesce(F.col(f"{side}{alias[c]}"), F.lit(0).cast(types[c]))
    # a `_row_id` an input carried may be NULL: such a row matches nothing (counted here, said in the report)
    nulls = [F.count_if((bk & F.col("b0").isNull()) | (hk & F.col("h0").isNull())).alias("n_null_key")] \
        if out.key == [KEY] else []
    measures = [*nulls, F.count(F.lit(1)).alias("n_rows"), F.count_if(added).alias("n_added"),
                F.count_if(removed).alias("n_removed"), F.count_if(any_differs).alias("n_changed"),
                *[F.count_if(cond).alias(f"c{alias[c]}") for c, cond in differs.items()],
                *[F.sum(F.col(f"b{alias[c]}")).alias(f"sb{alias[c]}") for c in decimals],
                *[F.sum(F.col(f"h{alias[c]}")).alias(f"sh{alias[c]}") for c in decimals],
                *[F.sum(F.abs(zero(c, "h", htypes) - zero(c, "b", btypes))).alias(f"sg{alias[c]}") for c in decimals]]
    layout = _Layout(compared, decimals, tuple(by), alias, {c: htypes[c].scale for c in decimals})
    _aggregate(out, joined, measures, keys, layout)
    if out.rows_differing:
        sample_keys = [F.coalesce(F.col(f"h{alias[c]}"), F.col(f"b{alias[c]}")) for c in out.key]
        _samples(out, joined, compared, differs, differing, sample_keys, alias, (bk, hk))


@dataclass(frozen=True)
class _Layout:
    """The joined rows' columns as the aggregation reads them: those compared, the decimal ones totalled, the
    ``--by`` ones, each column's position (``alias``) and each decimal's scale."""

    compared: list
    decimals: list
    by: tuple
    alias: dict
    scales: dict


def _aggregate(out: OutputDataDiff, joined, measures: list, keys: list, layout: _Layout) -> None:
    """The one aggregation job: counts, changed rows per column, decimal sums; overall and per group."""
    from pyspark.sql import functions as F

    compared, decimals, by, alias, scales = layout.compared, layout.decimals, layout.by, layout.alias, layout.scales

    if not by:
        overall = joined.agg(*measures).collect()[0]
        groups = []
    else:
        group_cols = [f"g{k}" for k in range(len(by))]
        marked = joined.select("*", *[k.alias(g) for k, g in zip(keys, group_cols)])
        agg = marked.groupingSets([group_cols, []], *group_cols).agg(F.grouping_id().alias("gid"), *measures)
        differing_group = F.col("n_added") + F.col("n_removed") + F.col("n_changed") > 0
        moves = [F.abs(F.coalesce(F.col(f"sh{alias[c]}"), F.lit(0)) - F.coalesce(F.col(f"sb{alias[c]}"), F.lit(0)))
                 for c in decimals]  # the largest moves first
        size = F.greatest(*moves) if len(moves) > 1 else moves[0] if moves else F.lit(0)
        kept = (agg.where((F.col("gid") != 0) | differing_group)
                .orderBy(F.col("gid").desc(), size.desc(), (F.col("n_added") + F.col("n_removed") + F.col("n_changed"))
                         .desc(), *[F.col(g).asc_nulls_first() for g in group_cols])
                .limit(MAX_GROUPS + 2).collect())
        overall = kept[0]
        groups = kept[1:]
        if len(groups) > MAX_GROUPS:  # how many were left out: only then is a count needed
            total = agg.where((F.col("gid") == 0) & differing_group).count()
            out.groups_left_out = total - MAX_GROUPS
            groups = groups[:MAX_GROUPS]
        out.groups = [GroupChange({c: g[f"g{k}"] for k, c in enumerate(by)}, g["n_added"] or 0, g["n_removed"] or 0,
                                  g["n_changed"] or 0, {c: _dec(g[f"sh{alias[c]}"], scales[c]) - _dec(g[f"sb{alias[c]}"], scales[c])
                                                        for c in decimals},
                                  {c: _dec(g[f"sg{alias[c]}"], scales[c]) for c in decimals}) for g in groups]
    out.added, out.removed, out.changed = (overall["n_added"] or 0), (overall["n_removed"] or 0), (overall["n_changed"] or 0)
    if out.key == [KEY] and overall["n_null_key"]:
        out.match_note = "`_row_id` is NULL in some rows: those rows are not matched (reported removed or added)"
    same = (overall["n_rows"] or 0) - out.added - out.removed - out.changed
    out.base_rows = same + out.changed + out.removed
    out.head_rows = same + out.changed + out.added
    out.columns = [ColumnCount(c, overall[f"c{alias[c]}"] or 0) for c in compared]
    out.totals = [DecimalTotal(c, _dec(overall[f"sb{alias[c]}"], scales[c]), _dec(overall[f"sh{alias[c]}"], scales[c]),
                               _dec(overall[f"sg{alias[c]}"], scales[c])) for c in decimals]


def _dec(value, scale: int = 0) -> Decimal:
    """A sum read back; a sum of no values (every row NULL) is zero at the column's ``scale``."""
    return value if value is not None else Decimal(0).scaleb(-scale)


def _samples(out: OutputDataDiff, joined, compared: list[str], differs: dict, differing, keys: list, alias: dict,
             present: tuple) -> None:
    """Up to :data:`SAMPLE_ROWS` differing rows, in key order (one small query over the kept joined rows)."""
    from pyspark.sql import functions as F

    bk, hk = present
    rows = (joined.where(differing).select(bk.isNotNull().alias("in_b"), hk.isNotNull().alias("in_h"),
                                           *[k.alias(f"k{i}") for i, k in enumerate(keys)],
                                           *[F.col(f"{side}{alias[c]}") for c in compared for side in "bh"],
                                           *[cond.alias(f"d{alias[c]}") for c, cond in differs.items()])
            .orderBy(*[F.col(f"k{i}").asc_nulls_first() for i in range(len(keys))]).limit(SAMPLE_ROWS).collect())
    for r in rows:
        state = "removed" if not r["in_h"] else "added" if not r["in_b"] else "changed"
        shown = [c for c in compared if r[f"d{alias[c]}"]] if state == "changed" else compared
        values = {c: (r[f"b{alias[c]}"], r[f"h{alias[c]}"]) for c in shown}
        if out.key == [KEY]:
            out.samples.append(SampleRow(r["k0"], state, values))
        else:
            out.samples.append(SampleRow(None, state, values, {c: r[f"k{i}"] for i, c in enumerate(out.key)}))


def compare_whole_rows(name: str, base, head, seq: int = None, note: str = "", copied=()) -> OutputDataDiff:
    """An output whose columns leave ``_row_id`` out (``columns: [...]``) and that has no key to match by: its
    rows cannot be matched, so the sides are compared as multisets of whole rows (their common columns): a row
    HEAD has more often than BASE is ``added``, less often ``removed``; nothing is ``changed`` and no ``--by``
    groups are made. ``note``: why (a key that repeats); ``copied``: columns never totalled. One aggregation
    job, and one for the sample rows."""
    from pyspark.sql import functions as F

    btypes, htypes = _types(base), _types(head)
    common = [c for c in htypes if c in btypes and c not in IGNORED_COLUMNS]
    all_decimals = [c for c in common if _is_decimal(htypes[c]) and _is_decimal(btypes[c])]
    decimals = [c for c in all_decimals if c not in copied]
    out = OutputDataDiff(name, seq=seq, match="rows", match_note=note, copied=[c for c in all_decimals if c in copied],
                         columns_added=[c for c in htypes if c not in btypes and c not in IGNORED_COLUMNS],
                         columns_removed=[c for c in btypes if c not in htypes and c not in IGNORED_COLUMNS])
    values = [f"v{i}" for i in range(len(common))]

    def side(frame, in_base: int):
        return frame.select(*[F.col(quoted(c)).alias(v) for c, v in zip(common, values)],
                            F.lit(in_base).alias("nb"), F.lit(1 - in_base).alias("nh"))
    per_row = side(base, 1).unionByName(side(head, 0)).groupBy(*values).agg(F.sum("nb").alias("nb"),
                                                                           F.sum("nh").alias("nh"))
    index = {c: i for i, c in enumerate(common)}
    totals = per_row.agg(F.sum(F.greatest(F.col("nh") - F.col("nb"), F.lit(0))).alias("added"),
                         F.sum(F.greatest(F.col("nb") - F.col("nh"), F.lit(0))).alias("removed"),
                         F.sum("nb").alias("base_rows"), F.sum("nh").alias("head_rows"),
                         *[F.sum(F.col(f"v{index[c]}") * F.col("nb")).alias(f"sb{index[c]}") for c in decimals],
                         *[F.sum(F.col(f"v{index[c]}") * F.col("nh")).alias(f"sh{index[c]}") for c in decimals],
                         *[F.sum(F.abs(F.col(f"v{index[c]}")) * F.abs(F.col("nh") - F.col("nb"))).alias(f"sg{index[c]}")
                           for c in decimals]).collect()[0]
    out.added, out.removed = totals["added"] or 0, totals["removed"] or 0
    out.base_rows, out.head_rows = totals["base_rows"] or 0, totals["head_rows"] or 0
    out.totals = [DecimalTotal(c, *[_dec(totals[f"{m}{index[c]}"], htypes[c].scale) for m in ("sb", "sh", "sg")])
                  for c in decimals]
    if out.added or out.removed:
        rows = per_row.where(F.col("nb") != F.col("nh")).orderBy(*[F.col(v).asc_nulls_first() for v in values],
                                                                  "nb").limit(SAMPLE_ROWS).collect()
        for r in rows:
            state = "added" if r["nh"] > r["nb"] else "removed"
            out.samples.append(SampleRow(None, state, {c: (None, r[f"v{index[c]}"]) if state == "added"
                                                     else (r[f"v{index[c]}"], None) for c in common}))
    return out
