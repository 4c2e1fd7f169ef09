"""Opening a workspace's run store, as every command that uses it does: the file is checked, then the
runs whose process died are recovered (once per process, :func:`.recovery.on_open`).

:class:`..store.runstore.RunStore` itself only knows where the store lives: making one checks and
recovers nothing, so the store sits below the code that recovers runs and imports none of it."""
from __future__ import annotations

from . import recovery
from ..store import health
from ..store.runstore import RunStore


def open_store(root: str, env: str = "prod") -> RunStore:
    """The run store of the workspace at ``root`` as environment ``env`` sees it (:mod:`..envs`), checked and with
    its interrupted runs recovered.

    Raises :class:`..store.health.RunStoreDamaged` (or ``RunStoreUnreadable``) when ``state.db`` cannot be
    used: the command's one paragraph, or the warning of a command that goes on without it."""
    store = RunStore(root, env)
    health.check(store.db_path)  # a damaged state.db: one paragraph (RunStoreDamaged), not a traceback
    recovery.on_open(store)  # runs whose process died are marked failed once per process (recovery.py)
    return store
