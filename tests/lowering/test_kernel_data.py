"""The shipped kernel-selection table (tdflow.lowering.kernel_data) against the runtime's
registry: the file equals a fresh build (no drift), and selection from it answers exactly what
the runtime's ``KernelTable`` answers, refusals and their messages included."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest
from tdflow.dialect.context import standard_context
from tdflow.dialect.element_types import DTYPE_NAMES
from tdflow.dialect.types import DTYPES
from tdflow.lowering.kernel_data import DataKernelTable, evaluate, shipped_cpu_table
from tdflow.lowering.plan import ITEMSIZE
from tdflow.runtime.kernel_data_gen import fresh_table, main
from tdflow.runtime.op_kernels import kernel_table_for


def test_the_shipped_table_equals_a_fresh_build():
    """In a fresh process: this one's tests may have registered kernels of their own."""
    r = subprocess.run([sys.executable, "-m", "tdflow.runtime.kernel_data_gen", "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "up to date" in r.stdout


def test_a_stale_table_is_reported(monkeypatch, tmp_path):
    import tdflow.runtime.kernel_data_gen as gen

    stale = tmp_path / "t.json"
    stale.write_text(fresh_table().replace('"cpu.relu"', '"cpu.relu2"'))
    monkeypatch.setattr(gen, "SHIPPED", stale)
    assert main(["--check"]) == 1


@pytest.fixture(scope="module")
def tables():
    ctx = standard_context()
    return kernel_table_for(ctx, "cpu"), DataKernelTable(shipped_cpu_table(), None)


def _signatures(n: int):
    """Input dtype tuples of ``n`` inputs: every dtype first, with the rest equal, every other
    dtype, or absent (None)."""
    dts = sorted(DTYPE_NAMES)
    for first in dts:
        yield (first,) * n
        for i, other in itertools.product(range(1, n), [*dts, None]):
            yield tuple(other if j == i else first for j in range(n))


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_selection_from_data_equals_the_runtime_table(tables, device):
    real, data = tables
    ctx = standard_context()
    # the standard ops only: other tests in this process may register kernels of their own ops
    standard = sorted(real.kernels.op_names() & set(ctx.ops))
    assert data.ops() == [op for op in real.ops() if op in ctx.ops]
    per_device = {d: DataKernelTable({**shipped_cpu_table(), "device": d}, None)
                  for d in ("cpu", "cuda", "cudasim")}
    checked = 0
    for op in standard:
        # per device (ties go to the first registered); across devices the order may differ
        # when other tests in this process re-registered the GPU kernels
        for d, on_d in per_device.items():
            assert ([k.name for k in on_d.candidates(op)]
                    == [k.name for k in real.kernels.kernels_of(op) if k.device == d])
        for n in range(0, 4):
            for sig in _signatures(n) if n else [()]:
                try:
                    want = real.select(op, sig, {}, device=device)
                except LookupError as exc:
                    with pytest.raises(LookupError) as got:
                        data.select(op, sig, {}, device=device)
                    want_head, *want_lines = exc.args[0].split("\n")
                    got_head, *got_lines = got.value.args[0].split("\n")
                    assert (got_head, sorted(got_lines)) == (want_head, sorted(want_lines))
                    continue
                got = data.select(op, sig, {}, device=device)
                assert (got.name, dict(got.inplace)) == (want.name, dict(want.inplace))
                checked += 1
    assert checked > 1000


def test_an_op_without_kernels_is_refused_alike(tables):
    real, data = tables
    with pytest.raises(LookupError) as want:
        real.select("no.such", ("f32",), {})
    with pytest.raises(LookupError) as got:
        data.select("no.such", ("f32",), {})
    assert got.value.args[0] == want.value.args[0]
    assert "no.such" not in data


def test_get_asks_the_loader_once_and_without_one_refuses(tables):
    real, _ = tables
    calls = []
    t = DataKernelTable(shipped_cpu_table(), lambda: calls.append(1) or real)
    assert t.get("cpu.relu") is real.get("cpu.relu") and t.get("cpu.exp") is real.get("cpu.exp")
    assert calls == [1]
    with pytest.raises(KeyError):
        DataKernelTable(shipped_cpu_table(), None).get("cpu.relu")


def test_match_specs_agree_with_their_predicates():
    from tdflow.runtime.kernels.registry import all_same_dtype, input_dtype_in, same_dtype

    preds = [same_dtype(1, 2), input_dtype_in(1, ("i32", "i64")), all_same_dtype(),
             same_dtype(1) & input_dtype_in(2, ("i64",))]
    for p in preds:
        for sig in [*_signatures(3), *_signatures(2), ()]:
            assert evaluate(p.spec, sig, {}) == p(sig, {}), (p, sig)
    with pytest.raises(ValueError):
        evaluate(["no_such_kind"], ("f32",), {})


def test_the_planners_item_sizes_are_numpys():
    assert ITEMSIZE == {k: v.itemsize for k, v in DTYPES.items()}
