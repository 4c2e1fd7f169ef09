"""The inputs of ``diff --data``, each read once for both sides: :class:`SharedInputs`.

Both sides of a data diff run on the same inputs (:mod:`.data_sides` resolves each dataset version once),
and their outputs are compared in one Spark plan (:mod:`.data_diff`). Loaded side by side, every input
view a side reads is its own scan of the same files: pipeline P read its GL file four times in the
comparison's job (each side reads it twice: the lines and their totals). Here an input both sides load
alike — the same dataset declaration (id, name, table, temporal mode, columns and types), version,
resolved locations, row-id treatment and parameter values, so the same normalised rows — is loaded
once, as one DataFrame that every side's view of it names; an input read by more than one side is
materialised (a lazy ``localCheckpoint``, as a run materialises a stage): the comparison's job scans its
files once and keeps the rows, and every other read of them, on either side, reads the kept rows. An
input a side loads differently (another version, a column type changed by the diff under review) is
loaded for that side alone, as before.
"""
from __future__ import annotations

from collections import Counter
from typing import Hashable

from ...compiler import parameters
from ..inputs import loaders
from ..run.compute import input_loads
from .data_diff import quoted


def input_key(item: loaders.InputLoad, args: dict) -> Hashable:
    """What the rows of an input view depend on: equal keys, equal rows (:func:`..inputs.loaders.load_input`
    reads the locations with the declared schema, casts to the declared columns, derives row ids and filters
    the period with ``args``). The view's name is not part of it."""
    ds = item.dataset
    return (ds.id, ds.name, ds.table_name, ds.temporal_mode, tuple((c.name, c.type, c.nullable) for c in ds.columns),
            item.version, tuple(item.locations), item.row_ids, item.row_identity, item.positioned,
            tuple(sorted((k, repr(v)) for k, v in args.items())))


class SharedInputs:
    """Loads input views for every side of a data diff, each distinct input once; use :meth:`load` as
    :func:`..run.compute.compute`'s loader, then :meth:`release`."""

    def __init__(self, contexts: list):
        """``contexts``: every side's run context (inputs resolved): how many sides read each input."""
        self.readers: Counter = Counter()
        for ctx in contexts:
            args = parameters.values(ctx.period, ctx.started_at)
            self.readers.update({input_key(item, args) for item in input_loads(ctx)})
        self.frames: dict[Hashable, tuple] = {}  # key -> (DataFrame, locations read)
        self.loaded = 0  # input views read from their files (the rest named a frame already loaded)

    def load(self, spark, inputs: list[loaders.InputLoad], args: dict) -> list[int]:
        """:func:`..inputs.loaders.load_inputs` for the inputs not loaded yet; every other view names the frame
        loaded before. Returns the location counts."""
        keys = [input_key(item, args) for item in inputs]
        fresh = {k: item for k, item in zip(keys, inputs) if k not in self.frames}
        counts = loaders.load_inputs(spark, list(fresh.values()), args)
        for (key, item), n in zip(fresh.items(), counts):
            frame = spark.table(quoted(item.view))
            if self.readers[key] > 1:
                # kept the first time a job reads it, by that job (not a job of its own): every later read of
                # these rows, by either side, reads the kept rows
                frame = frame.localCheckpoint(eager=False)
            self.frames[key] = (frame, n)
            self.loaded += 1
        for key, item in zip(keys, inputs):
            self.frames[key][0].createOrReplaceTempView(item.view)
        return [self.frames[k][1] for k in keys]

    def release(self) -> None:
        """Drop the loaded frames: Spark frees their materialised rows when they are no longer referenced (as
        it frees a run's materialised stages)."""
        self.frames.clear()

