"""Published outputs every reader opens (issue 46 point 1, docs/reading-outputs.md): a partition ``_period=P`` is
a real folder of hard links to one version's files, swapped atomically, copying no data
(adapters/commit/shown.py).

- Spark, pyarrow, pandas and DuckDB read every output format (Parquet, CSV, JSON, ORC; DuckDB has no ORC reader)
  of a destination published for two periods, and get the same rows.
- A reader listing and reading a partition in a loop while it is swapped between two versions always sees one
  version's rows, whole: never a mix, never an empty partition.
- A partition published by an earlier release (a symbolic link) is read and replaced as before, and becomes a
  real folder; the version it showed is kept until the commit retires it.
"""
from __future__ import annotations

import os
import threading
from decimal import Decimal as D

import pytest

from ledgerflow.adapters.commit import shown as shown_module
from ledgerflow.adapters.commit import renames, staging, swaps, sweeps
from ledgerflow.adapters.layout.partition_paths import partition_link, versions_dir
from partition_support import shown
from cli_support import add_project, run_ok, write

SALES_ID = "0e000000-0000-4000-8000-000000000046"
SCHEMA = "item_id string, qty int, price decimal(18,2), _period string"
DATA = [("S-1", 1, D("1.10"), "2026-01"), ("S-2", 2, D("2.20"), "2026-01"), ("F-1", 4, D("4.40"), "2026-02")]
FORMATS = ("parquet", "csv", "json", "orc")

LEDGERFLOW_YML = """
name: readers
default_resolver: local
resolvers:
  local:
    rules:
      - name: files
        strategy: {type: path, path: "data/{{dataset}}/v{{version}}", format: parquet}
"""

SALES_YML = f"""
id: {SALES_ID}
name: sales
status: active
versions: [{{version: 1}}]
main_table:
  name: sales
  temporal_mode: period
  columns:
    - {{name: item_id, type: string}}
    - {{name: qty, type: integer}}
    - {{name: price, type: "decimal(18,2)"}}
"""

OPERATIONS = "\n".join(
    f"- {{seq: {i}, name: To {fmt}, type: output, arguments: {{destination: {{path: out/{fmt}, format: {fmt}}}, "
    f"columns: [item_id, qty, price]}}}}" for i, fmt in enumerate(FORMATS, start=1))

EXPECTED = sorted((r[0], r[1], r[2], r[3]) for r in DATA)


@pytest.fixture(scope="module")
def published(spark, tmp_path_factory):
    """A workspace whose four outputs were published for 2026-01 and 2026-02 (a swap of a published partition is
    tested without Spark below, and by every commit test)."""
    root = tmp_path_factory.mktemp("readers") / "ws"
    write(root, "ledgerflow.yml", LEDGERFLOW_YML)
    write(root, "datasets/sales.yml", SALES_YML)
    spark.createDataFrame(DATA, SCHEMA).write.parquet(str(root / "data" / "sales" / "v1"))
    add_project(root, "publish", OPERATIONS, input_dataset="sales")
    for period in ("2026-01", "2026-02"):
        run_ok(root, "publish", period)
    return root


def _rows(tuples) -> list[tuple]:
    return sorted((str(i), int(q), D(str(p)).quantize(D("0.01")), str(per)) for i, q, p, per in tuples)


def _spark(spark, folder: str, fmt: str) -> list[tuple]:
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true")
    df = reader.load(folder)
    return _rows(df.select("item_id", "qty", "price", "_period").collect())


def _pyarrow(folder: str, fmt: str) -> list[tuple]:
    import pyarrow.dataset as ds
    # `_period=` folders start with "_", which pyarrow skips by default (as it skips `_SUCCESS`): keep only "."
    table = ds.dataset(folder, format=fmt, partitioning="hive", ignore_prefixes=["."]).to_table()
    cols = [table[c].to_pylist() for c in ("item_id", "qty", "price", "_period")]
    return _rows(zip(*cols))


def _pandas(folder: str, fmt: str) -> list[tuple]:
    import pandas as pd
    if fmt == "parquet":
        frame = pd.read_parquet(folder, ignore_prefixes=["."])
    elif fmt == "orc":
        import pyarrow.dataset as ds
        frame = ds.dataset(folder, format="orc", partitioning="hive", ignore_prefixes=["."]).to_table().to_pandas()
    else:  # a folder of CSV or JSON Lines files: one file at a time, the period from its folder
        parts = []
        for part in sorted(os.listdir(folder)):
            if not part.startswith("_period="):
                continue
            for name in sorted(os.listdir(os.path.join(folder, part))):
                if name.endswith("." + fmt) or name.endswith(f".{fmt}.gz") or (fmt == "json" and ".json" in name):
                    path = os.path.join(folder, part, name)
                    one = pd.read_csv(path, dtype=str) if fmt == "csv" else pd.read_json(path, lines=True, dtype=False)
                    parts.append(one.assign(_period=part.split("=", 1)[1]))
        frame = pd.concat(parts)
    return _rows(frame[["item_id", "qty", "price", "_period"]].itertuples(index=False))


