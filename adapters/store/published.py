"""What each project-period publishes, and what its run read: the facts ``ledgerflow status`` compares
with the workspace as it is now (docs/commands.md "Stale periods").

A project-period's published outputs are those of its **last completed run** (the newest
``finished_at``: the last commit). :meth:`PublishedTable.last_completed` finds all of them in one query
(the ``runs_last`` index), not one per project-period: ``status`` over 500 projects x 36 periods
stays one pass over the run store.

The facts a stale check needs are a small part of a run record (which also holds the project snapshot,
the lineage and the bridge): :func:`run_inputs` extracts them — the project file's sha256, a sha256 of
each dataset declaration read, the version each input read and whether it was pinned, and the input
fingerprints without their content hashes — and the registry keeps them beside the record, so ``status``
never parses whole records: ``runs.inputs`` (declarations and reads) and ``runs.input_files`` (the
fingerprints), each as canonical JSON text. Many runs share the same text (every project reading a month's
files records the same fingerprints), so each distinct text is parsed once and a caller may judge it once
(``keys``). A run recorded before these columns existed has them computed from its record when read.
"""
from __future__ import annotations

import json
import os
from contextlib import closing
from typing import Any, Iterable, Iterator, Optional

from .database import StateDatabase
from .json_text import plain_text

_BATCH = 256  # records read per query by PublishedTable.own_last_records (about 6 MB of real-shaped texts)
_FINGERPRINT_KEYS = ("view", "dataset", "dataset_version", "location", "kind", "checked", "reason", "exists",
                     "type", "file_count", "total_bytes", "listing_sha256")
# the environment's own runs first (an environment other than prod reads prod's where it has published nothing)
_LAST = ("WITH last AS (SELECT run_id, ROW_NUMBER() OVER (PARTITION BY project_name, period ORDER BY "
         "(env IS NOT NULL) DESC, finished_at DESC, run_id DESC) AS rn FROM runs WHERE status = 'completed'{where}) "
         "SELECT {columns} FROM runs r JOIN last ON r.run_id = last.run_id AND last.rn = 1")


def declaration_sha256(raw: Any) -> str:
    """A digest of a parsed YAML declaration (a dataset's), independent of key order."""
    import hashlib  # OpenSSL's, loaded when a digest is asked (a promotion asks none)
    return hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()


def run_inputs(record: dict) -> dict:
    """The facts of ``record`` that tell whether its outputs are stale (see the module docstring):
    ``{project_sha256, datasets: [{id, name, sha256}], reads: [{view, dataset, dataset_id, version,
    registered, pinned}], fingerprints: [...]}``; ``pinned`` is None for a run recorded before runs said."""
    snap = record.get("resolver_snapshot") or {}
    pinned = snap.get("pinned_views")
    reads = []
    for view, res in sorted((snap.get("resolutions") or {}).items()):
        reads.append({"view": view, "dataset": res.get("dataset_name"), "dataset_id": res.get("dataset_id"),
                      "version": res.get("version"), "source": res.get("resolver_source"),
                      "pinned": None if pinned is None else view in pinned})
    datasets = [{"id": raw.get("id"), "name": raw.get("name"), "sha256": declaration_sha256(raw)}
                for raw in record.get("datasets_snapshot") or [] if isinstance(raw, dict)]
    prints = []
    for fp in snap.get("input_fingerprints") or []:
        entry = {k: fp[k] for k in _FINGERPRINT_KEYS if k in fp}
        if fp.get("files") is not None:
            entry["files"] = [{"path": f["path"], "size": f["size"], "mtime_ns": f["mtime_ns"]} for f in fp["files"]]
        prints.append(entry)
    return {"project_sha256": (record.get("project") or {}).get("sha256"), "datasets": datasets, "reads": reads,
            "fingerprints": prints}


def stored_inputs(record: dict) -> tuple[str, str]:
    """``record``'s facts as the registry keeps them: (``runs.inputs``, ``runs.input_files``) JSON texts."""
    facts = run_inputs(record)
    files = facts.pop("fingerprints")
    return json.dumps(facts, sort_keys=True, default=str), json.dumps(files, sort_keys=True, default=str)


