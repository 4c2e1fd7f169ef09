"""Compiled scripts kept between invocations (``target/compiled.cache.json``, issue 48 point 3, issue 47 point 2):
``manifest`` and ``docs`` compile again only the projects whose SQL could differ, and a stale script is never
used: after each kind of change (a project's file, a dataset it reads, the columns an upstream project registers,
``ledgerflow.yml``, ledgerflow's own code) the manifest is byte for byte the one built without the cache."""
from __future__ import annotations

import json
import os

from cli_support import cli, describe

from ledgerflow.adapters.compile_out import script_cache
from ledgerflow.adapters.compile_out.script_cache import CACHE, ScriptCache
from ledgerflow.adapters.manifest.build import build_manifest
from ledgerflow.compiler.workspace import load_workspace


def _manifests(root) -> tuple[str, str, list[str]]:
    """(the manifest built through the cache, the one built without it, the projects the cache compiled)."""
    compiled: list[str] = []
    original = script_cache.compile_plan

    def counting(project, plan):
        compiled.append(project.name)
        return original(project, plan)

    script_cache.compile_plan = counting
    try:
        scripts = ScriptCache(str(root))
        cached, _ = build_manifest(load_workspace(str(root)), scripts)
        scripts.save()
    finally:
        script_cache.compile_plan = original
    fresh, _ = build_manifest(load_workspace(str(root)))
    return json.dumps(cached, sort_keys=True), json.dumps(fresh, sort_keys=True), sorted(compiled)


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def test_a_stale_script_is_never_used_and_a_kept_one_is(finance, monkeypatch):
    cached, fresh, compiled = _manifests(finance)
    projects = sorted(json.loads(fresh)["projects"])
    assert cached == fresh and compiled == projects  # the first build compiles each
    cached, fresh, compiled = _manifests(finance)
    assert cached == fresh and compiled == []  # nothing changed: every script kept

    _edit(finance / "projects" / "journal_controls.yml", "-transactions.amount_local", "-1 * transactions.amount_local")
    cached, fresh, compiled = _manifests(finance)
    assert cached == fresh and compiled == ["journal_controls"]

    _edit(finance / "datasets" / "accounts.yml", "    - {name: type, type: string}\n",
          "    - {name: type, type: \"decimal(10,2)\"}\n")  # a joined dataset's column changes type
    cached, fresh, compiled = _manifests(finance)
    assert cached == fresh and {"close_conversion", "ts05_aggregate_by_type"} <= set(compiled)

    # an upstream project registers one more column: its readers compile again
    _edit(finance / "projects" / "close_1_conversion.yml", "        - column: account_type\n",
          "        - column: account_note\n          expression: acct.type\n        - column: account_type\n")
    cached, fresh, compiled = _manifests(finance)
    assert cached == fresh and {"close_conversion", "close_consolidation"} <= set(compiled)

    _edit(finance / "ledgerflow.yml", "name:", "# a comment\nname:")
    cached, fresh, compiled = _manifests(finance)
    valid = sorted(name for name, p in json.loads(fresh)["projects"].items() if not p["errors"])
    assert cached == fresh and compiled == valid and "journal_controls" not in valid  # errors: never cached

    monkeypatch.setattr(script_cache, "code_fingerprint", lambda: "another ledgerflow")
    cached, fresh, compiled = _manifests(finance)
    assert cached == fresh and compiled == valid


def test_the_commands_keep_the_scripts_and_leave_a_cache_that_is_not_theirs_alone(finance, tmp_path):
    first = cli(finance, "manifest")
    assert first.exit_code == 0, describe(first)
    kept = json.loads((finance / CACHE).read_text())
    assert kept["version"] == 1 and len(kept["scripts"]) == len(json.loads(first.stdout)["projects"])
    docs = cli(finance, "docs", "--out", str(tmp_path / "site"))
    assert docs.exit_code == 0, describe(docs)
    assert json.loads((finance / CACHE).read_text()) == kept  # the same scripts: nothing rewritten

    os.remove(finance / CACHE)
    other = tmp_path / "elsewhere.json"
    other.write_text("not ours")
    os.symlink(other, finance / CACHE)  # a link at the cache's name: never followed, never replaced
    (finance / "target" / "manifest.cache.json").unlink()
    again = cli(finance, "manifest")
    assert again.exit_code == 0 and again.stdout == first.stdout, describe(again)
    assert other.read_text() == "not ours" and os.path.islink(finance / CACHE)


def test_a_first_build_compiles_on_two_cores_what_one_would(tmp_path, monkeypatch):
    """Past ``PARALLEL_MIN_PROJECTS`` scripts to compile, a forked process compiles half: the manifest is the one
    compiled in one process, and every script is kept."""
    import multiprocessing

    from bench.workspace_scale import chain
    root = tmp_path / "chain"
    chain(root, script_cache.PARALLEL_MIN_PROJECTS + 20)
    contexts = []
    real = multiprocessing.get_context
    monkeypatch.setattr(multiprocessing, "get_context", lambda *a: contexts.append(a) or real(*a))
    scripts = ScriptCache(str(root))
    cached, _ = build_manifest(load_workspace(str(root)), scripts)
    scripts.save()
    assert contexts == [("fork",)] or (os.cpu_count() or 1) < 2
    fresh, _ = build_manifest(load_workspace(str(root)))
    assert json.dumps(cached, sort_keys=True) == json.dumps(fresh, sort_keys=True)
    kept = json.loads((root / CACHE).read_text())["scripts"]
    assert sorted(kept.values()) == sorted(ScriptCache(str(root)).kept.values())
    assert len(kept) == script_cache.PARALLEL_MIN_PROJECTS + 20


def test_a_cache_that_may_not_fork_compiles_in_its_own_process(tmp_path, monkeypatch):
    """``ScriptCache(root, fork=False)`` (a Dagster code server, which has threads) never forks, however many
    scripts are missing."""
    import multiprocessing

    from bench.workspace_scale import chain
    root = tmp_path / "chain"
    chain(root, script_cache.PARALLEL_MIN_PROJECTS + 5)

    def refuse(*_args, **_kwargs):
        raise AssertionError("forked")

    monkeypatch.setattr(multiprocessing, "get_context", refuse)
    scripts = ScriptCache(str(root), fork=False)
    build_manifest(load_workspace(str(root)), scripts)
    assert len(scripts.used) == script_cache.PARALLEL_MIN_PROJECTS + 5
