"""A restatement's part of the run (``ledgerflow restate``, docs/commands.md "Restating a closed period"):
the rows the superseded run published, read back from the version folders its record names, and the hook
that computes the data diff between them and the restating run's staged rows before anything is swapped in.

:class:`RestatementPublishing` is the run's :class:`..commit.publish.OutputChecks` (what the restatement
strategy's ``publishing`` hook returns, :mod:`..run.evaluator`): it passes every call on to the run's own
checks (when the project has any) and, in ``evaluate`` (after every output is staged and the checks
judged, before the journal begins), compares each output's staged rows with the superseded run's published
rows (:func:`..diff.data_diff.data_diff`) and writes the result into ``record["restatement"]["data_diff"]``.
Comparing the staged files compares exactly the rows the restatement publishes (a quarantine check's rows
already split off).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler.errors import LedgerflowError
from ..commit import staging
from ..layout.partition_paths import is_local, local_path, root_period, versions_dir
from ..diff.data_keys import keyed
from ..diff.data_result import output_labels
from ..store.restatements import emptied_line
from ..inputs.files import spark_path

_EXTENSIONS = (("parquet", ".parquet"), ("orc", ".orc"), ("csv", ".csv"), ("json", ".json"))
KEY = "_row_id"


class RestateError(LedgerflowError):
    """A restatement refused before (or, for a run published meanwhile, before the swap of) anything: exit 1."""

    exit_code = 1


@dataclass
class PublishedOutput:
    """One output of the superseded run: its name, seq, the partition it published (``location``, the link
    ``<dest>/_period=P``), the version folder holding its rows, their format and count (a quarantine partition:
    ``seq`` None)."""

    name: str
    seq: Optional[int]
    location: str
    folder: str
    format: str
    rows: Optional[int] = None
    label: str = ""  # what the data diff reports it as (:func:`output_labels`)
    registered: bool = False  # a registered dataset's version: it never changes

    def to_json(self) -> dict:
        """The entry of ``restatement.superseded_outputs``."""
        return {"operation_seq": self.seq, "name": self.name, "location": self.location, "version_folder": self.folder,
                "format": self.format, "rows": self.rows}


@dataclass
class Superseded:
    """The run a restatement supersedes (the project-period's last completed run), or none (``run_id`` None:
    the period was closed before anything was published, and every output is ``added``)."""

    run_id: Optional[str] = None
    outputs: list[PublishedOutput] = field(default_factory=list)
    # the quarantine partitions it published (``seq`` None), when it quarantined any row: published empty when
    # the restating run quarantines nothing there, or their rows would show in the quarantine and the output both
    quarantines: list[PublishedOutput] = field(default_factory=list)


def superseded_run(store, project: str, period: str, formats: dict[int, str],
                   project_id: Optional[str] = None) -> Superseded:
    """The last completed run of ``project``'s ``period`` (``project_id``: under any name the project ran under,
    a renamed project's runs included) and where its outputs' rows are: each output's
    version folder as its record's commit journal names it (else the folder its partition link shows now).
    ``formats``: output seq -> the format the restating run writes it in (for a folder without data files).
    Raises :class:`RestateError` for an output it wrote to a catalog table or URI (those are replaced in
    place: its rows could not stay readable) or whose version folder is gone."""
    last = store.last_published(project, period, project_id)
    if last is None:
        return Superseded()
    rec = store.get_run(last["run_id"])
    names = {op.get("seq"): op.get("name") for op in (rec.get("project_snapshot") or {}).get("operations") or []
             if isinstance(op, dict)}
    journal = {e.get("link"): e.get("staged") for e in ((rec.get("commit") or {}).get("partitions") or [])
               if isinstance(e, dict)}
    out = Superseded(rec["run_id"])
    labels = output_labels((o["operation_seq"], names.get(o["operation_seq"]) or f"output {o['operation_seq']}")
                           for o in rec.get("outputs") or [])
    for o in rec.get("outputs") or []:
        seq, location = o["operation_seq"], o["location"]
        name = names.get(seq) or f"output {seq}"
        if not is_local(location):
            raise RestateError(
                f"RESTATE-003 run {rec['run_id']}, which published period {period} of project '{project}', wrote "
                f"output {seq} '{name}' to {location} (a catalog table or remote URI), which a run replaces in place: "
                "its rows could not stay readable after a restatement, so nothing was run or written. Restate only "
                "projects whose outputs are local folders; reopen the period and run it instead "
                f"(`ledgerflow periods reopen {period} --project {project} --note TEXT`).")
        link = local_path(location)
        folder = journal.get(location) or journal.get(link) or _shown(link)
        if not folder or not os.path.isdir(folder):
            raise RestateError(
                f"RESTATE-004 the rows run {rec['run_id']} published for output {seq} '{name}' of project "
                f"'{project}', period {period}, are gone (expected in {folder or link}), so the restatement has "
                "nothing to compare with and nothing was run or written. Restore the folder, or reopen the "
                "period and run it.")
        out.outputs.append(PublishedOutput(name, seq, location, folder, _format(folder) or formats.get(seq, "parquet"),
                                           o.get("rows"), labels[seq], bool(o.get("registered_dataset"))))
    out.quarantines = _quarantines(rec, journal, {local_path(o.location) for o in out.outputs})
    return out


def _quarantines(rec: dict, journal: dict, outputs: set) -> list[PublishedOutput]:
    """The quarantine partitions run ``rec`` published (its journal's partitions that are no output's), when its
    checks quarantined a row: each with the version folder holding its rows."""
    if not any((c.get("quarantined") or 0) > 0 for c in rec.get("checks") or [] if isinstance(c, dict)):
        return []
    out = []
    for link, folder in journal.items():
        if not isinstance(link, str) or not is_local(link) or local_path(link) in outputs:
            continue
        if isinstance(folder, str) and os.path.isdir(folder):
            out.append(PublishedOutput("quarantine", None, link, folder, _format(folder) or "parquet"))
    return out


def _place(link: str) -> str:
    """A partition link's path with its folder's real path: two spellings of one partition compare equal."""
    return os.path.join(os.path.realpath(os.path.dirname(link)), os.path.basename(link))


def emptied_outputs(superseded: Superseded, places: dict, period: str, workspace_root: str) -> dict:
    """The superseded run's outputs whose partition the restating run writes nowhere (the project no longer has
    them, or writes them elsewhere), each with the destination at which the restatement publishes an empty
    partition in their place: ``{"superseded output SEQ": (PublishedOutput, OutputDestination)}``. Left published
    they would still show the rows the data diff reports removed. ``places``: every destination the restating
    run writes (its outputs' and its quarantines'): a partition it writes anyway is not emptied. Left as they
    are: a registered dataset's version (a published version never changes) and a partition that holds no row."""
    from ..commit.destinations import OutputDestination
    from ..layout.partition_paths import partition_link
    from ..commit.partitions import check_partition
    written = {_place(partition_link(local_path(d.target), period)) for d in places.values() if d.local}
    workspace = os.path.realpath(workspace_root)
    out = {}
    for o in superseded.outputs + superseded.quarantines:
        link = local_path(o.location)
        if o.registered or o.rows == 0 or _place(link) in written:
            continue
        root = root_period(link)[0]
        check_partition(root, period, where=f"the partition output {o.seq} '{o.name}' published")
        inside = os.path.realpath(root).startswith(workspace + os.sep)  # else an absolute resolver path: as written
        key = f"superseded output {o.seq}" if o.seq is not None else f"superseded quarantine {link}"
        out[key] = (o, OutputDestination("path", root, o.format, 1, workspace_root if inside else None))
    return out


