"""Write an output's rows: a period's partition is replaced atomically, other periods untouched.

Local paths: the rows are written to ``<dest>/.lf_versions/_period=P/<run_id>`` and the partition
``<dest>/_period=P`` is a symbolic link swapped to the new folder with one ``os.replace``, so a
reader sees the old partition or the new one, never a mix, and a failure before the swap leaves
the old partition as it was. A run stages all its local outputs first and swaps them in together
(``swap_in``), recording each swap in a journal first; the versions they replace are kept until the
run's record says it completed (``retire``), so a run that fails, or whose process dies, before
then is rolled back (``roll_back``) and leaves every local output as it was. Spark's partition
discovery ignores the hidden ``.lf_versions``.
URIs and catalog tables: Spark's dynamic partition overwrite (catalog tables matched by column name);
an output with no rows overwrites the period's partition statically, so that it is emptied too.

Deletion rule (month-end closes must never lose a folder): ledgerflow deletes only what it created
itself, decided on resolved real paths. A partition ``<dest>/_period=P`` is ours only when it is a
symbolic link whose real path is a folder directly inside ``<dest>/.lf_versions/_period=P/`` (both
sides resolved, and neither ``.lf_versions`` nor ``.lf_versions/_period=P`` a link). Anything else
there (a folder, a file, a link elsewhere) is refused before anything runs (:class:`UnsafeDestination`)
and again at the swap; nothing is deleted. Removal of a version folder re-checks the same rule and
leaves the folder alone when it fails.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Callable, Optional

from ...compiler.errors import ResolutionError
from ...compiler.realpaths import outside

PARTITION = "_period"
VERSIONS = ".lf_versions"


class UnsafeDestination(ResolutionError):
    """A destination holds something ledgerflow did not create where it would replace or delete."""


def local_path(target: str) -> str:
    """The file-system path of a local target (``file:`` prefix dropped)."""
    return target[len("file:"):] if target.startswith("file:") else target


# How ledgerflow writes CSV: RFC 4180 (a quote inside a quoted value doubled, which ledgerflow's own
# reading expects; Spark's default escapes it with a backslash) and every value as it is (Spark's
# writer trims leading and trailing spaces of values by default).
CSV_WRITE_OPTIONS = {"header": "true", "escape": '"', "ignoreLeadingWhiteSpace": "false",
                     "ignoreTrailingWhiteSpace": "false"}


def _without_period(df):
    """``df`` without its ``_period`` column: the partition's folder name holds the period."""
    return df.drop(PARTITION) if PARTITION in df.columns else df


@dataclass
class Staged:
    """A partition written to its hidden version folder, not yet visible: ``commit`` swaps it in."""

    link: str
    staged: str
    create_only: bool = False  # a registered version's partition: never replaces an existing one
    within: Optional[str] = None  # a destination a relative path gave: the workspace it must stay inside
    real: Optional[str] = None  # the staged folder's real path when it was written


def is_local(target: str) -> bool:
    """Whether ``target`` is a local folder (written by staging and an atomic swap)."""
    return target.startswith("/") or target.startswith("file:")


