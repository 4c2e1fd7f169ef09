"""OpenLineage run events (issue 47 point 1, docs/openlineage.md): every event valid against the specification's
schemas (core and each facet), START then COMPLETE/FAIL per run with the batch as parent, inputs with version and
fingerprint, outputs with schema, column lineage, rows, the bridge and the checks; promotions as events of their
own; a receiver on 127.0.0.1 gets them over HTTP, and one that is down or slow never fails a run: the events are
kept and `ledgerflow events send` sends them."""
from __future__ import annotations

import json
import time
from pathlib import Path

from cli_support import cli, describe
from openlineage_support import Receiver, free_port, validate_event


def _configure(ws: Path, transport: str) -> None:
    with open(ws / "ledgerflow.yml", "a") as fh:
        fh.write(f"openlineage:\n  namespace: finance-close\n  transport: {transport}\n")


def _events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _pending(ws: Path) -> list[Path]:
    folder = ws / ".ledgerflow" / "events" / "pending"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def test_run_events_through_the_file_transport_validate_and_say_what_ran(spark, finance, tmp_path):
    log = tmp_path / "events.jsonl"
    _configure(finance, f"{{type: file, log_file_path: {log}, append: true}}")
    chain = cli(finance, "run", "--select", "+close_consolidation", "--period", "2026-01")
    assert chain.exit_code == 0, describe(chain)
    checked = cli(finance, "run", "journal_controls", "--period", "2026-01")
    assert checked.exit_code == 0, describe(checked)
    project = finance / "projects" / "journal_controls.yml"
    project.write_text(project.read_text().replace("row_count: {min: 1}", "row_count: {min: 100000}"))
    failed = cli(finance, "run", "journal_controls", "--period", "2026-02")
    assert failed.exit_code == 4, describe(failed)

    events = _events(log)
    assert sum(validate_event(e) for e in events) > 40
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("close_conversion", "START"), ("close_conversion", "COMPLETE"), ("close_consolidation", "START"),
        ("close_consolidation", "COMPLETE"), ("journal_controls", "START"), ("journal_controls", "COMPLETE"),
        ("journal_controls", "START"), ("journal_controls", "FAIL")]
    assert {e["job"]["namespace"] for e in events} == {"finance-close"}
    assert len({e["run"]["runId"] for e in events}) == 4
    conv, cons = events[1], events[3]
    parents = {e["run"]["facets"]["parent"]["run"]["runId"] for e in events[:4]}
    assert len(parents) == 1 and parents == {conv["run"]["facets"]["ledgerflow"]["batchId"]}  # one batch, the parent
    assert conv["run"]["facets"]["nominalTime"]["nominalStartTime"] == "2026-01-01T00:00:00Z"
    assert conv["run"]["facets"]["processing_engine"]["name"] == "spark"
    gl = next(i for i in conv["inputs"] if i["facets"]["ledgerflow"]["dataset"] == "gl")
    assert gl["namespace"] == "file" and gl["facets"]["version"]["datasetVersion"] == "1"
    assert len(gl["facets"]["ledgerflow"]["fingerprint"]) == 64 and gl["facets"]["schema"]["fields"]
    # the registered dataset close_conversion wrote is close_consolidation's input, by the same name
    assert conv["outputs"][0]["name"] in {i["name"] for i in cons["inputs"]}
    out = cons["outputs"][0]
    assert {"name": "total_reporting", "type": "decimal(28,2)"} in out["facets"]["schema"]["fields"]
    lineage = out["facets"]["columnLineage"]["fields"]["total_reporting"]["inputFields"]
    assert {"type": "DIRECT", "subtype": "AGGREGATION"} in [t for f in lineage for t in f["transformations"]]
    assert out["outputFacets"]["outputStatistics"]["rowCount"] == out["facets"]["dataQualityMetrics"]["rowCount"] > 0
    assert out["facets"]["ledgerflow"]["bridge"][0]["measure"] == "count"
    sums = conv["outputs"][0]["facets"]["dataQualityMetrics"]["columnMetrics"]  # the bridge's sums, where it has them
    assert sums and all(isinstance(m["sum"], float) for m in sums.values()), sums
    checks = events[5]["outputs"][0]["facets"]["dataQualityAssertions"]["assertions"]
    assert len(checks) >= 6 and all(a["success"] for a in checks)
    fail = events[7]
    assert "some_lines" in fail["run"]["facets"]["errorMessage"]["message"] and fail["outputs"] == []
    assert {c["name"]: c["status"] for c in fail["run"]["facets"]["ledgerflow"]["checks"]}["some_lines"] == "failed"
    assert not _pending(finance)  # every event sent


