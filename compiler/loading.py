"""SQL that normalises what a location holds into a dataset's declared shape.

Every input view the compiled SQL reads (``ds_<name>``) has exactly the declared columns, cast to
their declared types, plus the system columns. A value that cannot be cast stops the run with an
error naming dataset, column and location; a missing declared column is an error before Spark
runs anything. System columns the data lacks are filled (CONTRACT §3).
"""
from __future__ import annotations

from typing import Optional

from sqlglot import exp

from . import system_columns as sysc
from .errors import ResolutionError
from .model import Dataset
from .render import ident


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _checked_cast(column: str, target: str, present: str, dataset: str, where: str) -> exp.Expression:
    """Cast ``column`` to ``target``; a non-NULL value that does not convert raises a located error."""
    col = exp.column(column, quoted=True)
    if present == target:
        return col
    dtype = exp.DataType.build(target, dialect="spark")
    converted = exp.TryCast(this=col.copy(), to=dtype, safe=True)
    message = _fn("concat", exp.Literal.string(f"ledgerflow: dataset '{dataset}', column '{column}' at {where}: value '"),
                  exp.Cast(this=col.copy(), to=exp.DataType.build("string")),
                  exp.Literal.string(f"' cannot be read as {target}"))
    bad = exp.and_(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())),
                   exp.Is(this=converted.copy(), expression=exp.Null()))
    return exp.Case(ifs=[exp.If(this=bad, true=exp.Cast(this=_fn("raise_error", message), to=dtype))],
                    default=converted)


def normalised_select(dataset: Dataset, version: int, relation: str, present: dict[str, str], where: str,
                      location_period: Optional[str], location_index: int = 0) -> str:
    """A SELECT over ``relation`` (a view name) giving the dataset's declared + system columns.

    ``present`` maps the columns the location actually has to their Spark types (simple strings).
    """
    missing = [c.name for c in dataset.columns if c.name not in present]
    if missing:
        raise ResolutionError(f"dataset '{dataset.name}' version {version}: the data at {where} lacks the declared "
                              f"column(s) {', '.join(missing)} (it has: {', '.join(sorted(present)) or 'nothing'}).")
    cols: list[str] = []
    for c in dataset.columns:
        cols.append(f"{_checked_cast(c.name, c.type, present[c.name], dataset.name, where).sql('spark')} AS {ident(c.name)}")
    identity = [exp.Literal.string(dataset.id), exp.Literal.number(version), exp.Literal.number(location_index),
                _fn("to_json", exp.Struct(expressions=[exp.column(c.name, quoted=True) for c in dataset.columns])),
                exp.column("__lf_ordinal", quoted=True)]
    need_ordinal = "_row_id" not in present
    for name, typ in sysc.system_columns(dataset.temporal_mode):
        if name in present:
            value = _checked_cast(name, typ, present[name], dataset.name, where)
            if name == "_deleted":
                value = exp.Coalesce(this=value, expressions=[exp.false()])
            elif name == "_labels":
                value = exp.Coalesce(this=value, expressions=[exp.Literal.string("")])
        elif name == "_row_id":
            value = sysc.uuidv7(identity)
        elif name == "_deleted":
            value = exp.false()
        elif name == "_updated_at":
            value = exp.Cast(this=exp.Null(), to=exp.DataType.build("timestamp"))
        elif name == "_period":
            if location_period is None:
                raise ResolutionError(f"dataset '{dataset.name}' (temporal_mode period): the data at {where} has no "
                                      "_period column and its location is not period-specific, so its rows cannot "
                                      "be assigned to a period; add a _period column or use a resolver rule with "
                                      "period tokens or a data_level.")
            value = exp.Literal.string(location_period)
        elif name in ("_period_from", "_period_to"):
            raise ResolutionError(f"dataset '{dataset.name}' (temporal_mode bitemporal): the data at {where} has no "
                                  f"{name} column.")
        elif name == "_labels":
            value = exp.Literal.string("")
        elif name == "_source_dataset":
            value = exp.Literal.string(dataset.id)
        else:  # _operation_seq
            value = exp.Literal.number(0)
        cols.append(f"{value.sql('spark')} AS {ident(name)}")
    source = ident(relation)
    if need_ordinal:
        # Identical rows get distinct, still deterministic, _row_ids.
        row = _fn("to_json", exp.Struct(expressions=[exp.column(c.name, quoted=True) for c in dataset.columns]))
        source = (f"(SELECT *, ROW_NUMBER() OVER (PARTITION BY {row.sql('spark')} ORDER BY {row.sql('spark')}) "
                  f"AS `__lf_ordinal` FROM {ident(relation)})")
    return f"SELECT {', '.join(cols)} FROM {source}"


def union_all(selects: list[str]) -> str:
    """One query over every location of a dataset (the normalised SELECTs unioned)."""
    return " UNION ALL ".join(f"({s})" if len(selects) > 1 else s for s in selects)
