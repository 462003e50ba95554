"""Generated shape and type kernels on cudasim equal the numpy backend bit for bit: cast (every
dtype pair, special values), transpose (tiled and strided, size-1 dims, tails of the 32x32
tiles), cat, reshape/expand_dims/squeeze (vector body and tail), expand, broadcast_like,
constant (uploaded and filled), ones_like and add_n (numpy's per-step roundings, integer
wrap-around), in every dtype their CPU kernels admit; then all of them compile with nvcc."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import GENERATED, check, nvcc_compile_all, prebuild, rand
from tdflow.lowering.cuda import TensorSpec, generate

ALL = ("f16", "f32", "f64", "i1", "i8", "i32", "i64")
NUMERIC = ("f16", "f32", "f64", "i8", "i32", "i64")


def _special(dt: str) -> np.ndarray:
    """Values a float conversion must round, overflow or keep: NaN, infinities, -0.0, halfway
    points, f16 subnormals and values beyond f16's range."""
    v = [np.nan, np.inf, -np.inf, -0.0, 0.1, 1e-8, 6e-5, 65519.99, 65520.0, -1e10, 1 + 2 ** -11,
         3.4e38, 1e-40]
    return np.array(v, np.float64).astype(dt == "f32" and np.float32 or np.float64)


CASES: dict[str, list[tuple[str, list, dict]]] = {
    "cast": [("tdflow.cast", [rand((7, 13), s, seed=1)], {"dtype": d}) for s in ALL for d in ALL]
    + [("tdflow.cast", [_special(s)], {"dtype": d}) for s in ("f32", "f64")
       for d in ("f16", "f32", "f64", "i1")],
    "transpose": [("tdflow.transpose", [rand((37, 45), dt, seed=2)], {"perm": [1, 0]})
                  for dt in ALL]
    + [("tdflow.transpose", [rand(s, "f32", seed=3)], {"perm": p}) for s, p in (
        ((3, 37, 33), [2, 0, 1]), ((4, 5, 6), [1, 0, 2]), ((2, 3, 4, 5), [3, 1, 0, 2]),
        ((1, 40, 1, 70), [3, 2, 1, 0]), ((6, 4, 65), [2, 1, 0]),
        ((3, 4), [0, 1]))],
    "cat": [("tdflow.cat", [rand((2, 3), dt, seed=4), rand((2, 0), dt), rand((2, 5), dt, seed=5)],
             {"axis": 1}) for dt in ALL]
    + [("tdflow.cat", [rand((1, 4), seed=6), rand((3, 4), seed=7)], {"axis": 0}),
       ("tdflow.cat", [rand((2, 3, 5), "i64", seed=8), rand((2, 1, 5), "i64")], {"axis": -2}),
       ("tdflow.cat", [rand((9,), "f64")] * 3, {"axis": 0})],
    "reshape": [("tdflow.reshape", [rand((6, 7), dt, seed=9)], {"shape": [7, -1]}) for dt in ALL]
    + [("tdflow.reshape", [rand((64,), seed=10)], {"shape": [4, 4, 4]}),
       ("tdflow.reshape", [rand((3,), "i1")], {"shape": [3, 1]}),
       ("tdflow.expand_dims", [rand((5, 3), "i8")], {"axis": -1}),
       ("tdflow.expand_dims", [rand((5, 3), "f16")], {"axis": 0}),
       ("tdflow.squeeze", [rand((1, 5, 1, 3), "i32")], {"axes": [0, 2]})],
    "expand": [("tdflow.expand", [rand((3, 1), dt, seed=11)], {"expand_shape": [2, 3, 4]})
               for dt in ALL]
    + [("tdflow.expand", [rand((1,), seed=12)], {"expand_shape": [5]}),
       ("tdflow.expand", [rand((4, 1, 3), "f64")], {"expand_shape": [2, -1, 5, -1]})],
    "broadcast_like": [("tdflow.broadcast_like", [rand((3,), dt, seed=13), rand((4, 3), dt)],
                        {"broadcast_axes": [0]}) for dt in ALL]
    + [("tdflow.broadcast_like", [rand((4,)), rand((4, 3))], {"broadcast_axes": [1]}),
       ("tdflow.broadcast_like", [rand((4,), "i8"), rand((2, 4, 3), "i8")],
        {"broadcast_axes": [0, 2]}),
       ("tdflow.broadcast_like", [rand((2, 3), "f16"), rand((2, 5, 3), "f16")],
        {"broadcast_axes": [1]})],
    "constant": [("tdflow.constant", [], {"shape": [3, 5], "dtype": dt, "is_floating_value": True,
                                          "floating_value": 0.1}) for dt in ("f16", "f32", "f64")]
    + [("tdflow.constant", [], {"shape": [2, 7], "dtype": dt, "integer_value": -3})
       for dt in ("i8", "i32", "i64")]
    + [("tdflow.constant", [], {"shape": [2, 7], "dtype": "i1", "integer_value": 1})]
    + [("tdflow.constant", [], {"shape": [4], "dtype": "i64", "integer_value": 2 ** 40 + 1}),
       ("tdflow.constant", [], {"shape": [3], "dtype": "f32", "is_floating_value": True,
                                "floating_value": float("-inf")}),
       ("tdflow.constant", [], {"shape": [100, 90], "dtype": "f64", "is_floating_value": True,
                                "floating_value": -2.5}),  # 72000 bytes: filled on the device
       ("tdflow.constant", [], {"shape": [0, 3], "dtype": "f32"})],
    "ones_like": [("tdflow.ones_like", [rand((5, 9), dt)], {}) for dt in ALL],
    "add_n": [("tdflow.add_n", [rand((7, 13), dt, seed=k) for k in range(n)], {})
              for dt in NUMERIC for n in (2, 4)]
    + [("tdflow.add_n", [np.full(5, 120, np.int8)] * 3, {}),
       ("tdflow.add_n", [np.full(3, 2 ** 31 - 1, np.int32), np.ones(3, np.int32)], {}),
       ("tdflow.add_n", [np.full(6, 2048, np.float16), np.ones(6, np.float16),
                         np.ones(6, np.float16)], {})],  # rounds after each add: 2048, 2048
}


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild([c for cases in CASES.values() for c in cases])


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # f16 infs
@pytest.mark.parametrize("family", sorted(CASES))
def test_matches_numpy_exactly(family: str) -> None:
    for op, inputs, attrs in CASES[family]:
        check(op, inputs, attrs, exact=True)


