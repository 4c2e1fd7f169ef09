"""The ``ledgerflow`` command line: its commands, options and help. What a command works on (workspace, run
store, Spark session) and how its errors become one paragraph and an exit code: :mod:`.invocation`."""
from __future__ import annotations

import json
import sys

import click

from ..compiler.errors import CompileError, Diagnostic, LedgerflowError
from ..compiler.gcpause import gc_paused, one_command_process
from ..compiler.version import version
from ..compiler.visible_text import visible
from .console.cli_options import results_option, spark_options
from .console.invocation import Invocation, command, env_option, started_early

# Everything else is imported by the command that needs it: `ledgerflow --version` and `runs list` start without
# sqlglot, Jinja or YAML; `compile` and `validate` without the runner (pyspark) or, where nothing ran, sqlite3.


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
        from .compile_out.command import compile_all
        return compile_all(inv, project, out, check, resolved or period, all_projects)
    if project is None:
        raise click.UsageError("compile needs a PROJECT (or --all)")
    from .compile_out.command import compile_one
    with gc_paused(until_exit=True):  # one project, then the process ends (see gc_paused)
        compile_one(inv, project, out, period, resolved)


@main.command("validate")
@click.argument("projects", nargs=-1)
@command
def validate_cmd(inv: Invocation, projects):
    """Report every compile-time error of every (or the named) project."""
    from ..compiler.compile import plan_diagnostics
    chosen = [inv.project(ref) for ref in projects] or inv.workspace.projects
    if not chosen:  # an empty workspace is not an error (its datasets loaded), but "0 projects valid" says nothing
        ws = inv.workspace
        click.echo(visible(f"warning: workspace '{ws.config.name}' ({inv.root}) has no project, so there is nothing "
                           f"to validate: add one as projects/NAME.yml (docs/workspace.md); its "
                           f"{len(ws.datasets)} dataset{'s' if len(ws.datasets) != 1 else ''} loaded without error."))
        return
    diagnostics: list[Diagnostic] = []
    for proj in chosen:
        diagnostics += plan_diagnostics(inv.workspace, proj)
    if diagnostics:
        raise CompileError(diagnostics)
    click.echo(f"ok: {len(chosen)} project{'s' if len(chosen) != 1 else ''} valid "
               f"({visible(', '.join(p.name for p in chosen))})")


@main.command("run")
@click.argument("project", required=False)
@click.option("--stale", is_flag=True, default=False,
              help="Run only the stale open project-periods of --period (`ledgerflow status`), upstream first; "
                   "with PROJECT or --select: only among those.")
@click.option("--select", "select", multiple=True,
              help="Run the selected projects in dependency order: NAME, +NAME, NAME+, dataset:NAME+ ... "
                   "(several separated by spaces: the union).")
@click.option("--all", "run_all", is_flag=True, default=False, help="Run every project in dependency order.")
@click.option("--period", required=True,
              help="YYYY-MM, YYYY-Qn, YYYY or YYYY-MM-DD; a range of one level (2026-01..2026-12) or a list "
                   "(2026-01,2026-03): each project-period its own run, period by period in ascending order.")
@click.option("--mode", type=click.Choice(["fused", "each", "auto"]), default=None,
              help="Several periods: fused (one Spark job per statement for the whole range), each (period by "
                   "period) or auto (fused where it is proven equivalent; the default); with --stale, over each "
                   "project's stale periods.")
@click.option("--fail-fast", is_flag=True, default=False,
              help="Several projects or periods: stop at the first failed one (the rest are skipped).")
@spark_options("Spark master URL, e.g. spark://127.0.0.1:7077 (default local[*]).",
               "Spark Connect URL, e.g. sc://127.0.0.1:15002.")
@click.option("--allow-draft", is_flag=True, default=False, help="Run a project whose status is draft.")
@click.option("--wait", "wait", is_flag=True, default=False,
              help="When another run is writing a destination partition, wait for it instead of failing.")
