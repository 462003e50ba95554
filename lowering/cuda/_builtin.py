"""Imports every generator module of this package so that they register (``code._load_builtin``).

Generator modules are found by listing the package, so adding one needs no edit here; the
modules that hold no generators are skipped.
"""

import importlib
import pkgutil

import tdflow.lowering.cuda as _pkg

_NOT_GENERATORS = {"code", "common"}

for _m in sorted(m.name for m in pkgutil.iter_modules(_pkg.__path__)):
    if _m not in _NOT_GENERATORS and not _m.startswith("_"):
        importlib.import_module(f"tdflow.lowering.cuda.{_m}")
