"""OpenLineage events (docs/openlineage.md), fixes found by review: the bridge's totals in ``dataQualityMetrics``
when a reconcile check breaks it down by group; concurrent senders send each kept event once; a slow receiver
configured through the client's own ``OPENLINEAGE_CONFIG`` or a backlog of kept events costs a run seconds, not
minutes; a damaged kept file is named and moved aside."""
from __future__ import annotations

import json
import multiprocessing
import os
import time
import uuid
from collections import Counter
from decimal import Decimal
from pathlib import Path

from cli_support import cli, describe
from openlineage_support import Receiver, validate_event

NOW = "2026-02-01T00:00:00"


def _event(n: int, kind: str = "START") -> dict:
    return {"eventType": kind, "eventTime": "2026-01-01T00:00:00Z", "producer": "urn:test",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.UUID(int=n))}, "job": {"namespace": "ns", "name": "j"}, "inputs": [],
            "outputs": []}


def _config(transport: dict):
    from ledgerflow.compiler.model import WorkspaceConfig
    return WorkspaceConfig(name="w", default_resolver=None, resolvers={},
                           openlineage={"namespace": "w", "transport": transport, "disabled": False})


def _pending(root: Path) -> list[Path]:
    folder = root / ".ledgerflow" / "events" / "pending"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def test_a_grouped_bridge_keeps_the_outputs_total_in_data_quality_metrics(spark, finance, tmp_path):
    """A reconcile check with ``by:`` adds the bridge's figures per group to the run record: the standard facet's
    sum stays the output's total, and the ``ledgerflow`` facet keeps every row with its group."""
    log = tmp_path / "events.jsonl"
    with open(finance / "ledgerflow.yml", "a") as fh:
        fh.write(f"openlineage:\n  namespace: f\n  transport: {{type: file, log_file_path: {log}, append: true}}\n")
    project = finance / "projects" / "ts06_append_budgets.yml"
    text = project.read_text()
    assert 'tolerance: "0.00"}' in text
    project.write_text(text.replace('tolerance: "0.00"}', 'tolerance: "0.00", by: [currency]}'))
    ran = cli(finance, "run", "ts06_append_budgets", "--period", "2026-01")
    assert ran.exit_code == 0, describe(ran)
    complete = [json.loads(line) for line in log.read_text().splitlines()][-1]
    assert complete["eventType"] == "COMPLETE"
    validate_event(complete)
    record = json.loads(next((finance / "target" / "runs").glob("*/run.json")).read_text())
    for out in complete["outputs"]:
        seq = out["facets"]["ledgerflow"]["outputSeq"]
        rows = [b for b in record["bridge"] if b["output"] == seq and b["measure"] == "SUM(amount_local)"]
        total = [b for b in rows if b["group"] is None]
        if not total or total[0]["output_value"] is None:
            continue
        groups = [b for b in rows if b["group"] is not None]
        assert len(groups) > 1, rows  # the check's breakdown is in the record, several currencies
        metrics = out["facets"]["dataQualityMetrics"]["columnMetrics"]
        assert Decimal(str(metrics["amount_local"]["sum"])) == Decimal(total[0]["output_value"])
        assert sum(Decimal(b["output_value"]) for b in groups) == Decimal(total[0]["output_value"])
        kept = out["facets"]["ledgerflow"]["bridge"]
        assert sorted(json.dumps(b.get("group"), sort_keys=True) for b in kept if b["measure"] == "SUM(amount_local)") \
            == sorted(json.dumps(b["group"], sort_keys=True) for b in rows)
        break
    else:
        raise AssertionError(f"no output with a measured SUM(amount_local): {record['bridge']}")


def _send_in_child(root: str, url: str, out) -> None:
    import io
    import sys
    sys.stderr = io.StringIO()
    try:
        from ledgerflow.adapters.events.emitter import send_all
        out.put(("ok", send_all(root, _config({"type": "http", "url": url})), sys.stderr.getvalue()))
    except BaseException as exc:  # noqa: BLE001 - reported to the test
        out.put(("raised", repr(exc), sys.stderr.getvalue()))