@results_option
@env_option
@command
def run_cmd(inv: Invocation, project, stale, select, run_all, period, mode, fail_fast, master, remote, conf,
            allow_draft, wait, results_path):
    """Resolve, execute on Spark, write the outputs and record the run (of PROJECT, or of the projects
    --select or --all name, in dependency order in one SparkSession), for one period or several: every run
    of the invocation records one batch id (`ledgerflow retry BATCH_ID`)."""
    from .run.results_file import results_file
    with results_file(results_path, "run", inv.env) as results:  # a bad --results refused before anything runs
        chosen = sum([bool(project), bool(select), run_all])
        if chosen > 1 or (chosen == 0 and not stale):
            raise click.UsageError("give exactly one of PROJECT, --select SEL or --all (--stale: at most one)")
        mode = mode or "auto"
        from ..compiler.periods import PeriodError, parse_periods
        root = inv.root
        try:
            periods = parse_periods(period)  # the one parse: each Period travels to its runs, parameters and writers
        except PeriodError as err:
            raise click.BadParameter(str(err), param_hint="--period")
        if project and len(periods) == 1 and not stale:  # a closed project-period: refused before Spark starts
            from .periods.command import refuse_closed
            refuse_closed(inv, project, periods[0])
        factory, label = inv.session_factory(master, remote, conf)
        factory = started_early(factory)  # the JVM starts while the project is compiled and resolved
        from .run.runner import Runner  # after the JVM's launch: importing the compiler overlaps it too
        runner = Runner(root, echo=click.echo, session_factory=factory, spark_label=label, wait=wait, env=inv.env)
        from .run.interrupts import outside_a_run
        from .run.scheduler import RUN, Request, Scheduler
        from .run.unit import RunSettings
        scheduler = Scheduler(runner, click.echo)
        results.scheduler, results.store = scheduler, runner.store
        request = Request(RUN, root, tuple(periods), None if (run_all or project) else " ".join(select) or None,
                          project, RunSettings(allow_draft, fail_fast, mode))
        with outside_a_run():  # a Ctrl-C while no run is under way (compiling, between projects): exit 3 too
            if stale:
                from .periods.stale_run import stale_request
                scheduler.submit(stale_request(request, runner.store, click.echo))
            elif project and len(periods) == 1:  # one run, as it always was, in a batch of its own
                scheduler.run_one(request, inv.project(project).name, inv.workspace)
            else:
                scheduler.submit(request)


@main.command("retry")
@click.argument("batch_id")
@click.option("--fail-fast", is_flag=True, default=False, help="Stop at the first failed project-period.")
@click.option("--mode", type=click.Choice(["fused", "each", "auto"]), default=None,
              help="A project with several periods to re-run: fused where it is proven equivalent (auto or fused) "
                   "or period by period (each); default: the mode the batch ran with.")
@spark_options()
@click.option("--wait", "wait", is_flag=True, default=False,
              help="When another run is writing a destination partition, wait for it instead of failing.")
@results_option
@env_option
@command
def retry_cmd(inv: Invocation, batch_id, fail_fast, mode, master, remote, conf, wait, results_path):
    """Re-run the failed and skipped project-periods of batch BATCH_ID (new runs of the same batch, projects in
    dependency order; a project with several periods fused where it can be)."""
    from .run.results_file import results_file
    inv.in_batch_env(batch_id)
    with results_file(results_path, "retry", inv.env) as results:
        inv.store.get_batch(batch_id)  # an unknown batch: its paragraph before Spark starts
        factory, label = inv.session_factory(master, remote, conf)
        factory = started_early(factory)
        from .run.runner import Runner  # after the JVM's launch (see run_cmd)
        runner = Runner(inv.root, echo=click.echo, session_factory=factory, spark_label=label, wait=wait, env=inv.env)
        from .run.interrupts import outside_a_run
        from .run.scheduler import RETRY, Request, Scheduler
        from .run.unit import RunSettings
        scheduler = Scheduler(runner, click.echo)
        results.scheduler, results.store = scheduler, runner.store
        with outside_a_run():
            settings = RunSettings(fail_fast=fail_fast, mode=mode)  # mode None: as the batch ran
            scheduler.submit(Request(RETRY, inv.root, settings=settings, batch=batch_id))


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
@spark_options()
@click.option("--allow-changed-inputs", is_flag=True, default=False,
              help="Replay even though input files changed since the run (warns; the new run records what changed).")
