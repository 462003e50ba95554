"""Functions in MLIR text: ``func.func @f(%x: T) -> T {...}`` (and ``oneflow.job``) in custom
form, ``"func.func"() <{function_type = ..., sym_name = "f"}> ({^bb0(...): ...})`` in generic form.
Their bodies are :class:`~tdflow.dialect.ir.body_parser.BodyParser`'s;
:class:`~tdflow.dialect.ir.parser.Parser` builds modules on this.

>>> p = FuncParser('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\\n'
...                '  return %x : tensor<2xf32>\\n}', "f.mlir")
>>> f = p.parse_custom_func(p.keyword("func.func")); (f.name, len(f.body))
('f', 1)
"""

from __future__ import annotations

from tdflow.dialect.ir.attrs import ArrayAttr, DictAttr, StringAttr, TypeAttr
from tdflow.dialect.ir.body_parser import BodyParser
from tdflow.dialect.ir.core import FUNC_KINDS, Block, FuncOp
from tdflow.dialect.ir.lexer import BLOCK_LABEL, SSA_ID, SYMBOL
from tdflow.dialect.types import FunctionType

__all__ = ["FuncParser"]


class FuncParser(BodyParser):
    """Custom and generic function definitions (see the module notes)."""

    __slots__ = ()

    def _begin_body(self, block: Block, kind: str) -> None:
        self.scope = {}
        self.forward = {}
        self.block = block
        # The terminator as this kind of function spells it ("oneflow.return" in a job).
        self.terminator = FUNC_KINDS[kind]

    def parse_custom_func(self, kind: str) -> FuncOp:
        start = self.pos - len(kind)
        loc = self.loc(start)
        visibility = self.keyword("private", "public", "nested")
        self.skip()
        m = self.match(SYMBOL)
        if m is not None:
            name = m.group(1)
        elif self.accept("@"):
            name = self.string("a function name after '@'")
        else:
            raise self.expected("a function name like '@main'")
        self.expect("(", "'(' starting the argument list")
        block = Block(arg_locs=[])
        arg_positions, arg_attrs = self.parse_arg_list(block, custom=True)
        results: tuple = ()
        res_attrs: list[dict] = []
        if self.accept("->"):
            if self.accept("("):
                results = self.parse_result_type_list(res_attrs)
            else:
                results = (self.parse_type(),)
        f = FuncOp(name, (), results, loc=loc, body=block)
        f.kind = kind
        f.visibility = visibility
        if any(arg_attrs):
            f.arg_attrs = arg_attrs
        if any(res_attrs):
            f.res_attrs = res_attrs
        if self.keyword("attributes"):
            self.expect("{")
            f.attributes = self.parse_attr_dict()
        self.skip()
        if not self.accept("{"):
            if visibility == "private" and not self.text.startswith("(", self.pos):
                raise self.error(f"function declarations (a '{kind}' without a body) are not "
                                 f"supported: tdflow runs every function it verifies", start)
            raise self.expected("'{' opening the function body")
        if self.peek("^"):  # an entry block label without arguments is tolerated
            lpos = self.pos
            self.match(BLOCK_LABEL)
            if self.peek("("):
                raise self.error("the entry block of 'func.func @name(...)' takes the function's "
                                 "arguments; remove the block argument list", lpos)
            self.expect(":", "':' after the block label")
        self._begin_body(block, kind)
        for n, a, apos in arg_positions:
            self.define(n, (a,), apos)
        self.parse_body(block)
        floc = self.skip_loc()
        if floc is not None:
            f.loc = floc
        return f

    def parse_arg_list(self, block: Block, custom: bool) -> tuple[list, list[dict]]:
        """The arguments after ``(`` up to ``)``: ``%x: T {attrs} loc(...)`` in a custom
        function's signature (``custom``), ``%x: T loc(...)`` in a generic entry block label.
        Each becomes an argument of ``block``; returns ``(name, arg, pos)`` per argument (to
        define once the body's scope opens) and, in custom form, each one's attributes.

        >>> p = FuncParser("%a: tensor<2xf32> {tdf.x = 1}, %b: i32)")
        >>> b = Block(arg_locs=[]); names, attrs = p.parse_arg_list(b, custom=True)
        >>> [n for n, _, _ in names], [sorted(d) for d in attrs], len(b.args)
        (['a', 'b'], [['tdf.x'], []], 2)
        """
        # Both forms share one loop: only the attribute dictionary and the messages differ.
        what = "the argument list" if custom else "the block arguments"
        positions: list = []
        attrs: list[dict] = []
        if self.accept(")"):
            return positions, attrs
        while True:
            self.skip()
            apos = self.pos
            am = self.match(SSA_ID)
            if am is None:
                if custom and self.pos < len(self.text) and self.text[self.pos] in "tfi(":
                    raise self.error("function declarations without a body (argument "
                                     "types without names) are not supported; write "
                                     "'%name: type'", apos)
                raise self.expected("an argument like '%x: tensor<4xf32>'" if custom
                                    else "a block argument like '%arg0: tensor<4xf32>'")
            self.expect(":", "':' and the argument's type")
            a = block.add_arg(self.parse_type(), am.group(1), self.loc(apos))
            positions.append((am.group(1), a, apos))
            if custom:
                attrs.append(self.parse_attr_dict() if self.accept("{") else {})
            aloc = self.skip_loc()
            if aloc is not None:
                block.arg_locs[-1] = aloc
            if self.accept(")"):
                return positions, attrs
            if not self.accept(","):
                raise self.expected(f"',' or ')' in {what}")

    def parse_result_type_list(self, res_attrs: list[dict]) -> tuple:
        """``(T {attrs}, T)`` after ``(``; each result's attributes go to ``res_attrs``."""
        types = []
        if not self.accept(")"):
            while True:
                types.append(self.parse_type())
                res_attrs.append(self.parse_attr_dict() if self.accept("{") else {})
                if self.accept(")"):
                    break
                if not self.accept(","):
                    raise self.expected("',' or ')' in the result type list")
        return tuple(types)

    def parse_region_op_tail(self) -> dict:
        """``{attrs} : () -> ()`` after the region of a generic ``"builtin.module"`` or
        ``"func.func"``; returns the attributes (older MLIR prints them there)."""
        attrs = self.parse_attr_dict() if self.accept("{") else {}
        for token in (":", "(", ")", "->", "(", ")"):
            self.expect(token)
        return attrs

    def parse_generic_func(self, kind: str) -> FuncOp:
        start = self.pos - len(kind) - 2
        self.expect("(")
        if not self.accept(")"):
            raise self.error(f"'{kind}' takes no operands", self.pos)
        props: dict = {}
        if self.accept("<{"):
            props = self.parse_attr_dict("}>")
        self.expect("(", "'(' before the function's region")
        self.expect("{", "'{' opening the function's region")
        # The entry block's arguments are the function's; they are checked against
        # `function_type` once the attributes after the region (older MLIR puts them there)
        # are known.
        block = Block(arg_locs=[])
        arg_positions: list = []
        self.skip()
        if self.text.startswith("^", self.pos):
            bm = self.match(BLOCK_LABEL)
            if self.accept("("):
                arg_positions, _ = self.parse_arg_list(block, custom=False)
            self.expect(":", f"':' after the block label '{bm.group() if bm else '^bb0'}'")
        self._begin_body(block, kind)
        for n, a, apos in arg_positions:
            self.define(n, (a,), apos)
        self.parse_body(block)
        self.expect(")", "')' closing the function's region")
        props.update(self.parse_region_op_tail())
        loc = self.skip_loc() or self.loc(start)
        name = props.pop("sym_name", None)
        ftype = props.pop("function_type", None)
        if not isinstance(name, StringAttr):
            raise self.error("'func.func' needs a 'sym_name' string attribute", start)
        if not (isinstance(ftype, TypeAttr) and isinstance(ftype.value, FunctionType)):
            raise self.error("'func.func' needs a 'function_type' attribute like "
                             "'(tensor<4xf32>) -> tensor<4xf32>'", start)
        ins = ftype.value.inputs
        if tuple(a.type for a in block.args) != tuple(ins):
            raise self.error(f"the entry block arguments ({', '.join(str(a.type) for a in block.args)}) "
                             f"do not match the function type {ftype.value}", start)
        f = FuncOp(name.value, (), ftype.value.results, loc=loc, body=block)
        f.kind = kind
        vis = props.pop("sym_visibility", None)
        if vis is not None:
            f.visibility = vis.value if isinstance(vis, StringAttr) else str(vis)
        aa = props.pop("arg_attrs", None)
        if isinstance(aa, ArrayAttr):
            f.arg_attrs = [d.as_dict() if isinstance(d, DictAttr) else {} for d in aa.value]
        ra = props.pop("res_attrs", None)
        if isinstance(ra, ArrayAttr):
            f.res_attrs = [d.as_dict() if isinstance(d, DictAttr) else {} for d in ra.value]
        f.attributes = props
        return f
