"""The ``ledgerflow`` command line: a thin layer that turns errors into one paragraph and an exit code."""
from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from typing import TYPE_CHECKING, Optional

import click

from ..compiler.errors import CompileError, Diagnostic, LedgerflowError
from ..compiler.version import version
from ..compiler.visible_text import visible

if TYPE_CHECKING:
    from ..compiler.model import Project, Workspace
    from .store.runstore import RunStore

# Everything else is imported by the command that needs it: `ledgerflow --version` and `runs list`
# start without sqlglot, Jinja or YAML; `compile` and `validate` without the runner (pyspark) and,
# in a workspace where nothing ran yet, without the run store (sqlite3).


class Invocation:
    """What one command works on, each part found or loaded at most once (click's context object):
    the workspace folder, the workspace with its registered datasets, and the run store.

    ``--workspace`` and ``--debug`` may be given before or after the command's name."""

    def __init__(self, workspace: Optional[str] = None, debug: bool = False):
        self.workspace_option = workspace
        self.debug = debug
        self._root: Optional[str] = None
        self._workspace: Optional[Workspace] = None
        self._store: Optional[RunStore] = None

    @property
    def root(self) -> str:
        """The workspace folder (``--workspace``, ``$LEDGERFLOW_WORKSPACE`` or the nearest marker)."""
        if self._root is None:
            from ..compiler.workspace import find_workspace
            self._root = find_workspace(explicit=self.workspace_option)
        return self._root

    @property
    def store(self) -> RunStore:
        """The run store (opening it recovers interrupted runs, once per process)."""
        if self._store is None:
            from .open_store import open_store
            self._store = open_store(self.root)
        return self._store

    @property
    def workspace(self) -> Workspace:
        """The workspace with its registered datasets, loaded on first use."""
        if self._workspace is None:
            from ..compiler.workspace import load_workspace
            self._workspace = load_workspace(self.root, extra_datasets=self._registered())
        return self._workspace

    def _registered(self):
        if self._store is None and not os.path.exists(os.path.join(self.root, ".ledgerflow", "state.db")):
            return None  # nothing ever ran or registered here (the store is created by the first run)
        if not _store_optional():
            return self.store.registered_datasets
        from .store.health import RunStoreUnusable, unusable, warning
        try:
            store = self.store
        except RunStoreUnusable as err:  # validate, compile, lineage, dag, diff, test: go on without the store
            click.echo(warning(err), err=True)
            return None

        def registered():
            try:
                return store.registered_datasets()
            except Exception as err:  # corruption deeper in the file shows only when read
                found = unusable(err, store.db_path)
                if found is None:
                    raise
                click.echo(warning(found), err=True)
                return []
        return registered

    def project(self, ref: str) -> Project:
        """The project ``ref`` (name, id or YAML path) of the workspace, or an error listing its projects."""
        from ..compiler.compile import require_project
        return require_project(self.workspace, ref)


# Commands that work without the run store (a damaged one is a warning for them, an error for the rest).
_WITHOUT_STORE = ("validate", "compile", "lineage", "dag", "diff", "test")


def _store_optional() -> bool:
    ctx = click.get_current_context(silent=True)
    return (ctx is not None and ctx.info_name in _WITHOUT_STORE
            and not ctx.params.get("record_run") and not ctx.params.get("resolved"))


def _store_damage(inv: Invocation, err: Exception) -> Optional[LedgerflowError]:
    """The one-paragraph error for a damaged or unreadable ``state.db`` found deep in a command (any SQLite
    error: ledgerflow uses SQLite for its run store only), or None."""
    if "sqlite3" not in sys.modules or inv._root is None:
        return None
    from .store.health import unusable
    return unusable(err, os.path.join(inv._root, ".ledgerflow", "state.db"))


