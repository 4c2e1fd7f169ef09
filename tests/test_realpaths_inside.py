"""``realpaths.inside`` (a prefix test on normalised text) against the ``os.path.commonpath`` rule it replaced.
The old rule took ``//a`` (which Linux reads as ``/a``) for a folder strictly inside ``/a``; both sides here
read two leading slashes as one."""
from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerflow.compiler.realpaths import inside

_PART = st.sampled_from(["a", "ab", "a.b", "..", ".", "", "b", "a-b", "ü"])
_PATH = st.lists(_PART, max_size=5).map(lambda parts: "/" + "/".join(parts))


def _by_commonpath(path: str, root: str, strict: bool) -> bool:
    path, root = (os.path.normpath(p) for p in (path, root))
    path, root = (p[1:] if p.startswith("//") else p for p in (path, root))
    if path == root:
        return not strict
    return os.path.commonpath([path, root]) == root


@settings(max_examples=500, deadline=None)
@given(_PATH, _PATH, st.booleans())
def test_inside_is_the_commonpath_rule(path, root, strict):
    assert inside(path, root, strict) == _by_commonpath(path, root, strict)
