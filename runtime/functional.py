"""``tdflow.functional``: one Python function per op, generated at import from signatures.

Every op of the standard dialect gets a *default signature* derived from its definition
(operands become ``Tensor``, ``Tensor?`` or ``TensorTuple``; attributes become ``Bool``,
``Int32``, ``Float``, ``Int32List``, ... with their ``.td`` defaults), and ``signatures.yaml``
(OneFlow's ``functional_api.yaml`` style) adds functions with several signatures, such as
``add(Tensor x, Tensor y)`` / ``add(Tensor x, Scalar other)``, or renames (``cat`` is
``concat``). Calls dispatch to the first signature that fits; none fitting is a ``TypeError``
listing every valid signature. Each signature's argument binder and op call are closures built
here once, so a call does no parsing.

>>> import tdflow
>>> F = tdflow.functional
>>> x = tdflow.tensor([-1.0, 0.5, 2.0])
>>> F.leaky_relu(x, alpha=0.1).numpy()
array([-0.1,  0.5,  2. ], dtype=float32)
>>> F.add(x, 1).numpy()
array([0. , 1.5, 3. ], dtype=float32)
>>> F.relu(3)
Traceback (most recent call last):
TypeError: relu(): argument "x" must be Tensor, not int

Results are computed on the engine: a tensor's value is waited for when it is read
(``.numpy()``), and a failure inside the kernel surfaces there as an ``EngineError`` naming the
op. Shape and dtype errors are found by the inference hooks at call time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .composites import Ops, composite_for, scalar_attrs
from .eager import EagerError, OpRunner
from .func_signature import Signature, SignatureError, parse_signature
from .functional_dispatch import function_doc, make_function
from .functional_yaml import read_entries
from .op_signatures import camel, default_signature, located, op_signatures, snake

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.opdef import OpDef

__all__ = ["EagerError", "SIGNATURES_FILE", "default_signature", "functions", "op_function",
           "op_signatures", "signatures"]

SIGNATURES_FILE = Path(__file__).with_name("signatures.yaml")

# OneFlow's scalar-operand attribute family (scalar_add, scalar_mul, scalar_pow)
SCALAR_ATTRS = ("has_int_operand", "has_float_operand", "int_operand", "float_operand")


# ------------------------------------------------------------------ functors
def _direct_impl(fname: str, sig: Signature, opdef: OpDef, dialect: Dialect) -> Callable[[tuple], Any]:
    """The op call for a signature whose functor is the op itself.

    Tensor parameters fill the op's operands in order; other parameters fill the attribute of
    the same name, and a ``Scalar`` fills OneFlow's scalar-operand family.
    """
    tensor_idx = [i for i, p in enumerate(sig.params) if p.is_tensor]
    n_ops = len(opdef.operands)
    plan, attr_names = _attribute_plan(fname, sig, opdef)
    by_name = _operands_by_name(sig, opdef, tensor_idx, plan,
                                lambda: OpRunner(opdef, tuple(attr_names), dialect))
    if by_name is not None:
        return by_name
    if len(tensor_idx) > n_ops or not all(o.is_optional for o in opdef.operands[len(tensor_idx):]):
        raise SignatureError(f"{fname}: signature {sig} has {len(tensor_idx)} tensor "
                             f"parameters but {opdef.name} has {n_ops} operands "
                             f"(only trailing optional operands may be left out)")
    pad = (None,) * (n_ops - len(tensor_idx))
    runner = OpRunner(opdef, tuple(attr_names), dialect)
    if runner.mutable:  # in-place ops take the general path (their writes are inputs)
        k = len(tensor_idx)
        if (not any(expand for _, expand in plan) and tensor_idx == list(range(k))
                and [i for i, _ in plan] == list(range(k, len(sig.params)))):
            # operands first, then attributes (sgd_update(w, g, learning_rate_val=...)): the
            # split form, so a call binds its attribute values alone, not all its parameters
            run = runner.run
            impl = lambda vals: run(vals[:k] + pad, vals[k:])  # noqa: E731
            impl.split = (k, pad, run)  # type: ignore[attr-defined]
            # (operands past the first two are absent in that form: only the first is written)
            if (0 in runner.mutable and 1 not in runner.mutable and not opdef.results and k >= 2
                    and opdef.operands[0].is_single and opdef.operands[1].is_single):
                impl.split2 = runner.make_update2(n_ops - 2)  # type: ignore[attr-defined]
            return impl
        return _gathering_impl(runner.run, plan, tuple(tensor_idx), pad)
    plain = (not plan and not pad and len(opdef.results) == 1 and len(sig.params) == n_ops
             and all(o.is_single for o in opdef.operands))
    if plain and n_ops == 1:
        call1 = runner.make_call1()

        def impl1(vals):  # the general form; one-signature functions call `fast` directly
            return call1(vals[0])

        impl1.fast = call1  # type: ignore[attr-defined]
        return impl1
    if plain and n_ops == 2:
        call2 = runner.make_call2()

        def impl2(vals):
            return call2(vals[0], vals[1])

        impl2.fast = call2  # type: ignore[attr-defined]
        return impl2
    tix = tuple(tensor_idx)
    attr_idx = tuple(i for i, _ in plan)
    expands = [expand for _, expand in plan]
    single_result = len(opdef.results) == 1 and all(not o.is_variadic for o in opdef.operands)
    if single_result:
        run = runner.make_calln()
    else:
        run = runner.run
    if not plan:
        if tensor_idx == list(range(n_ops)):
            return lambda vals: run(vals, ())  # parameters are exactly the operands
        return lambda vals: run(tuple(vals[i] for i in tix) + pad, ())
    one = (n_ops == 1 and opdef.operands[0].is_single and len(opdef.results) == 1)
    if one and not any(expands) and tix == (0,) and attr_idx == tuple(
            range(1, len(sig.params))):
        call1a = runner.make_call1a()  # leaky_relu(x, alpha=...), reshape(x, shape), ...

        def impl1a(vals):
            return call1a(vals[0], vals[1:])

        impl1a.split1 = call1a  # type: ignore[attr-defined]
        return impl1a
    if one and expands == [True] and len(tix) == 1:
        call1a = runner.make_call1a()  # add(x, 2), add(2, x)
        t0, s0 = tix[0], attr_idx[0]
        return lambda vals: call1a(vals[t0], scalar_attrs(vals[s0]))
    if not any(expands):
        if tix == tuple(range(len(tix))) and attr_idx == tuple(range(len(tix), len(sig.params))):
            k = len(tix)  # operands first, then attributes: slice, don't gather
            if not pad:
                impl = lambda vals: run(vals[:k], vals[k:])  # noqa: E731
            else:
                impl = lambda vals: run(vals[:k] + pad, vals[k:])  # noqa: E731
            impl.split = (k, pad, run)  # type: ignore[attr-defined]
            if (single_result and n_ops >= 2 and opdef.operands[0].is_single
                    and opdef.operands[1].is_single):
                # two tensors, then absent optional operands (used when the call gives two)
                impl.split2 = runner.make_call2a(n_ops - 2)  # type: ignore[attr-defined]
            return impl
        return lambda vals: run(tuple(vals[i] for i in tix) + pad,
                                tuple(vals[i] for i in attr_idx))
    if expands == [True] and len(tix) == 1 and not pad:
        t0, s0 = tix[0], attr_idx[0]
        return lambda vals: run((vals[t0],), scalar_attrs(vals[s0]))
    return _gathering_impl(run, plan, tix, pad)


def _attribute_plan(fname: str, sig: Signature, opdef: OpDef
                    ) -> tuple[list[tuple[int, bool]], list[str]]:
    """``(plan, attribute names)``: per non-tensor parameter ``(index, is a Scalar to expand
    into OneFlow's scalar-operand family)``, and the attribute names the values fill."""
    attr_names: list[str] = []
    plan: list[tuple[int, bool]] = []
    for i, p in enumerate(sig.params):
        if p.is_tensor:
            continue
        if opdef.attr(p.name) is not None:
            attr_names.append(p.name)
            plan.append((i, False))
        elif p.type == "Scalar" and all(opdef.attr(a) is not None for a in SCALAR_ATTRS):
            attr_names.extend(SCALAR_ATTRS)
            plan.append((i, True))
        else:
            raise SignatureError(f"{fname}: parameter {p.name!r} of {sig} is not an attribute "
                                 f"of {opdef.name}")
    return plan, attr_names


def _operands_by_name(sig: Signature, opdef: OpDef, tensor_idx: list[int],
                      plan: list[tuple[int, bool]], make_runner: Callable[[], Any]
                      ) -> Callable[[tuple], Any] | None:
    """When the signature's tensor parameters are named after operands but not in operand
    order (the default signature puts optional operands last: adam_update's ``m`` and ``v``
    follow ``learning_rate``), an impl that places each by name; ``None`` when order is
    enough (or the signature is wrong: the general check reports it)."""
    pos = {d.name: j for j, d in enumerate(opdef.operands)}
    names = [sig.params[i].name for i in tensor_idx]
    if not names or any(n not in pos for n in names):
        return None
    places = [pos[n] for n in names]
    if places == list(range(len(places))):
        return None  # operands in order, trailing optional ones left out: the fast paths
    if any(not d.is_optional for d in opdef.operands if d.name not in names):
        return None
    run = make_runner().run
    slots = list(zip(tensor_idx, places))
    n_ops = len(opdef.operands)

    def impl(vals):
        operands: list[Any] = [None] * n_ops
        for i, j in slots:
            operands[j] = vals[i]
        attrs: list = []
        for i, expand in plan:
            attrs.extend(scalar_attrs(vals[i]) if expand else (vals[i],))
        return run(tuple(operands), tuple(attrs))

    return impl


def _gathering_impl(run: Callable, plan: list[tuple[int, bool]], tix: tuple[int, ...],
                    pad: tuple) -> Callable:
    """The general case: gather the tensor parameters ``tix`` (then ``pad``) as operands and
    the attribute values in ``plan`` order, expanding each Scalar into its attributes."""

    def impl(vals):
        attrs: list = []
        for i, expand in plan:
            if expand:
                attrs.extend(scalar_attrs(vals[i]))
            else:
                attrs.append(vals[i])
        return run(tuple(vals[i] for i in tix) + pad, tuple(attrs))

    return impl


def build(dialect: Dialect, yaml_text: str, yaml_path: str = "signatures.yaml"
          ) -> dict[str, Callable[..., Any]]:
    """Every functional function for ``dialect``: defaults from the ops, plus the yaml's."""
    ops = {op.mnemonic: op for op in _all_ops(dialect)
           if op.dialect == "tdflow" and has_functional_form(op)}
    by_functor = {camel(m): op for m, op in ops.items()}
    entries = read_entries(yaml_text, yaml_path)
    renamed = {e["op"]: e["name"] for e in entries if "op" in e}
    out: dict[str, Callable[..., Any]] = {}
    fns: dict[str, Callable[..., Any]] = {}
    ctx = Ops()

    def resolve(fname: str, sig: Signature) -> Callable[[tuple], Any]:
        comp = composite_for(sig.functor, dialect)
        if comp is not None:
            return lambda vals: comp(ctx, *vals)
        op = by_functor.get(sig.functor) or ops.get(snake(sig.functor))
        if op is None:
            raise SignatureError(f"{yaml_path}: {fname}: functor {sig.functor!r} is neither an "
                                 f"op of the dialect nor a registered composite")
        return _direct_impl(fname, sig, op, dialect)

    for m, op in ops.items():
        fname = renamed.get(m, m)
        sigs = op_signatures(op)
        fns[m] = make_function(m, sigs, [resolve(m, s) for s in sigs], function_doc(m, sigs, op))
        out[fname] = fns[m]
    ctx.fn.update(fns)  # composites call ops by mnemonic, whatever the yaml does to names
    for m, op in ops.items():  # (Tensor, Scalar) forms of the scalar ops, for composites
        if len(op.operands) == 1 and all(op.attr(a) is not None for a in SCALAR_ATTRS):
            ctx.scalar[m] = resolve(m, parse_signature(
                f"Tensor (Tensor x, Scalar other) => {camel(m)}"))
    for e in entries:
        fname = e.get("name")
        if not fname or "signature" not in e:
            raise SignatureError(f"{yaml_path}:{e['line']}: an entry needs 'name' and "
                                 f"'signature'")
        try:
            sigs = [parse_signature(s) for s in e["signature"]]
        except SignatureError as err:
            raise SignatureError(f"{yaml_path}:{e['line']}: {fname}: {err}") from None
        opdef = ops.get(e.get("op", "")) or (by_functor.get(sigs[0].functor)
                                             if len(sigs) == 1 else None)
        out[fname] = make_function(fname, sigs, [resolve(fname, s) for s in sigs],
                                    function_doc(fname, sigs, opdef))
    for m, fname in renamed.items():
        out.setdefault(m, out[fname])  # `cat` stays available next to `concat`
    return out




def has_functional_form(opdef: OpDef) -> bool:
    """Whether an op gets a functional function: every op but those marked ``LoweringOnly``
    (``tdflow.fused_elementwise``), which lowering passes create and users never call. A trait
    says it in the op's own record, so the rule covers any library's pass-created ops.

    >>> from tdflow.dialect import standard_dialect
    >>> [has_functional_form(standard_dialect().lookup(n))
    ...  for n in ("tdflow.relu", "tdflow.fused_elementwise")]
    [True, False]
    """
    return not opdef.has_trait("LoweringOnly")


def op_function(opdef: OpDef, context: Dialect) -> Callable[..., Any]:
    """The functional form of one op of any dialect, from its default signature, calling the
    op through ``context`` (its hooks, including those of a standard op serving it, and its
    kernels).

    >>> from tdflow.dialect.context import standard_context
    >>> ctx = standard_context()
    >>> relu = op_function(ctx.lookup("tdflow.relu"), ctx)
    >>> import tdflow
    >>> relu(tdflow.tensor([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
    """
    m = opdef.mnemonic
    if not has_functional_form(opdef):
        raise AttributeError(f"'{opdef.name}' is created by lowering (LoweringOnly) and has no "
                             f"functional form")
    sigs = op_signatures(opdef)
    impls = []
    for sig, (_, loc) in zip(sigs, opdef.signatures or [(None, None)] * len(sigs)):
        with located(opdef, loc):
            impls.append(_direct_impl(m, sig, opdef, context))
    return make_function(m, sigs, impls, function_doc(m, sigs, opdef))


def _all_ops(dialect: Dialect):
    ops = dialect.ops
    return ops.values() if isinstance(ops, Mapping) else ops


def _load() -> dict[str, Callable[..., Any]]:
    from tdflow.dialect import standard_dialect

    return build(standard_dialect(), SIGNATURES_FILE.read_text(), str(SIGNATURES_FILE))


functions: dict[str, Callable[..., Any]] = _load()
_clash = sorted(n for n in functions if n in globals())
if _clash:  # an op named like a helper of this module would silently replace it
    raise ImportError(f"tdflow.functional: generated functions {_clash} clash with names of "
                      f"runtime/functional.py; rename the op's functional form in signatures.yaml")
globals().update(functions)


def signatures(name: str) -> tuple[Signature, ...]:
    """The signatures of the functional function ``name``, in dispatch order."""
    return functions[name].signatures  # type: ignore[attr-defined]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(functions))