def command(fn):
    """A command: the shared ``--workspace``/``--debug`` options, the :class:`Invocation` as first
    argument, and known errors as one readable paragraph on stderr with their exit code (``--debug``
    adds the traceback)."""
    @functools.wraps(fn)
    def wrapper(*args, workspace: Optional[str] = None, debug: bool = False, **kwargs):
        inv = click.get_current_context().ensure_object(Invocation)
        if workspace:
            inv.workspace_option = workspace
        inv.debug = inv.debug or debug
        try:
            return fn(inv, *args, **kwargs)
        except LedgerflowError as err:
            if inv.debug:
                traceback.print_exc()
            click.echo(f"Error: {visible(err.render(), keep=chr(10) + chr(9))}", err=True)  # names' escapes shown
            sys.exit(err.exit_code)
        except KeyboardInterrupt as stop:  # a run's Ctrl-C says what became of the run (interrupts.py)
            exit_code = getattr(stop, "exit_code", None)
            if exit_code is None:
                raise  # elsewhere: click's "Aborted!"
            if inv.debug:
                traceback.print_exc()
            click.echo(f"Interrupted: {stop}", err=True)
            sys.exit(exit_code)
        except Exception as err:  # a damaged or unreadable run store met deep inside a command (store_health.py)
            damage = _store_damage(inv, err)
            if damage is None:
                raise
            if inv.debug:
                traceback.print_exc()
            click.echo(f"Error: {damage.render()}", err=True)
            sys.exit(damage.exit_code)
    wrapper = click.option("--workspace", "workspace", type=click.Path(file_okay=False), default=None,
                           help="Workspace folder (default: $LEDGERFLOW_WORKSPACE or the nearest ancestor with "
                                "ledgerflow.yml).")(wrapper)
    return click.option("--debug", is_flag=True, default=False, help="Show tracebacks.")(wrapper)


def _print_version(ctx, _param, value):
    """``--version``: the installed distribution's version (pyproject.toml's), as click's version option prints it."""
    if value and not ctx.resilient_parsing:
        click.echo(f"ledgerflow, version {version()}")
        ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", type=click.Path(file_okay=False), default=None, help="Workspace folder.")
@click.option("--debug", is_flag=True, default=False, help="Show tracebacks.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
@click.pass_context
def main(ctx, workspace, debug):
    """ledgerflow: YAML financial pipelines compiled to Spark SQL and run on Spark."""
    ctx.obj = Invocation(workspace, debug)


@main.command("compile")
@click.argument("project", required=False)
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Write DIR/<project>/<project>.sql instead of printing (e.g. --out target/compiled); a "
                   "name that is not plain lower-case is escaped (Close: DIR/+43lose/+43lose.sql).")
@click.option("--period", default=None, help="Period for --resolved (YYYY-MM, YYYY-Qn, YYYY, YYYY-MM-DD).")
@click.option("--resolved", is_flag=True, default=False,
              help="Inline the period's values and resolved locations: a script that runs as is in spark-sql.")
@click.option("--all", "all_projects", is_flag=True, default=False,
              help="Every project: with --out DIR writes each one's SQL, with --check DIR verifies DIR.")
@click.option("--check", type=click.Path(file_okay=False), default=None,
              help="With --all: exit 4 when DIR differs from a fresh compile (stale, missing or extra files).")
@command
def compile_cmd(inv: Invocation, project, out, period, resolved, all_projects, check):
    """Print the project's Spark SQL (--all: every project's, to --out DIR or checked against --check DIR)."""
    if all_projects or check:
        return _compile_all(inv, project, out, check, resolved or period, all_projects)
    if project is None:
        raise click.UsageError("compile needs a PROJECT (or --all)")
    from ..compiler.gcpause import gc_paused
    # One project, then the process ends: the collector stays off from the imports on, and what the
    # compile made is left to the exit (see gc_paused).
    with gc_paused(until_exit=True):
        _compile_one(inv, project, out, period, resolved)