def _duckdb(folder: str, fmt: str) -> list[tuple]:
    import duckdb
    read = {"parquet": "read_parquet", "csv": "read_csv", "json": "read_json"}[fmt]
    query = (f"SELECT item_id, qty, price, _period FROM {read}(?, hive_partitioning = true)")
    return _rows(duckdb.execute(query, [os.path.join(folder, "*", f"*.{fmt}*")]).fetchall())


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_reader_reads_the_same_rows_from_real_folders(spark, published, fmt):
    folder = str(published / "out" / fmt)
    for period in ("2026-01", "2026-02"):
        partition = partition_link(folder, period)
        assert os.path.isdir(partition) and not os.path.islink(partition)  # a real folder, no link to follow
        version = shown(partition)
        data = sorted(n for n in os.listdir(partition) if not n.startswith("."))
        assert data and all(os.path.samefile(os.path.join(partition, n), os.path.join(version, n)) for n in data)
    assert _spark(spark, folder, fmt) == EXPECTED
    assert _pyarrow(folder, fmt) == EXPECTED
    assert _pandas(folder, fmt) == EXPECTED
    if fmt != "orc":  # DuckDB reads no ORC
        assert _duckdb(folder, fmt) == EXPECTED


def test_a_published_partition_leaves_its_one_version_and_no_folder_of_links_or_probe(published):
    folder = str(published / "out" / "parquet")
    versions = versions_dir(folder, "2026-01")
    assert [n for n in os.listdir(versions) if not n.startswith(".")] == [os.path.basename(shown(
        partition_link(folder, "2026-01")))]
    assert not [n for n in os.listdir(versions) if n.startswith(shown_module.SHOWING)]


def _version(root, name: str, rows: int) -> str:
    """A version folder of ``rows`` one-line files (the rows a reader must see whole), named after the version as
    Spark names each write's files after its job."""
    folder = versions_dir(str(root), "2026-01") + "/" + name
    os.makedirs(folder)
    for i in range(rows):
        with open(os.path.join(folder, f"part-{i:03d}-{name}.csv"), "w") as fh:
            fh.write(f"{name}\n")
    return folder


def test_a_reader_looping_while_partitions_swap_sees_one_version_whole(tmp_path):
    root = tmp_path / "out"
    a, b = _version(root, "run-a", 7), _version(root, "run-b", 3)
    link = partition_link(str(root), "2026-01")
    swaps.commit([staging.Staged(link, a)])
    seen: list[tuple] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                names = sorted(n for n in os.listdir(link) if not n.startswith("."))
                seen.append(tuple(open(os.path.join(link, n)).read() for n in names))
            except FileNotFoundError:
                # listed before an exchange, opened after it by the partition's path: the file is not in the new
                # version (its name is the old write's), so the read fails and is retried, as Spark retries a
                # file that vanished; it never reads another version's file under the old name
                continue
    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(150):
            shown_module.show(link, b if i % 2 == 0 else a)
    finally:
        stop.set()
        reader.join()
    # the folders exchanged out stay until the commit ends (a reader that opened one reads it whole), then go
    assert len(sweeps.sweep(versions_dir(str(root), "2026-01"))) == 150
    assert sorted(n for n in os.listdir(versions_dir(str(root), "2026-01"))) == ["run-a", "run-b"]
    assert len(seen) > 20
    whole = {("run-a\n",) * 7, ("run-b\n",) * 3}
    assert set(seen) <= whole, set(seen) - whole  # never empty, never a mix
    assert sorted(os.listdir(a)) == [f"part-{i:03d}-run-a.csv" for i in range(7)]  # no version changed


def test_a_partition_published_as_a_link_is_read_replaced_and_becomes_a_folder(tmp_path):
    root = tmp_path / "out"
    old, new = _version(root, "run-0", 2), _version(root, "run-1", 1)
    link = partition_link(str(root), "2026-01")
    os.symlink(os.path.relpath(old, str(root)), link)  # as an earlier release published it
    assert shown(link) == os.path.realpath(old)
    journal = swaps.commit([staging.Staged(link, new)])
    assert journal[0]["previous"] == os.path.realpath(old)
    assert not os.path.islink(link) and shown(link) == os.path.realpath(new)
    assert not os.path.exists(old)  # retired after the commit, as before
    assert shown_module.convert(link, versions_dir(str(root), "2026-01")) is False  # a folder already


