"""YAML loading is bounded (issue 8, point 7): an alias bomb or a huge file is a located error, fast.

A "billion laughs" file (nine levels of ``&a [*b x 9]``) used to take a minute and gigabytes before a
MemoryError traceback. Now the composed node graph is sized first, each shared node once (YAML-007
past ``MAX_YAML_NODES`` expanded values, or for an alias inside the value it names), and a file
larger than ``MAX_YAML_BYTES`` is refused before it is read (YAML-008).
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from ledgerflow.compiler import yaml_source
from ledgerflow.compiler.errors import CompileError
from ledgerflow.compiler.yaml_source import MAX_YAML_BYTES, load_yaml_text

from cli_support import cli, describe

HANG_GUARD_SECONDS = 10  # the bomb is refused in milliseconds; this only catches a hang


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    lines = ["lol0: &lol0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"lol{i}: &lol{i} [" + ", ".join([f"*lol{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def _validate(ws: Path):
    started = time.monotonic()
    result = cli(ws, "validate")
    return result, time.monotonic() - started


@pytest.mark.parametrize("where", ["projects/ts01_output_only.yml", "datasets/bomb.yml"])
def test_alias_bomb_is_yaml_007_not_a_hang(finance, where):
    (finance / where).write_text(billion_laughs())
    result, seconds = _validate(finance)
    assert result.exit_code == 1, describe(result)
    assert f"{where}:" in result.output and "YAML-007" in result.output, describe(result)
    assert "Traceback" not in result.output and "MemoryError" not in result.output
    assert seconds < HANG_GUARD_SECONDS


def test_recursive_alias_is_yaml_007(finance):
    (finance / "datasets" / "loop.yml").write_text("name: loop\nmain_table: &t\n  columns: [*t]\n")
    result, seconds = _validate(finance)
    assert result.exit_code == 1 and "datasets/loop.yml:2" in result.output and "YAML-007" in result.output, \
        describe(result)
    assert "contains it" in result.output and seconds < HANG_GUARD_SECONDS


def test_oversized_file_is_yaml_008_before_it_is_read(finance):
    line = "# " + "x" * 1021 + "\n"
    (finance / "datasets" / "huge.yml").write_text(line * (MAX_YAML_BYTES // len(line) + 1))
    result, seconds = _validate(finance)
    assert result.exit_code == 1, describe(result)
    assert "datasets/huge.yml" in result.output and "YAML-008" in result.output, describe(result)
    assert seconds < HANG_GUARD_SECONDS


def test_a_file_with_a_few_aliases_still_loads_and_compiles_the_same(finance):
    from conftest import REPO
    gl = finance / "datasets" / "gl.yml"
    text = gl.read_text()
    text = text.replace('{name: amount_local, type: "decimal(18,2)"}', '{name: amount_local, type: &money "decimal(18,2)"}')
    text = text.replace('{name: amount_reporting, type: "decimal(18,2)"}', "{name: amount_reporting, type: *money}")
    assert "*money" in text and "&money" in text
    gl.write_text(text)
    assert cli(finance, "validate").exit_code == 0
    result = cli(finance, "compile", "ts03_fx_conversion")
    assert result.exit_code == 0, describe(result)
    assert result.output == (REPO / "tests" / "golden" / "finance" / "ts03_fx_conversion.sql").read_text()


def test_the_node_bound_counts_every_use_of_an_alias(monkeypatch):
    # lol0 = 1 list + 3 scalars; lol1 = 1 + 3 * 4; the document = 1 + 2 keys + 4 + 13 = 20 values
    text = billion_laughs(levels=1, width=3)
    monkeypatch.setattr(yaml_source, "MAX_YAML_NODES", 20)
    assert load_yaml_text(text, "t.yml") == {"lol0": ["lol"] * 3, "lol1": [["lol"] * 3] * 3}
    monkeypatch.setattr(yaml_source, "MAX_YAML_NODES", 19)
    with pytest.raises(CompileError) as err:
        load_yaml_text(text, "t.yml")
    assert [d.code for d in err.value.diagnostics] == ["YAML-007"]


def test_the_node_bound_holds_without_aliases(monkeypatch):
    # no anchor: a plain count (1 mapping + 2 keys + 1 list + 3 items + 1 scalar = 8 values)
    text = "a: [1, 2, 3]\nb: x\n"
    monkeypatch.setattr(yaml_source, "MAX_YAML_NODES", 8)
    assert load_yaml_text(text, "t.yml") == {"a": [1, 2, 3], "b": "x"}
    monkeypatch.setattr(yaml_source, "MAX_YAML_NODES", 7)
    with pytest.raises(CompileError) as err:
        load_yaml_text(text, "t.yml")
    assert [d.code for d in err.value.diagnostics] == ["YAML-007"]


def test_oversized_text_is_yaml_008(monkeypatch):
    monkeypatch.setattr(yaml_source, "MAX_YAML_BYTES", 10)
    with pytest.raises(CompileError) as err:
        load_yaml_text("name: a_long_name\n", "t.yml")
    assert [d.code for d in err.value.diagnostics] == ["YAML-008"]