def _compile_one(inv: Invocation, project, out, period, resolved):
    """compile PROJECT [--out DIR] [--resolved --period P]."""
    from ..compiler.compile import compile_project
    from ..compiler.periods import parse_period
    from .compile_out import folders
    from .compile_out.paths import check_folder, write_failed
    if out:
        check_folder(out, "--out")
    proj = inv.project(project)
    compiled = compile_project(inv.workspace, proj)
    if resolved:
        if not period:
            raise click.UsageError("--resolved needs --period")
        from .compile_out.resolved_script import resolved_script
        text = resolved_script(inv.workspace, proj, compiled, parse_period(period), inv.store)
    else:
        if period:
            raise click.UsageError("--period is only used with --resolved")
        text = compiled.script()
    if out:
        name = folders.segment(proj.name)  # a project name never climbs out of DIR
        folder = os.path.join(out, name)
        path = os.path.join(folder, f"{name}{'.' + period if resolved else ''}.sql")
        try:
            os.makedirs(folder, exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except OSError as err:
            raise write_failed(path, err, f"the SQL of project '{proj.name}'") from None
        click.echo(path)
    else:
        click.echo(text)


def _compile_all(inv: Invocation, project, out, check, resolved, all_projects):
    """compile --all --out DIR | --all --check DIR (see compile_all.py)."""
    from .compile_out import all_projects as compile_all
    if not all_projects:
        raise click.UsageError("--check needs --all")
    if project is not None or resolved:
        raise click.UsageError("--all compiles every project: give no PROJECT, --period or --resolved")
    if bool(out) == bool(check):
        raise click.UsageError("--all needs exactly one of --out DIR or --check DIR")
    if out:
        from .compile_out.paths import check_folder
        check_folder(out, "--out")
    ws = inv.workspace
    if out:
        written, removed = compile_all.write_all(ws, out)
        for path in written:
            click.echo(path)
        for path in removed:  # a project's file of an older layout or of a project that is gone
            click.echo(f"removed {path}")
        return
    result = compile_all.check_all(ws, check)
    if not result.ok:
        for line in result.lines(check):
            click.echo(line, err=True)
        sys.exit(compile_all.EXIT_STALE)
    click.echo(f"ok: {check} is up to date ({len(ws.projects)} projects)")


@main.command("validate")
@click.argument("projects", nargs=-1)
@command
def validate_cmd(inv: Invocation, projects):
    """Report every compile-time error of every (or the named) project."""
    from ..compiler.compile import plan_diagnostics
    chosen = [inv.project(ref) for ref in projects] or inv.workspace.projects
    diagnostics: list[Diagnostic] = []
    for proj in chosen:
        diagnostics += plan_diagnostics(inv.workspace, proj)
    if diagnostics:
        raise CompileError(diagnostics)
    click.echo(f"ok: {len(chosen)} project{'s' if len(chosen) != 1 else ''} valid "
               f"({visible(', '.join(p.name for p in chosen))})")


def _session_factory(inv: Invocation, master: Optional[str], remote: Optional[str], conf: tuple,
                     for_tests: bool = False):
    """(a SparkSession factory, its label) from ledgerflow.yml's ``spark`` settings and the flags;
    ``for_tests``: the driver JVM tuned for ``ledgerflow test`` (``spark.scenario_test_conf``)."""
    cfg = inv.workspace.config
    settings = dict(cfg.spark_conf)
    if for_tests:
        from .spark.session import scenario_test_conf
        settings = scenario_test_conf(settings)
    for item in conf:
        if "=" not in item:
            raise click.UsageError(f"--conf takes KEY=VALUE, got '{item}'")
        k, v = item.split("=", 1)
        settings[k] = v
    if master and remote:
        raise click.UsageError("use either --master or --remote, not both")
    if remote:
        from .spark.session import connect_session
        quiet = not inv.debug
        return (lambda: connect_session(remote, settings, quiet=quiet)), remote
    chosen = master or cfg.spark_master or "local[*]"
    from .spark.session import local_session
    # Spark's own log (and the driver JVM's stderr) goes to target/logs/spark.log unless --debug.
    quiet = not inv.debug
    log_file = os.path.join(inv.root, "target", "logs", "spark.log")
    archive = "test" if for_tests else "run"  # the driver JVM's class archive (adapters/spark/class_archive.py)
    return (lambda: local_session(chosen, settings, quiet=quiet, log_file=log_file, archive=archive)), chosen


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
@click.option("--wait", "wait", is_flag=True, default=False,
              help="When another run is writing a destination partition, wait for it instead of failing.")
@command
def run_cmd(inv: Invocation, project, select, run_all, period, master, remote, conf, allow_draft, wait):
    """Resolve, execute on Spark, write the outputs and record the run (of PROJECT, or of the projects
    --select or --all name, in dependency order in one SparkSession)."""
    if sum([bool(project), bool(select), run_all]) != 1:
        raise click.UsageError("give exactly one of PROJECT, --select SEL or --all")
    from ..compiler.periods import PeriodError, parse_period
    from .spark.session import early_session
    root = inv.root
    try:
        parse_period(period)
    except PeriodError as err:
        raise click.BadParameter(str(err), param_hint="--period")
    factory, label = _session_factory(inv, master, remote, conf)
    factory = early_session(factory)  # the JVM starts while the project is compiled and resolved
    from .run.runner import Runner  # after the JVM's launch: importing the compiler overlaps it too
    runner = Runner(root, echo=click.echo, session_factory=factory, spark_label=label, wait=wait)
    from .run.interrupts import outside_a_run
    with outside_a_run():  # a Ctrl-C while no run is under way (compiling, between projects): exit 3 too
        if project:
            runner.run(project, period, allow_draft, workspace=inv.workspace)
            return
        from .run.many import run_many
        run_many(runner, root, period, None if run_all else " ".join(select), allow_draft, echo=click.echo)


@main.command("dag")
@click.option("--select", "select", multiple=True, help="Show only the selected nodes (NAME, +NAME, NAME+, dataset:NAME+).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot", "mermaid"]), default="text",
              help="Output format (default text).")
