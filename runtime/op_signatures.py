"""An op's functional signatures: from its ``signature`` field, or derived from its operands
and attributes (:func:`default_signature`).

>>> from tdflow.dialect import standard_dialect
>>> [str(s) for s in op_signatures(standard_dialect().lookup("tdflow.leaky_relu"))]
['Tensor (Tensor x, Float alpha=0.0)']
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .func_signature import Param, Signature, SignatureError, parse_signature

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["KIND_TO_TYPE", "camel", "default_signature", "located", "op_signatures", "snake"]

# attribute kind (dialect.attr_kinds) -> functional parameter type
KIND_TO_TYPE = {
    "bool": "Bool", "si32": "Int32", "si64": "Int64", "f32": "Float", "f64": "Double",
    "str": "String", "dtype": "DataType", "shape": "Shape",
    "bool_array": "BoolList", "si32_array": "Int32List", "si64_array": "Int64List",
    "f32_array": "FloatList", "f64_array": "DoubleList", "str_array": "StringList",
    "dtype_array": "DataTypeList", "shape_array": "ShapeList",
}


def camel(mnemonic: str) -> str:
    """``leaky_relu`` -> ``LeakyRelu`` (the functor name of an op's default signature)."""
    return "".join(p[:1].upper() + p[1:] for p in mnemonic.split("_") if p)


def snake(functor: str) -> str:
    """``LeakyRelu`` -> ``leaky_relu``; ``MaxPool2D`` -> ``max_pool_2d``."""
    s = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z0-9])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])", "_",
               functor)
    return s.lower()


def _render_default(kind: str, value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_render_default(kind, v) for v in value) + "]"
    return repr(value)


def default_signature(opdef: OpDef) -> Signature:
    """The signature derived from an op: operands, required attrs, then the rest.

    >>> from tdflow.dialect import standard_dialect
    >>> str(default_signature(standard_dialect().lookup("tdflow.leaky_relu")))
    'Tensor (Tensor x, Float alpha=0.0)'
    """
    required: list[Param] = []
    later: list[Param] = []
    for o in opdef.operands:
        if o.is_variadic:
            required.append(Param(o.name, "TensorTuple"))
        elif o.is_optional:
            later.append(Param(o.name, "Tensor", True, None, False, "None"))
        else:
            required.append(Param(o.name, "Tensor"))
    for a in opdef.attributes:
        ptype = KIND_TO_TYPE.get(a.kind)
        if ptype is None:
            continue  # kinds tdflow does not model keep their .td default
        if a.has_default:
            if a.default is None:
                later.append(Param(a.name, ptype, True, None, False, "None"))
            else:
                later.append(Param(a.name, ptype, False, a.default, False,
                                   _render_default(a.kind, a.default)))
        elif getattr(a, "optional", False):
            later.append(Param(a.name, ptype, True, None, False, "None"))
        else:
            required.append(Param(a.name, ptype))
    n = len(opdef.results)
    returns = "Tensor" if n == 1 else "TensorTuple" if n else "Void"
    return Signature(returns, tuple(required + later), camel(opdef.mnemonic))


def op_signatures(opdef: OpDef) -> list[Signature]:
    """The op's functional signatures: its ``signature`` field (one per line, OneFlow's
    ``functional_api.yaml`` syntax, ``=> Functor`` optional) or else :func:`default_signature`.
    A line that does not parse is a ``TdError`` at its place in the ``.td`` file.

    >>> from tdflow.dialect import standard_dialect
    >>> [str(s) for s in op_signatures(standard_dialect().lookup("tdflow.relu"))]
    ['Tensor (Tensor x)']
    """
    if not opdef.signatures:
        return [default_signature(opdef)]
    out = []
    for text, loc in opdef.signatures:
        with located(opdef, loc):
            out.append(parse_signature(text if "=>" in text
                                       else f"{text} => {camel(opdef.mnemonic)}"))
    return out


@contextlib.contextmanager
def located(opdef: OpDef, loc: Any) -> Iterator[None]:
    """Re-raise a ``SignatureError`` as a ``TdError`` at ``loc`` in the op's ``.td`` file
    (``loc``: the signature line's place; ``None``: the op's).

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.tdparser.errors import TdError
    >>> try:
    ...     with located(standard_dialect().lookup("tdflow.relu"), None):
    ...         raise SignatureError("bad")
    ... except TdError as e:
    ...     print(str(e).splitlines()[0].split(": ", 1)[1])
    error: op 'tdflow.relu': signature: bad
    """
    try:
        yield
    except SignatureError as exc:
        from tdflow.tdparser.errors import TdError

        loc = loc or opdef.location
        message = f"op '{opdef.name}': signature: {exc}"
        if loc is None:
            raise TdError(message) from None
        raise TdError(message, loc.file, loc.line, loc.col) from None
