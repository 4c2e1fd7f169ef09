"""A restatement that fails publishes nothing, and its run record says what it was (issue 31; docs/commands.md
"Restating a closed period", docs/run-record.md): the restatement block (reason, by, the run it was to
supersede, the outputs it was to publish empty) is in the record from the start, whether the run failed
computing its rows or on a check after staging them; ``runs show`` says the superseded run stays published and
what would have been published empty."""
from __future__ import annotations

from cli_support import add_project, cli, describe, record, run_id_of

PERIOD = "2026-01"
TWO = """
        - {seq: 1, name: Lines, type: output, arguments: {destination: {table: failing_lines}}}
        - {seq: 2, name: Copy, type: output, arguments: {destination: {path: out/failing_copy, format: parquet}}}
        """


def _published_and_closed(ws) -> tuple[str, dict]:
    add_project(ws, "failing_restate", TWO)
    first = cli(ws, "run", "failing_restate", "--period", PERIOD)
    assert first.exit_code == 0, describe(first)
    assert cli(ws, "periods", "close", PERIOD, "--project", "failing_restate").exit_code == 0
    return run_id_of(first), {o["operation_seq"]: o for o in record(ws, run_id_of(first))["outputs"]}


def _shown_and_still_published(ws, failed: dict, first: str, dropped: str) -> None:
    block = failed["restatement"]
    assert (block["reason"], block["supersedes_run_id"]) == ("retire the copy", first)
    assert block["emptied_outputs"] == [{"operation_seq": 2, "name": "Copy", "location": dropped}]
    shown = cli(ws, "runs", "show", failed["run_id"])
    assert shown.exit_code == 0, describe(shown)
    assert f"Restatement failed (reason: 'retire the copy', by ana): run {first} stays published" in shown.stdout
    assert f"output 2 'Copy' is not written by the project any more: its partition {dropped} would be published " \
           "empty" in shown.stdout and "is published empty" not in shown.stdout
    listed = cli(ws, "periods", "list", "--project", "failing_restate")
    assert first in listed.stdout, describe(listed)  # still the period's published run


def test_a_restatement_that_fails_computing_its_rows_records_what_it_was(spark, finance):
    first, published = _published_and_closed(finance)
    # both outputs read the stage, so it is computed before anything is staged: the join matches two lines of
    # each journal, which fails the run there
    add_project(finance, "failing_restate", """
        - {seq: 1, name: Break, type: update, arguments: {joins: [{alias: other, dataset_id: gl, on: 'transactions.journal_id = other.journal_id'}], assignments: [{column: description, expression: other.description}]}}
        - {seq: 2, name: Lines, type: output, arguments: {destination: {table: failing_lines}}}
        - {seq: 3, name: Again, type: output, arguments: {destination: {path: out/failing_again, format: parquet}}}
        """)
    r = cli(finance, "restate", "failing_restate", "--period", PERIOD, "--reason", "retire the copy", "--by", "ana")
    assert r.exit_code == 3, describe(r)
    assert "published empty" not in r.output  # it failed before it staged anything (no empty partition made)
    failed = record(finance, run_id_of(r))
    assert failed["status"] == "failed" and "data_diff" in failed["restatement"]
    dropped = published[2]["location"]
    _shown_and_still_published(finance, failed, first, dropped)


def test_a_restatement_a_check_fails_records_what_it_would_have_published_empty(spark, finance):
    first, published = _published_and_closed(finance)
    add_project(finance, "failing_restate", TWO.split("        - {seq: 2")[0],
                extra="checks:\n  - {name: never, on: 1, expect: '1 = 0'}\n")
    r = cli(finance, "restate", "failing_restate", "--period", PERIOD, "--reason", "retire the copy", "--by", "ana")
    assert r.exit_code == 4, describe(r)
    failed = record(finance, run_id_of(r))
    assert failed["status"] == "failed" and [c["status"] for c in failed["checks"]] == ["failed"]
    _shown_and_still_published(finance, failed, first, published[2]["location"])