def test_a_link_partition_converts_in_place_showing_the_same_rows(tmp_path):
    root = tmp_path / "out"
    old = _version(root, "run-0", 2)
    link = partition_link(str(root), "2026-01")
    os.symlink(os.path.relpath(old, str(root)), link)
    inodes = sorted(os.stat(os.path.join(old, n)).st_ino for n in os.listdir(old))
    assert shown_module.convert(link, versions_dir(str(root), "2026-01")) is True
    assert not os.path.islink(link) and shown(link) == os.path.realpath(old)
    assert sorted(os.stat(os.path.join(link, n)).st_ino for n in os.listdir(link) if not n.startswith(".")) == inodes


def test_a_folder_that_only_looks_like_a_shown_one_is_never_replaced(tmp_path):
    from ledgerflow.adapters.commit.partitions import UnsafeDestination
    root = tmp_path / "out"
    old, new = _version(root, "run-0", 2), _version(root, "run-1", 1)
    link = partition_link(str(root), "2026-01")
    swaps.commit([staging.Staged(link, old)])
    os.remove(os.path.join(link, "part-001-run-0.csv"))
    with open(os.path.join(link, "part-001-run-0.csv"), "w") as fh:  # someone else's file, under the same name
        fh.write("theirs\n")
    with pytest.raises(UnsafeDestination, match="which ledgerflow did not create"):
        swaps.commit([staging.Staged(link, new)])
    assert open(os.path.join(link, "part-001-run-0.csv")).read() == "theirs\n"  # nothing replaced or deleted


@pytest.mark.parametrize("tamper", ["marker names another folder", "marker climbs out", "marker is a link",
                                    "a file is a link", "a file added", "no marker"])
def test_a_shown_folder_is_ours_only_while_it_mirrors_the_version_its_marker_names(tmp_path, tamper):
    root = tmp_path / "out"
    old = _version(root, "run-0", 2)
    elsewhere = _version(tmp_path / "elsewhere", "run-0", 2)
    link = partition_link(str(root), "2026-01")
    swaps.commit([staging.Staged(link, old)])
    versions = versions_dir(str(root), "2026-01")
    assert shown_module.shown_version(link, versions) == os.path.realpath(old)
    marker = os.path.join(link, shown_module.MARKER)
    name = os.path.join(link, "part-000-run-0.csv")
    if tamper == "marker names another folder":
        open(marker, "w").write("run-9\n")
    elif tamper == "marker climbs out":
        open(marker, "w").write(f"../../../elsewhere/.lf_versions/_period=2026-01/run-0\n")
    elif tamper == "marker is a link":
        os.remove(marker)
        os.symlink(os.path.join(elsewhere, "part-000-run-0.csv"), marker)
    elif tamper == "a file is a link":
        os.remove(name)
        os.symlink(os.path.join(old, "part-000-run-0.csv"), name)
    elif tamper == "a file added":
        open(os.path.join(link, "theirs.csv"), "w").write("theirs\n")
    else:
        os.remove(marker)
    assert shown_module.shown_version(link, versions) is None
    from ledgerflow.adapters.commit.partitions import UnsafeDestination
    new = _version(root, "run-1", 1)
    with pytest.raises(UnsafeDestination, match="which ledgerflow did not create"):
        swaps.commit([staging.Staged(link, new)])
    assert os.path.isdir(old) and os.path.isdir(link)  # nothing deleted, nothing exchanged out


def test_a_leftover_folder_holding_a_file_with_no_other_name_is_never_swept(tmp_path):
    root = tmp_path / "out"
    old = _version(root, "run-0", 2)
    versions = versions_dir(str(root), "2026-01")
    ours = shown_module.build(old)  # as a process that died between building and exchanging leaves it
    theirs = os.path.join(versions, shown_module.SHOWING + "run-0.abcdef12")
    os.makedirs(theirs)
    open(os.path.join(theirs, "only-copy.csv"), "w").write("data\n")
    assert sweeps.sweep(versions) == [ours]
    assert open(os.path.join(theirs, "only-copy.csv")).read() == "data\n"
    assert sorted(os.listdir(old)) == ["part-000-run-0.csv", "part-001-run-0.csv"]


