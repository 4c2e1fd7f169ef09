"""Free text from the run store (close notes, --by, restatement reasons, run errors, project names) is shown
by `periods list | close`, `status` and `runs list | show` through the one rule for hidden characters
(compiler/visible_text.py): terminal escape sequences, bidi overrides and line breaks are written as \\uXXXX,
never sent to the terminal. Store- and CLI-level: no Spark."""
from __future__ import annotations

from cli_support import cli, describe
from ledgerflow.adapters.store.runstore import RunStore

OSC_TITLE = "\x1b]0;owned\x07"  # sets the terminal's title
OSC_CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"  # writes the clipboard
RLO = "\u202e"  # right-to-left override: what follows is shown reversed
HOSTILE = f"books{OSC_TITLE} closed{RLO}txt.exe{OSC_CLIPBOARD}\nfake line"


def _raw_free(text: str) -> bool:
    return "\x1b" not in text and "\x07" not in text and RLO not in text


def test_periods_close_and_list_show_notes_and_names_escaped(finance):
    closed = cli(finance, "periods", "close", "2026-01", "--project", "ts01_output_only", "--note", HOSTILE,
                 "--by", f"mallory{RLO}")
    assert closed.exit_code == 0, describe(closed)
    assert _raw_free(closed.stdout) and "mallory\\u202e" in closed.stdout
    listed = cli(finance, "periods", "list")
    assert listed.exit_code == 0, describe(listed)
    assert _raw_free(listed.stdout), repr(listed.stdout)
    row = next(line for line in listed.stdout.splitlines() if "ts01_output_only" in line)
    assert "closed by mallory\\u202e at " in row
    assert 'note: "books\\u001b]0;owned\\u0007 closed\\u202etxt.exe\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u000afake line"' \
        in row  # the line break too: the note stays on its row
    assert not any(line.startswith("fake line") for line in listed.stdout.splitlines())
    refused = cli(finance, "run", "ts01_output_only", "--period", "2026-01")  # PERIOD-001, before Spark starts
    assert refused.exit_code == 1, describe(refused)
    assert "PERIOD-001" in refused.stderr and "closed by mallory\\u202e at " in refused.stderr
    assert _raw_free(refused.stderr) and refused.stderr.count("\n") == 1, refused.stderr  # one paragraph


def _failed_run(run_id: str, project: str, **extra) -> dict:
    return {"run_id": run_id, "project": {"id": "p-" + project, "name": project, "version": 1, "sha256": "x"},
            "period": {"identifier": "2026-01", "start": "2026-01-01", "end": "2026-01-31"}, "status": "failed",
            "started_at": "2026-02-01T00:00:00.000", "finished_at": "2026-02-01T00:00:01.000", "outputs": [],
            **extra}


def test_runs_list_and_show_escape_errors_reasons_and_names(finance):
    store = RunStore(str(finance))
    store.save_run(_failed_run("00000000-0000-4000-8000-00000000000a", "ts01_output_only",
                               error=f"Spark said{OSC_TITLE}{RLO} no\nsecond line of the error",
                               restatement={"reason": HOSTILE, "by": f"eve{OSC_CLIPBOARD}\nforged: line"}))
    listed = cli(finance, "runs", "list")
    assert listed.exit_code == 0, describe(listed)
    assert _raw_free(listed.stdout) and "error: Spark said\\u001b]0" in listed.stdout  # its first clause
    shown = cli(finance, "runs", "show", "00000000-0000-4000-8000-00000000000a")
    assert shown.exit_code == 0, describe(shown)
    assert _raw_free(shown.stdout), repr(shown.stdout)
    assert "by eve\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u000aforged: line" in shown.stdout
    assert not any(line.startswith("forged") for line in shown.stdout.splitlines())
    assert "\nsecond line of the error" in shown.stdout  # ledgerflow's own line breaks of an error stay


def test_status_shows_a_removed_projects_name_escaped(finance):
    store = RunStore(str(finance))
    for run_id, project in (("b", f"gone{OSC_TITLE}"), ("c", "ts01_output_only")):
        rec = _failed_run(f"00000000-0000-4000-8000-00000000000{run_id}", project)
        store.save_run(rec)
        store.complete({**rec, "status": "completed"}, [], "2026-02-01T00:00:01Z")
    status = cli(finance, "status")
    assert status.exit_code == 0, describe(status)
    assert _raw_free(status.stdout) and "gone\\u001b]0;owned\\u0007" in status.stdout, status.stdout


def test_status_says_is_of_one_removed_project_and_are_of_several(finance):
    store = RunStore(str(finance))
    for run_id, project in (("d", "journal_summary"), ("e", "ts01_output_only")):
        rec = _failed_run(f"00000000-0000-4000-8000-00000000000{run_id}", project)
        store.save_run(rec)
        store.complete({**rec, "status": "completed"}, [], "2026-02-01T00:00:01Z")
    one = cli(finance, "status")
    assert one.exit_code == 0, describe(one)
    assert "Not checked: project journal_summary ran but is no longer in the workspace." in one.stdout
    rec = _failed_run("00000000-0000-4000-8000-00000000000f", "old_tb")
    store.save_run(rec)
    store.complete({**rec, "status": "completed"}, [], "2026-02-01T00:00:01Z")
    several = cli(finance, "status")
    assert "Not checked: projects journal_summary, old_tb ran but are no longer in the workspace." in several.stdout
