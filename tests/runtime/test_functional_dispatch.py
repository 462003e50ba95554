"""Functional API machinery: signature parsing, the yaml reader, binding, dispatch, error texts.

These tests build functions from a small hand-made dialect, so they check the generator itself;
``test_functional_ops.py`` checks the functions generated from the standard dialect.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.dialect.opdef import OPTIONAL, VARIADIC, AttrDef, OpDef, ValueDef
from tdflow.dialect.types import TensorType
from tdflow.runtime.func_signature import (
    NO_DEFAULT,
    SignatureError,
    parse_literal,
    parse_signature,
)
from tdflow.runtime.functional import build, default_signature, snake
from tdflow.runtime.functional_yaml import YamlError, read_entries
from tdflow.runtime.tensor import tensor


def _op(m, operands=("x",), results=("y",), attrs=()):
    ops = tuple(o if isinstance(o, ValueDef) else ValueDef(o) for o in operands)
    return OpDef(mnemonic=m, dialect="tdflow", operands=ops,
                 results=tuple(ValueDef(r) for r in results), attributes=tuple(attrs))


def _attr(name, kind, default=NO_DEFAULT):
    if default is NO_DEFAULT:
        return AttrDef(name, kind, "X")
    return AttrDef(name, kind, "X", default, repr(default), required=False)


SCALAR = [_attr("has_int_operand", "bool", False), _attr("has_float_operand", "bool", False),
          _attr("int_operand", "si64", 0), _attr("float_operand", "f64", 0.0)]


class FakeDialect:
    """Just enough of a dialect: ops, and numpy-broadcast result inference."""

    def __init__(self):
        self.ops = [
            _op("relu"),
            _op("negative"),
            _op("reciprocal"),
            _op("leaky_relu", attrs=[_attr("alpha", "f32", 0.0)]),
            _op("broadcast_add", ("x", "y"), ("z",)),
            _op("broadcast_sub", ("x", "y"), ("z",)),
            _op("scalar_add", ("in",), ("out",), SCALAR),
            _op("scalar_mul", ("in",), ("out",), SCALAR),
            _op("matmul", ("a", "b", ValueDef("_add_to_output", arity=OPTIONAL)), ("out",),
                [_attr("transpose_a", "bool", False), _attr("transpose_b", "bool", False),
                 _attr("alpha", "f64", 1.0)]),
            _op("cat", (ValueDef("in", arity=VARIADIC),), ("out",),
                [_attr("axis", "si64", 0), _attr("max_dim_size", "si64", 0)]),
            _op("reduce_sum", ("input_tensor",), ("output_tensor",),
                [_attr("axis", "si32_array"), _attr("keepdims", "bool", False)]),
        ]
        self.calls = 0

    def infer_result_types(self, name, in_types, attrs):
        self.calls += 1
        m = name.split(".")[1]
        ts = [t for t in in_types if t is not None]
        dt = ts[0].dtype
        if m == "matmul":
            a, b = in_types[0].shape, in_types[1].shape
            a = a[::-1] if attrs["transpose_a"] else a
            b = b[::-1] if attrs["transpose_b"] else b
            if a[1] != b[0]:
                raise ValueError(f"inner dimensions differ: {a} and {b}")
            return [TensorType((a[0], b[1]), dt)]
        if m == "cat":
            ax = attrs["axis"]
            shape = list(ts[0].shape)
            shape[ax] = sum(t.shape[ax] for t in ts)
            return [TensorType(tuple(shape), dt)]
        if m == "reduce_sum":
            axes = {a % len(ts[0].shape) for a in attrs["axis"]}
            return [TensorType(tuple(d for i, d in enumerate(ts[0].shape) if i not in axes), dt)]
        shape = np.broadcast_shapes(*(t.shape for t in ts))
        return [TensorType(tuple(shape), dt)]


YAML = """
- name: "add"
  signature:
    [
      "Tensor (Tensor x, Tensor y) => BroadcastAdd",
      "Tensor (Tensor x, Scalar other) => ScalarAdd",
      "Tensor (Scalar x, Tensor other) => ScalarAdd",
    ]
  bind_python: True
- name: "sub"
  signature: ["Tensor (Tensor x, Tensor y) => BroadcastSub",
              "Tensor (Tensor x, Scalar other) => ScalarSub",
              "Tensor (Scalar x, Tensor other) => ScalarRSub"]
