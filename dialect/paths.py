"""Where the dialect layer's installed ``.td`` include directory is (``Base.td``, ``ops.td``,
``Patterns.td`` under ``tdflow/``); a leaf module, so the loaders and readers above can share it.

>>> (INCLUDE_DIR / "tdflow" / "Base.td").is_file()
True
"""

from __future__ import annotations

from pathlib import Path

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