@env_option
@command
def replay_cmd(inv: Invocation, run_id, master, remote, conf, allow_changed_inputs):
    """Re-execute a recorded run from its project and resolver snapshots (refused when its inputs changed)."""
    from .periods.command import refuse_closed_replay
    refuse_closed_replay(inv, run_id)  # a replay republishes the run's period: refused before Spark when closed
    factory, label = inv.session_factory(master, remote, conf)
    factory = started_early(factory)
    from .run.runner import Runner  # after the JVM's launch (see run_cmd)
    from .run.interrupts import outside_a_run
    from .run.scheduler import Scheduler
    with outside_a_run():
        Scheduler(Runner(inv.root, echo=click.echo, session_factory=factory, spark_label=label, env=inv.env),
                  click.echo).replay(
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
    factory, _ = inv.session_factory(for_tests=not record_run)
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
@click.option("--batch", "batch", default=None, metavar="BATCH_ID",
              help="runs list: only the runs of this batch (one `ledgerflow run`), and its project-periods not run.")
@env_option
@command
def runs_cmd(inv: Invocation, action, run_id, other_hosts, as_json, batch):
    """The run registry: `runs list [--batch BATCH_ID]`, `runs show RUN_ID [--json]` (a summary with
    per-statement timings), `runs clean` (interrupted runs and their staging)."""
    from .commit import recovery
    from .console.terminal_text import echo_block, echo_line, echo_lines, shown_record
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
            from .store.restatements import superseded_by
            from .store.summaries import render_run
            echo_block(render_run(shown_record(rec), shown_record(superseded_by(store, rec))))
        return
    from .store.summaries import batch_lines, run_line
    if batch:
        found = store.get_batch(batch)
        echo_lines(batch_lines(found, store.batch_runs(found["batch_id"])))
        return
    runs = store.list_runs(env=store.env)  # the environment's own history: a dev run is no run of prod's
    if not runs:
        click.echo("no runs yet" + (f" in environment '{store.env}'" if store.env != "prod" else ""))
    from .store.restatements import superseding_ids
    superseded = superseding_ids(runs)
    for r in runs:
        echo_line(run_line(r, superseded.get(r["run_id"], ())))


@main.command("datasets")
@click.argument("action", type=click.Choice(["list", "show"]), default="list")
@click.argument("name", required=False)
@env_option
@command
def datasets_cmd(inv: Invocation, action, name):
    """Declared and registered datasets with their versions."""
    from .store.summaries import dataset_line, dataset_lines
    store = inv.store  # opened first, as always: it recovers interrupted runs
    ws = inv.workspace
    if action == "show":
        if not name:
            raise click.UsageError("datasets show needs a NAME")
        ds = ws.find_dataset(name)
        if ds is None:
            raise LedgerflowError(f"no dataset '{name}'; datasets: {', '.join(sorted(d.name for d in ws.datasets))}.")
        from .store.restatements import superseded_by
        for line in dataset_lines(ds, store.registrations, lambda run_id: superseded_by(store, store.get_run(run_id))):
            click.echo(line)
        return
    for ds in sorted(ws.datasets, key=lambda d: d.name):
        click.echo(dataset_line(ds))


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
@click.option("--data", is_flag=True, default=False,
              help="Compare the rows the changed projects' outputs compute for --period: both sides run on the same "
                   "inputs in one Spark session, nothing written; exit 4 when a row differs.")
@click.option("--period", default=None, help="With --data: the period both sides run for.")
@click.option("--by", "by", multiple=True, help="With --data: total the decimal changes per value of this output "
                                                "column too (repeatable).")
@click.option("--key", "key", multiple=True, help="With --data: match rows by these output columns instead of "
                                                  "_row_id or an aggregate's group-by keys (repeatable, or a comma "
                                                  "list).")
@command
def diff_cmd(inv: Invocation, base, head, projects, fmt, fail_on, data, period, by, key):
    """Compare the compiled pipelines of two git revisions (default HEAD and the working tree) or folders;
    with --data, the rows their outputs compute."""
    from ..compiler.workspace import WorkspaceNotFound
    from .diff.command import run_diff
    try:
        root = inv.root
    except WorkspaceNotFound:
        if base is None or head is None:
            raise
        root = None  # two workspace folders need no current workspace
    if data or period or by or key:
        from .diff.data_cli import DataDiffAsk, data_diff_command
        ask = DataDiffAsk(root, base, head, tuple(projects), None, tuple(by), tuple(key), fmt)
        sys.exit(data_diff_command(inv, ask, period, fail_on, data))
    code = run_diff(root, base, head, projects, fmt, fail_on, click.echo,
                    extra_datasets=inv.registered() if root else None)
    sys.exit(code)


from .periods.cli import periods_group, status_cmd  # noqa: E402  (light: click and the invocation only)
from .periods.restate_cli import restate_cmd  # noqa: E402  (light too)
from .docs_site.cli import docs_cmd  # noqa: E402  (light too)
from .envs.cli import envs_group, promote_cmd  # noqa: E402  (light too)
from .manifest.cli import manifest_cmd  # noqa: E402  (light too: no pyspark)
from .console.events_send import events_group  # noqa: E402  (light too)
from .onboarding.cli import init_cmd, with_infer  # noqa: E402  (light too)

for _command in (periods_group, status_cmd, restate_cmd, docs_cmd, promote_cmd, envs_group, manifest_cmd, init_cmd,
                 events_group):
    main.add_command(_command)
main.add_command(with_infer(datasets_cmd))  # `datasets infer`; list and show as before


def entry() -> None:
    """``ledgerflow`` the program: :data:`main`, in a process that ends with it (:func:`one_command_process`)."""
    one_command_process()
    main()


if __name__ == "__main__":  # pragma: no cover
    entry()
