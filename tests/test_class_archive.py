"""The driver JVM's class archive (adapters/spark/class_archive.py): written once, published only whole,
mapped by later JVMs, never taken from a place others can write, and never able to stop a run."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from ledgerflow.adapters.spark import class_archive as ca

MAGIC = struct.pack("<I", 0xF00BABA8)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty private cache folder, the archive on."""
    root = tmp_path / "cache"
    monkeypatch.setenv("LEDGERFLOW_CACHE_DIR", str(root))
    monkeypatch.setenv("LEDGERFLOW_JVM_ARCHIVE", "on")
    return root


def _archive(folder, stem: str, body: bytes = b"x" * 100, size: int | None = None) -> str:
    data = MAGIC + body
    path = os.path.join(folder, f"{stem}-{len(data) if size is None else size}.jsa")
    with open(path, "wb") as fh:
        fh.write(data)
    os.chmod(path, 0o444)
    return path


def test_without_an_archive_the_jvm_writes_one_and_a_second_process_does_not(cache):
    plan = ca.plan("run", "-Xss16m")
    assert plan.partial and plan.archive is None
    assert "-XX:ArchiveClassesAtExit=" + plan.partial in plan.options
    assert os.stat(cache / "jvm").st_mode & 0o777 == 0o700
    with open(plan.lock) as fh:
        assert fh.read() == str(os.getpid())
    assert ca.plan("run") is None  # the lock is held by a live process (this one)
    ca.release(plan)
    assert not os.path.exists(plan.lock)


def test_publish_renames_a_whole_archive_with_its_size_and_keeps_the_three_used_last(cache):
    plan = ca.plan("test")
    others = [_archive(plan.folder, f"test-{i:016x}") for i in range(3)]  # other installations
    for age, path in enumerate(others):
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    old = others[0]  # used longest ago
    other_kind = _archive(plan.folder, "run-0123456789abcdef")
    with open(plan.partial, "wb") as fh:
        fh.write(MAGIC + b"y" * 1000)
    final = ca.publish(plan, None)
    assert final == os.path.join(plan.folder, f"{plan.stem}-1004.jsa")
    assert not os.path.exists(plan.partial) and not os.path.exists(plan.lock) and not os.path.exists(old)
    assert os.path.exists(other_kind) and os.path.exists(others[1]) and os.path.exists(others[2])
    again = ca.plan("test")
    assert again.archive == final and again.partial is None
    assert "-XX:SharedArchiveFile=" + final in again.options and ca.JVM_LOG in again.options


def test_a_partial_file_that_is_no_archive_is_not_published(cache):
    plan = ca.plan("run")
    with open(plan.partial, "wb") as fh:
        fh.write(b"\0" * 64)  # e.g. the JVM failed while writing
    assert ca.publish(plan, None) is None
    assert os.listdir(plan.folder) == []


def test_a_jvm_that_exits_with_an_error_publishes_nothing(cache):
    plan = ca.plan("run")
    with open(plan.partial, "wb") as fh:
        fh.write(MAGIC + b"z" * 10)
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(3)"],
                            stdin=subprocess.PIPE)
    assert ca.publish(plan, proc) is None
    assert os.listdir(plan.folder) == []


def test_a_truncated_archive_is_removed_and_written_again(cache):
    folder = cache / "jvm"
    folder.mkdir(parents=True, mode=0o700)
    stem = f"run-{ca._key()}"
    damaged = _archive(folder, stem, size=5000)  # its name says 5000 bytes: the disk filled up
    plan = ca.plan("run")
    assert not os.path.exists(damaged)
    assert plan.partial and plan.archive is None


def test_a_lock_left_by_a_dead_process_is_taken_over_with_its_partial_file(cache):
    folder = cache / "jvm"
    folder.mkdir(parents=True, mode=0o700)
    stem = f"test-{ca._key()}"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    (folder / f"{stem}.lock").write_text(dead)
    (folder / f"{stem}.{dead}.partial").write_bytes(MAGIC)
    plan = ca.plan("test")
    assert plan is not None and plan.partial.endswith(f".{os.getpid()}.partial")
    assert not (folder / f"{stem}.{dead}.partial").exists()
    ca.release(plan)


@pytest.mark.parametrize("how", ["folder writable by the group", "archive writable by others", "archive is a symlink"])
def test_an_archive_others_could_have_written_is_never_mapped(cache, tmp_path, how):
    folder = cache / "jvm"
    folder.mkdir(parents=True, mode=0o700)
    stem = f"run-{ca._key()}"
    if how == "folder writable by the group":
        _archive(folder, stem)
        os.chmod(folder, 0o770)
        assert ca.plan("run") is None
        return
    if how == "archive writable by others":
        os.chmod(_archive(folder, stem), 0o666)
    else:
        target = _archive(tmp_path, "elsewhere")
        os.symlink(target, folder / os.path.basename(target).replace("elsewhere", stem))
    plan = ca.plan("run")
    assert plan.archive is None and plan.partial  # writes its own instead
    ca.release(plan)