- name: "concat"
  op: "cat"
  signature: "Tensor (TensorTuple inputs, Int64 axis=0, *, Int64 max_dim_size=0) => Cat"
- name: "scaled"
  signature:
    - "Tensor (Tensor a, Tensor b, *, Double alpha=1.0, Bool transpose_b=False) => Matmul"
"""


@pytest.fixture(scope="module")
def F():
    dialect = FakeDialect()
    fns = build(dialect, YAML, "test.yaml")

    class NS:
        pass

    ns = NS()
    ns.__dict__.update(fns)
    ns.dialect = dialect
    return ns


def x16():
    return tensor(np.linspace(-2, 2, 16, dtype=np.float32))


# -------------------------------------------------------------------- signature parsing
def test_parse_signature_and_render():
    s = parse_signature("Tensor (Tensor x, Float alpha=0.0) => LeakyRelu")
    assert s.returns == "Tensor" and s.functor == "LeakyRelu"
    assert [(p.name, p.type, p.default) for p in s.params] == [("x", "Tensor", NO_DEFAULT),
                                                               ("alpha", "Float", 0.0)]
    assert str(s) == "Tensor (Tensor x, Float alpha=0.0)"
    s = parse_signature("TensorTuple (Tensor? a=None, *, Int32List axis=[0, -1], "
                        'DataType dtype="f32", Bool keep=False) => Foo')
    a, axis, dtype, keep = s.params
    assert a.optional and a.default is None and not a.kw_only
    assert axis.kw_only and axis.default == (0, -1) and dtype.default == "f32"
    assert str(s).startswith("TensorTuple (Tensor? a=None, *, Int32List axis=[0, -1]")


@pytest.mark.parametrize("bad, msg", [
    ("Tensor (Tensor x) Relu", "expected"),
    ("Blob (Tensor x) => Relu", "return type"),
    ("Tensor (Tensr x) => Relu", "unknown parameter type"),
    ("Tensor (Tensor x, Tensor x) => Relu", "duplicate"),
    ("Tensor (Float a=1.0, Tensor x) => Relu", "without a default follows"),
    ("Tensor (Int32 n=1.5) => Relu", "not a valid Int32"),
    ("Tensor (Tensor x, *, *, Float a=1.0) => Relu", "two"),
    # A default nested 3,000 deep was a RecursionError (the formula and grad parsers cap too).
    ("Tensor (Tensor x, Float a=" + "(" * 3000 + "1.0" + ")" * 3000 + ") => Relu",
     "nested too deep"),
])
def test_bad_signatures_are_explained(bad, msg):
    with pytest.raises(SignatureError, match=msg):
        parse_signature(bad)


def test_parse_literal_never_evaluates():
    assert parse_literal("[1, [2, 3]]") == (1, (2, 3))
    assert parse_literal("'NCHW'") == "NCHW" and parse_literal("-3") == -3
    with pytest.raises(SignatureError):
        parse_literal("__import__('os').system('true')")


def test_default_signature_from_opdef(F):
    d = {op.mnemonic: op for op in F.dialect.ops}
    assert str(default_signature(d["leaky_relu"])) == "Tensor (Tensor x, Float alpha=0.0)"
    assert str(default_signature(d["matmul"])) == (
        "Tensor (Tensor a, Tensor b, Tensor? _add_to_output=None, Bool transpose_a=False, "
        "Bool transpose_b=False, Double alpha=1.0)")
    assert str(default_signature(d["cat"])) == (
        "Tensor (TensorTuple in, Int64 axis=0, Int64 max_dim_size=0)")
    # a required attribute comes before the defaulted ones
    assert str(default_signature(d["reduce_sum"])) == (
        "Tensor (Tensor input_tensor, Int32List axis, Bool keepdims=False)")


def test_snake_case_functors():
    assert snake("LeakyRelu") == "leaky_relu" and snake("MaxPool2D") == "max_pool_2d"
    assert snake("BroadcastAdd") == "broadcast_add"


# -------------------------------------------------------------------- yaml reader
def test_yaml_reader_subset():
    entries = read_entries(YAML)
    assert [e["name"] for e in entries] == ["add", "sub", "concat", "scaled"]
    assert len(entries[0]["signature"]) == 3 and entries[0]["bind_python"] is True
    assert entries[2]["op"] == "cat" and len(entries[2]["signature"]) == 1
    assert entries[3]["signature"][0].startswith("Tensor (Tensor a")


@pytest.mark.parametrize("text, line", [
    ('- name: "x"\n  signature: [ "a",\n', 2),
    ('name: "x"\n', 1),
    ('- name: "x"\n  what\n', 2),
    ('- name: "x"\n  name: "y"\n', 2),
    ('- name: {a: 1}\n', 1),
])
def test_yaml_reader_errors_name_the_line(text, line):
    with pytest.raises(YamlError) as ei:
        read_entries(text, "s.yaml")
    assert f"s.yaml:{line}:" in str(ei.value)


# -------------------------------------------------------------------- generated functions
def test_a_function_per_op_and_yaml_names(F):
    for op in F.dialect.ops:
        fname = "concat" if op.mnemonic == "cat" else op.mnemonic
        assert callable(getattr(F, fname)), fname
    assert F.cat is F.concat  # the op's own name stays as an alias
    assert F.leaky_relu.__name__ == "leaky_relu"
    assert "Tensor (Tensor x, Float alpha=0.0)" in F.leaky_relu.__doc__


def test_defaults_keywords_and_positional(F):
    x = x16()
    a = x.numpy()
    np.testing.assert_allclose(F.leaky_relu(x).numpy(), np.where(a > 0, a, 0))
    np.testing.assert_allclose(F.leaky_relu(x, 0.5).numpy(), np.where(a > 0, a, 0.5 * a))
    np.testing.assert_allclose(F.leaky_relu(x, alpha=0.5).numpy(), np.where(a > 0, a, 0.5 * a))
    np.testing.assert_allclose(F.leaky_relu(alpha=0.25, x=x).numpy(),
                               np.where(a > 0, a, 0.25 * a))
    np.testing.assert_allclose(F.leaky_relu(x, alpha=np.float64(0.5)).numpy(),
                               np.where(a > 0, a, 0.5 * a))


def test_keyword_only(F):
    a = tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_allclose(F.scaled(a, b, transpose_b=True, alpha=2.0).numpy(),
                               2 * a.numpy() @ b.numpy().T)
    with pytest.raises(TypeError, match=r"takes 2 positional arguments but 3 were given"):
        F.scaled(a, b, 2.0)
    c = F.concat([a, b], 1, max_dim_size=0)
    assert c.shape == (2, 6)
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3"):
        F.concat([a, b], 1, 0)


def test_first_match_dispatch(F):
    x = x16()
    a = x.numpy()
    np.testing.assert_allclose(F.add(x, x).numpy(), a + a)  # *0
    r = F.add(x, 2)  # *1 with an int scalar
    np.testing.assert_allclose(r.numpy(), a + 2)
    assert r.dtype == "f32"
    np.testing.assert_allclose(F.add(x, 0.5).numpy(), a + 0.5)  # *1, float
    np.testing.assert_allclose(F.add(3, x).numpy(), 3 + a)  # *2
    np.testing.assert_allclose(F.sub(x, 1.5).numpy(), a - 1.5)  # composite
    np.testing.assert_allclose(F.sub(1.5, x).numpy(), 1.5 - a)  # composite, reversed


def test_invalid_combination_lists_every_signature(F):
    x = x16()
    with pytest.raises(TypeError) as ei:
        F.add(x, "two")
    assert str(ei.value) == (
        "add(): received an invalid combination of arguments. The valid signatures are:\n"
        "\t*0: Tensor (Tensor x, Tensor y)\n"
        "\t*1: Tensor (Tensor x, Scalar other)\n"
        "\t*2: Tensor (Scalar x, Tensor other)")
    with pytest.raises(TypeError, match=r"^add\(\): received an invalid combination"):
        F.add(1, 2)


@pytest.mark.parametrize("call, message", [
    (lambda F, x: F.relu(3), 'relu(): argument "x" must be Tensor, not int'),
    (lambda F, x: F.relu(np.ones(3)), 'relu(): argument "x" must be Tensor, not ndarray'),
    (lambda F, x: F.relu(), 'relu(): missing required argument "x"'),
    (lambda F, x: F.relu(x, x), "relu(): takes 1 positional argument but 2 were given"),
    (lambda F, x: F.relu(x, y=x), 'relu(): got an unexpected keyword argument "y"'),
    (lambda F, x: F.leaky_relu(x, x=x), 'leaky_relu(): got multiple values for argument "x"'),
    (lambda F, x: F.leaky_relu(x, alpha="big"),
     'leaky_relu(): argument "alpha" must be Float, not str'),
    (lambda F, x: F.leaky_relu(x, alpha=True),
     'leaky_relu(): argument "alpha" must be Float, not bool'),
    (lambda F, x: F.matmul(x, x, 1), 'matmul(): argument "_add_to_output" must be Tensor or '
                                     "None, not int"),
    (lambda F, x: F.matmul(x, 1), 'matmul(): argument "b" must be Tensor, not int'),
    (lambda F, x: F.matmul(x), 'matmul(): missing required argument "b"'),
    (lambda F, x: F.reduce_sum(x, axis=[0, "a"]),
     'reduce_sum(): argument "axis" must be Int32List, not list'),
    (lambda F, x: F.reduce_sum(x, 2**40),
     'reduce_sum(): argument "axis" must be Int32List, not int (out of Int32 range)'),
    (lambda F, x: F.concat(x), 'concat(): argument "inputs" must be TensorTuple, not Tensor'),
])
def test_single_signature_errors_name_the_argument(F, call, message):
    with pytest.raises(TypeError) as ei:
        call(F, x16())
    assert str(ei.value) == message


def test_list_params_accept_a_single_int(F):
    x = tensor(np.ones((2, 3), np.float32))
    assert F.reduce_sum(x, 1).shape == (2,)
    assert F.reduce_sum(x, [0, 1]).shape == ()


def test_inference_and_kernel_are_cached_per_shape_dtype_attrs(F):
    x = x16()
    F.leaky_relu(x, alpha=0.3)
    before = F.dialect.calls
    for _ in range(5):
        F.leaky_relu(x, alpha=0.3)
    assert F.dialect.calls == before
    F.leaky_relu(x, alpha=0.4)  # new attribute value: inferred again
    F.leaky_relu(tensor(np.ones(3, np.float32)), alpha=0.3)  # new shape
    assert F.dialect.calls == before + 2


def test_inference_errors_name_the_op(F):
    a = tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"tdflow\.matmul.*inner dimensions"):
        F.matmul(a, a)


def test_builds_for_different_dialects_do_not_mix(F):
    import tdflow

    before = F.dialect.calls
    x = tensor(np.arange(5, dtype=np.float32))
    np.testing.assert_allclose(tdflow.functional.sub(x, 1.5).numpy(), x.numpy() - 1.5)
    np.testing.assert_allclose(tdflow.functional.sub(2.0, x).numpy(), 2.0 - x.numpy())
    assert F.dialect.calls == before  # the real functions never reached the fake dialect


# -------------------------------------------------------------------- property: round trip

_DEFAULTS = {
    "Bool": st.booleans().map(lambda b: "True" if b else "False"),
    "Int32": st.integers(-(2**31), 2**31 - 1).map(str),
    "Int64": st.integers(-(2**63), 2**63 - 1).map(str),
    "Float": st.sampled_from(["0.0", "1.5", "-2.25", "1e-05"]),
    "String": st.sampled_from(['"NCHW"', '""', '"a b"']),
    "Int32List": st.lists(st.integers(-4, 4), max_size=3).map(
        lambda v: "[" + ", ".join(map(str, v)) + "]"),
    "DataType": st.sampled_from(['"f32"', '"i64"']),
}


@st.composite
def signatures(draw):
    n = draw(st.integers(0, 6))
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True),
                          min_size=n, max_size=n, unique=True))
    star_at = draw(st.integers(0, n))
    parts, defaulted = [], False
    for i, name in enumerate(names):
        if i == star_at and i:
            parts.append("*")
        kw = star_at and i >= star_at
        kind = draw(st.sampled_from(["Tensor", "Tensor?", "TensorTuple", *_DEFAULTS]))
        if kind == "Tensor?":
            parts.append(f"Tensor? {name}=None")
            defaulted = True
        elif kind in _DEFAULTS and (defaulted and not kw or draw(st.booleans())):
            parts.append(f"{kind} {name}={draw(_DEFAULTS[kind])}")
            defaulted = True
        elif defaulted and not kw:
            parts.append(f"Tensor? {name}=None")
        else:
            parts.append(f"{kind} {name}")
    ret = draw(st.sampled_from(["Tensor", "TensorTuple", "Void"]))
    return f"{ret} ({', '.join(parts)}) => Functor"


@settings(max_examples=200, deadline=None)
@given(signatures())
def test_signature_text_round_trips(text):
    sig = parse_signature(text)
    again = parse_signature(f"{sig} => {sig.functor}")
    assert again == sig
    assert f"{sig} => Functor".replace(" ", "") == text.replace(" ", "")
