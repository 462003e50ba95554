"""Issue 23: a cache-filling ``tdflow tblgen`` whose process group is killed the moment it
exits (timing tools, CI runners do this) still leaves its entries: the forked writer has left
the group before the command goes on, and writes each entry whole (a rename) or not at all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

PROBE = """
import sys, tdflow.cli
status = tdflow.cli.main(sys.argv[1:])
print(status, "tdflow.tdparser.parser" in sys.modules)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_group_killed_at_exit_keeps_the_cache_entries(tmp_path) -> None:
    td = tmp_path / "a.td"
    td.write_text("class C<int n> { int v = n; }\ndef x : C<3>;\ndef y : C<4>;\n")
    cache = tmp_path / "cache"
    env = {**os.environ, "TDFLOW_CACHE_DIR": str(cache)}
    env.pop("TDFLOW_NO_CACHE", None)
    for _ in range(3):  # the race, if any, is narrow: give it several chances
        proc = subprocess.Popen([sys.executable, "-m", "tdflow", "tblgen", "--dump-json",
                                 str(td)], env=env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and b'"v":4' in out, err
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever is left in the command's group
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 60  # the writer, out of the group, finishes on its own
        entries: list = []
        while time.monotonic() < deadline:
            # finished entries only (pathlib's "*" also matches a writer's ".tmp-*.rk")
            entries = [p for p in (cache / "records").glob("*.rk")
                       if not p.name.startswith(".")] if (cache / "records").exists() else []
            if len(entries) >= 2:  # the keeper and the rendered JSON
                break
            time.sleep(0.05)
        assert len(entries) >= 2, entries
        time.sleep(0.2)
        assert not list((cache / "records").glob(".tmp-*"))
        warm = subprocess.run([sys.executable, "-c", PROBE, "tblgen", "--dump-json", str(td)],
                              env=env, capture_output=True, text=True, timeout=120)
        assert warm.stdout.splitlines()[-1] == "0 False", warm.stdout + warm.stderr
        for p in entries:
            p.unlink(missing_ok=True)


_SESSION_CHECK = """
import os
from tdflow.tdparser import cache_bg
out = []
for _ in range(40):
    assert cache_bg.run_detached(lambda: None)
    child = cache_bg._pending[-1]
    out.append(os.getsid(child) != os.getsid(0))  # already out of this group
cache_bg.wait_for_writes()
print(sum(out), len(out))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_run_detached_returns_once_the_writer_left_the_group() -> None:
    r = subprocess.run([sys.executable, "-c", _SESSION_CHECK], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.split() == ["40", "40"], r.stdout + r.stderr
