"""Input fingerprints: what a run read, recorded so that a replay can tell whether it still reads the same.

A run records one fingerprint per resolved location (``resolver_snapshot.input_fingerprints``), taken
when the inputs are resolved, before Spark executes anything, and checked again before the run publishes
(:mod:`.read_check`, which also takes a fused range's, once for the range):

- a local path (absolute or ``file:``): every file Spark would read under it — relative path, size,
  modification time (ns) and, for files up to :data:`HASH_FILE_LIMIT` while the run's
  :data:`HASH_RUN_BUDGET` lasts, a sha256 of the content. The walk follows symbolic links as
  Spark's local file system does (a registered dataset's ``_period=`` partitions are links), never
  descends into a folder that is its own ancestor (a cycle), and skips what Spark's file index skips:
  names starting with ``.`` or with ``_`` unless they hold ``=`` (``_SUCCESS``, ``.part.crc``,
  ``.lf_versions``; ``_period=2026-01`` is read), and ``*._COPYING_``.
- a catalog table: its provider and location from ``DESCRIBE TABLE EXTENDED``, the files of a local
  location fingerprinted as above, and the Delta version when the table is a Delta table; a table
  with neither (a view, remote storage) is recorded as not checked.
- other URIs (``hdfs:``, ``s3a:`` ...): recorded as not checked; a replay warns, naming them.
- in-memory DataFrames (Python API): recorded as not checked (such a run cannot be replayed).

Why hash up to 16 MiB per file and 256 MiB per run: sha256 runs at about 1.4 GB/s here, so the budget
costs at most about 0.2 s per run on files Spark reads right after (so they are in the page cache).
The files people edit by hand — rates, accounts, monthly ledger extracts — are small CSVs and get a
hash, so touching a file without changing it is not a change, and an edit that keeps size and mtime
is. Big files (Parquet parts written by jobs) are compared by size and mtime: a job that rewrites
one gives it a new mtime. A process hashes a file once while its device, inode, size, mtime and
ctime stay the same (the runs of a range read the same files; an edit always moves the ctime).
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ...compiler.resolver import Resolution, ResolvedLocation
from .files import spark_skips  # a _metadata* file is listed by Spark's file index but never read

HASH_FILE_LIMIT = 16 << 20  # files up to this size get a sha256
HASH_RUN_BUDGET = 256 << 20  # bytes hashed per run at most (files beyond it: size + mtime only)
MAX_LISTED_FILES = 10_000  # beyond this a location records its file count and listing digest only

_FILE_URI = re.compile(r"^file:(//[^/]*)?")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class HashBudget:
    """Bytes that may still be hashed in one run (shared by all its locations, in input order)."""

    def __init__(self, total: int = HASH_RUN_BUDGET):
        self.remaining = total

    def take(self, size: int) -> bool:
        """Whether a file of ``size`` bytes gets a hash (and charge it)."""
        if size > HASH_FILE_LIMIT or size > self.remaining:
            return False
        self.remaining -= size
        return True


def local_path(target: str) -> Optional[str]:
    """The local file system path of ``target`` (absolute path or ``file:`` URI), else None."""
    if target.startswith("file:"):
        rest = _FILE_URI.sub("", target)
        return rest if rest.startswith("/") else "/" + rest
    if target.startswith("/"):
        return target
    return None


def local_bytes(target: str) -> Optional[int]:
    """The bytes of every file Spark reads at the local ``target`` (a file or a folder), or None when it
    is not local or cannot be listed."""
    path = local_path(target)
    if path is None:
        return None
    if os.path.isfile(path):
        return os.path.getsize(path)
    if not os.path.isdir(path):
        return None
    return sum(st.st_size for _, st in _walk(path)[0] if st is not None)


# sha256s this process computed, by what identifies a file's content on this machine. A change of content
# changes the status-change time (ctime), which no program can set back, unlike mtime: a file edited to keep
# its size and mtime is hashed again. The runs of a range read the same locations; each period's run
# fingerprinted them anew (pipeline P, 12 months of a 10M-row flat input: 12 x 0.13 s).
# A file whose ctime is this recent is not remembered ("racy" as git calls it): the kernel's clock for file
# times ticks every few ms, so an edit in the same tick as the hash would keep the same ctime.
_HASHED: dict[tuple, str] = {}
_HASHED_LIMIT = 100_000
RACY_NS = 2_000_000_000


def _file_sha256(path: str, st: os.stat_result) -> Optional[str]:
    """The sha256 of the file at ``path`` whose status (links followed) is ``st``; computed once per process
    for a file that has not changed since."""
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _HASHED.get(key)
    if known is not None:
        return known
    digest = _sha256(path)
    try:
        unchanged = os.stat(path).st_ctime_ns == st.st_ctime_ns  # not changed while it was read
    except OSError:
        unchanged = False
    unchanged = unchanged and st.st_ctime_ns < time.time_ns() - RACY_NS
    if digest is not None and unchanged:
        if len(_HASHED) >= _HASHED_LIMIT:
            _HASHED.clear()
        _HASHED[key] = digest
    return digest


def _sha256(path: str) -> Optional[str]:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _walk(root: str) -> tuple[list[tuple[str, Optional[os.stat_result]]], list[str]]:
    """(relative path, stat of what it resolves to or None when dangling) of every file Spark reads
    under the folder ``root``, and the relative paths of links skipped because they close a cycle."""
    found: list[tuple[str, Optional[os.stat_result]]] = []
    cycles: list[str] = []
    stack = [(root, "", frozenset({os.path.realpath(root)}))]
    while stack:
        folder, prefix, ancestors = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            try:
                st = os.stat(entry.path)  # follows links, as Spark does
            except OSError:
                if not spark_skips(entry.name):
                    found.append((rel, None))  # a dangling link: Spark would fail reading it
                continue
            if spark_skips(entry.name, stat.S_ISDIR(st.st_mode)):
                continue
            if stat.S_ISDIR(st.st_mode):
                real = os.path.realpath(entry.path)
                if real in ancestors:
                    cycles.append(rel)
                    continue
                stack.append((entry.path, rel + "/", ancestors | {real}))
            else:
                found.append((rel, st))
    found.sort(key=lambda item: item[0])
    return found, sorted(cycles)


def fingerprint_path(path: str, budget: Optional[HashBudget] = None) -> dict:
    """The fingerprint of a local file or folder: ``exists``, ``type``, ``file_count``, ``total_bytes``,
    ``files`` ([{path, size, mtime_ns, sha256}], or None beyond :data:`MAX_LISTED_FILES`) and
    ``listing_sha256`` (a digest of the whole listing)."""
    budget = budget or HashBudget()
    if not os.path.exists(path):
        return {"exists": False}
    if os.path.isdir(path):
        listed, cycles = _walk(path)
        kind = "directory"
    else:
        listed, cycles = [(os.path.basename(path), os.stat(path))], []
        kind = "file"
    files = []
    for rel, st in listed:
        if st is None:
            files.append({"path": rel, "size": None, "mtime_ns": None, "sha256": None})
            continue
        full = os.path.join(path, rel) if kind == "directory" else path
        sha = _file_sha256(full, st) if budget.take(st.st_size) else None
        files.append({"path": rel, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha})
    out = {"exists": True, "type": kind, "file_count": len(files), "total_bytes": sum(f["size"] or 0 for f in files),
           "listing_sha256": hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest(),
           "files": files if len(files) <= MAX_LISTED_FILES else None}
    if cycles:
        out["cycles_skipped"] = cycles
    return out


def _quote_table(name: str) -> str:
    return ".".join("`" + part.replace("`", "``") + "`" for part in name.split("."))


def fingerprint_table(spark, table: str, budget: Optional[HashBudget] = None) -> dict:
    """The fingerprint of a catalog table: provider, location, Delta version if any, and the files of a
    local location; ``checked`` is False (with a ``reason``) when none of that identifies its data."""
    try:
        if not spark.catalog.tableExists(table):
            return {"checked": True, "exists": False}
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {_quote_table(table)}").collect()
    except Exception as exc:  # noqa: BLE001 - any catalog failure just means "cannot check"
        return {"checked": False, "reason": f"could not describe table {table}: {_first_line(exc)}"}
    info = {str(r[0]).strip(): str(r[1] or "").strip() for r in rows if r[0]}
    out = {"checked": False, "exists": True, "provider": info.get("Provider"), "table_type": info.get("Type"),
           "table_location": info.get("Location")}
    if (out["provider"] or "").lower() == "delta":
        try:
            last = spark.sql(f"DESCRIBE HISTORY {_quote_table(table)} LIMIT 1").collect()[0]
            out["delta_version"] = int(last["version"])
            out["checked"] = True
        except Exception:  # noqa: BLE001 - Delta not installed or history unreadable
            pass
    local = local_path(out["table_location"] or "")
    if local is not None:
        files = fingerprint_path(local, budget)
        files.pop("exists", None)
        out.update(files)
        out["checked"] = True
    if not out["checked"]:
        where = out["table_location"] or "no location (a view?)"
        out["reason"] = f"table {table} has {where} and no Delta version: its data is not fingerprinted"
    return out


def fingerprint_location(loc: ResolvedLocation, session: Optional[Callable[[], object]] = None,
                         budget: Optional[HashBudget] = None) -> dict:
    """The fingerprint fields of one resolved location (see the module docstring)."""
    if loc.kind == "memory":
        return {"kind": "memory", "checked": False,
                "reason": "an in-memory DataFrame (Python API) cannot be read again"}
    if loc.kind == "table":
        if session is None:
            return {"kind": "table", "checked": False, "reason": "no Spark session to describe the table"}
        try:
            spark = session()
        except Exception as exc:  # noqa: BLE001 - the run itself will report Spark not starting
            return {"kind": "table", "checked": False, "reason": f"Spark did not start: {_first_line(exc)}"}
        return {"kind": "table", **fingerprint_table(spark, loc.target, budget)}
    local = local_path(loc.target)
    if local is None:
        scheme = _URI.match(loc.target)
        return {"kind": "uri", "checked": False,
                "reason": f"{scheme.group(0) if scheme else 'this'} locations are not fingerprinted"}
    return {"kind": "path", "checked": True, **fingerprint_path(local, budget)}


def fingerprint_inputs(resolutions: dict[str, Resolution],
                       session: Optional[Callable[[], object]] = None) -> list[dict]:
    """One fingerprint per location of every resolution (view -> Resolution), in order, sharing one hash budget."""
    budget = HashBudget()
    out = []
    for view, res in resolutions.items():
        for loc in res.locations:
            out.append({"view": view, "dataset": res.dataset_name, "dataset_version": res.version,
                        "location": loc.target, **fingerprint_location(loc, session, budget)})
    return out


# ------------------------------------------------------------------------------------------- comparing
def _same_file(before: dict, after: dict) -> bool:
    if before.get("sha256") and after.get("sha256"):
        return before["sha256"] == after["sha256"]  # same bytes: a touched file is not a change
    return (before.get("size"), before.get("mtime_ns")) == (after.get("size"), after.get("mtime_ns"))


def _file_state(f: dict) -> dict:
    return {"size": f.get("size"), "mtime_ns": f.get("mtime_ns"), "sha256": f.get("sha256")}


def compare(before: dict, after: dict) -> Optional[dict]:
    """What changed between two fingerprints of one location, or None. The result has ``change``
    (``deleted`` | ``files`` | ``table``) and, for files, ``added``, ``removed`` and ``changed``
    ([{path, before, after}] with size, mtime_ns and sha256)."""
    if before.get("exists") is False:
        return None if after.get("exists") is False else {"change": "created"}
    if after.get("exists") is False:
        return {"change": "deleted"}
    table: list[str] = []
    for key in ("table_location", "provider", "delta_version"):
        if before.get(key) != after.get(key):
            table.append(f"{key} {before.get(key)} -> {after.get(key)}")
    if before.get("files") is None or after.get("files") is None:
        if before.get("listing_sha256") != after.get("listing_sha256"):
            change = {"change": "files", "listing": f"{before.get('file_count')} -> {after.get('file_count')} files, "
                                                    "listing differs (too many files to name them)"}
            return {**change, "table": table} if table else change
        return {"change": "table", "table": table} if table else None
    old = {f["path"]: f for f in before["files"]}
    new = {f["path"]: f for f in after["files"]}
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = [{"path": p, "before": _file_state(old[p]), "after": _file_state(new[p])}
               for p in sorted(set(old) & set(new)) if not _same_file(old[p], new[p])]
    if not (added or removed or changed or table):
        return None
    out = {"change": "files" if (added or removed or changed) else "table", "added": added, "removed": removed,
           "changed": changed}
    if table:
        out["table"] = table
    return out


def _when(ns: Optional[int]) -> str:
    if ns is None:
        return "?"
    return datetime.datetime.fromtimestamp(ns / 1e9, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def describe_change(item: dict) -> str:
    """One change as text: dataset, location and what happened to which files."""
    version = f" v{item['dataset_version']}" if item.get("dataset_version") is not None else ""
    head = f"dataset '{item['dataset']}'{version} at {item['location']}"
    if item["change"] == "deleted":
        return f"{head}: the location no longer exists"
    if item["change"] == "created":
        return f"{head}: the location exists now but did not when the run was recorded"
    parts = []
    if item.get("listing"):
        parts.append(item["listing"])
    for name in item.get("added") or []:
        parts.append(f"added {name}")
    for name in item.get("removed") or []:
        parts.append(f"removed {name}")
    for c in item.get("changed") or []:
        b, a = c["before"], c["after"]
        what = []
        if b["size"] != a["size"]:
            what.append(f"size {b['size']} -> {a['size']}")
        if b["mtime_ns"] != a["mtime_ns"]:
            what.append(f"modified {_when(b['mtime_ns'])} -> {_when(a['mtime_ns'])}")
        if b["sha256"] and a["sha256"] and b["sha256"] != a["sha256"]:
            what.append(f"sha256 {b['sha256'][:12]} -> {a['sha256'][:12]}")
        parts.append(f"changed {c['path']} ({', '.join(what) or 'content'})")
    parts += [f"table {t}" for t in item.get("table") or []]
    return f"{head}: {'; '.join(parts)}"


@dataclass
class ReplayCheck:
    """The result of comparing a recorded run's input fingerprints with the inputs as they are now."""

    current: list[dict]  # fingerprints of the inputs now (the replay's own record stores them)
    changed: list[dict] = field(default_factory=list)  # {view, dataset, dataset_version, location, change, ...}
    unverified: list[dict] = field(default_factory=list)  # {view, dataset, dataset_version, location, reason}
    recorded: bool = True  # False: the run was recorded without fingerprints

    @property
    def deleted(self) -> list[dict]:
        """The changes that make a replay impossible: a location that no longer exists."""
        return [c for c in self.changed if c["change"] == "deleted"]