def test_a_receiver_that_is_down_never_fails_a_run_and_events_send_sends_what_was_kept(spark, finance):
    port = free_port()
    _configure(finance, f"{{type: http, url: 'http://127.0.0.1:{port}'}}")
    clock = time.monotonic()
    down = cli(finance, "run", "ts03_fx_conversion", "--period", "2026-01")
    took = time.monotonic() - clock
    assert down.exit_code == 0, describe(down)
    assert "OpenLineage events not sent" in down.stderr and "ledgerflow events send" in down.stderr
    assert [p.name.rsplit("-", 1)[1] for p in _pending(finance)] == ["start.json", "complete.json"]
    nothing = cli(finance, "events", "send")
    assert nothing.exit_code == 1 and "EVENTS-001" in nothing.stderr and len(_pending(finance)) == 2
    receiver = Receiver()
    try:
        (finance / "ledgerflow.yml").write_text((finance / "ledgerflow.yml").read_text().replace(
            f"http://127.0.0.1:{port}", receiver.url))
        sent = cli(finance, "events", "send")
        assert sent.exit_code == 0 and "Sent 2 OpenLineage events; 0 pending" in sent.stdout, describe(sent)
        assert [e["eventType"] for e in receiver.received] == ["START", "COMPLETE"]
        for e in receiver.received:
            validate_event(e)
        again = cli(finance, "run", "ts03_fx_conversion", "--period", "2026-02")  # sent as the run goes
        assert again.exit_code == 0 and not _pending(finance), describe(again)
        assert [e["eventType"] for e in receiver.received] == ["START", "COMPLETE"] * 2
    finally:
        receiver.close()
    assert took < 60, took  # the run itself; the dead receiver's share is timed without Spark below


def test_a_dead_or_slow_receiver_costs_seconds_not_minutes_and_the_event_is_kept(tmp_path):
    """The sender alone (no Spark): a closed port and a receiver answering after 10 s each hold a run up for
    about the transport's 2-second timeout, once per process."""
    from ledgerflow.adapters.events.outbox import Sender, keep, pending
    from ledgerflow.adapters.events.settings import EventSettings, bounded
    event = {"eventType": "START", "eventTime": "2026-01-01T00:00:00Z", "run": {"runId": "x"}, "job": {}}
    slow = Receiver(delay=10)
    try:
        for url in (f"http://127.0.0.1:{free_port()}", slow.url):
            root = tmp_path / url.rsplit(":", 1)[1]
            sender = Sender(EventSettings("ns", bounded({"type": "http", "url": url})), warn=lambda line: None)
            keep(str(root), event)
            keep(str(root), dict(event, eventType="COMPLETE"))
            clock = time.monotonic()
            assert sender.send_pending(str(root)) == (0, 2)
            assert sender.send_pending(str(root)) == (0, 2)  # once broken, not tried again in this process
            assert time.monotonic() - clock < 6, url
            assert len(pending(str(root))) == 2
    finally:
        slow.close()


def test_a_promotion_emits_events_of_its_own(tmp_path):
    """No Spark: the promotion benchmark's workspace with the file transport."""
    from bench.promotion_scale import build
    ws = tmp_path / "ws"
    ws.mkdir()
    build(ws, 2, ["2024-01"])
    log = tmp_path / "events.jsonl"
    _configure(ws, f"{{type: file, log_file_path: {log}, append: true}}")
    promoted = cli(ws, "promote", "--all", "--from", "dev", "--period", "2024-01")
    assert promoted.exit_code == 0, describe(promoted)
    events = _events(log)
    for e in events:
        validate_event(e)
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [("ledgerflow_promote", "START"),
                                                                      ("ledgerflow_promote", "COMPLETE")]
    facet = events[1]["run"]["facets"]["ledgerflow"]["promotion"]
    assert (facet["from"], facet["to"], len(facet["projectPeriods"])) == ("dev", "prod", 2)
    assert sorted(o["name"] for o in events[1]["outputs"]) == sorted(str(ws / "out" / p) for p in ("p0000", "p0001"))


def test_the_end_of_a_failed_run_is_fail_or_abort_as_its_record_says(tmp_path):
    """No Spark: the event a failed run's end sends is ABORT when it was interrupted (Ctrl-C), FAIL otherwise, and
    nothing when the store could not say it failed."""
    from types import SimpleNamespace

    from ledgerflow.adapters.events.emitter import emit_of_run
    from ledgerflow.compiler.model import WorkspaceConfig
    log = tmp_path / "events.jsonl"
    config = WorkspaceConfig(name="w", default_resolver=None, resolvers={},
                             openlineage={"namespace": "w", "transport": {"type": "file", "log_file_path": str(log),
                                                                          "append": True}, "disabled": False})
    ctx = SimpleNamespace(compiled=SimpleNamespace(plan=None, script=lambda: "SELECT 1"),
                          workspace=SimpleNamespace(config=config))
    base = {"project": {"name": "p"}, "period": {"identifier": "2026-01", "start": "2026-01-01", "end": "2026-01-31"},
            "started_at": "2026-02-01T00:00:00", "finished_at": "2026-02-01T00:01:00"}
    for n, (status, error) in enumerate((("failed", "interrupted: KeyboardInterrupt in the process that ran it"),
                                         ("failed", "run x failed on Spark: boom"), ("running", None))):
        record = dict(base, run_id=f"01a24a46-456e-7b46-9574-0f00f083{n:04d}", status=status, error=error)
        emit_of_run(str(tmp_path), ctx, None, record)
    events = _events(log)
    assert [e["eventType"] for e in events] == ["ABORT", "FAIL"]
    for e in events:
        validate_event(e)
    assert events[0]["run"]["facets"]["errorMessage"]["message"].startswith("interrupted")
