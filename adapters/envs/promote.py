"""``ledgerflow promote``: make one environment publish exactly the versions another published, by re-pointing.

A promotion of project-periods from environment ``a`` to ``b`` copies no rows: each partition ``b`` shows is
exchanged for a folder of hard links to the version folder ``a`` shows (the same swap a run's commit makes,
:mod:`..commit.swaps`). All partitions of one invocation are swapped under one journal,
``target/promotions/<id>.json``, written once, listing every partition, before the first swap. The run store
then records, in one transaction (the commit point), one completed run per project-period in ``b`` (a copy of
``a``'s record saying it is a promotion), the registered versions ``b`` now reads, and the promotion itself. A failure before the commit point
points every partition back; a process killed in between is rolled back by the next command that opens the store
(:func:`..commit.promotion_journal.recover_promotions`), as a run's commit is.

Refused, before anything changes, with every reason at once (exit 1): a project-period ``a`` has not published
(ENV-004), a closed period of prod (ENV-003: ``restate`` changes it; PERIOD-001 for a partition another project's
closed period published), an output that is not a local folder, a
promotion that would leave ``b`` reading another upstream version than the promoted rows were computed from
(ENV-005: promote the upstream project too), and a record that is not what ``a`` shows in this workspace (ENV-007:
a partition or version outside this workspace, as in a copy of it, or a version ``a`` no longer shows as it was
published). A partition a run under way is writing is never re-pointed: the promotion takes the same leases a
run takes (RUN-001 when one is held), released at its commit point or after its rollback.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler.errors import LedgerflowError
from ..commit import folder_stats, shown, swaps
from ..commit.promotion_journal import journal_folder, write_json as _write_json
from ..commit.staging import Staged
from ..layout.partition_paths import PROD, env_folder, partition_key, partition_link, root_period, versions_dir
from ..layout.real_path import real_path, remembered, within
from ..run import leases
from ..store import liveness
from ..store.runstore import RunStore
from . import spark_copies
from .promoted_records import Recording, promoted_run, source_stored, write_ahead

_REASONS_SHOWN = 10  # a refusal of thousands of project-periods names the first ten reasons and counts the rest


class PromotionRefused(LedgerflowError):
    """A promotion refused before anything changed (ENV-003..ENV-006)."""


@dataclass
class PromotedPeriod:
    """One project-period of a promotion: the source's published run and the partitions it re-points."""

    project: str
    period: str
    record: dict  # the source environment's published run
    # per partition re-pointed: the target partition, the version folder, the version's real path and the files
    # of the source's partition showing it, when the plan checked them
    staged: list[Staged] = field(default_factory=list)
    stored: Optional[tuple] = None  # the source run's registry texts (runs.inputs, runs.input_files), when kept
    plain: bool = False  # its record holds no float NaN or Infinity (store.published.record_text)
    registrations: list[tuple[str, int]] = field(default_factory=list)  # (registered dataset, version)
    copies: list[spark_copies.Copy] = field(default_factory=list)  # copied with Spark (:mod:`.spark_copies`)
    # its promoted run's store row and record text, when written by the plan (record then keeps only what is read
    # after it: :func:`.promoted_records.write_ahead`)
    promoted: Optional[tuple[dict, str]] = None

    @property
    def swaps(self) -> list[tuple[str, str]]:
        """(target partition, version folder) of each partition re-pointed."""
        return [(s.link, s.staged) for s in self.staged]


def plan(source: RunStore, target: RunStore, projects: list[str], periods: list[str],
         restating: bool = False, recording: Optional[Recording] = None) -> list[PromotedPeriod]:
    """What promoting ``projects`` x ``periods`` from ``source``'s environment to ``target``'s would re-point;
    raises :class:`PromotionRefused` with every reason it is refused. ``restating``: for ``restate --from-env``,
    which changes a closed period on purpose (a close is no reason to refuse). ``recording``: the promotion's id,
    time and author, when its records are to be written as the plan goes (:mod:`.promoted_records`; then
    :func:`promote` is given the same). Nothing on disk changes here, so each folder is resolved to its real path
    once (the swaps check again for themselves)."""
    with remembered():
        return _plan(source, target, projects, periods, restating, recording)