def _shown(link: str) -> Optional[str]:
    """The version folder the partition ``link`` shows, when it is one of ledgerflow's."""
    from ..commit.shown import shown_version
    return shown_version(link, versions_dir(*root_period(link)))


def _format(folder: str) -> Optional[str]:
    """The format of the data files Spark wrote into ``folder`` (by their names' endings), or None."""
    for name in sorted(os.listdir(folder)):
        if name.startswith(("_", ".")):
            continue
        for fmt, ending in _EXTENSIONS:
            if name.endswith(ending) or f"{ending}." in name:
                return fmt
    return None


def read_published(spark, folder: str, fmt: str, like=None):
    """The rows written to the version folder ``folder`` in format ``fmt``, as written. Parquet and ORC carry
    their types; CSV and JSON are read as text (JSON's numbers as decimals; a CSV's unquoted empty field is
    NULL, a quoted one '', as ledgerflow wrote them) and a column the restated output (``like``, a DataFrame)
    also has is cast to its type there, exactly: a decimal keeps every digit its text holds (a superseded
    1.255000 read at the restated output's scale of 2 was 1.26, and a change to ROUND(.., 2) showed as none).
    Both sides of a restatement's data diff are read this way."""
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.options(**staging.CSV_READ_BACK_OPTIONS)
    elif fmt == "json":
        reader = reader.option("prefersDecimal", "true")
    frame = reader.load(spark_path(folder))
    if fmt not in ("csv", "json") or like is None:
        return frame
    types = {f.name: f.dataType for f in like.schema.fields}
    types.update(_exact_decimals(frame, types))
    from pyspark.sql import functions as F
    return frame.select(*[F.col(f"`{c.replace('`', '``')}`").cast(types[c]).alias(c) if c in types
                          else F.col(f"`{c.replace('`', '``')}`") for c in frame.columns])


