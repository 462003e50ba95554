"""``python -m tdflow`` is the ``tdflow`` command."""

from tdflow.cli import entry

raise SystemExit(entry())