def test_a_rollback_of_a_partition_someone_added_a_file_to_deletes_nothing_and_says_so(tmp_path):
    """A run died after its swap; before recovery, a program left a file in the partition (an editor's lock
    file): the rollback keeps the partition and both versions, and reports it, rather than take the partition
    for someone else's and delete the staged version it shows."""
    root = tmp_path / "out"
    old, new = _version(root, "run-0", 2), _version(root, "run-1", 1)
    link = partition_link(str(root), "2026-01")
    swaps.commit([staging.Staged(link, old)])
    journal: list[dict] = []
    swaps.swap_in([staging.Staged(link, new)], journal)
    open(os.path.join(link, ".~lock.part-000-run-1.csv#"), "w").write("x")
    rolled, kept, problems = swaps.roll_back(journal)
    assert (rolled, kept) == ([], [link]) and "with files added or replaced since" in problems[0]
    assert os.path.isdir(old) and os.path.isdir(new)
    assert open(os.path.join(link, "part-000-run-1.csv")).read() == "run-1\n"


def test_retiring_a_commit_never_sweeps_a_folder_another_run_built(tmp_path):
    root = tmp_path / "out"
    old, new, other = _version(root, "run-0", 1), _version(root, "run-1", 1), _version(root, "run-2", 1)
    link = partition_link(str(root), "2026-01")
    swaps.commit([staging.Staged(link, old)])
    building = shown_module.build(other)  # another run, building its folder of links right now
    swaps.commit([staging.Staged(link, new)])
    assert os.path.isdir(building) and shown(link) == os.path.realpath(new)
    assert not [n for n in os.listdir(versions_dir(str(root), "2026-01"))
                if n.startswith(shown_module.SHOWING) and os.path.join(versions_dir(str(root), "2026-01"), n) != building]


def test_without_exchange_a_partition_is_a_link_and_a_folder_is_never_left_unswappable(tmp_path, monkeypatch):
    root = tmp_path / "out"
    old, new = _version(root, "run-0", 1), _version(root, "run-1", 1)
    link = partition_link(str(root), "2026-01")
    real = renames._renameat2

    def no_exchange(source, target, flags):
        if flags == renames._RENAME_EXCHANGE:
            raise renames.Unsupported(22, "Invalid argument", source)
        return real(source, target, flags)
    monkeypatch.setattr(renames, "_renameat2", no_exchange)
    swaps.commit([staging.Staged(link, old)])  # a file system that renames without replacing, but cannot exchange
    assert os.path.islink(link) and shown(link) == os.path.realpath(old)
    swaps.commit([staging.Staged(link, new)])
    assert os.path.islink(link) and shown(link) == os.path.realpath(new)


def test_a_folder_partition_that_can_no_longer_be_exchanged_fails_clearly(tmp_path, monkeypatch):
    root = tmp_path / "out"
    old, new = _version(root, "run-0", 1), _version(root, "run-1", 1)
    link = partition_link(str(root), "2026-01")
    swaps.commit([staging.Staged(link, old)])
    monkeypatch.setattr(os, "link", lambda *a, **k: (_ for _ in ()).throw(OSError(1, "Operation not permitted")))
    with pytest.raises(shown_module.CannotShow, match="no longer makes hard links"):
        swaps.commit([staging.Staged(link, new)])
    assert shown(link) == os.path.realpath(old) and not os.path.islink(link)


def test_sweep_never_follows_a_linked_versions_folder(tmp_path):
    root = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    version = _version(elsewhere, "run-0", 1)
    built = shown_module.build(version)
    os.makedirs(root / ".lf_versions")
    os.symlink(os.path.dirname(version), root / ".lf_versions" / "_period=2026-01")
    assert sweeps.sweep(str(root / ".lf_versions" / "_period=2026-01")) == []
    assert os.path.isdir(built)


def test_a_partition_replaced_while_its_new_folder_was_built_is_put_back_untouched(tmp_path, monkeypatch):
    root = tmp_path / "out"
    old, new = _version(root, "run-0", 1), _version(root, "run-1", 1)
    link = partition_link(str(root), "2026-01")
    swaps.commit([staging.Staged(link, old)])
    real_build = shown_module.build

    def build_then_replaced(version, shown_by=None, files=None):
        folder = real_build(version, shown_by, files)
        os.rename(link, str(tmp_path / "moved"))  # someone moves the partition away and puts their own there
        os.makedirs(link)
        open(os.path.join(link, "theirs.csv"), "w").write("theirs\n")
        return folder
    monkeypatch.setattr(shown_module, "build", build_then_replaced)
    with pytest.raises(shown_module.CannotShow, match="was replaced while"):
        shown_module.show(link, new)
    assert os.listdir(link) == ["theirs.csv"]  # theirs, back where they put it
    assert not [n for n in os.listdir(versions_dir(str(root), "2026-01")) if n.startswith(shown_module.SHOWING)]