def _plan(source: RunStore, target: RunStore, projects: list[str], periods: list[str],
          restating: bool, recording: Optional[Recording]) -> list[PromotedPeriod]:
    if source.env == target.env:
        raise PromotionRefused(f"ENV-006 --from and --to are both '{source.env}': an environment already publishes "
                               "what it publishes. Hint: promote from another environment.")
    # the source's own runs, each checked as it is read (its record written ahead, then let go: a promotion of
    # thousands never holds all their records); a project-period it has not published (where it reads prod's) is
    # refused. Reasons and items are then put in the order asked: projects, then periods.
    closes = {key: c for key, c in target.closures(projects, periods).items() if c["action"] == "close"} \
        if target.env == PROD and not restating else {}
    checked: dict[tuple[str, str], tuple[Optional[PromotedPeriod], list[str]]] = {}
    for (project, period), (record, keys, plain) in source.own_last_records(periods, projects):
        closed = closes.get((project, period))
        if closed is not None:
            checked[(project, period)] = (None, [
                f"ENV-003 {project} {period} is closed in prod (by {closed.get('by')} at {closed.get('at')}); "
                f"`ledgerflow restate {project} --period {period} --from-env {source.env} --reason TEXT` changes a "
                "closed period"])
            continue
        item = PromotedPeriod(project, period, record, stored=keys, plain=plain)
        found = _swaps_of(item, target.env, real_path(target.root))
        if recording is not None and not found and not item.copies:
            write_ahead(item, source.env, target.env, recording)
        checked[(project, period)] = (item, found)
    problems: list[str] = []
    items: list[PromotedPeriod] = []
    for project in projects:
        for period in periods:
            item, found = checked.get((project, period), (None, [
                f"ENV-004 environment '{source.env}' has not published {project} for {period} (nothing to promote; "
                f"run it there with `ledgerflow run {project} --period {period} --env {source.env}`)"]))
            problems += found
            if item is not None:
                items.append(item)
    if not problems:
        problems += _upstream_problems(items, target)
    if target.env == PROD:
        problems += _closed_elsewhere(items, target)
    if problems:
        shown = problems if len(problems) <= _REASONS_SHOWN + 2 else \
            problems[:_REASONS_SHOWN] + [f"and {len(problems) - _REASONS_SHOWN} more reasons"]
        raise PromotionRefused(f"promotion from '{source.env}' to '{target.env}' refused, nothing changed: "
                               + "; ".join(shown) + ".")
    return items