@command
def dag_cmd(inv: Invocation, select, fmt):
    """The workspace graph: which projects read which datasets, and which register which."""
    from ..compiler.dag_view import render
    from ..compiler.graph import WorkspaceGraph
    from ..compiler.selection import select as select_nodes
    graph = WorkspaceGraph(inv.workspace)
    click.echo(render(graph, fmt, select_nodes(graph, " ".join(select)) if select else None))


@main.command("replay")
@click.argument("run_id")
@click.option("--master", default=None, help="Spark master URL.")
@click.option("--remote", default=None, help="Spark Connect URL.")
@click.option("--conf", multiple=True, help="Spark setting KEY=VALUE (repeatable).")
@click.option("--allow-changed-inputs", is_flag=True, default=False,
              help="Replay even though input files changed since the run (warns; the new run records what changed).")
@command
def replay_cmd(inv: Invocation, run_id, master, remote, conf, allow_changed_inputs):
    """Re-execute a recorded run from its project and resolver snapshots (refused when its inputs changed)."""
    from .spark.session import early_session
    factory, label = _session_factory(inv, master, remote, conf)
    factory = early_session(factory)
    from .run.runner import Runner  # after the JVM's launch (see run_cmd)
    from .run.interrupts import outside_a_run
    with outside_a_run():
        Runner(inv.root, echo=click.echo, session_factory=factory, spark_label=label).replay(
            run_id, allow_changed_inputs, workspace=inv.workspace)


@main.command("test")
@click.argument("names", nargs=-1)
@click.option("-k", "keyword", default=None, metavar="TEXT", help="Only tests whose name or file name contains TEXT.")
@click.option("--junit-xml", type=click.Path(dir_okay=False), default=None, help="Also write the results as JUnit XML.")
@click.option("--record", "record_run", default=None, metavar="RUN_ID",
              help="Write the test NAME from the recorded run RUN_ID instead of running tests, to tests/<NAME>.yml "
                   "with NAME escaped as compile --out escapes project names (Close: tests/+43lose.yml).")
