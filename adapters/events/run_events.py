"""OpenLineage events as plain JSON-ready dicts, built from ledgerflow's run records (docs/openlineage.md).

A run is a run of the job ``<namespace>/<project>``: ``START`` when it is recorded running, then ``COMPLETE``,
``FAIL`` or ``ABORT`` (interrupted), with the same ``runId`` (the run id, a UUID). Run facets: ``nominalTime``
(the period), ``processing_engine`` (Spark), ``parent`` (the batch, itself a run of the job ``ledgerflow_batch``),
``errorMessage`` (a failure) and ``ledgerflow`` (environment, batch, period, a restatement's or a promotion's
details). Inputs: each location the run read, with ``schema``, ``version`` and ``ledgerflow`` (dataset, version,
fingerprint). Outputs: each destination (its folder without the period's partition, a catalog table or a URI)
with ``schema``, ``columnLineage`` (the compiler's lineage, each input field with its transformation type),
``version`` (the version folder published), ``dataQualityMetrics`` (the bridge's totals: the row count and each
summed column; figures per group, from a check's ``by:``, are only in the ``ledgerflow`` facet), ``dataQualityAssertions`` (each check on it; a check on the input is an input facet of the project's input
dataset) and ``outputStatistics`` (rows); a failed run published nothing, and its checks are in its ``ledgerflow``
run facet. A promotion is a run of the
job ``ledgerflow_promote``. The standard facets follow the OpenLineage specification's schemas (the tests validate
every event against them); ``ledgerflow``'s own facets follow ``docs/openlineage-facets.schema.json``.
"""
from __future__ import annotations

import os
import re
from decimal import Decimal, InvalidOperation
from typing import Optional

from ...compiler.lineage_formats import transformation
from ...compiler.version import version
from ..layout.partition_paths import root_period

EVENT_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
LEDGERFLOW_FACETS = "https://ledgerflow.invalid/spec/facets/1-0-0/LedgerflowFacets.json"
BATCH_JOB = "ledgerflow_batch"
PROMOTE_JOB = "ledgerflow_promote"
_STANDARD = {  # facet key -> (schema version, schema name)
    "nominalTime": ("1-0-1", "NominalTimeRunFacet"), "processing_engine": ("1-1-1", "ProcessingEngineRunFacet"),
    "parent": ("1-2-0", "ParentRunFacet"), "errorMessage": ("1-0-1", "ErrorMessageRunFacet"),
    "schema": ("1-2-0", "SchemaDatasetFacet"), "columnLineage": ("1-2-0", "ColumnLineageDatasetFacet"),
    "outputStatistics": ("1-0-2", "OutputStatisticsOutputDatasetFacet"),
    "dataQualityMetrics": ("1-0-0", "DataQualityMetricsDatasetFacet"),
    "dataQualityAssertions": ("1-1-0", "DataQualityAssertionsDatasetFacet"),
    "version": ("1-0-1", "DatasetVersionDatasetFacet"), "jobType": ("2-0-4", "JobTypeJobFacet"),
    "sql": ("1-1-0", "SQLJobFacet"),
}


def producer() -> str:
    """The ``producer`` URI of every event and facet: this ledgerflow's version."""
    return f"urn:ledgerflow:{version()}"


def facet(key: str, **fields) -> dict:
    """A standard facet ``key`` with its ``_producer`` and ``_schemaURL``."""
    ver, name = _STANDARD[key]
    return {"_producer": producer(), "_schemaURL": f"https://openlineage.io/spec/facets/{ver}/{name}.json#/$defs/{name}",
            **fields}


def own_facet(definition: str, **fields) -> dict:
    """One of ledgerflow's facets (``LedgerflowRunFacet``, ``LedgerflowDatasetFacet``)."""
    return {"_producer": producer(), "_schemaURL": f"{LEDGERFLOW_FACETS}#/$defs/{definition}", **fields}