def _swaps_of(item: PromotedPeriod, to_env: str, workspace: str) -> list[str]:
    """Fill ``item.staged`` and ``item.registrations`` from its record; the reasons it cannot be promoted (its
    partitions must lie in ``workspace``, a real path, and each must still show the version it published)."""
    rec = item.record
    commit = rec.get("commit") or {}
    problems = []
    # an environment's rows of a catalog table (a folder of the workspace: copied into the table for prod) or of a
    # URI (<uri>/.lf_envs/<env>: copied into the target's partition of the URI)
    stand_ins = [o for o in rec.get("outputs") or [] if o.get("stands_for") and isinstance(o.get("location"), str)]
    tables = {o["location"]: (o["stands_for"], o.get("rows")) for o in stand_ins if not o.get("format")}
    uris = [o for o in stand_ins if o.get("format")]
    away = [str(e) for e in commit.get("elsewhere") or []
            if not any(o["location"].startswith(str(e).rstrip("/") + "/") for o in uris)]
    if away:
        problems.append(f"ENV-006 {item.project} {item.period} wrote {', '.join(away)}, which is no local folder: "
                        "only local folders are promoted by re-pointing (prod's rows of a catalog table or a URI are "
                        "not copied into another environment; run the project there)")
    for o in uris:
        base = o["stands_for"].rstrip("/")
        item.copies.append(spark_copies.Copy(spark_copies.URI, base if to_env == PROD else env_folder(base, to_env),
                                             o["location"], int(o.get("rows") or 0), o["format"], o["location"]))
    for entry in commit.get("partitions") or []:
        fields = swaps.entry_fields(entry)
        if fields is None:
            problems.append(f"ENV-007 {item.project} {item.period}: its record's commit entry {entry!r} names no "
                            "partition")
            continue
        link, version, _previous = fields
        root, period = root_period(link)
        if not (within(link, workspace) and within(version, workspace)):
            problems.append(f"ENV-007 {item.project} {item.period}: its record names {link}, outside this workspace "
                            f"({workspace}); a record of another workspace (this one copied or moved?) is never "
                            "promoted from")
            continue
        if not folder_stats.is_folder(folder_stats.lstat(version)):
            problems.append(f"ENV-007 {item.project} {item.period}: its version folder {version} is gone or is a link")
            continue
        try:  # listed once: its files' sizes and times compared with the record, its files with the partition's
            listed = folder_stats.stats_by_name(version)
        except OSError as exc:
            problems.append(f"ENV-007 {item.project} {item.period}: its version folder {version} cannot be listed "
                            f"({exc.strerror or exc}): nothing of it is promoted")
            continue
        recorded = entry.get("files") if isinstance(entry, dict) else None
        if isinstance(recorded, dict) and swaps.file_stats(version, listed) != recorded:
            problems.append(f"ENV-007 {item.project} {item.period}: a file of its version {version} was changed, "
                            "added or removed since its run published it (its size or time differs from the run's "
                            "record): run it again in that environment")
            continue
        real = real_path(version)
        now, files = shown.shown_listing(link, versions_dir(root, period), listed=(real, listed))
        if now != real:
            problems.append(f"ENV-007 {item.project} {item.period}: {link} no longer shows exactly the files of the "
                            f"version its run published ({version}): something changed one of them since; run it "
                            "again in that environment")
            continue
        if to_env == PROD and link in tables:
            table, rows = tables[link]
            item.copies.append(spark_copies.Copy(spark_copies.TABLE, table, real, int(rows or 0),
                                                 "parquet", link))
        else:
            item.staged.append(Staged(partition_link(root, period, to_env), version, real=real, shown_by=link,
                                      files=files))
    for out in rec.get("outputs") or []:
        if out.get("registered_dataset"):
            item.registrations.append((out["registered_dataset"], int(out["registered_version"])))
    return problems


def _closed_elsewhere(items: list[PromotedPeriod], target: RunStore) -> list[str]:
    """PERIOD-001: a partition the promotion would replace in prod was published by a closed project-period of
    another project (a close keeps the partitions it published, whichever project would replace them: the same
    refusal a run gets, :func:`..run.closed_partitions.refuse_closed_partitions`)."""
    from ..run.closed_partitions import refuse_closed_partitions
    from ..store.closure_table import PeriodClosed
    problems = []
    publications: dict[str, list] = {}  # period -> its closed project-periods' publications, read once
    for item in items:
        if item.period not in publications:
            publications[item.period] = target.closed_publications(item.period)
        if not publications[item.period]:
            continue  # no project closed the period: nothing to refuse
        keys = [partition_key("path", *root_period(link), PROD) for link, _version in item.swaps]
        keys += [c.lease_key(item.period, PROD) for c in item.copies]
        try:
            refuse_closed_partitions(target, item.record, keys, publications[item.period])
        except PeriodClosed as closed:
            problems.append(str(closed).rstrip("."))
    return problems


