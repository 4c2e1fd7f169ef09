"""Spark: the one session factory, class archive, Java options, parser warm-up, Spark error text."""
