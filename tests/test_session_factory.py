"""One session factory (issue 28): spark/session.py chooses local / --master / --remote Connect / the scenario
tests' JVM for every caller (CLI, Python API, runner, scenario tests). No Spark: the sessions are stand-ins."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from ledgerflow.adapters.spark import session as spark_session


@pytest.fixture
def made(monkeypatch):
    """What each factory asked for: ('local', master, conf, quiet, log_file, archive) or
    ('connect', remote, conf, quiet)."""
    calls = []
    monkeypatch.setattr(spark_session, "local_session", lambda master, conf, quiet=True, log_file=None, archive=None:
                        calls.append(("local", master, conf, quiet, log_file, archive)))
    monkeypatch.setattr(spark_session, "connect_session", lambda remote, conf, quiet=True:
                        calls.append(("connect", remote, conf, quiet)))
    return calls


def test_the_choice_of_session(made, tmp_path):
    config = SimpleNamespace(spark_conf={"a": "1", "b": "2"}, spark_master=None)
    factory, label = spark_session.session_factory(config, conf=("b=3", "c=x=y"), root=str(tmp_path))
    factory()
    assert label == "local[*]" and made[-1] == ("local", "local[*]", {"a": "1", "b": "3", "c": "x=y"}, True,
                                                 str(tmp_path / "target" / "logs" / "spark.log"), "run")
    factory, label = spark_session.session_factory(SimpleNamespace(spark_conf={}, spark_master="spark://h:7077"),
                                                   quiet=False)
    factory()
    assert label == "spark://h:7077" and made[-1] == ("local", "spark://h:7077", {}, False, None, "run")
    factory, label = spark_session.session_factory(config, "spark://other:7077")
    assert label == "spark://other:7077"
    factory, label = spark_session.session_factory(config, remote="sc://h:15002")
    factory()
    assert label == "sc://h:15002" and made[-1] == ("connect", "sc://h:15002", {"a": "1", "b": "2"}, True)
    factory, label = spark_session.session_factory(for_tests=True)  # no workspace: the runner's and tests' default
    factory()
    assert label == spark_session.BARE_MASTER == "local[2]"
    assert made[-1] == ("local", "local[2]", spark_session.scenario_test_conf(), True, None, "test")


@pytest.mark.parametrize("kwargs, message", [({"conf": ("novalue",)}, "--conf takes KEY=VALUE, got 'novalue'"),
                                             ({"master": "local[1]", "remote": "sc://h"},
                                              "use either --master or --remote, not both")])
def test_flags_naming_no_session_are_refused(made, kwargs, message):
    with pytest.raises(spark_session.SessionChoiceError, match=message):
        spark_session.session_factory(None, **kwargs)
    assert made == []