def _upstream_problems(items: list[PromotedPeriod], target: RunStore) -> list[str]:
    """ENV-005: a promoted run read a registered version the target would not read after the promotion."""
    from ..inputs.registered_reads import version_read  # the resolver's module: loaded when asked
    published = {(name, item.period): version for item in items for name, version in item.registrations}
    regs = target.registrations()
    by_name: dict[str, list[dict]] = {}
    for reg in regs:
        by_name.setdefault(reg["name"], []).append(reg)
    problems = []
    for item in items:
        snap = item.record.get("resolver_snapshot") or {}
        pinned = set(snap.get("pinned_views") or [])
        for view, res in sorted((snap.get("resolutions") or {}).items()):
            if res.get("resolver_source") != "registered" or view in pinned:
                continue
            name, read = res.get("dataset_name"), res.get("version")
            # what the target reads after the promotion for the period: the version this promotion publishes there
            # (a promotion makes it the one read), else the one it reads now
            would = published.get((name, item.period)) or version_read(by_name.get(name, []), item.period)
            if would != read:
                producer = next((i.project for i in items if (name, read) in i.registrations), None) or \
                    _producer(target, name, read)
                problems.append(f"ENV-005 {item.project} {item.period} was computed from registered dataset '{name}' "
                                f"version {read}, but after this promotion '{target.env}' would read version "
                                f"{would if would is not None else 'none'}; promote its producer too "
                                f"(`--select +{item.project}`{f', or add {producer}' if producer else ''})")
    return problems


def _producer(store: RunStore, name: str, version) -> Optional[str]:
    """The project whose run registered ``name`` v``version`` (None when unknown)."""
    for reg in store.registrations(name, every_env=True):
        if reg["version"] == version and reg.get("run_id"):
            try:
                return store.get_run(reg["run_id"])["project"]["name"]
            except LedgerflowError:
                return None
    return None


