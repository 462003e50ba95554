"""A functional function from its signatures: first-match dispatch with fast paths for plain
tensor calls, the error listing every signature, its docstring and ``inspect`` signature.

>>> from tdflow.runtime.func_signature import parse_signature
>>> f = make_function("neg", [parse_signature("Tensor (Scalar x) => Neg")],
...                   [lambda vals: -vals[0]], "neg(x)")
>>> f(2.5), f.__name__, str(f.__signature__)
(-2.5, 'neg', '(x)')
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .func_signature import BAD, NO_DEFAULT, TYPES, Param, Signature, explain_mismatch, make_binder
from .tensor_glue import Tensor

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["function_doc", "make_function"]


def _py_signature(sig: Signature) -> inspect.Signature:
    params = []
    for p in sig.params:
        kind = (inspect.Parameter.KEYWORD_ONLY if p.kw_only
                else inspect.Parameter.POSITIONAL_OR_KEYWORD)
        name = p.name if p.name.isidentifier() and p.name not in ("in", "lambda") else p.name + "_"
        default = inspect.Parameter.empty if p.default is NO_DEFAULT else p.default
        params.append(inspect.Parameter(name, kind, default=default))
    return inspect.Signature(params)


def _lead_tensors(sig: Signature) -> int:
    """``k`` when the first ``k >= 1`` parameters are required plain tensors and every other
    parameter has a default (so ``f(t1, ..., tk)`` needs no binding); else 0."""
    k = 0
    for p in sig.params:
        if p.type == "Tensor" and not p.optional and p.default is NO_DEFAULT and not p.kw_only:
            k += 1
        else:
            break
    if k and k < len(sig.params) and all(p.default is not NO_DEFAULT for p in sig.params[k:]):
        return k
    return 0


def make_function(fname: str, sigs: list[Signature], impls: list[Callable[[tuple], Any]],
                  doc: str) -> Callable[..., Any]:
    """The Python function ``fname``: binds a call's arguments to the first of ``sigs`` they
    fit and runs that signature's implementation (``impls[i](values)``); none fitting is a
    ``TypeError`` listing every signature. Calls of one or two plain tensors skip binding.

    >>> from tdflow.runtime.func_signature import parse_signature
    >>> sig = parse_signature("Tensor (Scalar x) => Twice")
    >>> twice = make_function("twice", [sig], [lambda vals: 2 * vals[0]], "twice")
    >>> twice(21), twice.signatures[0].functor
    (42, 'Twice')
    """
    binders = [make_binder(s, Tensor) for s in sigs]
    fast = getattr(impls[0], "fast", None)
    if len(sigs) == 1 and fast is not None and len(sigs[0].params) == 1:
        bind, impl, sig = binders[0], impls[0], sigs[0]

        def function(*args, **kwargs):  # relu(x): one tensor, nothing else
            if not kwargs and len(args) == 1 and isinstance(args[0], Tensor):
                return fast(args[0])
            vals = bind(args, kwargs)  # relu(x=t)
            if vals is None:
                raise TypeError(explain_mismatch(fname, sig, args, kwargs, Tensor))
            return fast(vals[0])
    elif len(sigs) == 1 and fast is not None and len(sigs[0].params) == 2:
        bind, impl, sig = binders[0], impls[0], sigs[0]

        def function(*args, **kwargs):  # broadcast_add(x, y): two tensors
            if not kwargs and len(args) == 2:
                x, y = args
                if isinstance(x, Tensor) and isinstance(y, Tensor):
                    return fast(x, y)
            vals = bind(args, kwargs)
            if vals is None:
                raise TypeError(explain_mismatch(fname, sig, args, kwargs, Tensor))
            return impl(vals)
    elif len(sigs) == 1 and _split_form(sigs[0], impls[0]) is not None:
        function = _split_function(fname, sigs[0], binders[0], impls[0])
    elif len(sigs) == 1 and _lead_tensors(sigs[0]):
        bind, impl, sig = binders[0], impls[0], sigs[0]
        k = _lead_tensors(sigs[0])
        tail = tuple(p.default for p in sig.params[k:])  # all defaulted, stored converted

        def function(*args, **kwargs):  # matmul(a, b): required tensors, defaults for the rest
            if not kwargs and len(args) == k:
                for a in args:
                    if not isinstance(a, Tensor):
                        break
                else:
                    return impl(args + tail)
            vals = bind(args, kwargs)
            if vals is None:
                raise TypeError(explain_mismatch(fname, sig, args, kwargs, Tensor))
            return impl(vals)
    elif len(sigs) == 1:
        bind, impl, sig = binders[0], impls[0], sigs[0]

        def function(*args, **kwargs):
            vals = bind(args, kwargs)
            if vals is None:
                raise TypeError(explain_mismatch(fname, sig, args, kwargs, Tensor))
            return impl(vals)
    else:
        pairs = tuple(zip(binders, impls))
        listing = "".join(f"\n\t*{i}: {s}" for i, s in enumerate(sigs))
        message = (f"{fname}(): received an invalid combination of arguments. "
                   f"The valid signatures are:{listing}")

        def function(*args, **kwargs):
            for bind, impl in pairs:
                vals = bind(args, kwargs)
                if vals is not None:
                    return impl(vals)
            raise _no_signature_fits(fname, sigs, message, args, kwargs)

    function.__name__ = function.__qualname__ = fname
    function.__module__ = "tdflow.functional"
    function.__doc__ = doc
    function.__signature__ = _py_signature(sigs[0])  # type: ignore[attr-defined]
    function.signatures = tuple(sigs)  # type: ignore[attr-defined]
    return function


def _split_form(sig: Signature, impl: Any) -> tuple[int, int] | None:
    """``(j, k)`` when ``impl`` can be called without binding: it exposes ``split1`` (then
    ``impl(vals) == split1(vals[0], vals[1:])``) or ``split = (k, pad, run)`` (then
    ``impl(vals) == run(vals[:k] + pad, vals[k:])``), the first ``j >= 1`` parameters are
    required positional tensors, the next up to ``k`` optional tensors (default ``None``) and
    the rest non-tensor parameters; else ``None``."""
    if getattr(impl, "split1", None) is not None:
        k = 1
    elif getattr(impl, "split", None) is not None:
        k = impl.split[0]
    else:
        return None
    params = sig.params
    j = 0
    while j < len(params) and params[j].type == "Tensor" and not params[j].optional \
            and not params[j].kw_only and params[j].default is NO_DEFAULT:
        j += 1
    if not j or j > k or k > len(params):
        return None
    if any(p.type != "Tensor" or p.default is not None or p.kw_only for p in params[j:k]):
        return None
    if any(p.is_tensor for p in params[k:]):
        return None
    return j, k


def _attr_binder(params: tuple[Param, ...]) -> Callable[[tuple, dict], tuple | None]:
    """``bind(extra, kwargs)``: the converted values of the non-tensor ``params`` from the
    positional ``extra`` values and ``kwargs``, defaults filled; ``None`` when the call does not
    fit them (the general binder then decides, and explains)."""
    index = {p.name: i for i, p in enumerate(params)}
    convs = tuple(_converter(p) for p in params)
    defaults = tuple(p.default for p in params)
    npos = sum(1 for p in params if not p.kw_only)
    required = NO_DEFAULT in defaults

    def bind(extra, kwargs):
        ne = len(extra)
        if ne > npos:
            return None
        vals = list(defaults)
        for i in range(ne):
            c = convs[i](extra[i])
            if c is BAD:
                return None
            vals[i] = c
        for name, v in kwargs.items():
            i = index.get(name)
            if i is None or i < ne:
                return None
            c = convs[i](v)
            if c is BAD:
                return None
            vals[i] = c
        if required:
            for v in vals:
                if v is NO_DEFAULT:
                    return None
        return tuple(vals)

    return bind


def _converter(p: Param) -> Callable[[Any], Any]:
    base = TYPES[p.type]
    if not p.optional:
        return base
    return lambda v: None if v is None else base(v)


def _split_function(fname: str, sig: Signature, bind: Callable, impl: Any) -> Callable[..., Any]:
    """The function of a one-signature op whose impl has a split form (:func:`_split_form`):
    ``leaky_relu(x, alpha=0.2)``, ``matmul(a, b)``, ``reshape(x, (2, 8))`` convert just their
    attribute values and call the op; anything else binds in full."""
    j, k = _split_form(sig, impl)  # type: ignore[misc]
    bind_attrs = _attr_binder(sig.params[k:])
    no_attrs = bind_attrs((), {})  # None when an attribute is required
    positional_attrs = j == k  # else positional values would fill the optional tensors

    def general(args, kwargs):
        vals = bind(args, kwargs)
        if vals is None:
            raise TypeError(explain_mismatch(fname, sig, args, kwargs, Tensor))
        return impl(vals)

    split1 = getattr(impl, "split1", None)
    if split1 is not None:  # j == k == 1

        def function(*args, **kwargs):
            if args and isinstance(args[0], Tensor):
                if len(args) == 1 and not kwargs and no_attrs is not None:
                    return split1(args[0], no_attrs)
                av = bind_attrs(args[1:], kwargs)
                if av is not None:
                    return split1(args[0], av)
            return general(args, kwargs)

        return function
    run, pad = impl.split[2], (None,) * (k - j) + impl.split[1]
    split2 = getattr(impl, "split2", None)
    if split2 is not None and j == 2:

        def function(*args, **kwargs):  # noqa: F811 - one of the forms
            if len(args) >= 2:
                t, u = args[0], args[1]
                if isinstance(t, Tensor) and isinstance(u, Tensor):
                    if len(args) == 2:
                        av = bind_attrs((), kwargs) if kwargs else no_attrs
                    else:
                        av = bind_attrs(args[2:], kwargs) if positional_attrs else None
                    if av is not None:
                        return split2(t, u, av)
            return general(args, kwargs)

        return function

    def function(*args, **kwargs):  # noqa: F811 - one of the two forms
        if len(args) >= j:
            ts = args[:j]
            for t in ts:
                if not isinstance(t, Tensor):
                    return general(args, kwargs)
            if len(args) == j:
                av = bind_attrs((), kwargs) if kwargs else no_attrs
            else:
                av = bind_attrs(args[j:], kwargs) if positional_attrs else None
            if av is not None:
                return run(ts + pad, av)
        return general(args, kwargs)

    return function


def _no_signature_fits(fname: str, sigs: list[Signature], message: str, args: tuple,
                       kwargs: dict) -> TypeError:
    """The error for a call no signature fits: ``message`` lists them; a note per signature
    says why this call does not fit it, naming the argument (shown under the traceback).

    >>> from tdflow.runtime.func_signature import parse_signature
    >>> e = _no_signature_fits("add", [parse_signature("Tensor (Scalar x, Scalar y) => Add")],
    ...                        "add(): no", (1.0, [1]), {})
    >>> e.__notes__
    ['*0: argument "y" must be Scalar, not list']
    """
    err = TypeError(message)
    prefix = f"{fname}(): "
    for i, sig in enumerate(sigs):
        err.add_note(f"*{i}: " + explain_mismatch(fname, sig, args, kwargs, Tensor)
                     .removeprefix(prefix))
    return err


def function_doc(fname: str, sigs: list[Signature], opdef: OpDef | None) -> str:
    """The docstring of a functional function: its signatures, then the op's summary and
    description.

    >>> from tdflow.runtime.func_signature import parse_signature
    >>> print(function_doc("twice", [parse_signature("Tensor (Tensor x) => Twice")], None))
    twice:
        Tensor (Tensor x)  => Twice
    """
    lines = [f"{fname}" + ("" if len(sigs) == 1 else " (first matching signature wins)") + ":"]
    lines += [f"    {s}  => {s.functor}" for s in sigs]
    if opdef is not None:
        if opdef.summary:
            lines += ["", opdef.summary]
        if opdef.description:
            lines += ["", opdef.description.strip()]
    return "\n".join(lines)
