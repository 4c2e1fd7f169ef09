"""SparkSession creation: local by default, a standalone master, or Spark Connect.

:func:`session_factory` is the one place that chooses between them from the workspace's ``spark``
settings and the command's flags; ``ledgerflow run``, ``replay`` and ``test``, the Python API, the
runner and the scenario tests all take their session from it.

By default the driver JVM is quiet: ledgerflow's log4j2 configuration (``log4j2-quiet.properties``,
shipped beside this module) is passed at JVM launch, so Spark's start-up lines and task-failure
stack traces go to a log file instead of the terminal; ``quiet=False`` (the CLI's ``--debug``)
keeps Spark's own default WARN output on stderr.
"""
from __future__ import annotations

import os
from typing import Callable, Optional

from . import class_archive, java_options, parser_warmup

LOCAL_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "true",
    "spark.driver.extraJavaOptions": "-Xss16m",
    "spark.sql.adaptive.enabled": "true",
    # Spark keeps the classes it generated for 100 distinct plans; a process that runs many projects or
    # periods (a batch, a range, a Dagster code server, the test session) compiled the same ones again and
    # again: 1,000 kept made a run of two test files 5-8% faster (2026-12-06, M4).
    "spark.sql.codegen.cache.maxEntries": "1000",
}

# Settings every ledgerflow session has whatever the workspace's conf says, because reading input rows
# exactly depends on them: with CSV filter pushdown, a malformed record the period filter rejects was
# dropped without the FAILFAST error (see loaders.CSV_FILTER_PUSHDOWN).
REQUIRED = {"spark.sql.csv.filterPushdown.enabled": "false"}

# The driver JVM of `ledgerflow test`: C1 only. A scenario test has a handful of rows, so its time is
# Spark's planner code running for the first few times, which C1 compiles sooner and without the
# profiling tier, while C2's compiler threads would take one of two cores from the test; measured by
# bench/test_speed.py (bench/results/history.md, 0c). Not for `run`: at 10M rows C1-only code made pipeline P
# 45% slower (52 s -> 76 s), the rows being the work there.
TEST_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"

# The master of a session made without a workspace's settings (the runner given no factory, scenario tests
# run from Python): two local cores. A workspace's session defaults to every core (``local[*]``).
BARE_MASTER = "local[2]"
WORKSPACE_MASTER = "local[*]"

QUIET_LOG4J2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2-quiet.properties")


def _quiet() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", "python3")


def _java_option(name: str, value: str) -> str:
    """``-Dname=value``, quoted for the launcher's option parser when the value holds spaces or quotes."""
    return java_options.quote(f"-D{name}={value}")


def quiet_java_options(existing: str, log_file: Optional[str]) -> str:
    """``existing`` driver Java options plus ledgerflow's log4j2 configuration and its log file.

    A configuration the user set (``-Dlog4j2.configurationFile`` already present) wins."""
    if "log4j2.configurationFile" in existing:
        return existing
    extra = [_java_option("log4j2.configurationFile", QUIET_LOG4J2),
             _java_option("ledgerflow.spark.log", log_file or os.devnull)]
    return " ".join([existing.strip(), *extra]).strip()


def scenario_test_conf(conf: Optional[dict] = None) -> dict:
    """``conf`` (ledgerflow.yml's ``spark`` settings) for the session of ``ledgerflow test``: the driver
    JVM also gets ``TEST_JAVA_OPTIONS`` unless ``conf`` sets its Java options itself."""
    conf = dict(conf or {})
    if "spark.driver.extraJavaOptions" not in conf:
        conf["spark.driver.extraJavaOptions"] = f"{LOCAL_DEFAULTS['spark.driver.extraJavaOptions']} {TEST_JAVA_OPTIONS}"
    return conf