def stage_partition(df, target: str, fmt: str, period: str, run_id: str, create_only: bool = False,
                    within: Optional[str] = None) -> Staged:
    """Write ``df`` as the next version of partition ``_period=period`` of the local folder ``target``.

    ``create_only`` (an output registering a new dataset version): the partition must not exist yet.
    ``within`` (a destination a relative path gave): the workspace folder whose inside ``target`` must
    be, as a real path."""
    data = _without_period(df)
    root = local_path(target)
    check_inside(root, within)  # raises before anything is written
    check_partition(target, period, create_only)
    versions = versions_dir(root, period)
    name, n = run_id, 1
    while os.path.lexists(os.path.join(versions, name)):  # two outputs of one run to one partition
        n += 1
        name = f"{run_id}.{n}"
    staged = os.path.join(versions, name)
    writer = data.write.mode("error").format(fmt)  # a fresh folder: Spark never deletes anything ("error": Connect knows no "errorifexists")
    if fmt == "csv":
        writer = writer.options(**CSV_WRITE_OPTIONS)
    existed = versions
    while not os.path.isdir(existed) and os.path.dirname(existed) != existed:
        existed = os.path.dirname(existed)
    expected = os.path.realpath(staged)  # taken before the write: a folder redirected during it is caught below
    try:
        writer.save(staged)
    except BaseException:  # the query itself may fail here (the runner does not materialise local outputs)
        remove_version(staged, root, period)
        folder = versions
        while len(folder) > len(existed):  # and the (empty) folders this write created
            try:
                os.rmdir(folder)
            except OSError:
                break
            folder = os.path.dirname(folder)
        raise
    now = os.path.realpath(staged)
    if now != expected:
        raise UnsafeDestination(f"the destination {root} was redirected while the run wrote it: its rows were to go to "
                                f"{expected} and went to {now} (a folder on the way was replaced by a symbolic link). "
                                "Nothing was swapped in and nothing was deleted; the rows written there are left as "
                                "they are. Remove the link and run again.")
    return Staged(partition_link(root, period), staged, create_only, within, expected)


def check_inside(root: str, within: Optional[str], staged: bool = False) -> None:
    """Raise :class:`UnsafeDestination` when the destination folder ``root`` is not strictly inside the
    folder ``within`` as text and as a real path (:func:`..compiler.realpaths.outside`: a folder on the
    way became a symbolic link out of the workspace, or one that loops); nothing to check when ``within``
    is None (an absolute path of a resolver rule). ``staged``: checked at the swap, after rows were
    written (the message then says they may have been)."""
    if within is None:
        return
    problem = outside(within, root)
    if problem is not None:
        done = ("Nothing was swapped in and nothing was deleted; rows this run staged may be left in a "
                f"{VERSIONS} folder there (a folder was redirected while the run wrote)." if staged else
                "Nothing was written there and nothing was deleted.")
        raise UnsafeDestination(f"the destination {root} {problem} (the workspace: {within}; OUT-VR-002). "
                                f"{done} Remove the link (or point the output elsewhere) and run again.")


def check_staged_in_place(s: Staged) -> None:
    """Raise :class:`UnsafeDestination` unless the staged version of ``s`` is still where it was written
    (its real path then and now compared) and, for a relative destination, inside the workspace: a
    folder on the way replaced by a symbolic link while the run ran would otherwise get a partition
    link written wherever the new link points."""
    root, _ = _root_period(s.link)
    check_inside(root, s.within, staged=True)
    now = os.path.realpath(s.staged)
    if s.real is not None and now != s.real:
        raise UnsafeDestination(f"the destination {root} now leads to {os.path.realpath(root)}, not "
                                f"to the folder its rows were written in ({s.real}): a folder on the way was "
                                "replaced while the run ran. Nothing was swapped in there.")


def versions_dir(root: str, period: str) -> str:
    """``<root>/.lf_versions/_period=P``: where the versions of one partition are written."""
    return os.path.join(root, VERSIONS, f"{PARTITION}={period}")


def partition_link(root: str, period: str) -> str:
    """``<root>/_period=P``: the visible partition (a link to one version folder)."""
    return os.path.join(root, f"{PARTITION}={period}")


