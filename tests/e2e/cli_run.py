"""Running the CLI in-process from tests: one helper for every e2e test file."""

from __future__ import annotations

from tdflow.cli import main


def cli(capsys, *args) -> tuple[int, str, str]:
    """Run the CLI in-process: (exit status, stdout, stderr); never a traceback."""
    try:
        status = main([str(a) for a in args])
    except SystemExit as exc:  # argparse
        status = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return status, out, err
