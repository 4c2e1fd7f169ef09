"""Generate workspaces with long pipelines (for the compile benchmark, the growth benchmark and tests).

A chain project has ``n`` update operations; operation k assigns two columns that read columns
written by earlier operations, so every step depends on the one before.
"""
from __future__ import annotations

import os
import uuid

import yaml

LEDGERFLOW_YML = {
    "name": "generated",
    "default_resolver": "local",
    "resolvers": {"local": {"rules": [{"name": "files", "data_level": "any", "strategy": {
        "type": "path", "path": "data/{{dataset}}/v{{version}}", "format": "parquet"}}]}},
}

GL_DATASET = {
    "id": "0a000000-0000-4000-8000-0000000000f1", "name": "gl", "status": "active", "versions": [{"version": 1}],
    "main_table": {"name": "transactions", "temporal_mode": "period", "columns": [
        {"name": "journal_id", "type": "string"}, {"name": "line_number", "type": "integer"},
        {"name": "account_code", "type": "string"}, {"name": "currency", "type": "string"},
        {"name": "amount_local", "type": "decimal(18,2)"}, {"name": "amount_reporting", "type": "decimal(18,2)"}]},
}


def chain_operations(n: int, with_output: bool = True) -> list[dict]:
    """``n`` dependent updates and a final output (to ``target/out/chain_<n>``: a folder of its own, one writer
    per destination).

    Operation 1 creates ``acc_a`` and ``acc_b``; every later operation rewrites both from the values
    the previous one wrote, so each step depends on the one before while the schema stays small.
    Every third operation has a selector.
    """
    ops = []
    for k in range(1, n + 1):
        if k == 1:
            assignments = [{"column": "acc_a", "expression": "transactions.amount_local"},
                           {"column": "acc_b", "expression": "transactions.line_number"}]
        else:
            assignments = [{"column": "acc_a", "expression": "transactions.acc_a + transactions.acc_b"},
                           {"column": "acc_b", "expression": "transactions.acc_b * 2 - transactions.acc_b + 1"}]
        op = {"seq": k, "name": f"step {k}", "type": "update", "arguments": {"assignments": assignments}}
        if k % 3 == 0:
            op["selector"] = "transactions.acc_b >= 0"
        ops.append(op)
    if with_output:
        ops.append({"seq": n + 1, "name": "write", "type": "output",
                    "arguments": {"destination": {"path": f"target/out/chain_{n}", "format": "parquet"},
                                  "columns": ["journal_id", "amount_local", "acc_a", "acc_b"]}})
    return ops


def write_chain_workspace(folder: str, sizes: list[int]) -> list[str]:
    """Write a workspace with one chain project per size; returns the project names."""
    os.makedirs(os.path.join(folder, "datasets"), exist_ok=True)
    os.makedirs(os.path.join(folder, "projects"), exist_ok=True)
    with open(os.path.join(folder, "ledgerflow.yml"), "w") as fh:
        yaml.safe_dump(LEDGERFLOW_YML, fh, sort_keys=False)
    with open(os.path.join(folder, "datasets", "gl.yml"), "w") as fh:
        yaml.safe_dump(GL_DATASET, fh, sort_keys=False)
    names = []
    for n in sizes:
        name = f"chain_{n}"
        project = {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, name)), "name": name, "version": 1, "status": "active",
                   "input_dataset_id": "gl", "operations": chain_operations(n)}
        with open(os.path.join(folder, "projects", f"{name}.yml"), "w") as fh:
            yaml.safe_dump(project, fh, sort_keys=False)
        names.append(name)
    return names
