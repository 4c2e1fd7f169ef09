"""Environments: which version each published partition shows, per environment (``prod`` and others), and
promotion between them (docs/environments.md)."""
