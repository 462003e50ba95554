"""``infer-sbp`` and ``physicalize`` on IR text: the chosen SBP, the inserted boxing, the
per-rank types and attributes, and located errors."""

from __future__ import annotations

import textwrap

import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir import parse_module, print_module
from tdflow.dialect.sbp import B, P, S
from tdflow.lowering.pass_manager import PassFailure, PassManager
from tdflow.lowering.passes.infer_sbp import function_sbp
from tdflow.lowering.sbp import copy_cost


def run(text: str, pipeline: str):
    module = parse_module(textwrap.dedent(text), "t.mlir")
    PassManager.parse(pipeline, dialect=standard_dialect(), verify_each=True).run(module)
    return module


def ops(module) -> list[str]:
    return [f"{op.name.split('.')[-1]} {op.attributes['sbp']}" for op in module.funcs[0].body
            if "sbp" in op.attributes]


DP = """
    func.func @f(%x: tensor<5x3xf64> {sbp = [#sbp.S<0>]}, %w: tensor<3x4xf64>) -> tensor<5x4xf64> {
      %0 = "tdflow.matmul"(%x, %w) : (tensor<5x3xf64>, tensor<3x4xf64>) -> tensor<5x4xf64>
      %1 = "tdflow.relu"(%0) : (tensor<5x4xf64>) -> tensor<5x4xf64>
      return %1 : tensor<5x4xf64>
    }"""


def test_data_parallel_keeps_the_batch_split_without_boxing():
    m = run(DP, "infer-sbp{nproc=2}")
    assert ops(m) == ["matmul [[#sbp.S<0>]]", "relu [[#sbp.S<0>]]"]
    assert function_sbp(m.funcs[0]) == ([(S(0),), (B,)], [(S(0),)])


def test_megatron_column_then_row_split_gives_one_all_reduce():
    """w1 split by columns, w2 by rows: the second matmul gives partial sums; a consumer that
    needs B gets an all-reduce, the only communication."""
    m = run("""
        func.func @mlp(%x: tensor<4x6xf64>, %w1: tensor<6x8xf64> {sbp = [#sbp.S<1>]},
                       %w2: tensor<8x6xf64> {sbp = [#sbp.S<0>]}) -> (tensor<4x6xf64> {sbp = [#sbp.B]}) {
          %h = "tdflow.matmul"(%x, %w1) : (tensor<4x6xf64>, tensor<6x8xf64>) -> tensor<4x8xf64>
          %a = "tdflow.relu"(%h) : (tensor<4x8xf64>) -> tensor<4x8xf64>
          %y = "tdflow.matmul"(%a, %w2) : (tensor<4x8xf64>, tensor<8x6xf64>) -> tensor<4x6xf64>
          return %y : tensor<4x6xf64>
        }""", "infer-sbp{nproc=4}")
    assert ops(m) == ["matmul [[#sbp.S<1>]]", "relu [[#sbp.S<1>]]", "matmul [[#sbp.P]]",
                      "boxing_all_reduce [[#sbp.B]]"]
    assert function_sbp(m.funcs[0])[1] == [(B,)]


def test_partial_sums_into_an_elementwise_op_are_reduce_scattered():
    """relu cannot take P; S(0) (reduce-scatter, (n-1) * size) beats B (all-reduce, twice)."""
    m = run("""
        func.func @f(%x: tensor<4x6xf64> {sbp = [#sbp.S<1>]}, %w: tensor<6x8xf64> {sbp = [#sbp.S<0>]}) -> tensor<4x8xf64> {
          %y = "tdflow.matmul"(%x, %w) : (tensor<4x6xf64>, tensor<6x8xf64>) -> tensor<4x8xf64>
          %z = "tdflow.relu"(%y) : (tensor<4x8xf64>) -> tensor<4x8xf64>
          return %z : tensor<4x8xf64>
        }""", "infer-sbp{nproc=2}")
    names = ops(m)
    assert names[0] == "matmul [[#sbp.P]]"
    assert names[1].startswith("boxing_reduce_scatter") and names[2].startswith("relu [[#sbp.S<")


def test_a_split_operand_a_signature_cannot_take_is_gathered():
    """softmax needs its last axis whole: an input split there is all-to-all'd to S(0)."""
    m = run("""
        func.func @f(%x: tensor<4x6xf64> {sbp = [#sbp.S<1>]}) -> tensor<4x6xf64> {
          %y = "tdflow.softmax"(%x) : (tensor<4x6xf64>) -> tensor<4x6xf64>
          return %y : tensor<4x6xf64>
        }""", "infer-sbp{nproc=2}")
    text = print_module(m)
    assert '"tdflow.boxing_all_to_all"(%x) {in_axis = 1 : si64, out_axis = 0 : si64, mesh_axis = 0 : si64, out_shape = [4, 6]' in text
    assert ops(m)[-1] == "softmax [[#sbp.S<0>]]"