def check_partition(target: str, period: str, create_only: bool = False, where: str = "") -> Optional[str]:
    """The version folder partition ``_period=period`` of the local destination ``target`` shows now
    (None when there is none); raises :class:`UnsafeDestination` when replacing it could delete or
    write anything ledgerflow did not create (see the module's deletion rule), or, with
    ``create_only``, when the partition exists at all."""
    root = local_path(target)
    prefix = f"{where}: " if where else ""
    advice = ("Nothing was written there and nothing was deleted. Move it out of the destination (or point the output "
              "elsewhere) and run again.")
    if os.path.lexists(root) and not os.path.isdir(root):
        raise UnsafeDestination(f"the destination {root} is {_what(root)}, not a folder. {advice}")
    for own in (os.path.join(root, VERSIONS), versions_dir(root, period)):
        if os.path.islink(own) or (os.path.lexists(own) and not os.path.isdir(own)):
            raise UnsafeDestination(f"{prefix}{own} is {_what(own)}, which ledgerflow did not create (it writes and "
                                    f"deletes version folders only in a real folder there). {advice}")
    link = partition_link(root, period)
    if not os.path.lexists(link):
        return None
    if create_only:
        raise UnsafeDestination(f"{prefix}{link} already exists, and an output registering a dataset version writes "
                                "a new location and never replaces a partition (a registered version is immutable). "
                                "Give the destination path a {{version}} of its own, or move the folder away.")
    real = os.path.realpath(link)
    if os.path.islink(link) and os.path.dirname(real) == os.path.realpath(versions_dir(root, period)):
        return real if os.path.isdir(real) else None  # ours (a dangling one shows nothing)
    raise UnsafeDestination(f"{prefix}the partition {link} is {_what(link)}, which ledgerflow did not create: it "
                            f"replaces only a partition it wrote (a link into {versions_dir(root, period)}). {advice}")


def _what(path: str) -> str:
    if os.path.islink(path):
        return f"a symbolic link to {os.readlink(path)}"
    return "a folder" if os.path.isdir(path) else "a file"


def remove_version(folder: str, root: str, period: str) -> bool:
    """Delete one version folder, only if it is ours and not shown: a real folder (not a link) directly
    inside ``<root>/.lf_versions/_period=P``, real paths compared, neither level above it a link, and
    not the folder the partition ``<root>/_period=P`` points at. Anything else is left where it is.
    Returns whether it is gone. The one deletion rule: staging cleanup, commit, rollback and ``runs
    clean`` (recovery.py) all delete version folders through this function."""
    versions = versions_dir(root, period)
    if any(os.path.islink(p) for p in (os.path.join(root, VERSIONS), versions, folder)):
        return False
    if not os.path.isdir(folder) or os.path.dirname(os.path.realpath(folder)) != os.path.realpath(versions):
        return False
    link = partition_link(root, period)
    if os.path.lexists(link) and os.path.realpath(link) == os.path.realpath(folder):
        return False  # the version the partition shows: never deleted, whoever asks
    shutil.rmtree(folder, ignore_errors=True)  # rmtree unlinks links inside the folder, never follows them
    return not os.path.lexists(folder)


def _root_period(link: str) -> tuple[str, str]:
    """The destination folder and the period of a partition link ``<root>/_period=P``."""
    return os.path.dirname(link), os.path.basename(link).split("=", 1)[1]


def count_rows(df, folder: str, fmt: str) -> int:
    """Rows of ``df`` as written to ``folder`` by :func:`stage_partition` (Parquet and ORC answer from
    their footers; the written schema is given, so an empty output needs no inference)."""
    if fmt in ("parquet", "orc"):
        # the footers hold the row counts: read them directly instead of running a Spark job
        import glob
        files = [f for f in glob.glob(os.path.join(glob.escape(folder), "part-*")) if not f.endswith(".crc")]
        if fmt == "parquet":
            import pyarrow.parquet as pq
            return sum(pq.ParquetFile(f).metadata.num_rows for f in files)
        import pyarrow.orc as orc
        return sum(orc.ORCFile(f).nrows for f in files)
    from ..inputs.files import spark_path
    data = _without_period(df)
    reader = df.sparkSession.read.format(fmt).schema(data.schema)
    if fmt == "csv":  # records as written: a value holding a line break is one row, not two
        reader = reader.options(header="true", escape='"', multiLine="true")
    return reader.load(spark_path(folder)).count()


