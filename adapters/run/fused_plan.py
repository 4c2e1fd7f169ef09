"""What a fused range's SQL may assume about its inputs, known only once every period resolved them.

- :func:`uniform_views`: the views every period resolves to the same version and locations (a snapshot
  among them is read once: ``compiler.fused.invariant_views``);
- :func:`broadcast_views`: the runtime join sides small enough to broadcast for the whole range. A
  period's run lets Spark broadcast a join side it estimates below ``spark.sql.autoBroadcastJoinThreshold``
  from its files' size; the fused side holds that side once per period behind a join to the periods whose
  size Spark cannot estimate (a nested loop), so Spark would shuffle the ten million GL rows to join it
  instead. Where every period's side is below the threshold, as its own run would find, and all periods'
  sides together below :data:`FUSED_BROADCAST_LIMIT`, the fused SQL asks for the broadcast.
"""
from __future__ import annotations

from typing import Optional

from ...compiler.compile import CompiledProject
from ...compiler.plan import Role
from ..inputs.fingerprint import local_bytes

FUSED_BROADCAST_LIMIT = 128 << 20  # file bytes of one join side over every period of a range


def _key(resolution) -> tuple:
    return resolution.version, tuple(resolution.locations)


def uniform_views(resolutions: dict[str, dict]) -> set[str]:
    """The views every period of ``resolutions`` (period identifier -> view -> Resolution) resolves to the same
    version and locations."""
    keys: dict[str, set] = {}
    for per_view in resolutions.values():
        for view, res in per_view.items():
            keys.setdefault(view, set()).add(_key(res))
    return {view for view, found in keys.items() if len(found) == 1}


def _bytes(resolution, sizes: dict) -> Optional[int]:
    total = 0
    for loc in resolution.locations:
        if loc.kind != "path":
            return None
        if loc.target not in sizes:
            sizes[loc.target] = local_bytes(loc.target)
        if sizes[loc.target] is None:
            return None
        total += sizes[loc.target]
    return total


def broadcast_views(compiled: CompiledProject, resolutions: dict[str, dict], threshold: int) -> set[str]:
    """The join views of ``compiled`` whose files, as every period of ``resolutions`` resolves them, are local
    and at most ``threshold`` bytes per period (Spark's ``autoBroadcastJoinThreshold``; negative: none) and at
    most :data:`FUSED_BROADCAST_LIMIT` over all periods."""
    if threshold < 0:
        return set()
    sizes: dict = {}
    out = set()
    for view in (v.view for v in compiled.inputs if v.role == Role.JOIN):
        per_period = [_bytes(r[view], sizes) if view in r else None for r in resolutions.values()]
        if per_period and all(b is not None and b <= threshold for b in per_period) \
                and sum(per_period) <= FUSED_BROADCAST_LIMIT:
            out.add(view)
    return out