def check_replay(recorded: Optional[list[dict]], resolutions: dict[str, Resolution],
                 session: Optional[Callable[[], object]] = None) -> ReplayCheck:
    """Fingerprint the recorded ``resolutions`` now and compare with ``recorded`` (None: an old record
    without fingerprints; then only a deleted local location is detected). ``session`` starts Spark
    only when a recorded catalog table fingerprint needs checking."""
    needs_spark = any(fp.get("kind") == "table" and fp.get("checked") for fp in recorded or [])
    current = fingerprint_inputs(resolutions, session if needs_spark else None)
    check = ReplayCheck(current, recorded=recorded is not None)
    if recorded is None:
        for fp in current:
            ident = {k: fp[k] for k in ("view", "dataset", "dataset_version", "location")}
            if fp.get("checked") and fp.get("exists") is False:
                check.changed.append({**ident, "change": "deleted"})
            elif fp["kind"] != "memory":
                check.unverified.append({**ident, "reason": "the run was recorded without input fingerprints"})
        return check
    before = {(fp["view"], fp["location"]): fp for fp in recorded}
    for fp in current:
        ident = {k: fp[k] for k in ("view", "dataset", "dataset_version", "location")}
        old = before.get((fp["view"], fp["location"]))
        if fp["kind"] == "memory":
            continue  # not replayable: loading it fails as it always did
        if old is None or not old.get("checked"):
            reason = (old or {}).get("reason") or "no fingerprint was recorded for this location"
            if fp.get("exists") is False:  # whatever was recorded, a missing local location cannot be read
                check.changed.append({**ident, "change": "deleted"})
            else:
                check.unverified.append({**ident, "reason": reason})
            continue
        if not fp.get("checked"):
            check.unverified.append({**ident, "reason": fp.get("reason") or "cannot be fingerprinted now"})
            continue
        diff = compare(old, fp)
        if diff is not None:
            check.changed.append({**ident, **diff})
    return check


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
