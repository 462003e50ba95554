"""The standard library's ops made on first lookup (issue 23, start-up): a ``Dialect`` built
from the artifact with ``LazyOps`` behaves as one built from the same ops at once (names and
order, lookups, errors, suggestions, contexts with other libraries), and an op that does not
decode is read from the records."""

from __future__ import annotations

import json
import logging

import pytest
from tdflow.dialect import dialect_cache
from tdflow.dialect.context import Context, load_ops
from tdflow.dialect.dialect import Dialect, include_dirs_for, load_dialect, standard_ops_path
from tdflow.dialect.dialect_cache import load_library
from tdflow.dialect.lazy_ops import LazyOps
from tdflow.tdparser.cache import load_or_build

STD = str(standard_ops_path())


@pytest.fixture
def std_cached(cache):
    """The test's own cache folder (conftest's ``cache``) holding the standard library's
    artifact, which a lazy load reads."""
    load_library(STD, include_dirs_for(), [])  # writes the artifact
    return cache


def _pair():
    ops, pats = load_library(STD, include_dirs_for(), [], lazy=True)
    assert isinstance(ops, LazyOps) and ops.made() == 0
    eager, epats = load_library(STD, include_dirs_for(), [])
    assert type(eager) is list
    return (Dialect(ops, path=STD, patterns=pats), Dialect(eager, path=STD, patterns=epats),
            ops)


def test_a_lazy_dialect_is_the_eager_one(std_cached):
    lazy, eager, ops = _pair()
    assert list(lazy.ops) == list(eager.ops) and len(lazy) == len(eager) > 100
    assert (lazy.name, repr(lazy)) == (eager.name, repr(eager))
    assert lazy.patterns == eager.patterns
    assert lazy._by_mnemonic == eager._by_mnemonic
    assert "tdflow.relu" in lazy and "tdflow.nope" not in lazy and ops.made() == 0
    assert lazy.lookup("tdflow.matmul") == eager.lookup("tdflow.matmul")
    assert ops.made() == 1
    assert lazy.lookup("tdflow.nope") is None and lazy.ops.get("x", 7) == 7
    with pytest.raises(KeyError) as a:
        lazy["tdflow.matmu"]
    with pytest.raises(KeyError) as b:
        eager["tdflow.matmu"]
    assert str(a.value) == str(b.value) and "did you mean" in str(a.value)
    for name in ("relu", "tdflow.relux", "onnx.Relu", "tdflow.reduce_summ"):
        assert lazy.suggest(name) == eager.suggest(name)
        assert lazy.unknown_op_message(name) == eager.unknown_op_message(name)
    assert ops.made() == 1  # unknown names and their messages read names only
    # every op, made on iteration, equal to the eager one field by field
    assert list(lazy) == list(eager) and lazy.ops == eager.ops
    for a, b in zip(lazy, eager):
        assert (a.signatures, a.grad_code, a.grad_loc, a.foreign, a.location) == \
               (b.signatures, b.grad_code, b.grad_loc, b.foreign, b.location), a.name
        assert (a.formula is None) == (b.formula is None)
        assert ops.meta(a.name) == (a.mnemonic, a.dialect, a.location.file)
    assert ops.made() == len(ops)
    assert lazy.lookup("tdflow.matmul") is lazy.lookup("tdflow.matmul")  # made once
    assert lazy.contract_problems() == eager.contract_problems()


def test_the_standard_dialect_and_context_are_lazy(std_cached):
    std = load_dialect(STD)
    assert isinstance(std.ops, LazyOps)
    ctx = Context([std], standard=std)
    assert ctx.ops is std.ops and ctx.served_by == {}
    assert ctx.user_ops() == [] and ctx.dialect_names() == ["tdflow"]
    assert std.ops.made() == 0


