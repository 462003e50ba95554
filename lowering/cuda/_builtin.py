"""Imports every module of generators so that they register (see ``code._load_builtin``)."""

from tdflow.lowering.cuda import elementwise  # noqa: F401
