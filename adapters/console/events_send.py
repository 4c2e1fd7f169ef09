"""``ledgerflow events send``: the OpenLineage events kept because their receiver was down or slow, sent now, oldest
first (the work is :func:`..events.emitter.send_all`'s)."""
from __future__ import annotations

import click

from ...compiler.errors import LedgerflowError
from .invocation import Invocation, command


class EventsNotSent(LedgerflowError):
    """Pending events that could not be sent (the receiver still down, or events off): exit 1."""


@click.group("events")
def events_group():
    """OpenLineage events (docs/openlineage.md)."""


@events_group.command("send")
@command
def send_cmd(inv: Invocation):
    """Send the OpenLineage events kept in .ledgerflow/events/pending, oldest first; stop at the first that fails."""
    from ..events.emitter import send_all
    sent, left, why = send_all(inv.root, inv.workspace.config)
    click.echo(f"Sent {sent} OpenLineage event{'s' if sent != 1 else ''}; {left} pending.")
    if left:
        hint = ("wait for it, then run `ledgerflow events send` again" if "another process" in str(why) else
                "check the receiver (openlineage: in ledgerflow.yml, or OPENLINEAGE_URL), then run `ledgerflow events "
                "send` again")
        raise EventsNotSent(f"EVENTS-001 {left} OpenLineage event{'s' if left != 1 else ''} not sent: {why}. They stay "
                            f"in .ledgerflow/events/pending. Hint: {hint}.")
