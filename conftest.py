"""The test session's settings that must hold before any tdflow module is imported, for
``pytest tests/...`` and ``pytest --doctest-modules lowering/ runtime/ ...`` alike (this file is
the root of both; ``tests/conftest.py`` is read only for the former).

Native modules: a cold cache's launch waits for its compiler (``TDFLOW_NATIVE_BUILDS=wait``)
instead of running numpy meanwhile (the default, ``background``): the values are the same bits
either way, but a test or doctest that checks that a native function answered (not refused)
must not depend on how fast the compiler was. Set here, in the environment, so the CLI children
the tests start inherit it; a test of ``background`` sets ``elementwise_native_build.BACKGROUND``
itself. A value already in the environment is kept.
"""

from __future__ import annotations

import os

os.environ.setdefault("TDFLOW_NATIVE_BUILDS", "wait")
