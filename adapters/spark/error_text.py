"""Turn an exception raised by Spark (Py4J, pyspark, Spark Connect) into one readable paragraph.

A Spark failure reaches Python as a chain of Java exceptions (a job abort wrapping the task's
failure wrapping its cause), often carrying whole stack traces in their messages, and Py4J puts its
own "An error occurred while calling o42.load." in front. The user needs the one or two messages
that say what is wrong: ledgerflow's own ``raise_error`` text verbatim when there is one, else the
first message of the chain that is not a wrapper, plus the root cause when it adds something. An
unreadable data file is named as such, with its path and, when known, the dataset that reads it.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional
from urllib.parse import unquote

# ledgerflow's own messages raised in SQL with raise_error(...)
_OWN = re.compile(r"(ledgerflow: [^\n]*?)(?:\s+SQLSTATE: \w+)?(?:\n|$)")
# messages that only wrap the interesting one
_WRAPPERS = ("Job aborted due to stage failure", "Exception thrown in awaitResult", "An error occurred while calling",
             "[TASK_WRITE_FAILED]", "Writing job aborted")
_STACK_LINE = re.compile(r"^\s*(at \S+\(.*\)|\.\.\. \d+ more|Caused by: |Suppressed: |== SQL|== DataFrame)")
_READ_FILE = re.compile(r"\[FAILED_READ_FILE[.\w]*\][^\n]*?reading file (\S+?)\.?(?:\s|$)")
_CLASS_PREFIX = re.compile(r"^(?:[a-z]\w*\.)+[A-Z]\w*(?:Exception|Error): ")


def java_chain(exc: BaseException) -> list[tuple[str, str]]:
    """(Java class name, message) of the Java exception behind ``exc`` and each of its causes, outermost
    first; empty when ``exc`` carries no Java exception (Spark Connect, plain Python errors)."""
    java = getattr(exc, "java_exception", None)  # py4j.protocol.Py4JJavaError
    if java is None:
        java = getattr(exc, "_origin", None)  # pyspark's CapturedException keeps the Java exception here
    out: list[tuple[str, str]] = []
    seen = 0
    try:
        while java is not None and seen < 20:
            out.append((str(java.getClass().getName()), str(java.getMessage() or "")))
            java = java.getCause()
            seen += 1
    except Exception:  # the JVM is gone or the object is not a Java exception: use what we have
        pass
    return out


def clean(message: str) -> str:
    """One line: the message without SQLSTATE, query context, plans and stack traces."""
    cut = message.find("SQLSTATE:")
    if cut >= 0:
        message = message[:cut]
    lines = []
    for line in message.splitlines():
        if _STACK_LINE.match(line) or line.startswith("'") or line.startswith("+-") or line.startswith(":- "):
            break
        lines.append(line.strip())
    text = " ".join(x for x in lines if x)
    text = _CLASS_PREFIX.sub("", text)
    return re.sub(r"\s+", " ", text).strip().rstrip(";").strip()


def _is_wrapper(message: str) -> bool:
    return any(message.startswith(w) for w in _WRAPPERS)


class DatasetLabel(str):
    """A dataset's name as :func:`describe_locations` gives it, carrying the CSV delimiter of the
    location (to find a malformed record's line in a ';' file)."""

    sep: str = ","

    def __new__(cls, name: str, sep: str = ","):
        label = super().__new__(cls, name)
        label.sep = sep
        return label


def _dataset_of(path: str, locations: Optional[dict]) -> Optional[str]:
    """The dataset whose location holds ``path`` (``locations``: location target -> dataset name)."""
    plain = unquote(re.sub(r"^file:(//)?", "", path))  # Spark names a file by its URI: [ is %5B
    for target, name in (locations or {}).items():
        base = re.sub(r"^file:(//)?", "", target).rstrip("/")
        if plain == base or plain.startswith(base + "/"):
            return name
    return None


def _malformed_record(uri: str, whole: str, head: str, sep: str = ",") -> Optional[str]:
    """The paragraph for a record Spark refused (mode FAILFAST) or a CSV header that is not the one
    ledgerflow read: the file and, found by parsing the file again in Python, the record's line."""
    from ..inputs.files import locate_malformed
    path = re.sub(r"^file:(//)?", "", uri)
    if "CSV header does not conform to the schema" in whole:
        return (f"INPUT-003 {head}the header of {unquote(path)} does not name the columns in the order Spark reads "
                "them by: files of this location order their columns differently and its reader options (or "
                "compression) leave the read to Spark, which would map them by position; or the file was replaced "
                "while the run read it. Nothing was written. Give every file the same column order (or run again "
                "once the file is complete).")
    if "MALFORMED_CSV_RECORD" in whole:
        fmt, kind = "csv", "CSV"
    elif "MALFORMED_RECORD_IN_PARSING" in whole:
        fmt, kind = "json", "JSON"
    else:
        return None
    found = locate_malformed(unquote(path), fmt, sep)
    where = f"{unquote(path)} line {found[0]}" if found else unquote(path)
    what = f" ({found[1]}): {found[2][:120]!r}" if found else ""
    return (f"INPUT-003 {head}{where}: a malformed {kind} record{what}; a file cut short while it was being "
            "written, a quote or delimiter too many or missing. No record is skipped or padded: nothing was "
            "written. Fix or re-export the file.")


def spark_error_text(exc: BaseException, locations: Optional[dict] = None) -> str:
    """The useful part of a Spark exception as one paragraph (no stack trace, no Py4J wrapper).

    ``locations`` (location target -> dataset name) lets an unreadable file be attributed to its dataset."""
    chain = java_chain(exc)
    texts = [m for _, m in chain] or [str(exc)]
    whole = "\n".join([str(exc), *texts])
    own = _OWN.search(whole)
    if own:
        return own.group(1).strip()
    read = _READ_FILE.search(whole)
    messages = [c for c in (clean(t) for t in texts) if c]
    if not messages:
        return type(exc).__name__
    if read:
        path = read.group(1)
        dataset = _dataset_of(path, locations)
        root = messages[-1]
        head = f"dataset '{dataset}': " if dataset else ""
        record = _malformed_record(path, whole, head, getattr(dataset, "sep", ","))
        if record:
            return record
        shown = re.sub(r'^file:(//)?', '', path)
        if "DATA_TYPE_MISMATCH" in whole or "SCHEMA_MISMATCH" in whole:
            return (f"INPUT-002 {head}{unquote(shown)} stores a column with another type than the location's other "
                    f"files ({root}); nothing was read. Write every file of the location with the same column "
                    "types.")
        text = f"{head}cannot read data file {shown}: the file is unreadable or corrupt"
        if not root.startswith("[FAILED_READ_FILE"):
            text += f" ({root})"
        return text + "."
    primary = next((m for m in messages if not _is_wrapper(m)), messages[0])
    root = messages[-1]
    if root != primary and root not in primary and not _is_wrapper(root):
        return f"{primary} (cause: {root})"
    return primary


def describe_locations(inputs: Iterable[tuple[str, Iterable]]) -> dict:
    """``{location target: dataset name}`` from ``(dataset name, locations)`` pairs."""
    out = {}
    for name, locations in inputs:
        for loc in locations:
            if getattr(loc, "kind", "path") == "path":
                options = {str(k).lower(): str(v) for k, v in dict(getattr(loc, "options", ()) or ()).items()}
                out[loc.target] = DatasetLabel(name, options.get("sep", options.get("delimiter", ",")))
    return out
