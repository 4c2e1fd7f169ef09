"""The ``ledgerflow`` command line: a thin layer that turns errors into one paragraph and an exit code."""
from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from typing import Optional

import click

from ..compiler.errors import CompileError, Diagnostic, LedgerflowError

# Everything else is imported by the command that needs it: `ledgerflow --version` and `runs list`
# start without sqlglot, Jinja or YAML; `compile` and `validate` without the runner (pyspark) and,
# in a workspace where nothing ran yet, without the run store (sqlite3).


def _options(fn):
    fn = click.option("--workspace", "workspace", type=click.Path(file_okay=False), default=None,
                      help="Workspace folder (default: $LEDGERFLOW_WORKSPACE or the nearest ancestor with ledgerflow.yml).")(fn)
    fn = click.option("--debug", is_flag=True, default=False, help="Show tracebacks.")(fn)
    return fn


def handle_errors(fn):
    """Known errors become one readable paragraph on stderr and their exit code; --debug re-raises."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        ctx = click.get_current_context()
        debug = kwargs.get("debug") or (ctx.obj or {}).get("debug")
        try:
            return fn(*args, **kwargs)
        except LedgerflowError as err:
            if debug:
                traceback.print_exc()
            click.echo(f"Error: {err.render()}", err=True)
            sys.exit(err.exit_code)
    return wrapper


def _debug() -> bool:
    """Whether --debug was given (on the command or on the group)."""
    ctx = click.get_current_context()
    return bool(ctx.params.get("debug") or (ctx.find_root().obj or {}).get("debug"))


def _root(workspace: Optional[str]) -> str:
    from ..compiler.workspace import find_workspace
    ctx = click.get_current_context()
    return find_workspace(explicit=workspace or (ctx.obj or {}).get("workspace"))


def _registered(root: str):
    if not os.path.exists(os.path.join(root, ".ledgerflow", "state.db")):
        return []  # nothing ever ran or registered here (the store is created by the first run)
    from .runstore import RunStore
    return RunStore(root).registered_datasets


def _load(root: str):
    """The workspace at ``root`` with its registered datasets."""
    from ..compiler.workspace import load_workspace
    return load_workspace(root, extra_datasets=_registered(root))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", type=click.Path(file_okay=False), default=None, help="Workspace folder.")
@click.option("--debug", is_flag=True, default=False, help="Show tracebacks.")
@click.version_option("0.1.0", prog_name="ledgerflow")
@click.pass_context
def main(ctx, workspace, debug):
    """ledgerflow: YAML financial pipelines compiled to Spark SQL and run on Spark."""
    ctx.obj = {"workspace": workspace, "debug": debug}


@main.command("compile")
@click.argument("project")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Write DIR/<project>/<project>.sql instead of printing (e.g. --out target/compiled).")
@click.option("--period", default=None, help="Period for --resolved (YYYY-MM, YYYY-Qn, YYYY, YYYY-MM-DD).")
@click.option("--resolved", is_flag=True, default=False,
              help="Inline the period's values and resolved locations: a script that runs as is in spark-sql.")
@_options
@handle_errors
def compile_cmd(project, out, period, resolved, workspace, debug):
    """Print the project's Spark SQL."""
    from ..compiler.compile import compile_project, find_project
    from ..compiler.periods import parse_period
    from . import folders
    root = _root(workspace)
    ws = _load(root)
    proj = find_project(ws, project)
    if proj is None:
        raise LedgerflowError(f"no project '{project}'; projects: {', '.join(sorted(p.name for p in ws.projects))}.")
    compiled = compile_project(ws, proj)
    if resolved:
        if not period:
            raise click.UsageError("--resolved needs --period")
        from .resolved import resolved_script
        from .runstore import RunStore
        text = resolved_script(ws, proj, compiled, parse_period(period), RunStore(root))
    else:
        if period:
            raise click.UsageError("--period is only used with --resolved")
        text = compiled.script()
    if out:
        name = folders.segment(proj.name)  # a project name never climbs out of DIR
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{name}{'.' + period if resolved else ''}.sql")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        click.echo(path)
    else:
        click.echo(text)


