"""``python -m tdflow`` is the ``tdflow`` command."""

from tdflow.cli import main

raise SystemExit(main())