def test_one_boxing_per_value_and_sbp_is_shared_by_its_users():
    m = run("""
        func.func @f(%x: tensor<4x6xf64> {sbp = [#sbp.S<1>]}) -> (tensor<4x6xf64>, tensor<4x6xf64>) {
          %a = "tdflow.softmax"(%x) : (tensor<4x6xf64>) -> tensor<4x6xf64>
          %b = "tdflow.log_softmax"(%x) : (tensor<4x6xf64>) -> tensor<4x6xf64>
          return %a, %b : tensor<4x6xf64>, tensor<4x6xf64>
        }""", "infer-sbp{nproc=2}")
    assert sum(op.name.startswith("tdflow.boxing") for op in m.funcs[0].body) == 1


def test_result_sbp_attribute_is_honoured():
    m = run("""
        func.func @f(%x: tensor<5x3xf64> {sbp = [#sbp.S<0>]}) -> (tensor<5x3xf64> {sbp = [#sbp.B]}) {
          %y = "tdflow.relu"(%x) : (tensor<5x3xf64>) -> tensor<5x3xf64>
          return %y : tensor<5x3xf64>
        }""", "infer-sbp{nproc=2}")
    assert ops(m) == ["relu [[#sbp.S<0>]]", "boxing_all_gather [[#sbp.B]]"]


def test_oneflow_parallel_attribute_forces_the_signature():
    m = run("""
        func.func @f(%x: tensor<4x6xf64>, %w: tensor<6x8xf64>) -> tensor<4x8xf64> {
          %y = "tdflow.matmul"(%x, %w) {parallel = #sbp.parallel<[#sbp.B, #sbp.S<1>] -> [#sbp.S<1>]>} : (tensor<4x6xf64>, tensor<6x8xf64>) -> tensor<4x8xf64>
          return %y : tensor<4x8xf64>
        }""", "infer-sbp{nproc=2}")
    assert ops(m) == ["boxing_slice [[#sbp.S<1>]]", "matmul [[#sbp.S<1>]]"]


def test_physicalize_gives_each_rank_its_uneven_piece_and_shape_attributes():
    src = """
        func.func @f(%x: tensor<5x4xf64> {sbp = [#sbp.S<0>]}) -> tensor<5x2x2xf64> {
          %y = "tdflow.reshape"(%x) {shape = [5, 2, 2]} : (tensor<5x4xf64>) -> tensor<5x2x2xf64>
          return %y : tensor<5x2x2xf64>
        }"""
    shapes = []
    for rank in range(2):
        m = run(src, f"infer-sbp{{nproc=2}},physicalize{{rank={rank},nproc=2}},infer-shapes")
        op = m.funcs[0].body.ops[0]
        assert op.attributes["sbp"] is not None
        shapes.append((tuple(op.results[0].type.shape), str(op.attributes["shape"])))
    assert shapes == [((3, 2, 2), "[3, 2, 2]"), ((2, 2, 2), "[2, 2, 2]")]


def test_physicalize_sets_boxing_out_shape():
    m = run(DP.replace("-> tensor<5x4xf64> {", "-> (tensor<5x4xf64> {sbp = [#sbp.B]}) {"),
            # greedy: the result is gathered (the look-ahead gathers the smaller x instead)
            "infer-sbp{nproc=2,search=greedy},physicalize{rank=1,nproc=2},infer-shapes")
    gather = [op for op in m.funcs[0].body if op.name == "tdflow.boxing_all_gather"][0]
    assert str(gather.attributes["out_shape"]) == "[5, 4]"
    assert tuple(gather.operands[0].type.shape) == (2, 4)


@pytest.mark.parametrize("src, message", [
    ("""func.func @f(%x: tensor<4x3xf64> {sbp = [#sbp.S<2>]}) -> tensor<4x3xf64> {
          return %x : tensor<4x3xf64>
        }""", r"t.mlir:1:\d+: .*argument #0: SBP \[S\(2\)\] splits an axis"),
    ("""func.func @f(%x: tensor<4x3xf64> {sbp = [#sbp.S<0>, #sbp.B]}) -> tensor<4x3xf64> {
          return %x : tensor<4x3xf64>
        }""", r"argument #0: SBP \[S\(0\), B\] has 2 axes; the hierarchy has 1"),
    ("""func.func @f(%x: tensor<4x3xf64>) -> tensor<4x3xf64> attributes {hierarchy = [2, 3]} {
          return %x : tensor<4x3xf64>
        }""", r"hierarchy \[2, 3\] has 6 ranks; the program runs on 4"),
    ("""func.func @f(%x: tensor<4x3xf64> {sbp = [#sbp.S<0>]}) -> tensor<4x3xf64> {
          %y = "tdflow.relu"(%x) {parallel = #sbp.parallel<[#sbp.P] -> [#sbp.P]>} : (tensor<4x3xf64>) -> tensor<4x3xf64>
          return %y : tensor<4x3xf64>
        }""", r"t.mlir:2:\d+: .*'tdflow.relu': no SBP signature can be satisfied \(operand #0 is "
              r"\[S\(0\)\] but the signature needs \[P\]\)"),
])
def test_unsatisfiable_sbp_is_a_located_error(src, message):
    with pytest.raises(PassFailure) as info:
        run(src, "infer-sbp{nproc=4}")
    assert __import__("re").search(message, info.value.render()), info.value.render()