def swap_in(staged: list[Staged], journal: list[dict],
            before_swap: Callable[[list[dict]], None] = lambda journal: None) -> None:
    """Swap every staged partition in, appending one ``{link, staged, previous}`` per partition to
    ``journal`` first (``previous``: the version folder it replaces, None when there is none) and calling
    ``before_swap(journal)``, so that a process that dies in the middle has recorded what to roll back
    (``recovery.py``). Nothing is deleted here: the replaced versions stay until :func:`retire`.

    When a swap (or ``before_swap``) fails, the error is raised and the caller rolls ``journal`` back
    (:func:`roll_back`) and drops the staged files (:func:`discard`). Each partition is checked again
    just before its swap (the run may have taken a while): a partition someone replaced by anything
    ledgerflow did not create fails the commit."""
    ours = {os.path.realpath(s.staged) for s in staged}
    for s in staged:
        root, period = _root_period(s.link)
        check_staged_in_place(s)
        previous = check_partition(root, period)
        if s.create_only and os.path.lexists(s.link) and previous not in ours:
            check_partition(root, period, create_only=True)  # raises: appeared while the run ran
        journal.append({"link": s.link, "staged": s.staged, "previous": previous})
        before_swap(journal)
        _swap(s.link, s.staged)


def roll_back(journal: list[dict]) -> tuple[list[str], list[str], list[str]]:
    """Undo the swaps of ``journal`` (:func:`swap_in`), last first: a partition that still shows its
    ``staged`` version is pointed back at ``previous``, or its link removed when there was none. A
    partition another run has swapped its own version into since is that run's (its commit stands; the
    version this journal replaced is shown by no partition any more and is deleted). Staged folders
    no partition shows are deleted. When ``previous`` is gone, the partition keeps the staged rows
    rather than show nothing. Entries that do not describe a partition and version folders of one
    destination are left alone (a journal may come from a damaged record). Safe to repeat. Returns
    (partitions rolled back, partitions that keep the staged version, problems)."""
    rolled: list[str] = []
    kept: list[str] = []
    problems: list[str] = []
    for entry in reversed(journal):
        fields = _entry_fields(entry)
        if fields is None:
            problems.append(f"unexpected commit entry {entry!r}: left alone")
            continue
        link, staged, previous = fields
        root, period = _root_period(link)
        if not os.path.islink(link) or os.path.realpath(link) != os.path.realpath(staged):
            shown = os.path.realpath(link) if os.path.lexists(link) else None
            if previous is not None and shown is not None and os.path.realpath(previous) != shown:
                remove_version(previous, root, period)
            remove_version(staged, root, period)
            continue
        try:
            if previous is None:
                os.remove(link)  # the link this commit created (a link: removing it touches no files)
            elif os.path.isdir(previous) and not os.path.islink(previous):
                _point(link, previous)
            else:
                kept.append(link)
                problems.append(f"{link}: the version it replaced ({previous}) is gone, so the partition keeps "
                                f"the rows of {staged}")
                continue
        except (OSError, UnsafeDestination) as exc:
            kept.append(link)
            problems.append(f"could not roll back {link}: {getattr(exc, 'strerror', None) or exc}")
            continue
        rolled.append(link)
        remove_version(staged, root, period)
    return rolled, kept, problems


def _entry_fields(entry) -> Optional[tuple[str, str, Optional[str]]]:
    """A journal entry's (link, staged, previous) when it names a partition link ``<root>/_period=P`` and
    version folders directly inside ``<root>/.lf_versions/_period=P``; None for anything else."""
    if not isinstance(entry, dict):
        return None
    link, staged, previous = entry.get("link"), entry.get("staged"), entry.get("previous")
    if not (isinstance(link, str) and isinstance(staged, str) and os.path.isabs(link)
            and os.path.basename(link).startswith(f"{PARTITION}=")):
        return None
    folders = [staged] + ([previous] if previous is not None else [])
    try:
        versions = os.path.realpath(versions_dir(*_root_period(link)))
        ok = all(isinstance(f, str) and os.path.dirname(os.path.realpath(f)) == versions for f in folders)
    except ValueError:  # a NUL byte in a damaged record's path
        return None
    return (link, staged, previous) if ok else None


