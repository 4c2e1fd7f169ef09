"""Compare two sides' output DataFrames row by row: :func:`data_diff`, independent of the command line
(``diff --data`` calls it on two computed sides; ``restate`` on the published rows and the new ones).

Rows are matched by ``_row_id`` (a full outer join); a matched row is ``changed`` when a compared column
differs, NULL-safe (``<=>``). Per output two Spark jobs: one aggregation over the join giving the row
counts, the changed rows per column and the sums of the decimal columns, per ``--by`` group and overall
(grouping sets: the overall row and the groups come out of the same pass; only groups with a difference
are brought back), and one small query for up to :data:`SAMPLE_ROWS` differing rows, in ``_row_id`` order,
over the joined rows the first job kept (a lazy ``localCheckpoint``), so the sides are computed once. (The
sample rows' keys found by the aggregation itself, ``min_by(key, key, 10)``, cost more than this query in a
cold process: the aggregation is then no longer generated code; pipeline P, about 1.7 s of CPU.)
"""
from __future__ import annotations

from decimal import Decimal
from typing import Mapping, Optional, Sequence

from ...compiler.errors import LedgerflowError
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
    where = f"output '{name}'" + (f" of project '{project}'" if project else "")
    lacking = {role: [c for c in by if c not in columns] for role, columns in columns_by_side.items()}
    missing = list(dict.fromkeys(c for cols in lacking.values() for c in cols))
    if not missing:
        return
    roles = [role for role, cols in lacking.items() if cols]
    side = "on either side" if len(roles) > 1 else f"on the {roles[0]} side"
    columns = columns_by_side.get("head") or next(iter(columns_by_side.values()))
    raise ByColumnError(
        f"diff --data: --by {', '.join(missing)}: {where} has no such column {side} (its columns: "
        f"{', '.join(c for c in columns if not c.startswith('_'))}). Group by columns every compared output "
        "has, or choose the outputs with --project.")


def data_diff(base_frames: Mapping[str, object], head_frames: Mapping[str, object], by: Sequence[str] = (),
              seqs: Mapping[str, int] = None) -> DataDiff:
    """Compare each output of ``head_frames`` with the output of the same name in ``base_frames`` (name ->
    pyspark DataFrame); an output on one side only is ``added`` or ``removed`` with its row count. ``by``:
    columns to total the decimal changes by (every output must have them: :class:`ByColumnError`).
    ``seqs``: output name -> its operation seq, reported."""
    seqs = seqs or {}
    names = list(head_frames) + [n for n in base_frames if n not in head_frames]
    for name in names:
        check_by(name, {role: [f.name for f in frame.schema.fields] for role, frame in
                        (("base", base_frames.get(name)), ("head", head_frames.get(name))) if frame is not None}, by)
    outputs = []
    for name in names:
        base, head = base_frames.get(name), head_frames.get(name)
        if base is None or head is None:
            rows = (head if base is None else base).count()
            outputs.append(OutputDataDiff(name, "added" if base is None else "removed", seq=seqs.get(name),
                                          base_rows=0 if base is None else rows, head_rows=rows if base is None else 0,
                                          added=rows if base is None else 0, removed=rows if head is None else 0))
        else:
            outputs.append(compare_output(name, base, head, by, seqs.get(name)))
    return DataDiff(outputs)


def compare_output(name: str, base, head, by: Sequence[str] = (), seq: int = None) -> OutputDataDiff:
    """One output's :class:`OutputDataDiff` (two Spark jobs: the aggregation, the sample rows)."""
    from pyspark.sql import functions as F

    btypes, htypes = _types(base), _types(head)
    if KEY not in btypes or KEY not in htypes:
        return compare_whole_rows(name, base, head, seq)
    compared = [c for c in htypes if c in btypes and c != KEY and c not in IGNORED_COLUMNS]
    decimals = [c for c in compared if _is_decimal(htypes[c]) and _is_decimal(btypes[c])]
    out = OutputDataDiff(name, seq=seq, by=list(by),
                         columns_added=[c for c in htypes if c not in btypes and c not in IGNORED_COLUMNS],
                         columns_removed=[c for c in btypes if c not in htypes and c not in IGNORED_COLUMNS])
    # positional aliases: a column's name may hold any character, and the two sides' names meet in one row
    wanted = [KEY, *compared, *[c for c in by if c not in compared]]
    alias = {c: i for i, c in enumerate(wanted)}
    b = base.select(*[F.col(quoted(c)).alias(f"b{alias[c]}") for c in wanted])
    h = head.select(*[F.col(quoted(c)).alias(f"h{alias[c]}") for c in wanted])
    # kept by the aggregation's job for the sample rows' query, which otherwise computed both sides again
    # (pipeline P: 40% of a diff); Spark frees the kept rows once no frame refers to them
    joined = b.join(h, F.col("b0") == F.col("h0"), "full_outer").localCheckpoint(eager=False)
    _compare_joined(out, joined, compared, decimals, by, alias, htypes)
    return out