@click.option("--rows", type=click.IntRange(min=1), default=20, show_default=True,
              help="--record: how many rows of the run's input dataset the test gives.")
@command
def test_cmd(inv: Invocation, names, keyword, junit_xml, record_run, rows):
    """Run the workspace's scenario tests (tests/*.yml) in one local SparkSession (exit 4 when one fails)."""
    if junit_xml:
        from .compile_out.paths import check_file
        check_file(junit_xml, "--junit-xml")  # before the tests run: their results are never lost to a bad path
    # --record reads the recorded run's whole input, where C2's code pays: the test JVM tuning is for running tests
    factory, _ = _session_factory(inv, None, None, (), for_tests=not record_run)
    if record_run:
        from .scenarios.record import record_test
        if len(names) != 1:
            raise click.UsageError("--record RUN_ID needs exactly one NAME: the test to write")
        click.echo(record_test(inv.workspace, record_run, names[0], rows, factory))
        return
    from .scenarios.suite import run_tests
    _, code = run_tests(inv.workspace, names, keyword, factory, click.echo, junit_xml)
    sys.exit(code)


@main.command("runs")
@click.argument("action", type=click.Choice(["list", "show", "clean"]), default="list")
@click.argument("run_id", required=False)
@click.option("--other-hosts", is_flag=True, default=False,
              help="clean: also trust the lock of runs started on another host (a shared folder whose locks "
                   "all hosts see, e.g. NFSv4).")
@click.option("--json", "as_json", is_flag=True, default=False,
              help="runs show: print the raw run record (run.json) instead of the summary.")
@command
def runs_cmd(inv: Invocation, action, run_id, other_hosts, as_json):
    """The run registry: `runs list`, `runs show RUN_ID [--json]` (a summary with per-statement timings),
    `runs clean` (interrupted runs and their staging)."""
    from .commit import recovery
    store = inv.store
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
            from .store.summaries import render_run
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
@command
def datasets_cmd(inv: Invocation, action, name):
    """Declared and registered datasets with their versions."""
    store = inv.store  # opened first, as always: it recovers interrupted runs
    ws = inv.workspace
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


@main.command("lineage")
@click.argument("target", metavar="PROJECT[.COLUMN]")
@click.option("--output", "output", type=int, default=None, help="Only this output operation (its seq).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "openlineage", "dot", "mermaid"]),
              default="text", show_default=True, help="How to print the lineage.")
@command
def lineage_cmd(inv: Invocation, target, output, fmt):
    """For each output column, the input dataset columns it comes from (identity, transformation,
    aggregation, conditional) and those that decide its rows (join, filter, group_by), across
    projects through registered datasets."""
    from ..compiler.lineage import project_lineage
    from ..compiler.lineage_formats import render
    ws = inv.workspace
    plan, columns = project_lineage(ws, target, output)
    click.echo(render(columns, plan, fmt, f"ledgerflow://{ws.config.name}"))


@main.command("diff")
@click.argument("base", required=False)
@click.argument("head", required=False)
@click.option("--project", "projects", multiple=True, help="Only this project (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              help="text (terminal), markdown (a pull-request comment) or json (docs/diff.md).")
@click.option("--fail-on", type=click.Choice(["breaking", "any"]), default=None,
              help="Exit 4 when a breaking change (or any non-no_op change) is found.")
@command
def diff_cmd(inv: Invocation, base, head, projects, fmt, fail_on):
    """Compare the compiled pipelines of two git revisions (default HEAD and the working tree) or folders."""
    from ..compiler.workspace import WorkspaceNotFound
    from .diff.command import run_diff
    try:
        root = inv.root
    except WorkspaceNotFound:
        if base is None or head is None:
            raise
        root = None  # two workspace folders need no current workspace
    code = run_diff(root, base, head, projects, fmt, fail_on, click.echo,
                    extra_datasets=inv._registered() if root else None)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