def dataset_id(location: str) -> tuple[str, str]:
    """(namespace, name) of a location, as OpenLineage names datasets: a local path ``file`` and the path; a URI its
    scheme and authority, and its path; anything else (a catalog table) ``spark_catalog`` and the table name."""
    location = location[len("file:"):] if location.startswith("file:") else location
    if location.startswith("/"):
        return "file", location
    found = re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://([^/]*)(/.*)?$", location)
    if found:
        return f"{found.group(1)}://{found.group(2)}", (found.group(3) or "/")
    return "spark_catalog", location


def destination_of(location: str) -> str:
    """An output's destination: its location without the period's partition (and an environment's folder)."""
    if not isinstance(location, str) or not os.path.basename(location.rstrip("/")).startswith("_period="):
        return location  # a table, a URI or a folder without partitions
    return root_period(location.rstrip("/"))[0]


def _number(text) -> Optional[float]:
    try:
        return float(Decimal(str(text)))
    except (InvalidOperation, ValueError, TypeError):
        return None


def _columns(snapshot_columns) -> list[dict]:
    return [{"name": str(c.get("name")), "type": str(c.get("type"))} for c in snapshot_columns or []
            if isinstance(c, dict) and c.get("name")]


def inputs_of(record: dict) -> list[dict]:
    """The input datasets of a run record: each location of each resolved view, with its facets."""
    snap = record.get("resolver_snapshot") or {}
    prints = {f.get("view"): f for f in snap.get("input_fingerprints") or [] if isinstance(f, dict)}
    declared = {d.get("id"): d for d in record.get("datasets_snapshot") or [] if isinstance(d, dict)}
    out, seen = [], set()
    for view, res in sorted((snap.get("resolutions") or {}).items()):
        ds = declared.get(res.get("dataset_id")) or {}
        columns = _columns((ds.get("main_table") or {}).get("columns"))
        fingerprint = (prints.get(view) or {}).get("listing_sha256")
        for loc in res.get("locations") or []:
            target = loc.get("target") if isinstance(loc, dict) else loc
            if not isinstance(target, str) or dataset_id(target) in seen:
                continue
            seen.add(dataset_id(target))
            namespace, name = dataset_id(target)
            facets = {"version": facet("version", datasetVersion=str(res.get("version"))),
                      "ledgerflow": own_facet("LedgerflowDatasetFacet", dataset=str(res.get("dataset_name")),
                                              datasetVersion=res.get("version"), fingerprint=fingerprint,
                                              resolver=res.get("resolver_id"))}
            if columns:
                facets["schema"] = facet("schema", fields=columns)
            out.append({"namespace": namespace, "name": name, "facets": facets})
    return out


def _lineage_facet(output: dict, inputs: list[dict]) -> Optional[dict]:
    """``columnLineage`` of one output from the lineage its record holds (dataset names mapped to the run's input
    datasets; a dataset the run did not read directly is named in ledgerflow's namespace)."""
    by_name: dict[str, list[tuple[str, str]]] = {}
    for i in inputs:
        by_name.setdefault(i["facets"]["ledgerflow"]["dataset"], []).append((i["namespace"], i["name"]))
    fields = {}
    for col in ((output.get("lineage") or {}).get("columns") or []):
        found = []
        for inp in col.get("inputs") or []:
            kind = transformation(str(inp.get("kind") or ""))
            for namespace, name in by_name.get(inp.get("dataset"), [("ledgerflow", str(inp.get("dataset")))]):
                found.append({"namespace": namespace, "name": name, "field": str(inp.get("column")),
                              "transformations": [kind]})
        fields[str(col.get("column"))] = {"inputFields": found}
    return facet("columnLineage", fields=fields) if fields else None


