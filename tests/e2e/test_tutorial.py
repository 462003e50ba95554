"""docs/adding-an-op.md runs: every code block of the tutorial is executed, in order, in a temp dir.

The page is read as a script:

* a block preceded by ``<!-- file: NAME -->`` is written to ``NAME``;
* a ```` ```bash ```` block is a terminal session: a line starting with ``$ `` is a command
  (``tdflow ...`` runs as ``python -m tdflow ...``, anything else as itself), the lines up to
  the next ``$ `` are what it prints (stdout and stderr, in the order they were written).
  A ``...`` line matches any number of lines; trailing spaces and the temp dir's path are
  ignored. ``# exit N`` after a command means it must exit with status N (else 0);
* a ```` ```python ```` block is written to a file and run with ``sys.executable`` (it checks
  itself against numpy with its own asserts).

Any other block is an error, so nothing shown on the page goes untested. ``<!-- part: NAME -->``
starts a part; blocks before the first part are shared. Each part runs in a fresh dir after the
shared blocks, so the long way is tested even while the short path fails.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-an-op.md"
TIMEOUT = 60

_MARKER = re.compile(r"<!--\s*(file|part):\s*(\S+)\s*-->")
_FENCE = re.compile(r"^```(\w*)\s*$")
_EXIT = re.compile(r"\s#\s*exit\s+(\d+)\s*$")


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    line: int  # 1-based line of the opening fence, for failure messages
    file: str | None  # from a preceding <!-- file: NAME -->
    part: str | None  # from the last <!-- part: NAME --> before it


def read_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a markdown page, with their file and part markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    part = file = None
    i = 0
    while i < len(lines):
        marker = _MARKER.fullmatch(lines[i].strip())
        fence = _FENCE.match(lines[i])
        if marker:
            kind, name = marker.groups()
            if kind == "part":
                part = name
            else:
                file = name
        elif fence:
            start = i
            i += 1
            body: list[str] = []
            while i < len(lines) and lines[i].rstrip() != "```":
                body.append(lines[i])
                i += 1
            assert i < len(lines), f"{path.name}:{start + 1}: unterminated code block"
            blocks.append(Block(fence.group(1), "\n".join(body) + "\n", start + 1, file, part))
            file = None
        elif lines[i].strip():
            file = None  # a file marker belongs to the block right after it
        i += 1
    return blocks


def parse_session(text: str) -> list[tuple[str, int, list[str]]]:
    """A bash block as (command, expected exit status, expected output lines)."""
    steps: list[tuple[str, int, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            cmd = line[2:]
            m = _EXIT.search(cmd)
            steps.append((cmd, int(m.group(1)) if m else 0, []))
        else:
            assert steps, f"output before the first command: {line!r}"
            steps[-1][2].append(line)
    return steps


def output_matches(expected: list[str], actual: str) -> bool:
    """Line by line, trailing spaces ignored; a ``...`` line stands for any lines."""
    pattern = "".join(r"(?:.*\n)*?" if line.strip() == "..." else re.escape(line.rstrip()) + r"\n"
                      for line in expected)
    text = "".join(line.rstrip() + "\n" for line in actual.splitlines())
    return re.fullmatch(pattern, text) is not None


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("COLUMNS", None)  # tables are as wide as their content when piped
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as they do on a terminal
    return env


def run_command(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    argv = shlex.split(cmd, comments=True)
    if argv[0] == "tdflow":
        argv = [sys.executable, "-m", "tdflow", *argv[1:]]
    return subprocess.run(argv, cwd=cwd, env=environment(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)


def run_block(block: Block, cwd: Path, index: int) -> None:
    where = f"{DOC.name}:{block.line}"
    if block.file is not None:
        (cwd / block.file).write_text(block.text, encoding="utf-8")
    elif block.lang == "bash":
        for cmd, status, expected in parse_session(block.text):
            proc = run_command(cmd, cwd)
            out = proc.stdout.replace(str(cwd) + os.sep, "").replace(str(cwd), ".")
            assert "Traceback" not in out, f"{where}: $ {cmd}\n{out}"
            assert proc.returncode == status, (
                f"{where}: $ {cmd}\nexit status {proc.returncode}, expected {status}\n{out}")
            assert output_matches(expected, out), (
                f"{where}: $ {cmd}\n--- expected\n" + "\n".join(expected) + f"\n--- got\n{out}")
    elif block.lang == "python":
        script = cwd / f"_block{index}.py"
        script.write_text(block.text, encoding="utf-8")
        proc = subprocess.run([sys.executable, script.name], cwd=cwd, env=environment(),
                              capture_output=True, text=True, timeout=TIMEOUT)
        assert proc.returncode == 0, f"{where}: python block failed\n{proc.stdout}{proc.stderr}"
    else:
        raise AssertionError(f"{where}: a ```{block.lang} block with no <!-- file: NAME --> "
                             "is neither written nor run")


BLOCKS = read_blocks(DOC)


def run_part(part: str, cwd: Path) -> None:
    blocks = [b for b in BLOCKS if b.part in (None, part)]
    assert any(b.part == part for b in blocks), f"{DOC.name} has no part {part!r}"
    for i, block in enumerate(blocks):
        run_block(block, cwd, i)


def test_every_block_belongs_to_a_part_that_is_tested():
    assert {b.part for b in BLOCKS} <= {None, "short", "long"}


def test_short_path_one_record_with_a_formula(tmp_path):
    run_part("short", tmp_path)


def test_long_way_hooks_and_a_numpy_kernel(tmp_path):
    run_part("long", tmp_path)


def test_the_reader_of_the_page_itself():
    """The harness reads what it should: file markers, sessions with exit statuses, ``...``."""
    assert output_matches(["a", "...", "d"], "a\nb\nc\nd\n")
    assert output_matches(["a", "...", "b"], "a\nb  \n")
    assert not output_matches(["a", "b"], "a\nb\nc\n")
    assert parse_session("$ tdflow ops x.td   # exit 1\nerror\n$ ls\n") == [
        ("tdflow ops x.td   # exit 1", 1, ["error"]), ("ls", 0, [])]
    assert any(b.file == "my_ops.td" for b in BLOCKS)