def test_two_senders_at_once_send_each_kept_event_once_and_a_dead_senders_claim_is_taken_back(tmp_path):
    """No Spark: two ``events send`` in two processes over one outbox of 30 events and a receiver taking 50 ms
    each: every event received exactly once, in order, and neither fails; an event claimed by a process that died
    is sent by the next sender."""
    from ledgerflow.adapters.events.outbox import keep, outbox_dir
    root = tmp_path / "ws"
    for n in range(30):
        keep(str(root), _event(n))
    folder = Path(outbox_dir(str(root)))
    dead = multiprocessing.get_context("fork").Process(target=lambda: None)
    dead.start()
    dead.join()
    first = sorted(folder.glob("*.json"))[0]
    claim = folder / f"{first.name}~{os.uname().nodename}~{dead.pid}~deadbeef"
    first.rename(claim)  # as a sender killed mid-send leaves it
    receiver = Receiver(delay=0.05)
    try:
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        senders = [ctx.Process(target=_send_in_child, args=(str(root), receiver.url, out)) for _ in range(2)]
        for p in senders:
            p.start()
        results = [out.get(timeout=120) for _ in senders]
        for p in senders:
            p.join(30)
    finally:
        receiver.close()
    assert all(status == "ok" and "Traceback" not in err for status, _, err in results), results
    assert sum(r[1][0] for r in results) == 30 and all(r[1][1] == 0 for r in results), results
    ids = [e["run"]["runId"] for e in receiver.received]
    assert Counter(ids).most_common(1)[0][1] == 1 and len(ids) == 30, Counter(ids).most_common(3)
    assert ids == sorted(ids)  # oldest first, across both senders
    assert not list(folder.iterdir())


def test_the_clients_own_configuration_gets_ledgerflows_bound(tmp_path, monkeypatch):
    """No Spark: with the transport in ``OPENLINEAGE_CONFIG``'s file (an HTTP receiver answering after 30 s), a
    run's event costs about ledgerflow's 2-second timeout, not the client's 5 s x 5 retries, and is kept."""
    from ledgerflow.adapters.events import emitter
    from ledgerflow.compiler.model import WorkspaceConfig
    slow = Receiver(delay=30)
    try:
        config_file = tmp_path / "openlineage.yml"
        config_file.write_text(f"transport:\n  type: http\n  url: {slow.url}\n")
        monkeypatch.setenv("OPENLINEAGE_CONFIG", str(config_file))
        monkeypatch.delenv("OPENLINEAGE_URL", raising=False)
        monkeypatch.chdir(tmp_path)
        config = WorkspaceConfig(name="w", default_resolver=None, resolvers={}, openlineage=None)
        clock = time.monotonic()
        emitter._emit(str(tmp_path), emitter.event_settings(config), lambda: _event(1))
        emitter._emit(str(tmp_path), emitter.event_settings(config), lambda: _event(1, "COMPLETE"))
        took = time.monotonic() - clock
    finally:
        emitter._senders.clear()
        slow.close()
    assert took < 5, took
    assert len(_pending(tmp_path)) == 2


def test_a_run_sends_its_own_events_and_only_a_bounded_slice_of_the_backlog(tmp_path):
    """No Spark: 24 events kept earlier and a receiver taking 0.5 s each: a run's START and COMPLETE are sent
    (before the backlog) within a few seconds, the backlog is left for ``events send``, which sends it all."""
    from types import SimpleNamespace as NS

    from ledgerflow.adapters.events import emitter
    from ledgerflow.adapters.events.outbox import keep
    receiver = Receiver(delay=0.5)
    try:
        root = tmp_path / "ws"
        for n in range(24):
            keep(str(root), _event(100 + n))
        config = _config({"type": "http", "url": receiver.url})
        ctx = NS(compiled=NS(plan=None, script=lambda: "SELECT 1"), workspace=NS(config=config))
        record = {"project": {"name": "p"}, "run_id": str(uuid.UUID(int=7)), "status": "completed",
                  "period": {"identifier": "2026-01", "start": "2026-01-01", "end": "2026-01-31"},
                  "started_at": NOW, "finished_at": NOW}
        clock = time.monotonic()
        emitter.emit_of_run(str(root), ctx, "START", record)
        emitter.emit_of_run(str(root), ctx, "COMPLETE", record)
        took = time.monotonic() - clock
        assert took < 10, took  # about 3 s per event emitted; all 24 at once took 13 s
        got = [(e["run"]["runId"], e["eventType"]) for e in receiver.received]
        assert got[0] == (record["run_id"], "START") and (record["run_id"], "COMPLETE") in got, got
        assert len(got) <= 16 and len(_pending(root)) >= 10, got
        receiver.delay = 0.0  # the backlog's own send need not be slow
        sent, left, why = emitter.send_all(str(root), config)
        assert (left, why) == (0, None) and len(receiver.received) == 26
    finally:
        emitter._senders.clear()
        receiver.close()


