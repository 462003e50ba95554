"""The IR data model: use-lists, the rewriter, block iteration, the builder, equality."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.dialect.ir import (
    RETURN,
    Builder,
    FuncOp,
    Module,
    Operation,
    Rewriter,
    module_diff,
    module_equal,
    parse_module,
    print_module,
)
from tdflow.dialect.ir.attrs import FloatAttr
from tdflow.dialect.types import TensorType

T = TensorType((4,), "f32")


def chain(n: int) -> tuple[FuncOp, list[Operation]]:
    f = FuncOp("f", [T], [T], ["x"])
    v = f.args[0]
    ops = []
    for _ in range(n):
        op = f.body.append(Operation("tdflow.relu", [v], [T]))
        ops.append(op)
        v = op.result
    f.body.append(Operation(RETURN, [v]))
    return f, ops


def test_use_lists_follow_construction_and_set_operand():
    f, (a, b) = chain(2)
    x = f.args[0]
    assert list(x.users) == [a] and x.num_uses == 1
    add = Operation("tdflow.broadcast_add", [x, x], [T])
    assert x.users[add] == 2 and x.uses[-2:] == [(add, 0), (add, 1)]
    add.set_operand(1, a.result)
    assert x.users[add] == 1 and a.result.users[add] == 1
    add.drop_operands()
    assert add not in x.users and add not in a.result.users


def test_rewriter_replace_erase_insert():
    f, (a, b, c) = chain(3)
    rw = Rewriter()
    rw.replace_op(b, [a.result])
    assert [op for op in f.body] == [a, c, f.body.last]
    assert c.operands[0] is a.result and b.parent is None
    with pytest.raises(ValueError, match="still used"):
        rw.erase_op(a)
    new = Operation("tdflow.neg", [a.result], [T])
    rw.insert_after(a, new)
    rw.insert_before(a, Operation("tdflow.const", [], [T]))
    assert [op.name for op in f.body] == ["tdflow.const", "tdflow.relu", "tdflow.neg",
                                          "tdflow.relu", RETURN]
    assert len(f.body) == 5


def test_iteration_survives_erasing_current_and_next():
    f, ops = chain(6)
    rw = Rewriter()
    seen = []
    for op in f.body:
        seen.append(op)
        if op is ops[1]:
            # erase ops[2] and ops[3] (the next ones) while standing on ops[1]
            rw.replace_op(ops[3], [ops[2].result])
            rw.replace_op(ops[2], [op.result])
    assert ops[2] not in seen and ops[3] not in seen and ops[4] in seen
    assert len(f.body) == 5


def test_erase_many_is_linear_enough():
    f, ops = chain(20000)
    rw = Rewriter()
    ret = f.body.last
    rw.replace_all_uses(ops[-1].result, f.args[0])
    for op in reversed(ops):  # dead code elimination, users first
        rw.erase_op(op)
    assert list(f.body) == [ret] and ret.operands[0] is f.args[0]


def test_builder_matches_parsed_text():
    b = Builder()
    with b.func("f", [T, T], [T], arg_names=["x", "y"]) as f:
        s = b.create("tdflow.broadcast_add", f.args, [T]).result
        r = b.create("tdflow.leaky_relu", [s], [T], {"alpha": FloatAttr(0.2, "f32")}).result
        b.ret(r)
    text = """
    func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "tdflow.broadcast_add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %1 = "tdflow.leaky_relu"(%0) {alpha = 2.0e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
      return %1 : tensor<4xf32>
    }"""
    assert module_equal(b.module, parse_module(text))
    assert b.module == parse_module(print_module(b.module))


def test_builder_infers_results_and_insertion_points():
    b = Builder()
    with b.func("g", [T]) as f:
        r = b.create("tdflow.relu", [f.args[0]], [T])
        b.ret(r.result)
        b.set_insertion_point_before(r)
        b.create("tdflow.first", [], [T])
    assert f.result_types == [T]
    assert [op.name for op in f.body] == ["tdflow.first", "tdflow.relu", RETURN]


def test_module_diff_explains():
    a = parse_module('func.func @f(%x: tensor<4xf32>) { "t.a"(%x) {k = 1} : (tensor<4xf32>) -> ()\n'
                     "return }")
    b = parse_module('func.func @f(%x: tensor<4xf32>) { "t.a"(%x) {k = 2} : (tensor<4xf32>) -> ()\n'
                     "return }")
    assert not module_equal(a, b)
    assert "attributes differ" in module_diff(a, b)
    assert a != b and a == parse_module(print_module(a)) and Module() == Module()


def test_clone_is_deep_and_equal():
    m = parse_module("""func.func private @f(%x: tensor<4xf32> {k}) -> tensor<4xf32> {
      %0:2 = "t.pair"(%x) {a = [1]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
      return %0#1 : tensor<4xf32>
    }""")
    c = m.clone()
    assert c == m and c.funcs[0] is not m.funcs[0]
    f, g = m.funcs[0], c.funcs[0]
    assert all(a is not b for a, b in zip(f.ops, g.ops))
    assert g.ops[1].operands[0] is g.ops[0].results[1]
    assert not set(f.args[0].users) & set(g.ops)  # the clone does not use the original's values
    renamed = f.clone("g")
    assert renamed.name == "g" and renamed.visibility == "private"


def _check_use_lists(f: FuncOp) -> None:
    ops = list(f.body)
    assert len(ops) == len(f.body)
    values = list(f.args) + [r for op in ops for r in op.results]
    for v in values:
        expected = {}
        for op in ops:
            n = sum(1 for o in op.operands if o is v)
            if n:
                expected[op] = n
        assert v.users == expected
    prev = None
    for op in ops:  # links are consistent both ways
        assert op.parent is f.body and op.prev_op is prev
        prev = op
    assert f.body.last is prev


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["rauw", "erase", "insert", "set"]),
                          st.integers(0, 1000), st.integers(0, 1000)), max_size=25))
def test_rewrites_keep_use_lists_consistent(steps):
    f, _ = chain(6)
    rw = Rewriter()
    for kind, i, j in steps:
        ops = [op for op in f.body if op.name != RETURN]
        if not ops:
            break
        op = ops[i % len(ops)]
        earlier = list(f.args) + [r for o in ops[: ops.index(op)] for r in o.results]
        if kind == "rauw":
            rw.replace_all_uses(op.result, earlier[j % len(earlier)])
        elif kind == "erase" and not op.has_users():
            rw.erase_op(op)
        elif kind == "insert":
            new = Operation("tdflow.add", [earlier[j % len(earlier)], op.operands[0]], [T])
            rw.insert_before(op, new)
        elif kind == "set":
            rw.set_operand(op, 0, earlier[j % len(earlier)])
        _check_use_lists(f)
