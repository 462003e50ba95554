"""What a pattern needs to know of an op, read straight from its record.

A DRR dag names an op by its record (``(TDF_ReluOp $x)``, ``(ReshapeOp $arg)``) and binds its
arguments by position. The full ODS reader (:mod:`tdflow.dialect.ods`) wants every operand
named, as tdflow's libraries do; MLIR's own op definitions (the Toy tutorial's, mlir-tblgen's
tests) leave some unnamed. Patterns only need the qualified name, the arguments in binding
order (operand or attribute, variadic or not) and the results, so they read that much here,
for the ops a pattern mentions.

>>> from tdflow.dialect.dialect import load_records, standard_ops_path, include_dirs_for
>>> sigs = OpSignatures(load_records(standard_ops_path(), include_dirs_for()))
>>> relu = sigs.get("TDF_ReluOp")
>>> relu.name, [a.name for a in relu.args], len(relu.results)
('tdflow.relu', ['x'], 1)
"""

from __future__ import annotations

from dataclasses import dataclass

from tdflow.tdparser.records import Dag, DefRef, Record, RecordKeeper

from ..ods import is_op_record, op_name_parts


@dataclass(frozen=True)
class ArgSig:
    """One argument of an op, in DRR binding order.

    >>> ArgSig("alpha", True, False).is_attr
    True
    """

    name: str
    is_attr: bool
    variadic: bool = False  # Variadic<...> operand (takes several values)
    optional: bool = False  # Optional<...> operand, OptionalAttr / DefaultValuedAttr attribute


@dataclass(frozen=True)
class OpSig:
    """An op as patterns see it: qualified name, arguments in binding order, results.

    >>> OpSig("toy.reshape", "ReshapeOp", (ArgSig("input", False),), ("output",)).arity
    1
    """

    name: str
    record: str
    args: tuple[ArgSig, ...]
    results: tuple[str, ...]

    @property
    def arity(self) -> int:
        return len(self.args)


class OpSignatures:
    """Record name -> :class:`OpSig`, computed on first use (most ops are never asked for)."""

    def __init__(self, rk: RecordKeeper, default_dialect: str = "tdflow") -> None:
        self.rk = rk
        self.default_dialect = default_dialect
        self._cache: dict[str, OpSig | None] = {}

    def get(self, record_name: str) -> OpSig | None:
        """The op defined by record ``record_name``, or ``None`` when it is not an op.

        >>> OpSignatures(RecordKeeper()).get("Nothing") is None
        True
        """
        if record_name not in self._cache:
            rec = self.rk.defs.get(record_name)
            self._cache[record_name] = (self._read(rec) if rec is not None and is_op_record(rec)
                                        else None)
        return self._cache[record_name]

    def _rec(self, value) -> Record | None:
        if isinstance(value, DefRef):
            return self.rk.defs.get(value.name) or self.rk.classes.get(value.name)
        return None

    def _read(self, rec: Record) -> OpSig:
        f = rec.fields
        mnemonic, dialect = op_name_parts(rec, self._rec(f.get("opDialect")),
                                          self.default_dialect)
        args: list[ArgSig] = []
        if isinstance(f.get("input"), Dag) and isinstance(f.get("output"), Dag):
            # OneFlow's convention: operands (`input`), then attributes, as ods.py reads them
            for i, (value, name) in enumerate(f["input"].args):
                args.append(self._operand(value, name, i))
            for dag_name in ("user_op_attrs", "attrs"):
                dag = f.get(dag_name)
                if isinstance(dag, Dag):
                    args.extend(self._attr(v, n, len(args)) for v, n in dag.args)
            results = f["output"].args
        else:
            # MLIR's `arguments`: operands and attributes interleaved, bound in that order
            for i, (value, name) in enumerate(f["arguments"].args):
                arec = self._rec(value)
                if arec is not None and (arec.isa("Attr") or arec.isa("Property")):
                    args.append(self._attr(value, name, i))
                else:
                    args.append(self._operand(value, name, i))
            results = f["results"].args
        return OpSig(f"{dialect}.{mnemonic}", rec.name, tuple(args),
                     tuple(n or f"result{i}" for i, (_, n) in enumerate(results)))

    def _operand(self, value, name: str | None, index: int) -> ArgSig:
        rec = self._rec(value)
        variadic = rec is not None and (rec.isa("Variadic") or rec.isa("VariadicOfVariadic"))
        optional = rec is not None and rec.isa("Optional")
        return ArgSig(name or f"arg{index}", False, variadic, optional)

    def _attr(self, value, name: str | None, index: int) -> ArgSig:
        rec = self._rec(value)
        optional = rec is not None and (rec.get("isOptional") == 1
                                        or isinstance(rec.get("defaultValue"), str))
        return ArgSig(name or f"arg{index}", True, False, optional)