def test_events_send_names_a_damaged_kept_file_and_moves_it_aside(tmp_path):
    """No Spark: the promotion benchmark's workspace; a kept file that is not an event is named in one line and
    moved to ``.ledgerflow/events/damaged/``; the good events around it are sent and nothing stays pending."""
    from bench.promotion_scale import build

    from ledgerflow.adapters.events.outbox import keep, outbox_dir
    ws = tmp_path / "ws"
    ws.mkdir()
    build(ws, 1, ["2024-01"])
    log = tmp_path / "events.jsonl"
    with open(ws / "ledgerflow.yml", "a") as fh:
        fh.write(f"openlineage:\n  namespace: w\n  transport: {{type: file, log_file_path: {log}, append: true}}\n")
    keep(str(ws), _event(1))
    bad = Path(outbox_dir(str(ws))) / "20260101T000000-000000000-1-000000-start.json"
    bad.write_text('{"eventType": "START", "run": ')  # cut short
    keep(str(ws), _event(1, "COMPLETE"))
    sent = cli(ws, "events", "send")
    assert sent.exit_code == 0 and "Sent 2 OpenLineage events; 0 pending" in sent.stdout, describe(sent)
    lines = [line for line in sent.stderr.splitlines() if bad.name in line]
    assert len(lines) == 1 and "not JSON" in lines[0] and "damaged" in lines[0], sent.stderr
    assert (ws / ".ledgerflow" / "events" / "damaged" / bad.name).is_file() and not _pending(ws)
    again = cli(ws, "events", "send")
    assert again.exit_code == 0 and bad.name not in again.stderr, describe(again)
    assert [json.loads(line)["eventType"] for line in log.read_text().splitlines()] == ["START", "COMPLETE"]


def test_a_dead_senders_claim_is_sent_by_the_next_run_and_a_live_ones_is_left(tmp_path):
    """No Spark: the outbox's claims: a claim of a process that is gone is taken back; one of a live process is
    not touched (the next sender stops at it, keeping the order)."""
    from ledgerflow.adapters.events.outbox import Sender, keep, outbox_dir
    from ledgerflow.adapters.events.settings import EventSettings
    log = tmp_path / "events.jsonl"
    root = str(tmp_path / "ws")
    for n in range(3):
        keep(root, _event(n))
    folder = Path(outbox_dir(root))
    first = sorted(folder.glob("*.json"))[0]
    first.rename(folder / f"{first.name}~{os.uname().nodename}~{os.getppid()}~live")  # a live process (pytest's parent)
    sender = Sender(EventSettings("w", {"type": "file", "log_file_path": str(log), "append": True}),
                    warn=lambda line: None)
    assert sender.send_pending(root) == (0, 3) and sender.busy and not log.exists()
    (folder / f"{first.name}~{os.uname().nodename}~{os.getppid()}~live").rename(
        folder / f"{first.name}~elsewhere~1~old")
    old = time.time() - 3600
    os.utime(folder / f"{first.name}~elsewhere~1~old", (old, old))  # another host's, an hour old: stale
    assert sender.send_pending(root) == (3, 0)
    assert [json.loads(line)["run"]["runId"][-1] for line in log.read_text().splitlines()] == ["0", "1", "2"]