def test_transpose_paths() -> None:
    # a moved innermost dim goes through shared-memory tiles; a kept one is a strided copy
    tiled = generate("tdflow.transpose", [TensorSpec((37, 45), "f32")],
                     [TensorSpec((45, 37), "f32")], {"perm": [1, 0]})
    kept = generate("tdflow.transpose", [TensorSpec((4, 5, 6), "f32")],
                    [TensorSpec((5, 4, 6), "f32")], {"perm": [1, 0, 2]})
    assert "__shared__" in tiled.source and tiled.launches[0].block == (32, 8, 1)
    assert "__shared__" not in kept.source


def test_add_n_rounds_each_step() -> None:
    got = check("tdflow.add_n", [np.full(6, 2048, np.float16), np.ones(6, np.float16),
                                 np.ones(6, np.float16)], exact=True)[0]
    assert (got == 2048).all()  # 2048 + 1 rounds to 2048 (ties to even) twice, not 2050


def test_constant_is_uploaded_when_small() -> None:
    small = generate("tdflow.constant", [], [TensorSpec((3,), "f32")],
                     {"shape": [3], "dtype": "f32", "is_floating_value": True,
                      "floating_value": 0.5, "integer_value": 0})
    assert not small.launches and np.frombuffer(small.uploads[0][1], np.float32).tolist() == [0.5] * 3
    with pytest.raises(ValueError, match="does not fit i8"):
        generate("tdflow.constant", [], [TensorSpec((3,), "i8")],
                 {"shape": [3], "dtype": "i8", "is_floating_value": False, "integer_value": 300})


def test_all_compile_with_nvcc() -> None:
    # bf16 is float32 on the host, so cudasim cannot run it; its code still has to compile
    b = TensorSpec((33, 65), "bf16")
    GENERATED.extend([
        generate("tdflow.cast", [TensorSpec((33, 65), "f64")], [b], {"dtype": "bf16"}),
        generate("tdflow.cast", [b], [TensorSpec((33, 65), "i1")], {"dtype": "i1"}),
        generate("tdflow.transpose", [b], [TensorSpec((65, 33), "bf16")], {"perm": [1, 0]}),
        generate("tdflow.add_n", [b, b, b], [b], {}),
        generate("tdflow.constant", [], [b], {"shape": [33, 65], "dtype": "bf16",
                                              "is_floating_value": True, "floating_value": 0.1,
                                              "integer_value": 0}),
        # 64-bit index arithmetic (more than 2**31 elements)
        generate("tdflow.transpose", [TensorSpec((1 << 16, 1 << 15), "f32")],
                 [TensorSpec((1 << 15, 1 << 16), "f32")], {"perm": [1, 0]}),
        generate("tdflow.cat", [TensorSpec((1 << 31, 2), "i8")] * 2,
                 [TensorSpec((1 << 31, 4), "i8")], {"axis": 1}),
    ])
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