def test_a_context_with_a_user_library_keeps_the_order_and_serving(std_cached, tmp_path,
                                                                    monkeypatch):
    # load_ops takes the process's standard dialect, which an earlier test may have built from
    # the records (a cold cache: a plain list of ops); this test's is read from its artifact
    from tdflow.dialect import context
    monkeypatch.setattr(context, "standard_dialect", lambda: load_dialect(STD))
    src = tmp_path / "my_ops.td"
    src.write_text('include "tdflow/Base.td"\n'
                   'def My_Dialect : Dialect { let name = "my"; }\n'
                   'def My_ReluOp : Op<My_Dialect, "relu", [NoMemoryEffect]> {\n'
                   '  let arguments = (ins TDF_Tensor:$x);\n'
                   '  let results = (outs TDF_Tensor:$y);\n}\n')
    ctx = load_ops(src)
    std = ctx.standard
    assert isinstance(std.ops, LazyOps)
    names = list(ctx.ops)
    assert names == [*std.ops, "my.relu"]
    assert [op.name for op in ctx.user_ops()] == ["my.relu"]
    assert ctx.dialect_names() == ["tdflow", "my"]
    assert ctx.served_by == {"my.relu": "tdflow.relu"}
    assert ctx["tdflow.matmul"] is std["tdflow.matmul"]
    assert [op.name for op in ctx] == names


def _damage(blob: bytes, name: str) -> bytes:
    """The artifact with op ``name``'s node given a bad field count (header and shape kept)."""
    doc = json.loads(blob)
    for node in doc[3][1][1:]:
        if f"{node[2]}.{node[1]}" == name:
            node[3] = ["NoSuchClass"]
    return json.dumps(doc, separators=(",", ":")).encode()


def test_an_op_that_does_not_decode_is_read_from_the_records(std_cached, caplog, monkeypatch):
    want = {op.name: op for op in load_library(STD, include_dirs_for(), [])[0]}
    real = dialect_cache._loads
    monkeypatch.setattr(dialect_cache, "_loads", lambda data: real(_damage(data, "tdflow.exp")))
    ops, _ = load_library(STD, include_dirs_for(), [], lazy=True)
    with caplog.at_level(logging.WARNING, logger="tdflow.cache"):
        assert ops["tdflow.relu"] == want["tdflow.relu"] and not caplog.text
        assert ops["tdflow.exp"] == want["tdflow.exp"]
    assert "unusable" in caplog.text and "NoSuchClass" in caplog.text
    assert dict(ops.items()) == want


@pytest.mark.parametrize("bad", [
    lambda doc: doc[3].__setitem__(0, "l"),                      # not the (ops, patterns) pair
    lambda doc: doc[3][1].append(["OpDef"]),                     # an op of the wrong shape
    lambda doc: doc[3][1].append(list(doc[3][1][1])),            # an op twice
    lambda doc: doc[3][1][1].__setitem__(1, 5),                  # a mnemonic that is no str
])
def test_a_malformed_artifact_is_read_from_the_records_at_load(std_cached, caplog, monkeypatch,
                                                               bad):
    want = [op.name for op in load_library(STD, include_dirs_for(), [])[0]]
    real = dialect_cache._loads

    def broken(data):
        doc = real(data)
        bad(doc)
        return doc

    monkeypatch.setattr(dialect_cache, "_loads", broken)
    with caplog.at_level(logging.WARNING, logger="tdflow.cache"):
        ops, _ = load_library(STD, include_dirs_for(), [], lazy=True)
    assert type(ops) is list and [op.name for op in ops] == want
    assert "unusable" in caplog.text


def test_records_of_the_library_are_what_the_artifact_says(std_cached):
    records = load_or_build(STD, include_dirs_for(), [], lambda: None)
    uncached = dialect_cache.read_library(records, STD, include_dirs_for())[0]
    ops, _ = load_library(STD, include_dirs_for(), [], lazy=True)
    assert [ops[op.name] for op in uncached] == uncached


def test_threads_looking_up_one_op_get_one_object(std_cached, caplog):
    import threading

    ops, _ = load_library(STD, include_dirs_for(), [], lazy=True)
    names = list(ops)
    got: list[list] = [[] for _ in range(4)]
    start = threading.Barrier(4)

    def work(out: list) -> None:
        start.wait()
        out.extend(ops[n] for n in names)

    with caplog.at_level(logging.WARNING, logger="tdflow.cache"):
        threads = [threading.Thread(target=work, args=(g,)) for g in got]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not caplog.text
    assert all(len(g) == len(names) for g in got)
    for i in range(len(names)):
        assert all(g[i] is got[0][i] for g in got), names[i]
