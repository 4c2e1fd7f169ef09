"""Load ``ledgerflow.yml``: the workspace's name, its resolvers and their rules, the Spark settings."""
from __future__ import annotations

import json
from typing import Optional

from .errors import DiagnosticCollector, Location, did_you_mean
from .model import Resolver, ResolverRule, Strategy, WorkspaceConfig
from .yaml_reader import Reader, as_str
from .yaml_source import YList, YMap, read_yaml_file

MARKER = "ledgerflow.yml"
BRIDGE = ("always", "with_checks", "off")  # which runs record their bridge, the default first (docs/checks.md "The bridge")
DATA_LEVELS = ("any", "day", "month", "quarter", "year")
FORMATS = ("parquet", "csv", "json", "orc")


def load_config(path: str, display: str, errors: DiagnosticCollector) -> WorkspaceConfig:
    """Read ``ledgerflow.yml`` (shown as ``display``), adding every problem to ``errors``."""
    data, digest = read_yaml_file(path, display)
    r = Reader(data, MARKER, ("name", "default_resolver", "resolvers", "spark", "description", "bridge", "openlineage"),
               ("name",), errors, Location(display, 1, 1))
    resolvers: dict[str, Resolver] = {}
    res_map = r.get("resolvers", YMap, YMap())
    for rname, rdata in res_map.items():
        rr = Reader(rdata, f"resolver '{rname}'", ("rules", "description"), ("rules",), errors,
                    res_map.value_location(rname) if isinstance(res_map, YMap) else Location(display))
        rules = []
        rule_list = rr.get("rules", YList, YList())
        for i, rule in enumerate(rule_list):
            loc = rule_list.item_locations[i]
            ru = Reader(rule, f"rule {i + 1} of resolver '{rname}'", ("name", "when", "data_level", "strategy"),
                        ("name", "strategy"), errors, loc)
            strategy = _load_strategy(ru, errors, f"rule '{ru.get('name', str, '?')}'")
            rules.append(ResolverRule(name=ru.get("name", str, f"rule{i + 1}"),
                                      data_level=ru.choice("data_level", DATA_LEVELS, "any"),
                                      strategy=strategy, when=ru.get("when", str), location=loc))
        resolvers[str(rname)] = Resolver(str(rname), rules, res_map.key_location(rname))
    spark = r.get("spark", YMap, YMap())
    sr = Reader(spark, "spark", ("master", "conf"), (), errors, r.loc("spark"))
    conf = {str(k): as_str(v) for k, v in sr.get("conf", YMap, {}).items()}
    default = r.get("default_resolver", str)
    if default and default not in resolvers:
        errors.add("WS-004", f"default_resolver '{default}' is not defined under resolvers", r.loc("default_resolver"),
                   default, did_you_mean(default, resolvers))
    return WorkspaceConfig(name=r.get("name", str, ""), default_resolver=default, resolvers=resolvers,
                           spark_master=sr.get("master", str), spark_conf=conf, file=display,
                           bridge=_bridge(r, data), openlineage=_openlineage(r, errors), text_sha256=digest)


def _openlineage(r: Reader, errors: DiagnosticCollector) -> Optional[dict]:
    """``openlineage: {namespace: NAME, transport: {type: http|file|console|..., ...}}`` as plain data (the transport
    is the openlineage-python client's own configuration, passed to it as written); None when absent."""
    if "openlineage" not in r.data:
        return None
    section = r.get("openlineage", YMap, YMap())
    ol = Reader(section, "openlineage", ("namespace", "transport", "disabled"), (), errors, r.loc("openlineage"))
    transport = ol.get("transport", YMap, None)
    if transport is not None and "type" not in transport:
        errors.add("YAML-004", "openlineage's transport needs 'type' (http, file, console, kafka, ...)",
                   ol.loc("transport"), "", "add 'type: http' and 'url: ...', as the OpenLineage client's configuration")
    plain = json.loads(json.dumps(transport)) if transport is not None else None
    return {"namespace": ol.get("namespace", str), "transport": plain, "disabled": bool(ol.get("disabled", bool, False))}


def _bridge(r: Reader, data) -> str:
    """``bridge:``; YAML reads an unquoted ``off`` as false, which means the same."""
    if isinstance(data, dict) and data.get("bridge") is False:
        return "off"
    return r.choice("bridge", BRIDGE, BRIDGE[0])


def _load_strategy(ru: Reader, errors: DiagnosticCollector, where: str) -> Strategy:
    data = ru.get("strategy", YMap, None)
    if data is None:
        return Strategy(type="path", path="")
    s = Reader(data, f"strategy of {where}", ("type", "path", "format", "table", "options"), ("type",), errors,
               ru.loc("strategy"))
    kind = s.choice("type", ("path", "table"), "path")
    if kind == "path" and "path" not in data:
        errors.add("YAML-004", f"a path strategy needs 'path' ({where})", s.data.location, "", "add 'path:'")
    if kind == "table" and "table" not in data:
        errors.add("YAML-004", f"a table strategy needs 'table' ({where})", s.data.location, "", "add 'table:'")
    # A table rule's names are checked where a project uses the rule (bind: an output writing through it, a
    # dataset read through it), with that use's token values: a rule no project uses fails nobody's validate.
    table = s.get("table", str)
    options = tuple(sorted((str(k), as_str(v)) for k, v in s.get("options", YMap, {}).items()))
    return Strategy(type=kind, path=s.get("path", str), format=s.choice("format", FORMATS, "parquet"),
                    table=table, options=options)

