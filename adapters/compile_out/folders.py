"""Folder and file names made from names a user wrote (project names in ``target/`` and ``--out``).

A project name may hold anything (``../..``, ``/``, control characters); used as a path segment it
could climb out of ``target/`` — and the resolved script's ``INSERT OVERWRITE DIRECTORY`` clears the
folder it writes to. :func:`segment` gives one path segment that stays where it is put, and two
different names never get the same segment, not even on a case-insensitive file system (macOS and
Windows by default, where a committed ``--out`` folder is often checked out): project names are
compared case-sensitively, so ``Close`` and ``close`` are two projects and need two folders.

The encoding is injective by construction:

* a plain name — lower-case letters, digits, ``_``, ``.`` and ``-``, starting with a letter, digit
  or ``_``, not ending with ``.``, at most :data:`MAX_CHARS` characters, and not a name Windows
  keeps for a device (``con``, ``prn``, ``aux``, ``nul``, ``com0``-``com9``, ``lpt0``-``lpt9``, also
  before a ``.``: ``nul.x``) — is its own segment;
* any other name is escaped: each UTF-8 byte other than a lower-case letter, a digit, ``_`` or a
  ``-`` that does not start the name (so an upper-case letter, every ``.``, ``+`` itself) becomes
  ``+`` and two lower-case hex digits, e.g. ``Close`` -> ``+43lose``, ``a b`` -> ``a+20b``,
  ``../x`` -> ``+2e+2e+2fx``; the empty name is ``+``. Every such segment holds a ``+``, which no
  plain name does, and the escape can be read back, so two names never meet. Segments hold
  lower-case ASCII only, so case folding merges none of them;
* a device name is escaped the same way, its first byte included (``con`` -> ``+63on``, ``nul.x`` ->
  ``+6eul+2ex``): Windows opens the device for ``con`` or ``con.sql`` in any folder;
* an escaped segment longer than :data:`MAX_CHARS` characters (or a plain-looking name longer than
  that) is cut and ends with ``+h`` and the SHA-256 of the whole name (``+h`` never occurs in an
  escape: ``+`` is always followed by a hex digit). File names stay far below the usual 255 bytes.
"""
from __future__ import annotations

import hashlib
import re

MAX_CHARS = 120
_KEEP = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_-")
_PLAIN = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]{0,%d}[a-z0-9_-])?" % (MAX_CHARS - 2))
_DEVICE = re.compile(r"(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:\..*)?")


def _escaped(i: int, b: int, device: bool) -> str:
    if b in _KEEP and not (i == 0 and (b == ord("-") or device)):
        return chr(b)
    return f"+{b:02x}"


def segment(name: str) -> str:
    """The path segment of ``name``: ``name`` itself when it is plain, else its escape (see the module)."""
    device = bool(_DEVICE.fullmatch(name))
    if _PLAIN.fullmatch(name) and not device:
        return name
    if not name:
        return "+"
    data = name.encode("utf-8", errors="surrogatepass")
    out = "".join(_escaped(i, b, device) for i, b in enumerate(data))
    if len(out) <= MAX_CHARS and "+" in out:
        return out
    return out[:50] + "+h" + hashlib.sha256(data).hexdigest()
