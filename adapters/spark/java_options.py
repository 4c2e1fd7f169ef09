"""Java options as Spark's launcher reads ``spark.driver.extraJavaOptions``: split on whitespace,
with double quotes and backslashes as in a shell."""
from __future__ import annotations


def quote(arg: str) -> str:
    """``arg`` as one option of the list: in double quotes when it holds spaces, quotes or backslashes."""
    if any(c in arg for c in " \t\"'\\"):
        return '"%s"' % arg.replace("\\", "\\\\").replace('"', '\\"')
    return arg
