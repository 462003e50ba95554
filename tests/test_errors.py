"""One error type: every user-facing error derives from ``TdflowError``, and the CLI turns it into
exit code 1 (diagnostics) or 2 (usage) in one place; anything else is an internal error that
prints one line (the traceback only under ``TDFLOW_DEBUG=1``)."""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import types

import pytest
from tdflow.tdparser.errors import TdError
from tdflow_modules import module_names

from tdflow.commands import run_command
from tdflow.core.errors import TdflowError

# Exception classes that never reach a user: control flow inside one module.
INTERNAL = {"tdflow.dialect.ir.body_parser._Fallback",  # the fast path declines
            "tdflow.dialect.formula.lalr.Located",  # re-raised as a located TdError
            # an expression not cut into native segments: numpy's path runs it
            "tdflow.lowering.elementwise_segments._NotSplit",
            "tdflow.lowering.elementwise_segments._Refused"}


def _tdflow_modules():
    return [importlib.import_module(name) for name in module_names()]


def test_every_error_class_derives_from_tdflow_error():
    """A class a user can catch is one we defined for them; all of them share the base."""
    offenders = []
    for mod in _tdflow_modules():
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if cls.__module__ != mod.__name__ or not issubclass(cls, BaseException):
                continue
            if f"{cls.__module__}.{cls.__qualname__}" in INTERNAL:
                continue
            if not issubclass(cls, TdflowError):
                offenders.append(f"{cls.__module__}.{cls.__qualname__}")
    assert not offenders, "error classes outside the TdflowError hierarchy: " + ", ".join(offenders)


def test_every_error_renders_a_diagnostic_line():
    """``render()`` is on the base class: no duck typing, every subclass has it."""
    for mod in _tdflow_modules():
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if issubclass(cls, TdflowError):
                assert callable(cls.render) and cls.exit_code in (1, 2), cls


def _fake_command(monkeypatch, exc: BaseException) -> argparse.Namespace:
    """A subcommand module ``tdflow.commands._boom`` whose ``run`` raises ``exc``."""
    mod = types.ModuleType("tdflow.commands._boom")

    def run(args):
        raise exc

    mod.run = run
    monkeypatch.setitem(sys.modules, "tdflow.commands._boom", mod)
    return argparse.Namespace(command="_boom")


def test_a_td_error_is_rendered_with_exit_1(monkeypatch, capsys, tmp_path):
    src = tmp_path / "a.td"
    src.write_text("def X : Y;\n")
    args = _fake_command(monkeypatch, TdError("Couldn't find class 'Y'", str(src), 1, 9))
    assert run_command(args) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [f"{src}:1:9: error: Couldn't find class 'Y'", "def X : Y;",
                                " " * 8 + "^"]


def test_a_usage_error_exits_2(monkeypatch, capsys):
    from tdflow.commands._args import UsageError

    assert run_command(_fake_command(monkeypatch, UsageError("no such file 'x.td'"))) == 2
    assert capsys.readouterr().err.strip() == "tdflow: error: no such file 'x.td'"


def test_an_internal_bug_is_one_line_without_traceback(monkeypatch, capsys):
    monkeypatch.delenv("TDFLOW_DEBUG", raising=False)
    args = _fake_command(monkeypatch, KeyError("boom"))
    assert run_command(args) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines() == ["tdflow: internal error, please report: KeyError: 'boom' "
                                "(rerun with TDFLOW_DEBUG=1 for the traceback)"]


def test_tdflow_debug_shows_the_traceback(monkeypatch, capsys):
    monkeypatch.setenv("TDFLOW_DEBUG", "1")
    assert run_command(_fake_command(monkeypatch, ZeroDivisionError("x"))) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "ZeroDivisionError: x" in err
    assert "internal error, please report" in err


@pytest.mark.parametrize("exc", [RecursionError("deep"), MemoryError()])
def test_resource_errors_are_not_tracebacks(monkeypatch, capsys, exc):
    monkeypatch.delenv("TDFLOW_DEBUG", raising=False)
    assert run_command(_fake_command(monkeypatch, exc)) == 1
    assert "Traceback" not in capsys.readouterr().err
