"""What one command of the ``ledgerflow`` command line works on (:class:`Invocation`: the workspace, the
run store, the Spark session's factory), and the :func:`command` wrapper that turns its errors into one
paragraph and an exit code."""
from __future__ import annotations

import functools
import getpass
import os
import sys
import traceback
from typing import TYPE_CHECKING, Optional

import click

from ...compiler.errors import LedgerflowError
from ...compiler.visible_text import visible

if TYPE_CHECKING:
    from ...compiler.model import Project, Workspace
    from ..store.runstore import RunStore


class Invocation:
    """What one command works on, each part found or loaded at most once (click's context object):
    the workspace folder, the workspace with its registered datasets, and the run store.

    ``--workspace`` and ``--debug`` may be given before or after the command's name."""

    def __init__(self, workspace: Optional[str] = None, debug: bool = False):
        self.workspace_option = workspace
        self.debug = debug
        self.env_option: Optional[str] = None  # --env of a command that publishes or reads what is published
        self._root: Optional[str] = None
        self._workspace: Optional[Workspace] = None
        self._store: Optional[RunStore] = None

    @property
    def root(self) -> str:
        """The workspace folder (``--workspace``, ``$LEDGERFLOW_WORKSPACE`` or the nearest marker)."""
        if self._root is None:
            from ...compiler.workspace import find_workspace
            self._root = find_workspace(explicit=self.workspace_option)
        return self._root

    @property
    def env(self) -> str:
        """The command's environment: ``--env``, else ``$LEDGERFLOW_ENV``, else ``prod`` (checked: ENV-001)."""
        from ..layout.env_names import chosen_env
        return chosen_env(self.env_option)

    def in_batch_env(self, batch_id: str) -> None:
        """Before ``retry``: its runs publish in the environment the batch's runs published in, unless ``--env`` or
        ``$LEDGERFLOW_ENV`` names one (a dev batch's retry never lands in prod unasked, as a replay's never does)."""
        from ..layout.env_names import ENV_VARIABLE
        if self.env_option is None and not os.environ.get(ENV_VARIABLE):
            from ..store.runstore import RunStore  # the batch's records, in whatever environment they ran
            store = RunStore(self.root)
            try:
                batch_id = store.get_batch(batch_id)["batch_id"]  # a unique prefix, as retry takes it
            except LedgerflowError:
                return  # retry says what is wrong with it
            envs = {rec.get("env") or "prod" for rec in store.batch_runs(batch_id)}
            if len(envs) == 1:
                self.env_option = envs.pop()

    @property
    def store(self) -> RunStore:
        """The run store as the command's environment sees it (opening it recovers interrupted runs, once per
        process)."""
        if self._store is None:
            from ..commit.open_store import open_store
            self._store = open_store(self.root, self.env)
        return self._store

    @property
    def workspace(self) -> Workspace:
        """The workspace with its registered datasets, loaded on first use."""
        if self._workspace is None:
            from ...compiler.workspace import load_workspace
            self._workspace = load_workspace(self.root, extra_datasets=self.registered())
        return self._workspace

    def registered(self):
        """The workspace's registered datasets as :func:`ledgerflow.compiler.workspace.load_workspace` takes them (a
        callable), or None when nothing ever ran here or the run store is unusable for a command that can go
        on without it (a warning printed)."""
        if self._store is None and not os.path.exists(os.path.join(self.root, ".ledgerflow", "state.db")):
            return None  # nothing ever ran or registered here (the store is created by the first run)
        if not _store_optional():
            return self.store.registered_datasets
        from ..store.health import RunStoreUnusable, unusable, warning
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

    def session_factory(self, master: Optional[str] = None, remote: Optional[str] = None, conf: tuple = (),
                        for_tests: bool = False):
        """(a SparkSession factory, its label) from ledgerflow.yml's ``spark`` settings and the flags
        (:func:`..spark.session.session_factory`); ``for_tests``: the driver JVM tuned for ``ledgerflow test``.
        Spark's log goes to the workspace's ``target/logs/spark.log`` unless ``--debug``."""
        from ..spark.session import SessionChoiceError, session_factory
        try:
            return session_factory(self.workspace.config, master, remote, conf, root=self.root, quiet=not self.debug,
                                   for_tests=for_tests)
        except SessionChoiceError as err:
            raise click.UsageError(str(err)) from None

    def project(self, ref: str) -> Project:
        """The project ``ref`` (name, id or YAML path) of the workspace, or an error listing its projects."""
        from ...compiler.project_refs import require_project
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
    from ..store.health import unusable
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


def who(by: Optional[str]) -> str:
    """Who a command records as acting (closes, reopens, restates, promotes, drops): ``--by``, else ``$USER``, else the operating system's login name."""
    if by and by.strip():
        return by.strip()
    user = os.environ.get("USER", "").strip()
    if user:
        return user
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name known (a container without a passwd entry)
        return "unknown"


def env_option(fn):
    """``--env NAME`` on a command that publishes or reads what is published (put above :func:`command`): the
    name is kept on the :class:`Invocation` and checked when the command first asks for it."""
    @functools.wraps(fn)
    def wrapper(*args, env: Optional[str] = None, **kwargs):
        click.get_current_context().ensure_object(Invocation).env_option = env
        return fn(*args, **kwargs)
    return click.option("--env", "env", default=None, metavar="NAME",
                        help="Environment (default: $LEDGERFLOW_ENV, else prod).")(wrapper)


def started_early(factory):
    """``factory`` started now in the background (:func:`..spark.session.early_session`): the driver JVM
    launches while the project is compiled and resolved. The session, once waited for, is the one Ctrl-C
    cancels the running jobs of, and ledgerflow's handler is installed (on the main thread: PySpark
    installs its own only for a context made there) — never a py4j call inside the handler
    (:mod:`..run.interrupts`)."""
    from ..spark.session import early_session
    wait = early_session(factory)

    def session():
        got = wait()
        from ..run import interrupts
        interrupts.set_cancel(interrupts.session_cancel(got))
        interrupts.install()
        return got
    return session