def outputs_of(record: dict, inputs: list[dict], types: Optional[dict] = None) -> list[dict]:
    """The output datasets of a run record (``types``: output seq -> [(column, type)] from the compiled plan)."""
    staged = {e.get("link"): e.get("staged") for e in ((record.get("commit") or {}).get("partitions") or [])
              if isinstance(e, dict)}
    out = []
    for o in record.get("outputs") or []:
        seq, location = o.get("operation_seq"), o.get("location")
        if not isinstance(location, str):
            continue
        namespace, name = dataset_id(destination_of(location))
        facets: dict = {}
        columns = [{"name": n, "type": t} for n, t in (types or {}).get(seq, [])]
        if columns:
            facets["schema"] = facet("schema", fields=columns)
        lineage = _lineage_facet(o, inputs)
        if lineage:
            facets["columnLineage"] = lineage
        if staged.get(location):
            facets["version"] = facet("version", datasetVersion=os.path.basename(staged[location]))
        bridge = [b for b in record.get("bridge") or [] if isinstance(b, dict) and b.get("output") == seq]
        metrics = {}
        for b in bridge:
            if b.get("group") is not None:  # a check's `by:` breakdown: one group's figures, not the output's total
                continue
            found = re.fullmatch(r"SUM\((.+)\)", str(b.get("measure")))
            value = _number(b.get("output_value"))
            if found and value is not None:
                metrics[found.group(1)] = {"sum": value}
        facets["dataQualityMetrics"] = facet("dataQualityMetrics", rowCount=int(o.get("rows") or 0), columnMetrics=metrics)
        checks = [c for c in record.get("checks") or [] if isinstance(c, dict) and str(c.get("on")) == str(seq)]
        if checks:
            facets["dataQualityAssertions"] = _assertions(checks)
        facets["ledgerflow"] = own_facet("LedgerflowDatasetFacet", outputSeq=seq, partition=location,
                                         registeredDataset=o.get("registered_dataset"),
                                         datasetVersion=o.get("registered_version"),
                                         bridge=[{k: b.get(k) for k in ("measure", "group", "input", "output_value")}
                                                 for b in bridge])
        out.append({"namespace": namespace, "name": name, "facets": facets,
                    "outputFacets": {"outputStatistics": facet("outputStatistics", rowCount=int(o.get("rows") or 0))}})
    return out


def _run_facets(record: dict, namespace: str, error: Optional[str]) -> dict:
    period = record.get("period") or {}
    spark = record.get("spark") or {}
    facets = {"nominalTime": facet("nominalTime", nominalStartTime=f"{period.get('start')}T00:00:00Z",
                                   nominalEndTime=f"{period.get('end')}T23:59:59Z")}
    if spark.get("version"):
        facets["processing_engine"] = facet("processing_engine", version=str(spark["version"]), name="spark",
                                            openlineageAdapterVersion=version())
    if record.get("batch_id"):
        facets["parent"] = facet("parent", run={"runId": record["batch_id"]},
                                 job={"namespace": namespace, "name": BATCH_JOB})
    if error:
        facets["errorMessage"] = facet("errorMessage", message=error, programmingLanguage="python")
    own = {"env": record.get("env") or "prod", "batchId": record.get("batch_id"), "period": period.get("identifier"),
           "status": record.get("status")}
    if record.get("restatement"):
        block = record["restatement"]
        own["restatement"] = {k: block.get(k) for k in ("reason", "by", "supersedes_run_id", "from_env")}
    if record.get("promotion"):
        own["promotion"] = dict(record["promotion"])
    if record.get("checks"):  # a failed run published nothing: its checks are said here (and, completed, per dataset)
        own["checks"] = [{k: c.get(k) for k in ("name", "kind", "on", "severity", "status", "violations")}
                         for c in record["checks"] if isinstance(c, dict)]
    facets["ledgerflow"] = own_facet("LedgerflowRunFacet", **own)
    return facets


def _assertions(checks: list[dict]) -> dict:
    return facet("dataQualityAssertions", assertions=[
        {"assertion": str(c.get("kind")), "name": str(c.get("name")), "success": c.get("status") == "passed",
         "severity": str(c.get("severity") or "error")} for c in checks])


