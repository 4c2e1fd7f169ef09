"""How failed checks are reported (docs/checks.md): one failed check is one paragraph; several are a paragraph
each, the first five spelled out and the rest counted, in the run's error (exit 4) and a scenario test's."""
from __future__ import annotations

from cli_support import cli, describe, record, write
from ledgerflow.adapters.run.check_eval import failure_report

PROJECT = "journal_controls"
TOO_MANY = "".join(f"  - {{name: at_most_{n}_lines, on: 3, row_count: {{max: {n}}}}}\n" for n in range(1, 7))


def test_several_failed_checks_are_a_paragraph_each_then_a_count(spark, finance):
    project = finance / "projects" / f"{PROJECT}.yml"
    project.write_text(project.read_text() + TOO_MANY)  # January has 10 lines: six row_count checks fail
    result = cli(finance, "run", PROJECT, "--period", "2026-01")
    assert result.exit_code == 4, describe(result)
    run_id = result.stdout.split()[1].rstrip(":")
    lines = result.stderr.rstrip("\n").split("\n")
    assert lines[0] == f"Error: run {run_id} failed its checks, so nothing was published: 6 checks failed."
    assert lines[1:6] == [f"  check 'at_most_{n}_lines' (row_count on output 3) found 10 rows, outside 0..{n}."
                          for n in range(1, 6)]
    assert lines[6:] == [f"  and 1 more failed check (`ledgerflow runs show {run_id}` lists every check)."]
    rec = record(finance, run_id)
    assert [c["name"] for c in rec["checks"] if c["status"] == "failed"] == [f"at_most_{n}_lines" for n in range(1, 7)]

    write(finance, "tests/too_many.yml", f"name: too many\nproject: {PROJECT}\nperiod: 2026-01\ngiven:\n"
                                         "  gl: {csv: fixtures/gl.csv}\n  accounts: {csv: fixtures/accounts_v2.csv}\n"
                                         "checks: {journals_balance: passed}\n")
    tested = cli(finance, "test", "too_many")
    assert tested.exit_code == 4, describe(tested)
    assert "  the run would fail its checks, publishing nothing (exit 4): 6 checks failed.\n" \
           "    check 'at_most_1_lines' (row_count on output 3) found " in tested.stdout
    assert "    and 1 more failed check.\n" in tested.stdout


def test_one_failed_check_stays_one_paragraph():
    assert failure_report("run r failed its checks", ["check 'a' found 2 violating rows"], "see r") == \
        "run r failed its checks: check 'a' found 2 violating rows."
    seven = failure_report("intro", [f"check {n}" for n in range(7)])
    assert seven.split("\n") == ["intro: 7 checks failed.", *[f"  check {n}." for n in range(5)],
                                 "  and 2 more failed checks."]