def promote(source: RunStore, target: RunStore, items: list[PromotedPeriod], by: str,
            restatement: Optional[dict] = None, emit: Callable[[str, dict], None] = lambda kind, record: None,
            session: Optional[Callable[[], object]] = None, recording: Optional[Recording] = None) -> dict:
    """Re-point every partition of ``items`` (planned by :func:`plan`) to its source version, then record the
    promotion (see the module docstring); returns the promotion's record. The journal lists every partition
    before the first swap (one write, not one per partition). ``restatement`` (``restate --from-env``, one
    item): the block its promoted run's record carries; the versions it replaces are kept (the superseded
    rows stay readable where the block says). ``emit(event type, record)``: its OpenLineage events (START once
    the journal is kept, then COMPLETE or FAIL). ``session()``: the SparkSession that copies an environment's rows
    of a catalog table or a URI into the target's (:mod:`.spark_copies`), started only when there is one to copy.
    ``recording``: the one :func:`plan` was given (its id, time and author are the promotion's; ``by`` is its)."""
    if any(i.copies for i in items) and session is None:
        raise PromotionRefused("ENV-006 this promotion copies rows into a catalog table or a URI, which needs Spark, and "
                               "none was given: nothing changed. Hint: use `ledgerflow promote`.")
    if restatement is not None and any(i.promoted for i in items):
        raise ValueError("a restatement's records carry its block: they are written at the commit point")
    recording = recording or Recording.start(by)
    promotion_id, at, by = recording.promotion_id, recording.at, recording.by
    folder = journal_folder(target, create=True)
    if folder is None:
        raise PromotionRefused(f"ENV-007 {os.path.join(target.root, 'target', 'promotions')} (or target/ above it) "
                               "is not a folder ledgerflow made but a link or a file: a promotion's journal is never "
                               "written through it. Nothing was promoted. Hint: move it away.")
    path = os.path.join(folder, f"{promotion_id}.json")
    record = {"promotion_id": promotion_id, "from": source.env, "to": target.env, "by": by, "at": at,
              "status": "running", "process": liveness.hold(target.runs_dir, promotion_id),
              "items": [{"project": i.project, "period": i.period, "run_id": i.record["run_id"],
                         "partitions": [link for link, _ in i.swaps],
                         "registered": [{"name": n, "version": v} for n, v in i.registrations]} for i in items],
              "commit": {"partitions": []}}
    if restatement is not None:
        record["restatement"] = restatement  # in the journal before any swap: recovery keeps what it supersedes
    journal: list[dict] = record["commit"]["partitions"]

    record["copies"] = spark_copies.planned(folder, promotion_id, [(i.period, c) for i in items for c in i.copies])
    # each version where the plan found it (its real path then): swap_planned checks it is there still
    staged = [s for i in items for s in i.staged]
    with remembered():
        needed = list(dict.fromkeys([partition_key("path", *root_period(link), target.env)
                                     for i in items for link, _version in i.swaps]
                                    + [c.lease_key(i.period, target.env) for i in items for c in i.copies]))
    try:
        leases.take(target, promotion_id, record["process"], needed)  # one writer per partition, runs included
    except BaseException:
        liveness.release(promotion_id)
        raise
    written = False
    spark = None
    try:
        _refuse_completed_since(target, items, at)
        # every partition checked, the whole journal kept once (nothing has changed before), then every swap
        swaps.swap_planned(staged, journal, lambda _journal: _write_json(path, record),
                           keep=promotion_id if restatement is not None else None)
        written = True
        emit("START", record)
        if record["copies"]:
            spark = session()
            spark_copies.copy_all(spark, record["copies"], lambda: _write_json(path, record))
        copied = {c["output"]: c["location"] for c in record["copies"]}
        runs, stored, texts = [], [], []
        for i in items:
            if i.promoted is not None:  # written by the plan
                runs.append(i.promoted[0])
                stored.append(i.stored)
                texts.append(i.promoted[1])
                continue
            run = promoted_run(i, source.env, target.env, promotion_id, by, at, recording.run_id(), copied)
            if restatement is not None:
                run["restatement"] = restatement
            runs.append(run)
            stored.append(source_stored(i, run))
            texts.append(None)
        # the promoted records hold their sources' values and strings: written the fast way when the sources' are
        # (a restatement's block holds its data diff's values, which may be a float NaN: written by json)
        plain = [i.plain and restatement is None for i in items]
        target.record_promotion(record, runs, stored, plain, texts)  # the commit point
    except BaseException as exc:
        problems = spark_copies.restore(spark, record["copies"]) if spark is not None else []
        rolled, kept, swap_problems = swaps.roll_back(journal)
        problems += swap_problems
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}", rolled_back=rolled, kept=kept,
                      problems=problems)
        if written or rolled or kept:
            _write_json(path, record)
            emit("FAIL", record)
        target.release(promotion_id)  # its leases
        liveness.release(promotion_id)
        raise
    # A process that dies from here on has passed the commit point: the next command completes it (recovery).
    try:
        record.update(status="completed", runs=[r["run_id"] for r in runs],
                      retired=swaps.retire(journal, keep_replaced=restatement is not None, checked=True))
        if record["copies"]:
            spark_copies.discard(folder, promotion_id)
        _write_json(path, record)
    except Exception as exc:  # noqa: BLE001 - the promotion stands: the next command finishes its journal
        record.update(status="completed", unfinished=f"{type(exc).__name__}: {exc}")
    # an unfinished journal keeps its lock file, abandoned: the next command's recovery completes it
    liveness.release(promotion_id, keep_file="unfinished" in record)
    emit("COMPLETE", record)
    return record


def _refuse_completed_since(target: RunStore, items: list[PromotedPeriod], at: str) -> None:
    """RUN-001 when a run of the target environment completed one of ``items``' project-periods since ``at`` (the
    promotion's time, fixed before its plan, which its records carry): that run would be taken for the last one
    while the promotion replaced what it published. Asked once the promotion holds its leases, when no run can
    complete any more: nothing has changed yet."""
    late = target.completed_since(at, sorted({i.project for i in items}), sorted({i.period for i in items}))
    wanted = {(i.project, i.period) for i in items}
    late = [(project, period, run_id) for project, period, run_id in late if (project, period) in wanted]
    if late:
        project, period, run_id = late[0]
        raise PromotionRefused(f"RUN-001 run {run_id} of {project} completed {period} in '{target.env}' while this "
                               f"promotion was being planned{f' (and {len(late) - 1} more)' if len(late) > 1 else ''}: "
                               "nothing was promoted. Hint: promote again (the next plan sees what it published).")
