"""Spark's SQL parser warmed while the driver starts (issue 9: a fixed cost the hand-written job does not pay).

The first statements a driver JVM parses are slow: Spark's ANTLR parser builds its prediction
automaton as it meets each grammar decision, and its code runs interpreted until the JIT compiles
it. Measured on pipeline P: 1.0 s and 0.5 s for the first two input views, 0.9 s for the 13 kB
stage, against 0.01-0.05 s for the same texts once warm. A job written with DataFrames parses no SQL.

ledgerflow knows its statements before Spark is up (``run`` and ``replay`` compile while the JVM
starts, see :func:`.spark.early_session`). :func:`start`, called as soon as the JVM's gateway
answers, parses them in a background thread while the SparkContext initialises, on the core that
start-up leaves idle; every parser of the JVM shares the automaton, so the run's own parses are
then fast. Nothing depends on it: a text that fails to parse, a late offer or a gateway error just
leaves the parser cold.
"""
from __future__ import annotations

import threading
from typing import Iterable

WAIT_SECONDS = 10.0  # how long the warm-up waits for the compiled statements before giving up


class ParserWarmup:
    """The statements offered by the runner, parsed once a JVM gateway is there."""

    def __init__(self, wait_seconds: float = WAIT_SECONDS):
        self.wait_seconds = wait_seconds
        self.texts: list[str] = []
        self.offered = threading.Event()

    def offer(self, texts: Iterable[str]) -> None:
        """The statements this process is about to run (the first offer counts)."""
        if not self.offered.is_set():
            self.texts.extend(texts)
            self.offered.set()

    def start(self, gateway) -> threading.Thread:
        """Parse the offered statements with ``gateway``'s JVM in a daemon thread; returns the thread."""
        thread = threading.Thread(target=self._warm, args=(gateway,), name="ledgerflow-parser-warmup", daemon=True)
        thread.start()
        return thread

    def _warm(self, gateway) -> None:
        if not self.offered.wait(self.wait_seconds):
            return
        try:
            parser = jvm_parser(gateway)
            for text in list(self.texts):
                try:
                    parser.parsePlan(text)
                except Exception:  # noqa: BLE001 - a statement Spark rejects fails again, with its message, in the run
                    continue
        except Exception:  # noqa: BLE001 - the gateway went away: the run reports that itself
            return


def jvm_parser(gateway):
    """Spark's SQL parser object in ``gateway``'s JVM (it shares its automaton with every session's parser)."""
    # the Scala object itself: py4j sees no static forwarder for its inherited parsePlan
    return getattr(getattr(gateway.jvm.org.apache.spark.sql.catalyst.parser, "CatalystSqlParser$"), "MODULE$")


_PROCESS = ParserWarmup()  # one driver JVM per process


def offer(texts: Iterable[str]) -> None:
    """Offer this process's statements (see :meth:`ParserWarmup.offer`)."""
    _PROCESS.offer(texts)


def start(gateway) -> threading.Thread:
    """Warm the parser of this process's new JVM (see :meth:`ParserWarmup.start`)."""
    return _PROCESS.start(gateway)
