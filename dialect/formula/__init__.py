"""tdflow.dialect.formula: an elementwise op's math, written once in its ``.td`` record.

``let formula = [{ x > 0 ? x : x * alpha }];`` is parsed by tdflow's own grammar
(``formula.lark``, never ``eval``'d), checked against the op (names, arities, attribute kinds,
results) with errors located inside the code block, converted to the scalar expression IR
(:mod:`.expr`) that lowering renders to numpy and CUDA C, and read for the element types the
op's kernel admits (:mod:`.dtypes`).

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.formula import check_formula, formula_dtypes, parse_formula
>>> op = standard_dialect().lookup("tdflow.leaky_relu")
>>> checked = check_formula(parse_formula("x > 0 ? x : x * alpha", file="ops.td", line=1, col=1), op)
>>> checked.expr, sorted(formula_dtypes(checked))
(where(gt(in0, 0), in0, mul(in0, @alpha)), ['bf16', 'f16', 'f32', 'f64'])

Modules: ``syntax`` (the parsed tree), ``parse`` (the grammar, :func:`parse_formula`), ``check``
(:func:`check_formula`, :class:`CheckedFormula`), ``functions`` (the function table),
``expr`` and ``types`` (the expression IR and its type rules, shared with lowering), ``dtypes``
(:func:`formula_dtypes`, :func:`result_dtypes`), ``locate`` (where a code field's text starts
in a ``.td`` file), ``derive`` (:func:`derivative`, :func:`vjp`: a formula's backward, as a
formula). Names load on first use, so importing the IR does not build the parser.
"""

from __future__ import annotations

_LAZY = {
    "parse_formula": "tdflow.dialect.formula.parse",
    "MAX_DEPTH": "tdflow.dialect.formula.parse",
    "Formula": "tdflow.dialect.formula.checked",
    "check_formula": "tdflow.dialect.formula.check",
    "CheckedFormula": "tdflow.dialect.formula.checked",
    "FUNCTIONS": "tdflow.dialect.formula.functions",
    "formula_dtypes": "tdflow.dialect.formula.dtypes",
    "result_dtypes": "tdflow.dialect.formula.dtypes",
    "FLOATS": "tdflow.dialect.formula.dtypes",
    "INTS": "tdflow.dialect.formula.dtypes",
    "NUMERIC": "tdflow.dialect.formula.dtypes",
    "locate_code_field": "tdflow.dialect.formula.locate",
    "check_code_field": "tdflow.dialect.formula.locate",
    "derivative": "tdflow.dialect.formula.derive",
    "vjp": "tdflow.dialect.formula.derive",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'tdflow.dialect.formula' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value