class PublishedTable(StateDatabase):
    """The last completed run of every project-period, with what it read."""

    def last_completed(self, periods: Optional[Iterable[str]] = None,
                       projects: Optional[Iterable[str]] = None) -> list[dict]:
        """One ``{project, period, run_id, finished_at, inputs, keys, env}`` per project-period that has a completed
        run in this store's environment (of ``periods`` / ``projects`` when given), its last one (in an environment
        other than prod that has not published the project-period: prod's, ``env`` saying which); ``inputs`` as
        :func:`run_inputs` gives them (shared between rows whose texts are equal: read only), ``keys`` the (inputs,
        files) texts (None for a run recorded before the columns)."""
        out, parsed = [], {}

        def loads(text: str):
            if text not in parsed:
                parsed[text] = json.loads(text)
            return parsed[text]
        columns = ("r.project_name, r.period, r.run_id, r.finished_at, r.inputs, r.input_files, CASE WHEN r.inputs "
                   "IS NULL OR r.input_files IS NULL THEN r.record END, COALESCE(r.env, 'prod')")
        for project, period, run_id, finished_at, inputs, files, record, env in self._last(columns, periods,
                                                                                            projects):
            if record is None:
                facts, keys = {**loads(inputs), "fingerprints": loads(files)}, (inputs, files)
            else:
                facts, keys = run_inputs(json.loads(record)), None
            out.append({"project": project, "period": period, "run_id": run_id, "finished_at": finished_at,
                        "inputs": facts, "keys": keys, "env": env})
        return sorted(out, key=lambda r: (r["period"], r["project"]))

    def own_last_records(self, periods: Iterable[str],
                         projects: Iterable[str]) -> Iterator[tuple[tuple[str, str], tuple]]:
        """``((project, period), (record, keys, plain))`` of each project-period this store's environment published
        itself (of ``periods`` x ``projects``; a project-period it reads prod's for is left out), in no set order:
        its last completed run's record, parsed; the (``runs.inputs``, ``runs.input_files``) texts (None for a run
        recorded before the columns); whether the record holds JSON's own values only (no ``NaN`` or
        ``Infinity``, which :func:`record_text` writes exactly only the slower way). The runs are found in one
        query, their records read :data:`_BATCH` at a time, each parsed and given at once, so a caller done with
        it before asking the next (a promotion's plan) never holds the texts or the records of thousands at a
        time; no read of the store stays open between batches (a writer never waits for the caller's work)."""
        constants: list[str] = []

        def constant(name: str) -> float:
            constants.append(name)
            return float(name)  # json.loads' own answer
        decode = json.JSONDecoder(parse_constant=constant).decode
        ids = [run_id for (run_id,) in self._last("r.run_id", periods, projects, own=True)]
        for start in range(0, len(ids), _BATCH):
            batch = ids[start:start + _BATCH]
            with closing(self._connect()) as conn:
                rows = conn.execute("SELECT project_name, period, CASE WHEN inputs IS NULL OR input_files IS NULL THEN "
                                    "NULL ELSE inputs END, input_files, record FROM runs WHERE run_id IN "
                                    f"({','.join('?' * len(batch))})", batch).fetchall()
            for project, period, inputs, files, record in rows:
                seen = len(constants)
                parsed = decode(record)
                yield (project, period), (parsed, (inputs, files) if inputs is not None else None,
                                          len(constants) == seen)

    def completed_since(self, at: str, projects: Iterable[str], periods: Iterable[str]) -> list[tuple[str, str, str]]:
        """(project, period, run id) of the runs of ``projects`` x ``periods`` this store's environment recorded
        completed at ``at`` or later (an ISO time, as runs record ``finished_at``)."""
        projects, periods = list(projects), list(periods)
        if not os.path.exists(self.db_path) or not projects or not periods:
            return []
        env, args = ("env IS NULL", []) if self.env == "prod" else ("env = ?", [self.env])
        with closing(self._connect()) as conn:
            return conn.execute(f"SELECT project_name, period, run_id FROM runs WHERE status = 'completed' AND {env} "
                                f"AND finished_at >= ? AND project_name IN ({','.join('?' * len(projects))}) AND "
                                f"period IN ({','.join('?' * len(periods))}) ORDER BY project_name, period",
                                [*args, at, *projects, *periods]).fetchall()

    def _last(self, columns: str, periods: Optional[Iterable[str]], projects: Optional[Iterable[str]],
              own: bool = False) -> Iterator[tuple]:
        """``columns`` of each project-period's last completed run (``r`` the run's row), as a cursor (see
        :meth:`last_completed`); ``own``: this environment's own runs only."""
        if not os.path.exists(self.db_path):
            return
        with closing(self._connect()) as conn:
            dropped = self.dropped_at(conn)
            where, args = (" AND env IS NULL", []) if self.env == "prod" else (
                " AND env = ? AND finished_at > ?" if own else " AND (env IS NULL OR (env = ? AND finished_at > ?))",
                [self.env, dropped])
            for column, values in (("period", periods), ("project_name", projects)):
                if values is not None:
                    values = list(values)
                    if not values:
                        return
                    where += f" AND {column} IN ({','.join('?' * len(values))})"
                    args += values
            yield from conn.execute(_LAST.format(where=where, columns=columns), args)

    def names_of(self, project_id: str, name: str) -> list[str]:
        """``name`` (the project's name now) and every other name runs of the project ``project_id`` were
        recorded under (a renamed project's earlier names)."""
        if not os.path.exists(self.db_path):
            return [name]
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT DISTINCT project_name FROM runs WHERE project_id = ? AND project_name != ? "
                                "ORDER BY project_name", (project_id, name)).fetchall()
        return [name] + [r[0] for r in rows]

    def last_published(self, project: str, period: str, project_id: Optional[str] = None) -> Optional[dict]:
        """The last completed run of ``project``'s ``period`` (as :meth:`last_completed` gives it), under any name
        the project ``project_id`` ran under when given (a renamed project's run under its earlier name)."""
        names = self.names_of(project_id, project) if project_id else [project]
        rows = self.last_completed([period], names)
        return max(rows, key=lambda r: (r["finished_at"] or "", r["run_id"])) if rows else None