def _exact_decimals(frame, types: dict) -> dict:
    """For each column of ``frame`` (CSV text, or JSON's decimals) that ``types`` makes a decimal: a decimal type
    with that one's whole digits and as many decimal places as the column's values hold, when they hold more
    (one small aggregation over the file's text)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DecimalType, StringType
    fields = {f.name: f.dataType for f in frame.schema.fields}
    wanted = [c for c in frame.columns if isinstance(types.get(c), DecimalType)]
    if not wanted:
        return {}
    text = [c for c in wanted if isinstance(fields[c], StringType)]
    scales = {c: fields[c].scale for c in wanted if isinstance(fields[c], DecimalType)}
    if text:
        found = frame.agg(*[F.max(F.length(F.regexp_extract(F.trim(F.col(f"`{c.replace('`', '``')}`")),
                                                             r"\.([0-9]*)$", 1))).alias(f"s{i}")
                            for i, c in enumerate(text)]).collect()[0]
        scales.update({c: found[f"s{i}"] or 0 for i, c in enumerate(text)})
    out = {}
    for c, scale in scales.items():
        target = types[c]
        if scale > target.scale:
            places = min(scale, 38 - 1)
            out[c] = DecimalType(min(38, target.precision - target.scale + places), places)
    return out


def compare(base: dict, head: dict, seqs: dict, compiled=None):
    """The data diff of the published rows ``base`` and the restated ``head`` (output name -> frame), rows
    matched by :func:`keyed` ids (or, for an output without ``_row_id``, by the group-by keys ``compiled``'s plan
    gives it; columns it copies from a join are not totalled)."""
    from ..diff.data_diff import data_diff
    return data_diff({n: keyed(f) for n, f in base.items()}, {n: keyed(f) for n, f in head.items()}, (), seqs,
                     restated_matches(compiled))


def restated_matches(compiled) -> dict:
    """Output label (:func:`..diff.data_result.output_labels`) -> its
    :class:`...compiler.diff.data_match.OutputMatch`, from the restating project's plan (empty without one)."""
    if compiled is None:
        return {}
    from ...compiler.diff.data_match import output_matches
    labels = output_labels((st.operation.seq, st.operation.name) for st in compiled.outputs)
    return {labels[seq]: m for seq, m in output_matches(compiled.plan).items() if seq in labels}


