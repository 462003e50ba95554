"""Property tests of the TableGen front end.

(a) Random valid programs (tdgen.py: expressions and statements; records, dags and
    multiclasses) resolve exactly as llvm-tblgen-19 resolves them (oracle).
(b) Random byte mutations and truncations of real ``.td`` files never make the parser raise
    anything but ``TdError``: no crash, no hang. Needs no LLVM: it mutates the project's own
    ``.td`` files, plus a few small MLIR ones when they are installed.

Both are bounded (examples, per-example timeout) to stay well under a minute each.
"""

from __future__ import annotations

import itertools
import os
import signal
import tempfile
from pathlib import Path

import pytest
import tdgen
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from oracle import ROOT, compare, find_llvm_tblgen, mlir_include_dir

HERE = Path(__file__).resolve().parent
SCRATCH = Path(tempfile.mkdtemp(prefix="tdflow-props-"))
_counter = itertools.count()

SMALL_MLIR = ["mlir/IR/Utils.td", "mlir/IR/Traits.td", "mlir/IR/DialectBase.td",
              "mlir/IR/Constraints.td", "mlir/Interfaces/SideEffectInterfaceBase.td"]
PER_EXAMPLE_S = 15
# Bounded for CI; raise for a local soak, e.g. TDFLOW_PROP_EXAMPLES=2000.
PROGRAM_EXAMPLES = int(os.environ.get("TDFLOW_PROP_EXAMPLES", "100"))
MUTATION_EXAMPLES = int(os.environ.get("TDFLOW_PROP_EXAMPLES", "150"))



class Hang(Exception):
    pass


class time_limit:
    """Raise :class:`Hang` if the block runs longer than ``seconds`` (Unix main thread)."""

    def __init__(self, seconds: int):
        self.seconds = seconds

    def _fire(self, signum, frame):
        raise Hang(f"no result within {self.seconds} s")

    def __enter__(self):
        self.old = signal.signal(signal.SIGALRM, self._fire) if hasattr(signal, "SIGALRM") else None
        if self.old is not None:
            signal.alarm(self.seconds)

    def __exit__(self, *exc):
        if self.old is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, self.old)
        return False


# -- (a) random programs agree with llvm-tblgen ---------------------------------------------------


# Differences these tests found once (docs/tablegen-compat.md), kept as fixed examples so that
# every run checks them, whatever hypothesis draws.
FOUND = [
    "class C0<int a = 0> {\n  list<int> f = !listsplat(a, 0);\n}\ndef D0 : C0;\n",
    "def A {\n  int f = !cond(true: 3, true: 0b0);\n  int g = !cond(true: 1, true: 0b0);\n}\n",
    'class C0<string s = !tolower([{c0}])> {\n  string t = s;\n}\n'
    'def A : C0 {\n  string w = !subst("a", "b", [{a}]);\n  code k = !toupper([{k}]);\n}\n',
    "class T<int w = 1> {\n  int width = w;\n}\ndef T8 : T<8>;\n"
    "def Z {\n  string rep = !repr(T8);\n}\n",
    "class C;\nmulticlass M<bit g> {\n  def Op : C;\n  if g then {\n    def GradOp : C;\n"
    "  }\n}\ndefm X : M<1>;\n",
]


@pytest.mark.oracle
@settings(max_examples=PROGRAM_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program=tdgen.programs())
@example(program=FOUND[0])
@example(program=FOUND[1])
@example(program=FOUND[2])
@example(program=FOUND[3])
@example(program=FOUND[4])
def test_random_programs_match_llvm_tblgen(program):
    tblgen = find_llvm_tblgen()
    if tblgen is None:
        pytest.skip("llvm-tblgen (Debian llvm-19) not installed; oracle test skipped")
    path = SCRATCH / f"prog{next(_counter)}.td"  # a new name each time: the oracle memoises
    path.write_text(program)
    with time_limit(PER_EXAMPLE_S):
        diffs = compare(tblgen, path)
    assert not diffs, "program:\n" + program + "\ndifferences:\n" + "\n".join(diffs)


@pytest.mark.oracle
@settings(max_examples=PROGRAM_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program=tdgen.record_programs())
def test_random_record_programs_match_llvm_tblgen(program):
    """Records, dags, multiclass/defm, defset, casts, bit slices (tdgen.record_programs)."""
    tblgen = find_llvm_tblgen()
    if tblgen is None:
        pytest.skip("llvm-tblgen (Debian llvm-19) not installed; oracle test skipped")
    path = SCRATCH / f"rec{next(_counter)}.td"
    path.write_text(program)
    with time_limit(PER_EXAMPLE_S):
        diffs = compare(tblgen, path)
    assert not diffs, "program:\n" + program + "\ndifferences:\n" + "\n".join(diffs)


# -- (b) mutated real files raise only TdError ---------------------------------------------------


def _sources() -> list[tuple[Path, tuple[str, ...]]]:
    """(file, include dirs) pairs: the project's own .td files (test data, golden files, the
    dialect's Base.td, ops.td), plus small MLIR ones."""
    out: list[tuple[Path, tuple[str, ...]]] = []
    own = sorted((HERE / "data").rglob("*.td")) + sorted((HERE / "golden").rglob("*.td"))
    own += sorted((ROOT / "dialect" / "include").rglob("*.td"))
    own += [ROOT / "ops.td"] if (ROOT / "ops.td").is_file() else []
    for p in own:
        if p.stat().st_size <= 60_000:
            out.append((p, (str(p.parent), str(ROOT / "dialect" / "include"))))
    inc = mlir_include_dir()
    for rel in SMALL_MLIR if inc else ():
        p = inc / rel
        if p.is_file():
            out.append((p, (str(inc), str(p.parent))))
    return out


SOURCES = _sources()
PUNCT = b'{}[]()<>;:,=#!$"?.-+0123456789abxX_ \n\t\\/*\'`'


@st.composite
def mutations(draw):
    # half the time one of the larger real files, half the time a small golden case
    real = [s for s in SOURCES if "golden" not in s[0].parts]
    golden = [s for s in SOURCES if "golden" in s[0].parts]
    path, incs = draw(st.one_of(*(st.sampled_from(g) for g in (real, golden) if g)))
    data = bytearray(path.read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "dup"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[pos] = draw(st.sampled_from(PUNCT)) if draw(st.booleans()) else draw(
                st.integers(0, 255))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=4)) if draw(st.booleans()) \
                else bytes([draw(st.sampled_from(PUNCT))])
        elif kind == "delete":
            del data[pos:pos + draw(st.integers(1, 16))]
        elif kind == "truncate":
            del data[pos:]
        elif kind == "dup" and data:
            n = draw(st.integers(1, 64))
            data[pos:pos] = data[pos:pos + n]
    return path, incs, bytes(data)


@pytest.mark.skipif(not SOURCES, reason="no .td files to mutate")
@settings(max_examples=MUTATION_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=mutations())
def test_mutated_files_raise_only_tderror(case):
    from tdflow.tdparser import TdError, parse_file

    original, incs, data = case
    path = SCRATCH / f"m{next(_counter)}" / original.name
    path.parent.mkdir()
    path.write_bytes(data)
    try:
        with time_limit(PER_EXAMPLE_S):
            parse_file(str(path), include_dirs=list(incs), use_cache=False)
    except TdError as exc:
        assert exc.render()  # and it renders
        assert isinstance(exc.line, int) and isinstance(exc.col, int)
    except Hang as exc:
        pytest.fail(f"parser hung on a mutation of {original}: {exc}")