# a record is a tree of plain values (no container holds itself): the encoder skips the check for cycles, a
# fifth of the time of a promotion's thousands of records
_RECORD_TEXT = json.JSONEncoder(default=str, check_circular=False)


def record_text(record: dict, plain: bool = False) -> str:
    """The text the run store keeps of ``record``: the standard library's ``json``'s, or, when ``plain`` (the caller
    knows it holds no float ``NaN`` or ``Infinity``: a record parsed from a text without them, as
    :meth:`PublishedTable.own_last_records` tells, and given only strings since), orjson's where it writes the same
    values (:mod:`.json_text`: a third of the time for the thousands of records a promotion copies). A search of the
    texts looks for both spellings (:func:`.restatements.superseded_by`)."""
    return plain_text(record, _RECORD_TEXT.encode) if plain else _RECORD_TEXT.encode(record)


# what upsert_run (and the closed-period check in its transaction, ClosureTable.refuse_closed) reads of a record
# besides its text: a caller holding the text may pass these keys only
ROW_KEYS = ("run_id", "parent_run_id", "project", "period", "status", "started_at", "finished_at", "error", "batch_id",
            "env", "restatement")


def upsert_run(conn, record: dict, stored: Optional[tuple] = None, plain: bool = False,
               text: Optional[str] = None) -> None:
    """Insert or replace the registry row of the run ``record`` (with what a stale check compares, when completed:
    ``stored``, those texts when the caller has them, else :func:`stored_inputs` of the record); ``plain``: as
    :func:`record_text`'s; ``text``: the record's text when written already (``record`` then need hold only
    :data:`ROW_KEYS`)."""
    inputs, files = (stored or stored_inputs(record)) if record["status"] == "completed" else (None, None)
    env = record.get("env")
    text = record_text(record, plain) if text is None else text
    conn.execute("INSERT OR REPLACE INTO runs (run_id, parent_run_id, project_id, project_name, period, status, "
                 "started_at, finished_at, error, record, batch_id, inputs, input_files, env) "
                 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", (
                     record["run_id"], record.get("parent_run_id"), record["project"]["id"], record["project"]["name"],
                     record["period"]["identifier"], record["status"], record["started_at"], record.get("finished_at"),
                     record.get("error"), text, record.get("batch_id"), inputs, files,
                     None if env in (None, "prod") else env))
