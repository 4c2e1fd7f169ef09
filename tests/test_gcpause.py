"""compile.gc_paused: the collector is off inside, back on after; ``until_exit`` freezes instead of collecting."""
from __future__ import annotations

import gc

from ledgerflow.compiler.compile import gc_paused


def test_paused_inside_and_enabled_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # a nested pause leaves it to the outer one
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_until_exit_freezes_and_the_next_pause_gives_back():
    try:
        with gc_paused(until_exit=True):
            made = [[] for _ in range(1000)]
        assert gc.isenabled()
        frozen = gc.get_freeze_count()
        assert frozen >= len(made)
        del made
        with gc_paused(until_exit=True):
            assert gc.get_freeze_count() == 0  # the last command's objects are collectable again
    finally:
        gc.unfreeze()
    assert gc.isenabled()


def test_the_program_freezes_a_loaded_workspace_and_the_cli_in_process_does_not(finance):
    """``ledgerflow`` the program (``adapters.cli:entry``) says its process ends with its command, so a loaded
    workspace is frozen out of the collector's walks; the same CLI driven in process (tests, tools) freezes
    nothing, and a workspace loaded either way is the same."""
    import subprocess
    import sys
    probe = ("import gc, sys\nfrom ledgerflow.compiler import gcpause\nfrom ledgerflow.compiler.workspace import "
             "load_workspace\nif sys.argv[1] == 'program': gcpause.one_command_process()\n"
             "ws = load_workspace(sys.argv[2])\nprint(gc.get_freeze_count() > 1000, gc.isenabled(), len(ws.projects))")
    outputs = {mode: subprocess.run([sys.executable, "-c", probe, mode, str(finance)], capture_output=True, text=True,
                                    check=True).stdout.split() for mode in ("program", "in-process")}
    projects = str(len(list((finance / "projects").glob("*.yml"))))
    assert outputs["program"] == ["True", "True", projects]
    assert outputs["in-process"] == ["False", "True", projects]
    script = subprocess.run([sys.executable, "-c", "from importlib.metadata import entry_points; print(["
                             "e.value for e in entry_points(group='console_scripts') if e.name == 'ledgerflow'])"],
                            capture_output=True, text=True, check=True).stdout
    assert "ledgerflow.adapters.cli:entry" in script