def test_copy_cost_orders_the_conversions_as_oneflow():
    n = 1000.0
    assert copy_cost(B, S(0), n, 4) == 0 == copy_cost(B, P, n, 4)
    assert copy_cost(S(0), S(1), n, 4) < copy_cost(S(0), B, n, 4) == copy_cost(P, S(0), n, 4)
    assert copy_cost(P, B, n, 4) == 2 * copy_cost(P, S(1), n, 4)
    assert copy_cost(S(0), P, n, 4) == float("inf")


def test_nested_splits_are_gathered_inner_mesh_axis_first():
    """[S(0), S(0)] -> [B, B]: gathering over mesh axis 0 first would interleave the inner
    pieces; the inner axis goes first."""
    m = run("""
        func.func @f(%x: tensor<8x3xf64> {sbp = [#sbp.S<0>, #sbp.S<0>]}) -> (tensor<8x3xf64> {sbp = [#sbp.B, #sbp.B]}) attributes {hierarchy = [2, 2]} {
          return %x : tensor<8x3xf64>
        }""", "infer-sbp{nproc=4}")
    gathers = [(op.name, op.attributes["mesh_axis"].value) for op in m.funcs[0].body
               if op.name.startswith("tdflow.boxing")]
    assert gathers == [("tdflow.boxing_all_gather", 1), ("tdflow.boxing_all_gather", 0)]


def test_a_parallel_attribute_that_needs_an_impossible_nesting_is_located():
    message = (r"t.mlir:3:\d+: .*'tdflow.relu': no SBP signature can be satisfied \(operand #0 "
               r"is \[S\(0\), S\(0\)\] but the signature needs \[S\(1\), S\(0\)\]")
    with pytest.raises(PassFailure) as info:
        run("""
        func.func @f(%x: tensor<8x4xf64> {sbp = [#sbp.S<0>, #sbp.S<0>]}) -> tensor<8x4xf64> attributes {hierarchy = [2, 2]} {
          %y = "tdflow.relu"(%x) {parallel = #sbp.parallel<[[#sbp.S<1>, #sbp.S<0>]] -> [[#sbp.S<1>, #sbp.S<0>]]>} : (tensor<8x4xf64>) -> tensor<8x4xf64>
          return %y : tensor<8x4xf64>
        }""", "infer-sbp{nproc=4}")
    assert __import__("re").search(message, info.value.render()), info.value.render()


def test_physicalize_needs_infer_sbp_and_a_rank_in_range():
    with pytest.raises(PassFailure, match="its arguments carry no SBP: run infer-sbp before"):
        run(DP, "physicalize{rank=0,nproc=2}")
    with pytest.raises(PassFailure, match=r"rank 2 is outside 0\.\.1"):
        run(DP, "infer-sbp{nproc=2},physicalize{rank=2,nproc=2}")
    with pytest.raises(PassFailure, match=r"already physicalized for rank 1"):
        run(DP, "infer-sbp{nproc=2},physicalize{rank=1,nproc=2},physicalize{rank=1,nproc=2}")


def test_oneflow_op_level_hierarchy_and_parallel_are_read():
    """A OneFlow job carries the placement on its ops: hierarchy = [2, 1] and nd parallel."""
    m = run("""
        func.func @f(%x: tensor<6x3xf64>) -> tensor<6x3xf64> {
          %y = "tdflow.relu"(%x) {hierarchy = [2, 1], parallel = #sbp.parallel<[[#sbp.S<0>, #sbp.B]] -> [[#sbp.S<0>, #sbp.B]]>} : (tensor<6x3xf64>) -> tensor<6x3xf64>
          return %y : tensor<6x3xf64>
        }""", "infer-sbp{nproc=2}")
    assert ops(m) == ["boxing_slice [[#sbp.S<0>, #sbp.B]]", "relu [[#sbp.S<0>, #sbp.B]]"]
    with pytest.raises(PassFailure, match="its ops carry different hierarchies"):
        run("""
        func.func @f(%x: tensor<6x3xf64>) -> tensor<6x3xf64> {
          %y = "tdflow.relu"(%x) {hierarchy = [2, 1]} : (tensor<6x3xf64>) -> tensor<6x3xf64>
          %z = "tdflow.relu"(%y) {hierarchy = [1, 2]} : (tensor<6x3xf64>) -> tensor<6x3xf64>
          return %z : tensor<6x3xf64>
        }""", "infer-sbp{nproc=2}")


