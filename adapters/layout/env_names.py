"""Environment names: ``prod`` by default, else ``--env NAME`` or ``$LEDGERFLOW_ENV``; lower-case letters,
digits, ``_`` and ``-``, starting with a letter or digit, at most 40 characters (a folder name under
``.lf_envs`` and a value in the run store, so never a path or anything a shell or SQL reads specially)."""
from __future__ import annotations

import os
import re
from typing import Optional

from ...compiler.errors import LedgerflowError
from .partition_paths import PROD

__all__ = ["PROD", "ENV_VARIABLE", "EnvironmentNameError", "check_env_name", "chosen_env"]
ENV_VARIABLE = "LEDGERFLOW_ENV"
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


class EnvironmentNameError(LedgerflowError):
    """An environment name that is not one (ENV-001)."""


def check_env_name(name: str, where: str = "--env") -> str:
    """``name`` when it is a valid environment name; else :class:`EnvironmentNameError` naming ``where``."""
    if isinstance(name, str) and _NAME.fullmatch(name):
        return name
    shown = repr(name) if isinstance(name, str) else type(name).__name__
    raise EnvironmentNameError(
        f"ENV-001 {where}: {shown} is not an environment name. Hint: an environment is named with lower-case "
        "letters, digits, '_' and '-' (starting with a letter or digit, at most 40 characters), for example "
        "'dev' or 'jan-close'; 'prod' is the default.")


def chosen_env(option: Optional[str]) -> str:
    """The environment of a command: ``option`` (``--env``), else ``$LEDGERFLOW_ENV``, else ``prod``; checked."""
    if option is not None:
        return check_env_name(option)
    value = os.environ.get(ENV_VARIABLE)
    if value is None or value == "":
        return PROD
    return check_env_name(value, f"${ENV_VARIABLE}")
