"""`ledgerflow diff --data` compares every output of a project, also two outputs of one name (a project may
name two outputs alike): each is compared under ``NAME (output SEQ)``. Keyed by name alone, the second one
replaced the first and the first went uncompared."""
from __future__ import annotations

import json

from ledgerflow.adapters.diff.data_command import output_keys
from test_diff import commit, edit, git
from test_diff_data import run

TWO_OUTPUTS = """operations:
  - seq: 1
    name: Write transactions
    type: output
    arguments:
      destination: {table: ts01_before}
  - seq: 2
    name: Drop a currency
    type: delete
    selector: 'currency = "JPY"'
  - seq: 3
    name: Write transactions
    type: output
    arguments:
      destination: {table: ts01_transactions}
"""


def test_two_outputs_of_one_name_are_both_compared(spark, tmp_path):
    from conftest import copy_workspace
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    ws = copy_workspace("finance", root / "ws")
    spec = ws / "projects" / "ts01_output_only.yml"
    text = spec.read_text()
    spec.write_text(text[:text.index("operations:")] + TWO_OUTPUTS)
    base = commit(root, "two outputs named alike")
    edit(spec, 'selector: \'currency = "JPY"\'', 'selector: \'currency = "GBP"\'')
    head = commit(root, "drop GBP instead")
    result = run(ws, "--period", "2026-01", base, head, "--project", "ts01_output_only", "--format", "json")
    assert result.exit_code == 4, result.output
    [project] = json.loads(result.stdout)["projects"]
    outs = {o["name"]: o for o in project["outputs"]}
    assert sorted(outs) == ["Write transactions (output 1)", "Write transactions (output 3)"]
    counts = {name: tuple(o["rows"][k] for k in ("base", "head", "added", "removed", "changed"))
              for name, o in outs.items()}
    gl = [line for line in (ws / "data/gl/v1/transactions.csv").read_text().splitlines() if line.endswith(",2026-01")]
    jpy, gbp = sum(",JPY," in line for line in gl), sum(",GBP," in line for line in gl)
    assert jpy and gbp
    assert counts == {"Write transactions (output 1)": (len(gl), len(gl), 0, 0, 0),  # before the delete: same rows
                      "Write transactions (output 3)": (len(gl) - jpy, len(gl) - gbp, jpy, gbp, 0)}


def test_output_keys_are_names_unless_two_outputs_share_one():
    class Op:
        def __init__(self, seq, name):
            self.seq, self.name = seq, name
    assert output_keys([Op(1, "a"), Op(3, "b"), Op(5, "a")]) == {1: "a (output 1)", 3: "b", 5: "a (output 5)"}