def retire(journal: list[dict]) -> list[str]:
    """Delete the versions a completed commit replaced, when they are ours and no longer shown; returns
    the folders deleted (entries that do not describe a partition's version folders are skipped)."""
    entries = [fields for fields in map(_entry_fields, journal) if fields is not None]
    live = {os.path.realpath(link) for link, _, _ in entries}
    removed = []
    for link, _, previous in entries:
        if previous and os.path.realpath(previous) not in live and os.path.lexists(previous):
            if remove_version(previous, *_root_period(link)):
                removed.append(previous)
    return removed


def commit(staged: list[Staged]) -> list[dict]:
    """:func:`swap_in`, rolled back on failure, then :func:`retire`: for a caller with nothing to record
    in between. Returns the journal."""
    journal: list[dict] = []
    try:
        swap_in(staged, journal)
    except BaseException:
        roll_back(journal)
        discard(staged)
        raise
    retire(journal)
    return journal


def discard(staged: list[Staged]) -> None:
    """Delete staged version folders that are not (or no longer) visible."""
    for s in staged:
        if os.path.realpath(s.link) != os.path.realpath(s.staged):
            remove_version(s.staged, *_root_period(s.link))


def write_uri_partition(df, target: str, fmt: str, period: str, rows: int) -> str:
    """A URI destination: partition ``_period=period`` of ``target`` replaced by ``df`` (``rows`` rows).

    Rows: Spark's dynamic partition overwrite (written aside, the partition replaced when the job
    commits; a failed job leaves it as it was). No rows: the partition's folder is overwritten, as a
    dynamic overwrite replaces only the partitions its rows hold and would keep the last run's."""
    location = f"{target.rstrip('/')}/{PARTITION}={period}"
    data = _without_period(df)
    header = CSV_WRITE_OPTIONS if fmt == "csv" else {}
    if rows == 0:
        data.write.mode("overwrite").format(fmt).options(**header).save(location)
        return location
    from pyspark.sql import functions as F
    (data.withColumn(PARTITION, F.lit(period)).write.mode("overwrite").format(fmt).options(**header)
     .option("partitionOverwriteMode", "dynamic").partitionBy(PARTITION).save(target))
    return location


def _swap(link: str, new_target: str) -> None:
    """Point ``link`` at ``new_target`` atomically (the previous version's files are kept: see ``commit``)."""
    _point(link, new_target)


def _point(link: str, new_target: str) -> None:
    tmp = f"{link}.{os.path.basename(new_target)}.tmp"
    if os.path.islink(tmp):
        os.remove(tmp)  # a link left by an interrupted swap: removing it touches no files
    elif os.path.lexists(tmp):
        raise UnsafeDestination(f"{tmp} is {_what(tmp)}, which ledgerflow did not create; move it away and run again.")
    if os.path.lexists(link) and not os.path.islink(link):
        raise UnsafeDestination(f"the partition {link} is {_what(link)}, which ledgerflow did not create; move it "
                                "away and run again.")  # never deleted, never renamed over
    # relative between real paths: the kernel resolves a relative link from the folder it really is in,
    # which differs from dirname(link) when a folder above it is a symbolic link
    os.symlink(os.path.relpath(os.path.realpath(new_target), os.path.realpath(os.path.dirname(link))), tmp)
    os.replace(tmp, link)


