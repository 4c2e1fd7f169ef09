"""OpenLineage run events (docs/openlineage.md): built from run records, kept in an outbox, sent by the
openlineage-python client's transport."""
