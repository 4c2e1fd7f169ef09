"""Reading the metrics of ``DataFrame.observe`` (Spark's CollectMetrics) without ever waiting forever.

Spark's ``Observation.get`` blocks, with no timeout, until an action ran the observed plan; an observation
whose plan never ran (attached to a frame that was not the one executed, or to a plan that was replaced)
would hang the run. :func:`read` takes only what completed, waiting a short bounded time for
metrics delivered just after the action returned (Spark completes observations from its listener bus); an
observation that did not complete is returned as *not measured* with the reason, never as numbers.

:func:`runnable` is the other half: Spark completes an observation only when it appears in the plan the
action was given (``QueryExecution.logical``). The frame of ``spark.sql(text)`` carries its text's parsed
plan, where a temporary view it reads is still a name, so an action on that very frame (``localCheckpoint``,
``collect``) computes the metrics of an observed view and never delivers them. A frame derived from it
carries the resolved plan, views and their observations included.
"""
from __future__ import annotations

import time
from typing import Any, Hashable, Optional

# Spark completes the observation of a part of the plan it optimised away (rows that can never reach the action,
# such as those under a condition that is never true) with no metrics row at all (SPARK-54620: once it waited forever)
OPTIMISED_AWAY = ("not observed: Spark optimised away the rows it observes (none of them could reach what the run "
                  "computed, e.g. behind a condition that is never true)")
WAIT = 10.0  # seconds: the longest a run waits for metrics after the actions that computed them
POLL = 0.05


def runnable(df):
    """``df`` as a frame whose plan is resolved (same rows and columns, same physical plan): an action on it
    delivers the observations of the views its SQL reads (see the module docstring)."""
    return df.select("*")


def completed(observation) -> bool:
    """Whether ``observation``'s metrics are there to read (classic or Spark Connect); never blocks."""
    jo = getattr(observation, "_jo", None)
    if jo is not None:  # classic pyspark: the JVM Observation's future
        return bool(jo.future().isCompleted())
    if hasattr(observation, "_result"):  # Spark Connect: filled from the action's response
        return getattr(observation, "_error", None) is not None or bool(observation._result)
    return False  # classic, never attached to a frame


def read(observations: dict[Hashable, Any], wait: Optional[float] = None) -> tuple[dict[Hashable, dict],
                                                                                    dict[Hashable, str]]:
    """(key -> metrics of each observation that completed, key -> why each other one is not measured), waiting
    at most ``wait`` seconds (default :data:`WAIT`) in all for those not completed yet."""
    wait = WAIT if wait is None else wait
    deadline = time.monotonic() + wait
    pending = dict(observations)
    while any(not completed(o) for o in pending.values()) and time.monotonic() < deadline:
        time.sleep(POLL)
    got: dict[Hashable, dict] = {}
    missing: dict[Hashable, str] = {}
    for key, observation in pending.items():
        if not completed(observation):
            missing[key] = (f"its metrics never arrived (within {wait:g} s of the run's last action): the rows it "
                            "observes were not computed by the plan the run executed")
            continue
        try:
            got[key] = dict(observation.get)
        except Exception as exc:  # noqa: BLE001 - a failed observation is not measured, with Spark's reason
            missing[key] = (OPTIMISED_AWAY if "toPyRow" in str(exc) else
                            f"Spark reported no metrics for it ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
    return got, missing


def one(observation, wait: Optional[float] = None) -> tuple[Optional[dict], Optional[str]]:
    """(the metrics of ``observation``, None) or (None, why it is not measured); see :func:`read`."""
    got, missing = read({0: observation}, wait)
    return got.get(0), missing.get(0)