def qualified_table(spark, table: str) -> str:
    """``table`` as every part of its name (catalog, namespaces, name), each quoted, in lower case; the
    parts a one- or two-part name leaves out filled as Spark fills them (the session's current catalog
    and database), so that ``t``, ``db.t`` and ``spark_catalog.db.t`` compare equal when they name one
    table. A name sqlglot cannot read is compared as written (lower case)."""
    from sqlglot import exp
    try:
        parts = [p.name for p in exp.to_table(table, dialect="spark").parts]
    except Exception:  # noqa: BLE001 - Spark itself will say what is wrong with the name
        return table.lower()
    current = spark.catalog.currentCatalog()
    if len(parts) == 2 and parts[0].lower() == current.lower():  # `spark_catalog.t`: a catalog and a table
        parts = [parts[0], spark.catalog.currentDatabase(), parts[1]]
    elif len(parts) < 3:
        parts = [current, *([spark.catalog.currentDatabase()] if len(parts) == 1 else []), *parts]
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts).lower()


def check_catalog_table(spark, table: str, columns: list[str], where: str) -> None:
    """An existing catalog table an output writes must be partitioned by ``_period`` alone and have
    the output's columns (compared case-insensitively, in any order); checked before any output is
    written. A table that does not exist yet is created by the write."""
    if not spark.catalog.tableExists(table):
        return
    listed = spark.catalog.listColumns(table)
    partitions = [c.name for c in listed if c.isPartition]
    if [p.lower() for p in partitions] != [PARTITION]:
        raise ResolutionError(f"{where}: the catalog table {table} is partitioned by {partitions or 'nothing'}, "
                              f"not by {PARTITION} alone: ledgerflow replaces one period's partition of a table. "
                              "Write to a table ledgerflow created, or recreate it partitioned by _period.")
    have = {c.name.lower() for c in listed if not c.isPartition}
    want = {c.lower() for c in columns if c.lower() != PARTITION}
    if have != want:
        missing, extra = sorted(want - have), sorted(have - want)
        raise ResolutionError(f"{where}: the catalog table {table} does not have the output's columns"
                              + (f"; the table lacks {', '.join(missing)}" if missing else "")
                              + (f"; the output lacks {', '.join(extra)}" if extra else "")
                              + ". Change the output's columns, or the table.")


def write_catalog_table(df, table: str, period: str, rows: int) -> str:
    """Replace partition ``_period=period`` of a catalog table by ``df`` (``rows`` rows), its columns
    matched to the table's by name (:func:`check_catalog_table` checked them); a table that does not
    exist is created partitioned by ``_period``.

    Rows: a dynamic partition overwrite (the partition replaced when the job commits; a failed job
    leaves it as it was). No rows: ``INSERT OVERWRITE ... PARTITION (_period = P)`` of nothing, which
    empties the partition (a dynamic overwrite replaces only the partitions its rows hold). The
    table's name and the period are parameters of that statement, never SQL text."""
    from pyspark.sql import functions as F
    spark = df.sparkSession
    data = _without_period(df)
    if not spark.catalog.tableExists(table):
        data.withColumn(PARTITION, F.lit(period)).write.partitionBy(PARTITION).saveAsTable(table)
        return f"{table} ({PARTITION}={period})"
    by_name = {c.lower(): c for c in data.columns}
    ordered = data.select(*[F.col("`" + by_name[c.name.lower()].replace("`", "``") + "`").alias(c.name)
                            for c in spark.catalog.listColumns(table) if not c.isPartition])
    if rows == 0:
        import uuid
        view = f"__lf_output_{uuid.uuid4().hex}"
        ordered.createOrReplaceTempView(view)
        try:
            spark.sql(f"INSERT OVERWRITE TABLE IDENTIFIER(:table) PARTITION (`{PARTITION}` = :period) "
                      f"SELECT * FROM `{view}`", args={"table": table, "period": period})
        finally:
            spark.catalog.dropTempView(view)
    else:
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        ordered.withColumn(PARTITION, F.lit(period)).write.insertInto(table, overwrite=True)
    return f"{table} ({PARTITION}={period})"