@main.command("validate")
@click.argument("projects", nargs=-1)
@_options
@handle_errors
def validate_cmd(projects, workspace, debug):
    """Report every compile-time error of every (or the named) project."""
    from ..compiler.compile import find_project, plan_diagnostics
    root = _root(workspace)
    ws = _load(root)
    chosen = []
    for ref in projects:
        proj = find_project(ws, ref)
        if proj is None:
            raise LedgerflowError(f"no project '{ref}'; projects: {', '.join(sorted(p.name for p in ws.projects))}.")
        chosen.append(proj)
    chosen = chosen or ws.projects
    diagnostics: list[Diagnostic] = []
    for proj in chosen:
        diagnostics += plan_diagnostics(ws, proj)
    if diagnostics:
        raise CompileError(diagnostics)
    click.echo(f"ok: {len(chosen)} project{'s' if len(chosen) != 1 else ''} valid "
               f"({', '.join(p.name for p in chosen)})")


def _session_factory(root: str, master: Optional[str], remote: Optional[str], conf: tuple):
    cfg = _load(root).config
    settings = dict(cfg.spark_conf)
    for item in conf:
        if "=" not in item:
            raise click.UsageError(f"--conf takes KEY=VALUE, got '{item}'")
        k, v = item.split("=", 1)
        settings[k] = v
    if master and remote:
        raise click.UsageError("use either --master or --remote, not both")
    if remote:
        from .spark import connect_session
        quiet = not _debug()
        return (lambda: connect_session(remote, settings, quiet=quiet)), remote
    chosen = master or cfg.spark_master or "local[*]"
    from .spark import local_session
    # Spark's own log (and the driver JVM's stderr) goes to target/logs/spark.log unless --debug.
    quiet = not _debug()
    log_file = os.path.join(root, "target", "logs", "spark.log")
    return (lambda: local_session(chosen, settings, quiet=quiet, log_file=log_file)), chosen


@main.command("run")
@click.argument("project", required=False)
@click.option("--select", "select", multiple=True,
              help="Run the selected projects in dependency order: NAME, +NAME, NAME+, dataset:NAME+ ... "
                   "(several separated by spaces: the union).")
@click.option("--all", "run_all", is_flag=True, default=False, help="Run every project in dependency order.")
@click.option("--period", required=True, help="YYYY-MM, YYYY-Qn, YYYY or YYYY-MM-DD.")
@click.option("--master", default=None, help="Spark master URL, e.g. spark://127.0.0.1:7077 (default local[*]).")
@click.option("--remote", default=None, help="Spark Connect URL, e.g. sc://127.0.0.1:15002.")
@click.option("--conf", multiple=True, help="Spark setting KEY=VALUE (repeatable).")
@click.option("--allow-draft", is_flag=True, default=False, help="Run a project whose status is draft.")
@_options
@handle_errors
def run_cmd(project, select, run_all, period, master, remote, conf, allow_draft, workspace, debug):
    """Resolve, execute on Spark, write the outputs and record the run (of PROJECT, or of the projects
    --select or --all name, in dependency order in one SparkSession)."""
    if sum([bool(project), bool(select), run_all]) != 1:
        raise click.UsageError("give exactly one of PROJECT, --select SEL or --all")
    from ..compiler.periods import PeriodError, parse_period
    from .runner import Runner
    from .spark import early_session
    root = _root(workspace)
    try:
        parse_period(period)
    except PeriodError as err:
        raise click.BadParameter(str(err), param_hint="--period")
    factory, label = _session_factory(root, master, remote, conf)
    factory = early_session(factory)  # the JVM starts while the project is compiled and resolved
    runner = Runner(root, echo=click.echo, session_factory=factory, spark_label=label)
    if project:
        runner.run(project, period, allow_draft)
        return
    from .multi_run import run_many
    run_many(runner, root, period, None if run_all else " ".join(select), allow_draft, echo=click.echo)


@main.command("dag")
@click.option("--select", "select", multiple=True, help="Show only the selected nodes (NAME, +NAME, NAME+, dataset:NAME+).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot", "mermaid"]), default="text",
              help="Output format (default text).")
@_options
@handle_errors
def dag_cmd(select, fmt, workspace, debug):
    """The workspace graph: which projects read which datasets, and which register which."""
    from ..compiler.dag_view import render
    from ..compiler.graph import WorkspaceGraph
    from ..compiler.selection import select as select_nodes
    graph = WorkspaceGraph(_load(_root(workspace)))
    click.echo(render(graph, fmt, select_nodes(graph, " ".join(select)) if select else None))


@main.command("replay")
@click.argument("run_id")
@click.option("--master", default=None, help="Spark master URL.")
@click.option("--remote", default=None, help="Spark Connect URL.")
@click.option("--conf", multiple=True, help="Spark setting KEY=VALUE (repeatable).")
@click.option("--allow-changed-inputs", is_flag=True, default=False,
              help="Replay even though input files changed since the run (warns; the new run records what changed).")