def _compare_joined(out: OutputDataDiff, joined, compared: list[str], decimals: list[str], by: Sequence[str],
                    alias: dict, htypes: dict) -> None:
    """Fill ``out`` from the full outer join of the two sides' rows (``b<i>``, ``h<i>``: column ``i`` of
    ``alias`` on each side)."""
    from pyspark.sql import functions as F

    bk, hk = F.col("b0"), F.col("h0")
    both = bk.isNotNull() & hk.isNotNull()
    differs = {c: both & ~F.col(f"b{alias[c]}").eqNullSafe(F.col(f"h{alias[c]}")) for c in compared}
    any_differs = F.lit(False)
    for cond in differs.values():
        any_differs = any_differs | cond
    # a row's state as the report counts it: removed (no HEAD row), added (no BASE row), changed, same
    removed, added = hk.isNull(), hk.isNotNull() & bk.isNull()
    differing = removed | added | any_differs
    key = F.coalesce(hk, bk)
    keys = [F.when(hk.isNotNull(), F.col(f"h{alias[c]}")).otherwise(F.col(f"b{alias[c]}")) for c in by]
    measures = [F.count(F.lit(1)).alias("n_rows"), F.count_if(added).alias("n_added"),
                F.count_if(removed).alias("n_removed"), F.count_if(any_differs).alias("n_changed"),
                *[F.count_if(cond).alias(f"c{alias[c]}") for c, cond in differs.items()],
                *[F.sum(F.col(f"b{alias[c]}")).alias(f"sb{alias[c]}") for c in decimals],
                *[F.sum(F.col(f"h{alias[c]}")).alias(f"sh{alias[c]}") for c in decimals]]
    scales = {c: htypes[c].scale for c in decimals}
    _aggregate(out, joined, measures, keys, decimals, by, alias, scales, compared)
    if out.rows_differing:
        _samples(out, joined, compared, differs, differing, key, alias)


def quoted(column: str) -> str:
    """``column`` as a backquoted Spark identifier."""
    return "`" + column.replace("`", "``") + "`"


def _aggregate(out: OutputDataDiff, joined, measures: list, keys: list, decimals: list[str], by: Sequence[str],
               alias: dict, scales: dict, compared: list[str]) -> None:
    """The one aggregation job: counts, changed rows per column, decimal sums; overall and per group."""
    from pyspark.sql import functions as F

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
                                                        for c in decimals}) for g in groups]
    out.added, out.removed, out.changed = (overall["n_added"] or 0), (overall["n_removed"] or 0), (overall["n_changed"] or 0)
    same = (overall["n_rows"] or 0) - out.added - out.removed - out.changed
    out.base_rows = same + out.changed + out.removed
    out.head_rows = same + out.changed + out.added
    out.columns = [ColumnCount(c, overall[f"c{alias[c]}"] or 0) for c in compared]
    out.totals = [DecimalTotal(c, _dec(overall[f"sb{alias[c]}"], scales[c]), _dec(overall[f"sh{alias[c]}"], scales[c]))
                  for c in decimals]


def _dec(value, scale: int = 0) -> Decimal:
    """A sum read back; a sum of no values (every row NULL) is zero at the column's ``scale``."""
    return value if value is not None else Decimal(0).scaleb(-scale)


def _samples(out: OutputDataDiff, joined, compared: list[str], differs: dict, differing, key, alias: dict) -> None:
    """Up to :data:`SAMPLE_ROWS` differing rows, in ``_row_id`` order (one small query over the kept joined
    rows)."""
    from pyspark.sql import functions as F

    rows = (joined.where(differing).select("b0", "h0", *[F.col(f"{side}{alias[c]}") for c in compared for side in "bh"],
                        *[cond.alias(f"d{alias[c]}") for c, cond in differs.items()])
            .orderBy(key).limit(SAMPLE_ROWS).collect())
    for r in rows:
        if r["h0"] is None:
            state = "removed"
        elif r["b0"] is None:
            state = "added"
        else:
            state = "changed"
        shown = [c for c in compared if r[f"d{alias[c]}"]] if state == "changed" else compared
        values = {c: (r[f"b{alias[c]}"], r[f"h{alias[c]}"]) for c in shown}
        out.samples.append(SampleRow(r["h0"] if r["h0"] is not None else r["b0"], state, values))


def compare_whole_rows(name: str, base, head, seq: int = None) -> OutputDataDiff:
    """An output whose columns leave ``_row_id`` out (``columns: [...]``): its rows cannot be matched, so the
    sides are compared as multisets of whole rows (their common columns): a row HEAD has more often than
    BASE is ``added``, less often ``removed``; nothing is ``changed`` and no ``--by`` groups are made. One
    aggregation job, and one for the sample rows."""
    from pyspark.sql import functions as F

    btypes, htypes = _types(base), _types(head)
    common = [c for c in htypes if c in btypes and c not in IGNORED_COLUMNS]
    decimals = [c for c in common if _is_decimal(htypes[c]) and _is_decimal(btypes[c])]
    out = OutputDataDiff(name, seq=seq, match="rows",
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
                         *[F.sum(F.col(f"v{index[c]}") * F.col("nh")).alias(f"sh{index[c]}") for c in decimals]
                         ).collect()[0]
    out.added, out.removed = totals["added"] or 0, totals["removed"] or 0
    out.base_rows, out.head_rows = totals["base_rows"] or 0, totals["head_rows"] or 0
    out.totals = [DecimalTotal(c, _dec(totals[f"sb{index[c]}"], htypes[c].scale), _dec(totals[f"sh{index[c]}"],
                                                                                         htypes[c].scale))
                  for c in decimals]
    if out.added or out.removed:
        rows = per_row.where(F.col("nb") != F.col("nh")).orderBy(*[F.col(v).asc_nulls_first() for v in values],
                                                                  "nb").limit(SAMPLE_ROWS).collect()
        for r in rows:
            state = "added" if r["nh"] > r["nb"] else "removed"
            out.samples.append(SampleRow("", state, {c: (None, r[f"v{index[c]}"]) if state == "added"
                                                     else (r[f"v{index[c]}"], None) for c in common}))
    return out