def _input_assertions(record: dict, inputs: list[dict]) -> None:
    """The checks ``on: input`` as ``dataQualityAssertions`` of the project's input dataset's locations."""
    checks = [c for c in record.get("checks") or [] if isinstance(c, dict) and str(c.get("on")) == "input"]
    snap = record.get("resolver_snapshot") or {}
    main = {d.get("id"): d.get("name") for d in record.get("datasets_snapshot") or [] if isinstance(d, dict)}.get(
        snap.get("input_dataset_id"))
    for i in inputs if checks else []:
        if i["facets"]["ledgerflow"]["dataset"] == main:
            i["inputFacets"] = {"dataQualityAssertions": _assertions(checks)}


def run_event(event_type: str, record: dict, namespace: str, types: Optional[dict] = None,
              sql: Optional[str] = None) -> dict:
    """The ``event_type`` event (START, COMPLETE, FAIL, ABORT) of the run ``record`` describes."""
    at = record.get("finished_at") if event_type != "START" else None
    at = at or record.get("run_started_at") or record.get("started_at")
    error = (record.get("error") or "").strip() or None if event_type in ("FAIL", "ABORT") else None
    inputs = inputs_of(record)
    if event_type == "COMPLETE":
        _input_assertions(record, inputs)
    job_facets = {"jobType": facet("jobType", processingType="BATCH", integration="LEDGERFLOW", jobType="PROJECT")}
    if sql:
        job_facets["sql"] = facet("sql", query=sql)
    return {
        "eventType": event_type, "eventTime": _utc(at), "producer": producer(), "schemaURL": EVENT_SCHEMA,
        "run": {"runId": record["run_id"], "facets": _run_facets(record, namespace, error)},
        "job": {"namespace": namespace, "name": record["project"]["name"], "facets": job_facets},
        "inputs": inputs,
        "outputs": outputs_of(record, inputs, types) if event_type == "COMPLETE" else [],
    }


def promotion_event(event_type: str, promotion: dict, namespace: str) -> dict:
    """The ``event_type`` event of a promotion (its journal's record): a run of the job ``ledgerflow_promote``
    reading the source environment's destinations and writing the target's."""
    datasets = sorted({dataset_id(destination_of(link)) for item in promotion.get("items") or []
                       for link in item.get("partitions") or []})
    own = {k: promotion.get(k) for k in ("from", "to", "by", "at")}
    own["projectPeriods"] = [f"{i.get('project')} {i.get('period')}" for i in promotion.get("items") or []]
    if promotion.get("restatement"):
        own["restatement"] = {k: promotion["restatement"].get(k) for k in ("reason", "by", "supersedes_run_id", "from_env")}
    facets = {"ledgerflow": own_facet("LedgerflowRunFacet", env=promotion.get("to"), status=promotion.get("status"),
                                      promotion=own)}
    if event_type == "FAIL" and promotion.get("error"):
        facets["errorMessage"] = facet("errorMessage", message=str(promotion["error"]), programmingLanguage="python")
    return {
        "eventType": event_type, "eventTime": _utc(promotion.get("at")), "producer": producer(),
        "schemaURL": EVENT_SCHEMA, "run": {"runId": promotion["promotion_id"], "facets": facets},
        "job": {"namespace": namespace, "name": PROMOTE_JOB,
                "facets": {"jobType": facet("jobType", processingType="BATCH", integration="LEDGERFLOW",
                                            jobType="PROMOTION")}},
        "inputs": [{"namespace": n, "name": d} for n, d in datasets],
        "outputs": [{"namespace": n, "name": d} for n, d in datasets] if event_type == "COMPLETE" else [],
    }


def _utc(at) -> str:
    """A record's time (UTC, no zone written) as an RFC 3339 date-time."""
    text = str(at or "1970-01-01T00:00:00")
    return text if text.endswith("Z") or "+" in text[10:] else text + "Z"
