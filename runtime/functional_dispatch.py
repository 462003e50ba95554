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

from .func_signature import NO_DEFAULT, Signature, explain_mismatch, make_binder
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
