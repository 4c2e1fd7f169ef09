"""The least work of a promotion, written by hand: the floor ``bench/promotion_scale.py`` times ``ledgerflow promote``
against.

    python bench/promotion_by_hand.py WORKSPACE

On a workspace :func:`bench.promotion_scale.build` made, it leaves every output as ``promote --all --from dev``
does: each prod partition ``<out>/_period=P`` a real folder of hard links to the files of the version dev shows
(with its marker), exchanged in with one ``renameat2(RENAME_EXCHANGE)``, the folder exchanged out and the version
prod showed before deleted. Nothing else: no check of what a partition holds, no journal, no record, no
recovery; the file-system calls a promotion cannot do without, in one plain loop. Standard library only.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import sys


def main(root: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = libc.renameat2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    outputs = os.path.join(root, "out")
    for project in sorted(os.listdir(outputs)):
        out = os.path.join(outputs, project)
        dev = os.path.join(out, ".lf_envs", "dev")
        for partition in sorted(os.listdir(dev)):
            with open(os.path.join(dev, partition, ".lf_version")) as fh:
                name = fh.read().strip()
            with open(os.path.join(out, partition, ".lf_version")) as fh:
                previous = fh.read().strip()
            versions = os.path.join(out, ".lf_versions", partition)
            version = os.path.join(versions, name)
            folder = os.path.join(versions, f".show.{name}.byhand")
            os.mkdir(folder)
            for file in os.listdir(version):
                if not file.startswith((".", "_")):
                    os.link(os.path.join(version, file), os.path.join(folder, file))
            with open(os.path.join(folder, ".lf_version"), "w") as fh:
                fh.write(name + "\n")
            if renameat2(-100, os.fsencode(folder), -100, os.fsencode(os.path.join(out, partition)), 2) != 0:
                raise OSError(ctypes.get_errno(), "renameat2 failed", folder)
            shutil.rmtree(folder)  # now the folder of links prod showed
            if previous != name:
                shutil.rmtree(os.path.join(versions, previous))


if __name__ == "__main__":
    main(sys.argv[1])
