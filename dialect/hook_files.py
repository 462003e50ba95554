"""User hook files: Python modules, named by path, whose decorators register the hooks and
kernels of a user's ops (``load_ops(hooks=[...])``, the CLI's ``--hooks``).

>>> hook_module_name("/a/my_hooks.py") == hook_module_name("/a/../a/my_hooks.py")
True
"""

from __future__ import annotations

import os
import sys

from tdflow.core.errors import TdflowError
from tdflow.core.files import FileAccessError, check_input_file, os_reason

#: Hook modules imported by this process: module name -> digest of the source it ran.
_IMPORTED_HOOKS: dict[str, str] = {}


def hook_module_name(path: str) -> str:
    """The module name a hook file is imported under: its stem plus a short hash of its
    absolute path, so that two files with the same name never replace each other.

    >>> hook_module_name("/a/my_hooks.py") == hook_module_name("/a/../a/my_hooks.py")
    True
    >>> hook_module_name("/a/my_hooks.py") != hook_module_name("/b/my_hooks.py")
    True
    """
    import hashlib
    import re

    absolute = os.path.abspath(path)
    digest = hashlib.sha256(os.fsencode(absolute)).hexdigest()[:12]
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(absolute))[0])
    return f"_tdflow_user_hooks_{digest}_{stem}"


def import_hook_files(paths: list[str]) -> list[str]:
    """Import each user hook module (by path) and return their module names, in order.

    The decorators a hook module runs are recorded as that module's declarations
    (:mod:`tdflow.core.declarations`): they reach only the contexts built with the module
    (``Context(..., hook_modules=...)``, which ``load_ops(hooks=...)`` does), not every context
    of the process. Importing a file again in the same process is a no-op while its content is
    unchanged (``load_ops(hooks=...)`` and the CLI may both ask for it); an edited file runs
    again, and contexts loaded after that see its new declarations.
    """
    import hashlib
    import importlib.util

    from tdflow.core.declarations import declaring, forget

    names: list[str] = []
    for path in paths:
        check_input_file(path, "hook file")
        name = hook_module_name(path)
        try:
            with open(path, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
        except OSError as exc:
            raise FileAccessError(path, f"cannot open hook file: {os_reason(exc)}") from None
        names.append(name)
        if _IMPORTED_HOOKS.get(name) == digest and name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise FileAccessError(path, "cannot import hook file: expected a .py file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            with declaring(name):
                spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - the user's code: report, do not crash
            sys.modules.pop(name, None)
            _IMPORTED_HOOKS.pop(name, None)
            forget(name)
            raise HookFileError(path, exc) from exc
        _IMPORTED_HOOKS[name] = digest
    return names


class HookFileError(TdflowError):
    """A user hook file that fails to import; rendered as a diagnostic (exit status 1)."""

    def __init__(self, path: str, exc: BaseException) -> None:
        super().__init__(f"{path}: {exc}")
        self.path = path
        self.exc = exc

    def render(self) -> str:
        import traceback

        frames = [f for f in traceback.extract_tb(self.exc.__traceback__)
                  if os.path.abspath(f.filename) == os.path.abspath(self.path)]
        where = f"{self.path}:{frames[-1].lineno}" if frames else self.path
        if isinstance(self.exc, SyntaxError) and self.exc.lineno:
            where = f"{self.path}:{self.exc.lineno}"
        return (f"{where}: error: cannot import hook file: "
                f"{type(self.exc).__name__}: {self.exc}")
