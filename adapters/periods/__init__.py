"""Closed and stale project-periods (issue 31): ``periods close | reopen | list``, ``status``."""