def session_settings(conf: Optional[dict] = None, quiet: bool = True, log_file: Optional[str] = None) -> dict:
    """The Spark settings of a local or standalone-cluster session (ledgerflow's defaults, then ``conf``)."""
    settings = {**LOCAL_DEFAULTS, **(conf or {}), **REQUIRED}
    if quiet:
        settings["spark.driver.extraJavaOptions"] = quiet_java_options(
            settings.get("spark.driver.extraJavaOptions", ""), log_file)
    return settings


def quiet_python_loggers() -> None:
    """Silence pyspark's Python-side error loggers, which print every SQL error with its JVM stack trace
    as JSON on stderr when the exception is created (ledgerflow reports the error itself)."""
    import logging
    from pyspark.logger import PySparkLogger
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def _launch_quiet_jvm(master: str, settings: dict, log_file: str, archive: Optional[str] = None) -> None:
    """Start the driver JVM with its stdout and stderr in ``log_file``, when no JVM runs in this process yet.

    What the JVM itself prints before any logging is set up (``WARNING: Using incubator modules``,
    from the ``--add-modules`` option Spark's launcher always adds) cannot be configured away, so the
    JVM's stderr goes to the log file; pyspark's ``launch_gateway(popen_kwargs=...)`` is the hook
    it offers for this. Spark's own logging is governed by the log4j2 configuration.

    ``archive`` (a command kind of :mod:`.class_archive`): the JVM maps that kind's class archive, or
    writes it at exit when there is none yet. Should a JVM given an archive fail to start, it is
    started again without one."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    if SparkContext._gateway is not None:  # the JVM of this process already runs: nothing to launch
        return
    option = "spark.driver.extraJavaOptions"
    plan = class_archive.plan(archive, settings.get(option, "")) if archive else None
    os.makedirs(os.path.dirname(os.path.abspath(log_file)), exist_ok=True)

    def launch(plan_):
        conf = SparkConf().setMaster(master).setAppName("ledgerflow")
        for k, v in settings.items():
            conf.set(k, v)
        # A JVM crash report goes beside the log, not into the working folder. The archive's options
        # come first, so the workspace's own -Xlog options still apply after them.
        crash = java_options.quote("-XX:ErrorFile=" + os.path.join(os.path.dirname(os.path.abspath(log_file)),
                                                                     "hs_err_pid%p.log"))
        conf.set(option, " ".join([plan_.options if plan_ else "", crash, settings.get(option, "")]).strip())
        with open(log_file, "wb") as out:  # one file per run; the JVM keeps its own descriptors
            return conf, launch_gateway(conf, popen_kwargs={"stderr": out, "stdout": out})

    try:
        conf, gateway = launch(plan)
    except Exception:
        if plan is None:
            raise
        class_archive.discard(plan)
        plan = None
        conf, gateway = launch(None)
    if plan is not None and plan.partial:
        class_archive.publish_at_exit(plan, gateway)
    parser_warmup.start(gateway)  # parses the run's statements while the context starts
    SparkContext(conf=conf, gateway=gateway)


class SessionChoiceError(ValueError):
    """The flags name no session: a ``--conf`` without ``=``, or both ``--master`` and ``--remote``
    (the command line's usage error)."""


def session_factory(config=None, master: Optional[str] = None, remote: Optional[str] = None, conf=(),
                    root: Optional[str] = None, quiet: bool = True,
                    for_tests: bool = False) -> tuple[Callable[[], object], str]:
    """(a SparkSession factory, its label): Spark Connect to ``remote``, else a local or standalone-cluster
    session on ``master`` (default: ``config.spark_master``, else ``local[*]``; :data:`BARE_MASTER` when
    there is no ``config``). Nothing starts until the factory is called.

    ``config``: the workspace's configuration (ledgerflow.yml: ``spark_conf``, ``spark_master``), or None;
    ``conf``: ``KEY=VALUE`` settings given on the command line, which win over the workspace's; ``root``:
    the workspace folder, whose ``target/logs/spark.log`` takes Spark's log and the driver JVM's output
    when ``quiet`` (without it, a new driver JVM keeps its stderr); ``for_tests``: the driver JVM tuned for
    ``ledgerflow test`` (:func:`scenario_test_conf`) with its own class archive. Raises
    :class:`SessionChoiceError` for a malformed ``conf`` item or both ``master`` and ``remote``."""
    settings = dict(config.spark_conf) if config is not None else {}
    if for_tests:
        settings = scenario_test_conf(settings)
    for item in conf:
        if "=" not in item:
            raise SessionChoiceError(f"--conf takes KEY=VALUE, got '{item}'")
        k, v = item.split("=", 1)
        settings[k] = v
    if master and remote:
        raise SessionChoiceError("use either --master or --remote, not both")
    if remote:
        return (lambda: connect_session(remote, settings, quiet=quiet)), remote
    chosen = master or ((config.spark_master or WORKSPACE_MASTER) if config is not None else BARE_MASTER)
    # Spark's own log (and the driver JVM's stderr) goes to target/logs/spark.log unless --debug.
    log_file = os.path.join(root, "target", "logs", "spark.log") if root else None
    archive = "test" if for_tests else "run"  # the driver JVM's class archive (class_archive.py)
    return (lambda: local_session(chosen, settings, quiet=quiet, log_file=log_file, archive=archive)), chosen


def local_session(master: str = BARE_MASTER, conf: Optional[dict] = None, quiet: bool = True,
                  log_file: Optional[str] = None, archive: Optional[str] = None):
    """A local (or standalone-cluster) SparkSession with ledgerflow's settings.

    ``quiet``: Spark logs (WARN and above) go to ``log_file`` (or nowhere), never to the terminal; a
    new driver JVM also writes its stderr to ``log_file``. ``quiet=False`` keeps Spark's default
    console output. Both apply only when this call starts the JVM (an existing session is reused).
    ``archive``: the command kind whose class archive a new quiet driver JVM uses (:mod:`.class_archive`)."""
    _quiet()
    from pyspark.sql import SparkSession
    settings = session_settings(conf, quiet, log_file)
    if quiet:
        quiet_python_loggers()
        if log_file:
            _launch_quiet_jvm(master, settings, log_file, archive)
    builder = SparkSession.builder.master(master).appName("ledgerflow")
    for k, v in settings.items():
        builder = builder.config(k, v)
    return builder.getOrCreate()


def connect_session(remote: str, conf: Optional[dict] = None, quiet: bool = True):
    """A Spark Connect session to ``remote`` (sc://host:port); the server keeps its own log."""
    from pyspark.sql import SparkSession
    if quiet:
        quiet_python_loggers()
    builder = SparkSession.builder.remote(remote)
    for k, v in {**(conf or {}), **REQUIRED}.items():
        builder = builder.config(k, v)
    return builder.getOrCreate()


def early_session(factory):
    """Start ``factory()`` (a session: for a local master, a driver JVM taking seconds to launch) in a
    background thread now; returns a factory that waits for it. ``run`` and ``replay`` call this before
    loading, compiling and resolving the project, which then overlap the JVM's start-up instead of
    preceding it (issue 9: a fixed cost the hand-written job does not pay).

    When the command fails before it needs Spark, the half-started JVM simply ends with the process
    (it exits when its parent's pipe closes). PySpark installs its SIGINT handler only when the context
    is created on the main thread; the waiting factory installs ledgerflow's there (:mod:`.interrupts`:
    running jobs cancelled, then KeyboardInterrupt)."""
    import threading
    result: dict = {}

    def start() -> None:
        try:
            result["session"] = factory()
        except BaseException as exc:  # re-raised in the thread that asks for the session
            result["error"] = exc

    thread = threading.Thread(target=start, name="ledgerflow-spark-start", daemon=True)
    thread.start()

    def wait():
        thread.join()
        if "error" in result:
            raise result["error"]
        return result["session"]
    return wait