def test_off_ci_and_the_workspace_s_own_sharing_flags_turn_it_off(cache, monkeypatch):
    assert ca.plan("run", "-Xss16m -XX:SharedArchiveFile=/mine.jsa") is None
    assert ca.plan("run", "-Xshare:off") is None
    monkeypatch.setenv("LEDGERFLOW_JVM_ARCHIVE", "off")
    assert ca.plan("run") is None
    monkeypatch.setenv("LEDGERFLOW_JVM_ARCHIVE", "auto")
    monkeypatch.setenv("CI", "true")
    assert ca.plan("run") is None
    monkeypatch.delenv("CI")
    plan = ca.plan("run")
    assert plan is not None
    ca.release(plan)


def test_a_folder_with_spaces_is_quoted_for_spark_s_option_parser(tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGERFLOW_CACHE_DIR", str(tmp_path / "my cache"))
    monkeypatch.setenv("LEDGERFLOW_JVM_ARCHIVE", "on")
    plan = ca.plan("run")
    assert plan.options.startswith(f'"-XX:ArchiveClassesAtExit={plan.partial}" ')
    ca.release(plan)


# ------------------------------------------------------------------ end to end, real driver JVMs
def _test_command(ws, cache, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LEDGERFLOW_CACHE_DIR": str(cache), "LEDGERFLOW_JVM_ARCHIVE": "on"}
    return subprocess.run([sys.executable, "-m", "ledgerflow.adapters.cli", "--workspace", str(ws), "test",
                           "ts01_output_only", *extra], capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.spark  # starts a Spark JVM in a process of its own
def test_the_first_command_writes_the_archive_and_the_next_jvm_loads_spark_from_it(finance, tmp_path):
    cache = tmp_path / "cache"
    first = _test_command(finance, cache)
    assert first.returncode == 0, first.stdout + first.stderr
    # one line says why this command takes longer to end; the JVM's own warnings went to the log
    assert first.stderr == ca.NOTICE + "\n"
    folder = cache / "jvm"
    names = os.listdir(folder)
    assert len(names) == 1 and names[0].startswith("test-") and names[0].endswith(".jsa"), names
    assert (folder / names[0]).stat().st_size == int(names[0][:-4].rsplit("-", 1)[1])
    # The workspace's own -Xlog options apply after ledgerflow's: the class-loading log shows where
    # the next JVM took Spark's classes from.
    loaded = tmp_path / "classes.txt"
    config = finance / "ledgerflow.yml"
    config.write_text(config.read_text().replace(
        'conf: {spark.sql.shuffle.partitions: "4"}',
        f'conf: {{spark.sql.shuffle.partitions: "4", spark.driver.extraJavaOptions: "-Xss16m '
        f'-Xlog:class+load=info:file={loaded}"}}'))
    second = _test_command(finance, cache)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "1 passed" in second.stdout and second.stderr == ""
    lines = loaded.read_text().splitlines()
    assert any("org.apache.spark.SparkContext source: shared objects file (top)" in line for line in lines)
    assert os.listdir(folder) == names  # mapped, not written again
    # A damaged archive whose name still gives its size (a file system that kept the size but not
    # the data): the JVM dies mapping it (SIGBUS); the command starts a JVM without it and passes, the
    # archive is removed, the crash report stays in target/logs.
    data = (folder / names[0]).read_bytes()[:len((folder / names[0]).read_bytes()) // 3]
    os.remove(folder / names[0])
    damaged = folder / f"{names[0].rsplit('-', 1)[0]}-{len(data)}.jsa"
    damaged.write_bytes(data)
    os.chmod(damaged, 0o444)
    loaded.unlink()
    third = _test_command(finance, cache)
    assert third.returncode == 0, third.stdout + third.stderr
    assert "1 passed" in third.stdout and "error" not in third.stdout.lower() and third.stderr == ""
    assert not damaged.exists()
    assert list((finance / "target" / "logs").glob("hs_err_pid*.log")), "the crash report is in target/logs"
    assert not list(finance.glob("hs_err*")) and not list(Path.cwd().glob("hs_err*"))


def test_a_lock_is_never_seen_without_its_pid(cache, monkeypatch):
    """Another process that looks at the lock at any moment while this one takes it finds its pid: an empty
    lock reads as a dead holder, and both processes would write an archive."""
    folder = cache / "jvm"
    folder.mkdir(parents=True, mode=0o700)
    seen: list = []

    def look() -> None:
        for lock in folder.glob("*.lock"):
            seen.append(lock.read_text())

    real_open, real_link = os.open, os.link

    def spy_open(path, *args, **kwargs):
        fd = real_open(path, *args, **kwargs)
        look()
        return fd

    def spy_link(*args, **kwargs):
        real_link(*args, **kwargs)
        look()

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "link", spy_link)
    plan = ca.plan("test")
    monkeypatch.undo()
    assert plan is not None and seen and all(text == str(os.getpid()) for text in seen), seen
    assert not list(folder.glob("*.tmp"))
    ca.release(plan)
