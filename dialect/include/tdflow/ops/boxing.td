//===- tdflow/ops/boxing.td - SBP boxing ops (part of ops.td) --*- tablegen -*-===//
//
// Included by ops.td. "Boxing" converts a tensor's SBP (Split / Broadcast / Partial sum, one
// per axis of the placement hierarchy) into the SBP its consumer needs, as OneFlow's boxing
// does. The `infer-sbp` pass inserts these ops; `physicalize` sets `out_shape` to the running
// rank's physical result shape, which shape inference reads. Each op acts over one axis of the
// hierarchy (`mesh_axis`). Their CPU kernels (tdflow/distributed/boxing_kernels.py) call the
// running rank's communicator. Gradients follow SBP duality (B and P swap, S stays): the
// gradient of a P -> B all-reduce is an all-reduce, of S -> B all-gather a reduce-scatter.
//
//===----------------------------------------------------------------------===//

def TDF_BoxingAllReduceOp : TDF_HookedOp<"boxing_all_reduce", [NoMemoryEffect]> {
  let summary = "P -> B: sum the ranks' partial values (all-reduce)";
  let grad = [{ x: boxing_all_reduce(dy, mesh_axis=mesh_axis, out_shape=x.shape) }];
  let description = [{
    Every rank of hierarchy axis `mesh_axis` holds a partial sum `x`; each gets the total.

    Example:

    ```mlir
    %y = "tdflow.boxing_all_reduce"(%x) {mesh_axis = 0 : si64, out_shape = [4, 8]} : (tensor<4x8xf64>) -> tensor<4x8xf64>
    ```
  }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$mesh_axis,
    ShapeAttr:$out_shape
  );
}

def TDF_BoxingReduceScatterOp : TDF_HookedOp<"boxing_reduce_scatter", [NoMemoryEffect]> {
  let summary = "P -> S(axis): sum the partial values, each rank keeps its slice";
  let grad = [{ x: boxing_all_gather(dy, axis=axis, mesh_axis=mesh_axis, out_shape=x.shape) }];
  let description = [{
    Every rank holds a partial sum `x`; rank `i` of hierarchy axis `mesh_axis` gets slice `i`
    of the total along `axis` (OneFlow's split rule: the first `n % k` ranks get one more).

    Example (2 ranks):

    ```mlir
    %y = "tdflow.boxing_reduce_scatter"(%x) {axis = 0 : si64, mesh_axis = 0 : si64, out_shape = [3, 8]} : (tensor<5x8xf64>) -> tensor<3x8xf64>
    ```
  }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins
    TDF_AxisAttr<"x", SI64Attr>:$axis,
    DefaultValuedAttr<SI64Attr, "0">:$mesh_axis,
    ShapeAttr:$out_shape
  );
}

def TDF_BoxingAllGatherOp : TDF_HookedOp<"boxing_all_gather", [NoMemoryEffect]> {
  let summary = "S(axis) -> B: concatenate the ranks' slices (all-gather)";
  let grad = [{ x: boxing_reduce_scatter(dy, axis=axis, mesh_axis=mesh_axis, out_shape=x.shape) }];
  let description = [{
    Rank `i` of hierarchy axis `mesh_axis` holds slice `i` of a tensor split along `axis`;
    every rank gets the whole tensor.

    Example (2 ranks):

    ```mlir
    %y = "tdflow.boxing_all_gather"(%x) {axis = 0 : si64, mesh_axis = 0 : si64, out_shape = [5, 8]} : (tensor<3x8xf64>) -> tensor<5x8xf64>
    ```
  }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins
    TDF_AxisAttr<"x", SI64Attr>:$axis,
    DefaultValuedAttr<SI64Attr, "0">:$mesh_axis,
    ShapeAttr:$out_shape
  );
}

def TDF_BoxingAllToAllOp : TDF_HookedOp<"boxing_all_to_all", [NoMemoryEffect]> {
  let summary = "S(in_axis) -> S(out_axis): re-split across the ranks (all-to-all)";
  let grad = [{ x: boxing_all_to_all(dy, in_axis=out_axis, out_axis=in_axis, mesh_axis=mesh_axis, out_shape=x.shape) }];
  let description = [{
    A tensor split along `in_axis` becomes the same tensor split along `out_axis`.

    Example (2 ranks, a 4x6 tensor):

    ```mlir
    %y = "tdflow.boxing_all_to_all"(%x) {in_axis = 0 : si64, out_axis = 1 : si64, mesh_axis = 0 : si64, out_shape = [4, 3]} : (tensor<2x6xf64>) -> tensor<4x3xf64>
    ```
  }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins
    TDF_AxisAttr<"x", SI64Attr>:$in_axis,
    TDF_AxisAttr<"x", SI64Attr>:$out_axis,
    DefaultValuedAttr<SI64Attr, "0">:$mesh_axis,
    ShapeAttr:$out_shape
  );
}

def TDF_BoxingSliceOp : TDF_HookedOp<"boxing_slice", [NoMemoryEffect]> {
  let summary = "B -> S(axis): keep the rank's slice (no communication)";
  // the adjoint pads dy into x's shape at the rank's offset; summed over the ranks (x is the
  // same everywhere) that is the gathered dy, which one rank holding it says as well
  let grad = [{ x: boxing_to_partial(boxing_all_gather(dy, axis=axis, mesh_axis=mesh_axis, out_shape=x.shape), mesh_axis=mesh_axis, out_shape=x.shape) }];
  let description = [{
    Every rank holds the whole tensor; rank `i` of hierarchy axis `mesh_axis` keeps slice `i`
    along `axis`.

    Example (rank 1 of 2):

    ```mlir
    %y = "tdflow.boxing_slice"(%x) {axis = 0 : si64, mesh_axis = 0 : si64, out_shape = [2, 8]} : (tensor<5x8xf64>) -> tensor<2x8xf64>
    ```
  }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins
    TDF_AxisAttr<"x", SI64Attr>:$axis,
    DefaultValuedAttr<SI64Attr, "0">:$mesh_axis,
    ShapeAttr:$out_shape
  );
}

def TDF_BoxingToPartialOp : TDF_HookedOp<"boxing_to_partial", [NoMemoryEffect]> {
  let summary = "B -> P: rank 0 of the mesh axis keeps x, the others hold zeros";
  let grad = [{ x: boxing_to_partial(dy, mesh_axis=mesh_axis, out_shape=x.shape) }];
  let description = [{
    Turns a broadcast tensor into partial sums that add up to it (no communication).

    Example:

    ```mlir
    %y = "tdflow.boxing_to_partial"(%x) {mesh_axis = 0 : si64, out_shape = [4, 8]} : (tensor<4x8xf64>) -> tensor<4x8xf64>
    ```
  }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins
    DefaultValuedAttr<SI64Attr, "0">:$mesh_axis,
    ShapeAttr:$out_shape
  );
}
