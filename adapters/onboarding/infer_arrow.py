"""A Parquet or ORC column's ledgerflow type from its Arrow type, exactly: ``decimal(18,2)`` stays
``decimal(18,2)``, 8-, 16- and 32-bit integers are ``integer``, 64-bit ones ``bigint``, floating point
``double``, a date ``date``, a timestamp of any unit or zone ``timestamp``. A type no ledgerflow column
holds (nested, binary, time of day, an unsigned 64-bit integer, a decimal wider than 38 digits) has
none: the column is left out, and the YAML says why."""
from __future__ import annotations


def ledger_type(arrow_type) -> tuple[str | None, str]:
    """(the declared type or None, a note) of ``arrow_type``."""
    import pyarrow.types as t
    if t.is_dictionary(arrow_type):
        return ledger_type(arrow_type.value_type)
    if t.is_string(arrow_type) or t.is_large_string(arrow_type):
        return "string", ""
    if t.is_boolean(arrow_type):
        return "boolean", ""
    if t.is_int8(arrow_type) or t.is_int16(arrow_type) or t.is_int32(arrow_type) or t.is_uint8(arrow_type) \
            or t.is_uint16(arrow_type):
        return "integer", ""
    if t.is_int64(arrow_type) or t.is_uint32(arrow_type):
        return "bigint", ""
    if t.is_decimal(arrow_type):
        if arrow_type.precision > 38:
            return None, ""
        return f"decimal({arrow_type.precision},{arrow_type.scale})", ""
    if t.is_floating(arrow_type):
        return "double", ""
    if t.is_date(arrow_type):
        return "date", ""
    if t.is_timestamp(arrow_type):
        return "timestamp", ""
    if t.is_null(arrow_type):
        return "string", "every value NULL in the files: typed string, check it"
    return None, ""