SGD = """
    func.func @step(%w: tensor<4x3xf64>, %x: tensor<6x4xf64> {sbp = [#sbp.S<0>]}, %dy: tensor<6x3xf64> {sbp = [#sbp.S<0>]}) {
      %t = "tdflow.transpose"(%x) {perm = [1 : si32, 0 : si32]} : (tensor<6x4xf64>) -> tensor<4x6xf64>
      %g = "tdflow.matmul"(%t, %dy) : (tensor<4x6xf64>, tensor<6x3xf64>) -> tensor<4x3xf64>
      "tdflow.sgd_update"(%w, %g) {learning_rate_val = 0.1 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>} : (tensor<4x3xf64>, tensor<4x3xf64>) -> ()
      return
    }"""


def test_an_operand_written_in_place_is_never_boxed():
    """Data-parallel SGD: the weight gradient is partial; slicing the broadcast weight would be
    cheaper but would update a copy, so the gradient is all-reduced and %w updated in place."""
    m = run(SGD, "infer-sbp{nproc=2}")
    body = list(m.funcs[0].body)
    update = [op for op in body if op.name == "tdflow.sgd_update"][0]
    assert update.operands[0] is m.funcs[0].args[0]
    assert [op.name for op in body if op.name.startswith("tdflow.boxing")] == [
        "tdflow.boxing_all_reduce"]


def test_a_signature_that_would_box_an_operand_written_in_place_is_located():
    src = SGD.replace('{learning_rate_val', '{parallel = #sbp.parallel<[#sbp.S<0>, #sbp.S<0>] -> []>, learning_rate_val')
    with pytest.raises(PassFailure) as info:
        run(src, "infer-sbp{nproc=2}")
    assert "operand #0 (written in place) is [B] but the signature needs [S(0)]" in str(info.value)


def test_a_boxed_copy_is_not_reused_after_an_in_place_update():
    """broadcast_add reads %w sliced before the update and again after it: two slices, the second of
    the updated weight."""
    m = run("""
        func.func @step(%w: tensor<4x3xf64>, %g: tensor<4x3xf64>, %x: tensor<4x3xf64> {sbp = [#sbp.S<0>]}) -> (tensor<4x3xf64>, tensor<4x3xf64>) {
          %a = "tdflow.broadcast_add"(%w, %x) : (tensor<4x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>
          "tdflow.sgd_update"(%w, %g) {learning_rate_val = 0.1 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>} : (tensor<4x3xf64>, tensor<4x3xf64>) -> ()
          %b = "tdflow.broadcast_add"(%w, %x) : (tensor<4x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>
          return %a, %b : tensor<4x3xf64>, tensor<4x3xf64>
        }""", "infer-sbp{nproc=2}")
    names = [op.name.split(".")[1] for op in m.funcs[0].body]
    assert names == ["boxing_slice", "broadcast_add", "sgd_update", "boxing_slice",
                     "broadcast_add", "return"]


def test_physicalize_needs_static_shapes_where_it_rewrites_a_shape():
    """infer-sbp infers the logical shapes itself; a type made dynamic afterwards cannot be
    physicalized where a shape attribute must follow it."""
    from tdflow.dialect.types import TensorType

    src = """
        func.func @f(%x: tensor<4x6xf64> {sbp = [#sbp.S<0>]}) -> tensor<?x2x3xf64> {
          %y = "tdflow.reshape"(%x) {shape = [4, 2, 3]} : (tensor<4x6xf64>) -> tensor<?x2x3xf64>
          return %y : tensor<?x2x3xf64>
        }"""
    m = run(src, "infer-sbp{nproc=2},physicalize{rank=1,nproc=2},infer-shapes")
    assert str(m.funcs[0].body.ops[0].attributes["shape"]) == "[2, 2, 3]"
    m = run(src, "infer-sbp{nproc=2}")
    m.funcs[0].body.ops[0].results[0].type = TensorType((None, 2, 3), "f64")
    with pytest.raises(PassFailure, match=r"'tdflow.reshape' needs static shapes to be "
                                          r"physicalized; run infer-shapes before infer-sbp"):
        PassManager.parse("physicalize{rank=0,nproc=2}", dialect=standard_dialect()).run(m)
