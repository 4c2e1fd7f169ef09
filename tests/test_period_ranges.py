"""`--period` naming several periods (issue 30): ranges of one level and lists, parsed at compiler level
(compiler/periods.py parse_periods), and every usage error (exit 2) naming its problem; the batch's
mode decision (adapters/run/modes.py). No Spark."""
from __future__ import annotations

import datetime

import pytest
from click.testing import CliRunner

from ledgerflow.adapters.cli import main
from ledgerflow.adapters.run.modes import choose_mode
from ledgerflow.compiler.periods import MAX_PERIODS, PeriodError, parse_period, parse_periods


def ids(text: str) -> list[str]:
    return [p.identifier for p in parse_periods(text)]


def test_a_single_period_is_one_period_as_parse_period_gives_it():
    for text in ("2026-01", "2026-Q1", "2026", "2026-01-15", " 2026-02 "):
        assert parse_periods(text) == [parse_period(text)]


def test_ranges_of_each_level_are_inclusive_and_ascending():
    months = parse_periods("2026-01..2026-12")
    assert [p.identifier for p in months] == [f"2026-{m:02d}" for m in range(1, 13)]
    assert months[1].start == datetime.date(2026, 2, 1) and months[1].end == datetime.date(2026, 2, 28)
    assert all(p.level == "month" for p in months)
    assert ids("2025-11..2026-02") == ["2025-11", "2025-12", "2026-01", "2026-02"]
    assert ids("2025-Q3..2026-Q2") == ["2025-Q3", "2025-Q4", "2026-Q1", "2026-Q2"]
    assert ids("2024..2026") == ["2024", "2025", "2026"]
    assert ids("2024-02-27..2024-03-01") == ["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01"]
    assert ids("2026-03..2026-03") == ["2026-03"]
    assert ids("2026-01 .. 2026-02") == ["2026-01", "2026-02"]
    days = parse_periods("2024-01-01..2026-09-26")  # exactly the limit
    assert len(days) == MAX_PERIODS == 1000 and days[-1].identifier == "2026-09-26"


def test_lists_are_sorted_and_may_mix_levels_and_ranges():
    assert ids("2026-03,2026-01") == ["2026-01", "2026-03"]
    assert ids("2026-01, 2026-03") == ["2026-01", "2026-03"]
    assert ids("2026-Q1,2026-01") == ["2026-01", "2026-Q1"]  # same start: the shorter first
    assert ids("2026-05,2026-01..2026-02") == ["2026-01", "2026-02", "2026-05"]


@pytest.mark.parametrize("text, says", [
    ("2026-01..2026-Q3", "is a range across levels: 2026-01 is a month, 2026-Q3 a quarter"),
    ("2026..2026-03", "is a range across levels: 2026 is a year, 2026-03 a month"),
    ("2026-12..2026-01", "is reversed: 2026-01 comes before 2026-12; write 2026-01..2026-12"),
    ("2026-Q3..2026-Q1", "is reversed"),
    ("2024-01-01..2026-09-27", "names more than 1,000 periods"),
    ("1000..2999", "names more than 1,000 periods"),
    ("2026-01,2026-02,2026-01", "names 2026-01 twice"),
    ("2026-01..2026-03,2026-02", "names 2026-02 twice"),
    ("2026-01,,2026-03", "item 2 of the list is empty"),
    ("2026-01,", "item 2 of the list is empty"),
    (",2026-01", "item 1 of the list is empty"),
    ("2026-01..", "is not a range"),
    ("..2026-01", "is not a range"),
    ("2026-01..2026-02..2026-03", "is not a range"),
    ("2026-13..2027-01", "'2026-13' is not a period"),
    ("2026-01..2026-1", "'2026-1' is not a period"),
])
def test_bad_periods_name_the_problem(text, says):
    with pytest.raises(PeriodError) as err:
        parse_periods(text)
    assert says in str(err.value)
    assert err.value.exit_code == 2


def test_a_long_list_is_refused_before_it_is_all_parsed():
    text = ",".join(d.isoformat() for d in (datetime.date(2020, 1, 1) + datetime.timedelta(days=i)
                                             for i in range(MAX_PERIODS + 1)))
    with pytest.raises(PeriodError, match="more than 1,000 periods"):
        parse_periods(text)


def test_the_command_line_gives_each_bad_period_as_a_usage_error(finance):
    """exit 2 and the problem named, before the store is opened or Spark started."""
    for text, says in (("2026-01..2026-Q3", "range across levels"), ("2026-12..2026-01", "is reversed"),
                       ("2026-01,2026-01", "names 2026-01 twice"), ("2026-01,,2026-02", "is empty"),
                       ("0001-01-01..2026-01-01", "more than 1,000")):
        result = CliRunner().invoke(main, ["--workspace", str(finance), "run", "--all", "--period", text])
        assert result.exit_code == 2, (text, result.output)
        assert "Invalid value for --period" in result.stderr and says in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert not (finance / ".ledgerflow").exists()


def test_the_mode_hook_fuses_a_proven_project_and_says_why_not_otherwise():
    from conftest import PROJECTS
    from ledgerflow.compiler.workspace import load_workspace
    ws = load_workspace(str(PROJECTS / "finance"))
    months = parse_periods("2026-01..2026-03")
    assert choose_mode("auto", ["close_conversion"], months, ws) == ("fused", "3 periods in one Spark job per statement")
    assert choose_mode("fused", ["close_conversion", "close_reporting"], months, ws)[0] == "fused"
    chosen, reason = choose_mode("auto", ["journal_controls"], months, ws)
    assert chosen == "each" and reason.startswith("project journal_controls cannot be fused: the project declares "
                                                  "checks"), reason
    assert choose_mode("each", ["close_conversion"], months, ws) == ("each", "--mode each")
    assert choose_mode("auto", ["close_conversion"], months[:1], ws) == ("each", "one period")
