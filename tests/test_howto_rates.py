"""docs/howto-rates.md is real: its files, written into the sample workspace, validate; a quarter run joins each
GL line to its own month's rate (fx._period = transactions._period), giving the figures a month run gives;
without that condition the quarter run is stopped by the join's fan-out guard, with the error the page shows."""
from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

from cli_support import cli, describe, output_entry, record, run_id_of

PAGE = Path(__file__).resolve().parents[1] / "docs" / "howto-rates.md"
PROJECT = "gl_in_eur"
CONDITION = " AND fx._period = transactions._period"


def _rows(spark, rec: dict) -> list[dict]:
    """Output 2 of a run (Parquet), each row with its month (from its posting date)."""
    out = output_entry(rec, 2)
    rows = [r.asDict() for r in spark.read.parquet(out["location"]).collect()]
    assert len(rows) == out["rows"]
    return [{**r, "month": r["posting_date"].strftime("%Y-%m")} for r in rows]


def page_files() -> dict[str, str]:
    """Each fenced block of the page preceded by a line ``**PATH**:`` -> its text."""
    text = PAGE.read_text()
    found = re.findall(r"^\*\*([^*]+)\*\*:\n\n```[a-z]*\n(.*?)^```$", text, re.M | re.S)
    return dict(found)


def _error_shown() -> str:
    return re.search(r"^```text\n(Error: .*?)\n```$", PAGE.read_text(), re.M | re.S).group(1)


def _general(error: str) -> str:
    """The error without what differs from run to run: the run's id, and which currency met the guard first."""
    return re.sub(r"join key: [A-Z]{3}$", "join key: CUR", re.sub(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", "RUN", error))


def _written(ws: Path) -> None:
    for rel, text in page_files().items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_page_holds_the_files_it_describes():
    assert sorted(page_files()) == ["data/monthly_avg_rates/monthly/2026-01.csv",
                                    "data/monthly_avg_rates/monthly/2026-02.csv",
                                    "data/monthly_avg_rates/monthly/2026-03.csv",
                                    "datasets/monthly_avg_rates.yml", f"projects/{PROJECT}.yml"]
    assert CONDITION.strip(" AND") in page_files()[f"projects/{PROJECT}.yml"]


def test_a_quarter_run_joins_each_line_to_its_months_rate(spark, finance):
    _written(finance)
    valid = cli(finance, "validate", PROJECT)
    assert valid.exit_code == 0, describe(valid)

    quarter = record(finance, run_id_of(cli(finance, "run", PROJECT, "--period", "2026-Q1")))
    assert quarter["status"] == "completed"
    rows = _rows(spark, quarter)
    assert len(rows) == 14  # January's 10 lines, February's 2, March's 2: none multiplied
    rates = {(r["_period"], r["currency"]): Decimal(r["rate"]) for rel, text in page_files().items()
             if rel.endswith(".csv") for r in (dict(zip(("currency", "rate", "_period"), line.split(",")))
                                               for line in text.splitlines()[1:])}
    for row in rows:
        expected = (Decimal(row["amount_local"]) * rates[(row["month"], row["currency"])]).quantize(Decimal("0.01"))
        assert Decimal(row["amount_eur"]) == expected, row
    feb = [r for r in rows if r["month"] == "2026-02" and r["amount_local"] == Decimal("1000.00")]
    assert {r["amount_eur"] for r in feb} == {Decimal("930.00")}  # as the page says

    month = record(finance, run_id_of(cli(finance, "run", PROJECT, "--period", "2026-02")))
    feb_rows = _rows(spark, month)
    assert sorted(r["amount_eur"] for r in feb_rows) == sorted(r["amount_eur"] for r in rows if r["month"] == "2026-02")

    project = finance / "projects" / f"{PROJECT}.yml"
    project.write_text(project.read_text().replace(CONDITION, ""))
    multiplied = cli(finance, "run", PROJECT, "--period", "2026-Q1")
    assert multiplied.exit_code == 3, describe(multiplied)
    assert _general(multiplied.stderr.strip()) == _general(_error_shown()), multiplied.stderr