@_options
@handle_errors
def replay_cmd(run_id, master, remote, conf, allow_changed_inputs, workspace, debug):
    """Re-execute a recorded run from its project and resolver snapshots (refused when its inputs changed)."""
    from .runner import Runner
    from .spark import early_session
    root = _root(workspace)
    factory, label = _session_factory(root, master, remote, conf)
    factory = early_session(factory)
    Runner(root, echo=click.echo, session_factory=factory, spark_label=label).replay(run_id, allow_changed_inputs)


@main.command("runs")
@click.argument("action", type=click.Choice(["list", "show", "clean"]), default="list")
@click.argument("run_id", required=False)
@click.option("--other-hosts", is_flag=True, default=False,
              help="clean: also trust the lock of runs started on another host (a shared folder whose locks "
                   "all hosts see, e.g. NFSv4).")
@click.option("--json", "as_json", is_flag=True, default=False,
              help="runs show: print the raw run record (run.json) instead of the summary.")
@_options
@handle_errors
def runs_cmd(action, run_id, other_hosts, as_json, workspace, debug):
    """The run registry: `runs list`, `runs show RUN_ID [--json]` (a summary with per-statement timings),
    `runs clean` (interrupted runs and their staging)."""
    from . import recovery
    from .runstore import RunStore
    store = RunStore(_root(workspace))
    if action == "clean":
        for line in recovery.report(recovery.clean(store, other_hosts=other_hosts)):
            click.echo(line)
        return
    for o in recovery.recover(store):  # every time: this is where a user looks for a stuck run
        if o.action == "interrupted":
            click.echo(f"ledgerflow: run {o.run_id} was {o.detail}", err=True)
    if action == "show":
        if not run_id:
            raise click.UsageError("runs show needs a RUN_ID")
        rec = store.get_run(run_id)
        if as_json:
            click.echo(json.dumps(rec, indent=2, default=str))
        else:
            from .run_summary import render_run
            click.echo(render_run(rec))
        return
    runs = store.list_runs()
    if not runs:
        click.echo("no runs yet")
    for r in runs:
        rows = sum(o.get("rows") or 0 for o in r.get("outputs") or [])
        click.echo(f"{r['run_id']}  {r['started_at']}  {r['status']:<9}  {r['project']['name']}  "
                   f"{r['period']['identifier']}  outputs={len(r.get('outputs') or [])} rows={rows}"
                   + (f"  replay of {r['parent_run_id']}" if r.get("parent_run_id") else "")
                   + (f"  error: {r['error'].splitlines()[0].split(';')[0][:160]}" if r["status"] == "failed" and r.get("error") else ""))


@main.command("datasets")
@click.argument("action", type=click.Choice(["list", "show"]), default="list")
@click.argument("name", required=False)
@_options
@handle_errors
def datasets_cmd(action, name, workspace, debug):
    """Declared and registered datasets with their versions."""
    from ..compiler.workspace import load_workspace
    from .runstore import RunStore
    root = _root(workspace)
    store = RunStore(root)
    ws = load_workspace(root, extra_datasets=store.registered_datasets)
    if action == "show":
        if not name:
            raise click.UsageError("datasets show needs a NAME")
        ds = ws.find_dataset(name)
        if ds is None:
            raise LedgerflowError(f"no dataset '{name}'; datasets: {', '.join(sorted(d.name for d in ws.datasets))}.")
        click.echo(f"{ds.name}  id={ds.id}  status={ds.status}  table={ds.table_name}  "
                   f"temporal_mode={ds.temporal_mode}  {'registered' if ds.registered else 'declared in ' + ds.file}")
        for v in ds.versions:
            extra = ""
            if ds.registered:
                reg = next(r for r in store.registrations(ds.name) if r["version"] == v.version)
                extra = f"  periods={','.join(reg['periods'])}  location={reg['location']}  run={reg['run_id']}"
            click.echo(f"  version {v.version}  {v.status}{extra}")
        for c in ds.columns:
            click.echo(f"  column {c.name}: {c.type}")
        return
    for ds in sorted(ws.datasets, key=lambda d: d.name):
        versions = ",".join(f"{v.version}{'' if v.status == 'active' else '(disabled)'}" for v in ds.versions)
        click.echo(f"{ds.name:<24} {'registered' if ds.registered else 'declared':<10} {ds.temporal_mode:<10} "
                   f"{ds.status:<8} versions {versions or 'none yet'}")


if __name__ == "__main__":  # pragma: no cover
    main()
