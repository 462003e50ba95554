"""Fixtures the dialect tests share."""

from __future__ import annotations

import pytest


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache folder of this test's own (``TDFLOW_CACHE_DIR``), caching on: what a run
    stores and reads there is only what the test itself wrote."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(folder))
    monkeypatch.delenv("TDFLOW_NO_CACHE", raising=False)
    return folder
