"""A pure-Python TableGen front end that resolves records as LLVM's ``llvm-tblgen`` does.

>>> from tdflow.tdparser import parse_file, to_json   # doctest: +SKIP
>>> rk = parse_file("ops.td", include_dirs=["dialect/include"])  # doctest: +SKIP
"""

# The names of .errors and .records are imported on first use (PEP 562): a warm `tdflow
# tblgen` imports only .cache_entry of this package, and each module compiles afresh where
# no bytecode is cached.
_LAZY = {
    "SourceLoc": "errors", "TdError": "errors",
    **dict.fromkeys(("Bits", "Code", "Dag", "DefRef", "Loc", "Record", "RecordKeeper",
                     "Unresolved"), "records"),
}

__all__ = [
    "Bits", "Code", "Dag", "DefRef", "Loc", "Record", "RecordKeeper", "SourceLoc", "TdError",
    "Unresolved", "parse_file", "parse_string", "to_json",
]


def parse_file(path, include_dirs=(), defines=(), *, use_cache=True):  # noqa: D401
    """Parse and resolve ``path``; see :mod:`tdflow.tdparser.api`."""
    from .api import parse_file as _parse_file

    return _parse_file(path, include_dirs=include_dirs, defines=defines, use_cache=use_cache)


def parse_string(text, filename="<string>", include_dirs=(), defines=()):
    """Parse and resolve TableGen source text; see :mod:`tdflow.tdparser.api`."""
    from .api import parse_string as _parse_string

    return _parse_string(text, filename=filename, include_dirs=include_dirs, defines=defines)


def to_json(records):
    """The ``llvm-tblgen --dump-json`` document for ``records``; see :mod:`.json_export`."""
    from .json_export import to_json as _to_json

    return _to_json(records)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