class RestatementPublishing:
    """The restating run's hook around its writes (see the module docstring); ``inner``: the run's checks."""

    def __init__(self, record: dict, ctx, inner, block: dict, superseded: Superseded, store,
                 echo: Callable[[str], None], emptied: Optional[dict] = None):
        self.ctx, self.inner, self.superseded, self.store, self.echo = ctx, inner, superseded, store, echo
        self.emptied = dict(emptied or {})  # emptied_outputs(): staged with the first output's quarantines
        self.block = record["restatement"] = block  # there since the run began (restate.py RestatementRun.places)
        self.staged: dict[str, tuple] = {}  # output name -> (frame, staged folder, format)
        self.seqs: dict[str, int] = {}
        self.labels: Optional[dict[int, str]] = None  # output seq -> its label in the diff (first write)
        self.diff = None

    def prepare(self, out) -> list:
        """The run's checks' ``prepare``; the first time, also an empty partition (the published rows' columns,
        no row) for each output the restatement no longer writes, staged and swapped in with the outputs."""
        extra = self.inner.prepare(out) if self.inner is not None else []
        emptied, self.emptied = self.emptied, {}
        for o, dest in emptied.values():  # named in the block's emptied_outputs since the run began (restate.py)
            extra.append((read_published(out.frame.sparkSession, o.folder, o.format).limit(0), dest))
            self.echo(f"{emptied_line(o.seq, o.name, o.location)} (its rows stay readable at {o.folder})")
        return extra

    def written(self, out, staged: Optional[staging.Staged], fmt: Optional[str] = None) -> None:
        """Remember where ``out`` was staged (its rows are compared in :meth:`evaluate`); the checks' ``written``."""
        if self.inner is not None:
            self.inner.written(out, staged, fmt)
        if staged is not None:
            op = out.statement.operation
            if self.labels is None:
                self.labels = output_labels((st.operation.seq, st.operation.name) for st in self.ctx.compiled.outputs)
            label = self.labels.get(op.seq, op.name)
            self.staged[label], self.seqs[label] = (out.frame, staged.staged, fmt), op.seq

    def evaluate(self, record: dict) -> None:
        """The checks judged first; then the data diff of the staged rows against the superseded run's."""
        if self.inner is not None:
            self.inner.evaluate(record)
        p, period = self.ctx.project.name, self.ctx.period.identifier
        last = self.store.last_published(p, period, self.ctx.project.id)
        now = last["run_id"] if last else None
        if now != self.superseded.run_id:
            raise RestateError(
                f"RESTATE-005 run {now} published period {period} of project '{p}' while this restatement ran "
                f"(it was to supersede {self.superseded.run_id or 'nothing'}): nothing was published. Restate "
                "again to compare with what is published now.")
        spark = self.ctx_spark()
        head = {name: read_published(spark, folder, fmt, staging.without_period(frame))
                for name, (frame, folder, fmt) in self.staged.items()}
        base = {o.label or o.name: read_published(spark, o.folder, o.format, head.get(o.label or o.name))
                for o in self.superseded.outputs}
        self.diff = compare(base, head, {**{o.label or o.name: o.seq for o in self.superseded.outputs}, **self.seqs},
                            self.ctx.compiled)
        self.block["data_diff"] = self.diff.to_json()

    def ctx_spark(self):
        """The run's SparkSession (that of its staged frames)."""
        frame = next(iter(self.staged.values()))[0] if self.staged else None
        if frame is not None:
            return frame.sparkSession
        from pyspark.sql import SparkSession
        return SparkSession.getActiveSession()

    def cancel(self) -> None:
        """The checks' ``cancel``."""
        if self.inner is not None:
            self.inner.cancel()
