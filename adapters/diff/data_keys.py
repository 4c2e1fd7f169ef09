"""Which columns a data diff matches an output's rows by (:func:`choose_match`), and the checks that keep a
match from multiplying rows: a ``--key`` column the output lacks is a usage error (:func:`check_key`, before
Spark), and a key that repeats on a side is refused (``--key``) or not used (an aggregate's group-by keys).

In order: ``--key COL...`` when given; else ``_row_id`` when both sides write it; else the group-by keys of an
aggregate output (:mod:`...compiler.diff.data_match`) when both sides write them and no key repeats; else
whole rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from ...compiler.errors import LedgerflowError
from .data_result import KEY

_UUID7 = "^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
_TIME_PREFIX = len("tttttttt-tttt-")  # a UUIDv7's 48-bit timestamp and its dashes


class KeyColumnError(LedgerflowError):
    """``--key`` names a column an output lacks: a usage error (exit 2, nothing computed)."""

    exit_code = 2


class RepeatedKeyError(LedgerflowError):
    """``--key`` values repeat on a side: matching by them would multiply rows (exit 1)."""

    exit_code = 1


@dataclass
class Match:
    """How one output's rows are matched: ``kind`` (_row_id, group_by, key, rows), the key columns, and a
    note when the plain rule did not apply."""

    kind: str
    columns: tuple[str, ...] = ()
    note: str = ""


def quoted(column: str) -> str:
    """``column`` as a backquoted Spark identifier."""
    return "`" + column.replace("`", "``") + "`"


def split_keys(values: Sequence[str]) -> tuple[str, ...]:
    """``--key`` as given (repeatable, each a comma-separated list) -> the columns, in order, once each."""
    return tuple(dict.fromkeys(c.strip() for v in values for c in v.split(",") if c.strip()))


def lacking_columns(name: str, columns_by_side: Mapping[str, Sequence[str]], wanted: Sequence[str], option: str,
                    project: Optional[str] = None) -> Optional[str]:
    """What to say when output ``name`` (of ``project``) lacks some of the ``wanted`` columns (of ``--key`` or
    ``--by``, ``option``) on a side (``columns_by_side``: role -> its columns): the start of the message, naming
    the columns, the side and the output's columns; None when it has them all."""
    lacking = {role: [c for c in wanted if c not in columns] for role, columns in columns_by_side.items()}
    missing = list(dict.fromkeys(c for cols in lacking.values() for c in cols))
    if not missing:
        return None
    roles = [role for role, cols in lacking.items() if cols]
    side = "on either side" if len(roles) > 1 else f"on the {roles[0]} side"
    where = f"output '{name}'" + (f" of project '{project}'" if project else "")
    columns = columns_by_side.get("head") or next(iter(columns_by_side.values()))
    return (f"diff --data: {option} {', '.join(missing)}: {where} has no such column {side} (its columns: "
            f"{', '.join(c for c in columns if not c.startswith('_'))}).")


def check_key(name: str, columns_by_side: Mapping[str, Sequence[str]], key: Sequence[str],
              project: Optional[str] = None) -> None:
    """Refuse ``key`` columns that output ``name`` (of ``project``) lacks on a side (``columns_by_side``: role
    -> its columns): :class:`KeyColumnError`."""
    said = lacking_columns(name, columns_by_side, key, "--key", project)
    if said:
        raise KeyColumnError(f"{said} Match rows by columns every compared output has, or choose the outputs "
                             "with --project.")


def repeated_key(base, head, columns: Sequence[str]) -> Optional[tuple[str, dict, int]]:
    """A key value that more than one row of a side holds: (side, the key's values, its rows), or None. One
    small Spark job over both sides."""
    from pyspark.sql import functions as F

    names = [f"k{i}" for i in range(len(columns))]

    def side(frame, role: str):
        return frame.select(F.lit(role).alias("side"), *[F.col(quoted(c)).alias(n) for c, n in zip(columns, names)])
    found = (side(base, "BASE").unionByName(side(head, "HEAD")).groupBy("side", *names).count()
             .where(F.col("count") > 1).limit(1).collect())
    if not found:
        return None
    row = found[0]
    return row["side"], {c: row[n] for c, n in zip(columns, names)}, row["count"]


def describe_key(values: dict) -> str:
    """``account=1000, currency=EUR``."""
    return ", ".join(f"{c}={'NULL' if v is None else v}" for c, v in values.items())


def choose_match(name: str, base, head, key: Sequence[str] = (), group_by: Sequence[str] = ()) -> Match:
    """How output ``name``'s rows are matched (the module docstring); ``key``: ``--key``, ``group_by``: the
    aggregate output's group-by keys from the plan. Raises :class:`RepeatedKeyError` for a ``--key`` that
    repeats."""
    bcols, hcols = set(base.columns), set(head.columns)
    if key:
        repeated = repeated_key(base, head, key)
        if repeated is not None:
            side, values, rows = repeated
            raise RepeatedKeyError(
                f"diff --data: --key {', '.join(key)} does not identify the rows of output '{name}': {rows} rows "
                f"on the {side} side have {describe_key(values)}, so matching by it would multiply rows. Add "
                "columns to --key until each row has its own, or leave --key out.")
        return Match("key", tuple(key))
    if KEY in bcols and KEY in hcols:
        return Match(KEY, (KEY,))
    if group_by and set(group_by) <= bcols and set(group_by) <= hcols:
        repeated = repeated_key(base, head, group_by)
        if repeated is None:
            return Match("group_by", tuple(group_by))
        side, values, rows = repeated
        return Match("rows", (), f"the group-by keys {', '.join(group_by)} repeat ({rows} rows on the {side} side "
                                 f"have {describe_key(values)}): compared as whole rows")
    return Match("rows")


def keyed(frame):
    """``frame`` with each ledgerflow-made ``_row_id`` (a UUIDv7 whose first 48 bits are the run start that
    derived it) cut to the part after the run start, the row's identity: two runs of one project-period (a
    superseded run and its restatement, two environments' runs) started at different times, so the same row has a
    different id in each. Any other ``_row_id`` (one the
    input carried) is kept whole."""
    if KEY not in frame.columns:
        return frame
    from pyspark.sql import functions as F
    made = F.col(KEY).rlike(_UUID7)
    return frame.withColumn(KEY, F.when(made, F.substring(F.col(KEY), _TIME_PREFIX + 1, 36)).otherwise(F.col(KEY)))
