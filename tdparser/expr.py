"""Turning value syntax into :mod:`.values` (llvm-tblgen's ``ParseValue``): name lookup,
typing of literals and bang operators, and folding what can be folded at once.
"""

from __future__ import annotations

from . import ast as A
from . import types as T
from .errors import TdError
from .limits import MAX_BITS, MAX_ITEMS, MAX_STRING, check_count, too_deep
from .ops import BinOp, LateVarDefInit, UnOp, VarDefInit, cast_value
from .scope import declared_uncast, err
from .ternary import CondOp
from .values import (
    FALSE,
    TRUE,
    UNSET,
    BitsInit,
    DagInit,
    DefInit,
    FieldInit,
    IntInit,
    ListInit,
    StringInit,
    TypedInit,
    VarInit,
)


class ExprBuilder:
    """Evaluates value syntax in a scope; ``keeper`` is the :class:`~.evaluator.Evaluator`."""

    def __init__(self, keeper):
        self.k = keeper
        self.name_refs = 0  # how often NAME was looked up (a defm/def name mentioning NAME)

    # ---- names ------------------------------------------------------------------------------
    def lookup(self, name, scope, cur):
        s = scope
        while s is not None:
            v = s.vars.get(name)
            if v is not None:
                return v
            rec = s.rec
            if rec is not None:
                rv = rec.values.get(name)
                if rv is not None and not rv.targ:
                    return VarInit(name, rv.ty)
                if rec.is_class:
                    q = rec.name + ":" + name
                    rv = rec.values.get(q)
                    if rv is not None and rv.targ:
                        return VarInit(q, rv.ty)
                    if name == "NAME":
                        return VarInit(q, T.STRING)
            s = s.parent
        return None

    def ident(self, node, scope, cur, name_mode):
        name = node.name
        v = self.lookup(name, scope, cur)
        if v is not None:
            if name == "NAME":
                self.name_refs += 1
            return v
        if name_mode is not None:
            return StringInit(name)
        k = self.k
        g = k.globals.get(name)
        if g is not None:
            return g
        d = k.defs.get(name)
        if d is not None:
            return DefInit(d)
        if cur is not None and not cur.is_class and not k.in_multiclass and cur.name == name:
            return UnOp("cast", StringInit(name), cur.type())
        raise err(f"Variable not defined: '{name}'", node.loc)

    # ---- values -----------------------------------------------------------------------------
    def value(self, node, scope, cur, hint=None, name_mode=None):  # noqa: C901
        """The value of syntax ``node`` (llvm-tblgen's ``ParseValue``), folded where possible.

        Errors raised without a location, and running out of recursion depth on deeply nested
        input, are reported at ``node`` (the innermost value that can still be named)."""
        try:
            t = type(node)
            if t is A.Ident:
                return self.ident(node, scope, cur, name_mode)
            if t is A.Str:
                return StringInit(node.value, node.is_code)
            if t is A.Int:
                return IntInit(node.value)
            if t is A.Unset:
                return UNSET
            if t is A.BinLit:
                return BitsInit([TRUE if c == "1" else FALSE for c in reversed(node.digits)])
            if t is A.Bool:
                return IntInit(1 if node.value else 0)  # llvm-tblgen reads true/false as ints
            if t is A.ListLit:
                return self.list_lit(node, scope, cur, hint)
            if t is A.DagLit:
                op = self.value(node.op, scope, cur) if node.op is not None else UNSET
                args = []
                for a, n in node.args:
                    args.append((self.value(a, scope, cur) if a is not None else UNSET, n))
                return DagInit(op, node.op_name, args)
            if t is A.AnonInst:
                return self.anon_inst(node, scope, cur)
            if t is A.FieldAccess:
                base = self.value(node.base, scope, cur, name_mode=name_mode)
                ft = base.field_type(node.name)
                if ft is None:
                    raise err(f"Cannot access field '{node.name}' of value '{base}'", node.loc)
                return FieldInit(base, node.name, ft).fold(cur)
            if t is A.Paste:
                return self.paste(node, scope, cur, name_mode, hint)
            if t is A.Bang:
                from .bang import build_bang

                return build_bang(self, node, scope, cur, hint)
            if t is A.Cond:
                return self.cond(node, scope, cur, hint)
            if t is A.BitsLit:
                return self.bits_lit(node, scope, cur)
            if t is A.BitSlice:
                base = self.value(node.base, scope, cur)
                bits = self.ranges(node.ranges, scope, cur)
                res = bit_range(base, list(reversed(bits)))
                if res is None:
                    raise err("Invalid bit range for value", node.loc)
                return res
            if t is A.ListSlice:
                return self.list_slice(node, scope, cur, name_mode)
            raise err(f"unexpected syntax {t.__name__}", getattr(node, "loc", None))
        except RecursionError:
            raise too_deep(getattr(node, "loc", None)) from None
        except TdError as e:
            e.place(getattr(node, "loc", None))
            raise

    def list_lit(self, node, scope, cur, hint):
        given_list = None
        if hint is not None:
            if hint.kind != "list":
                raise err(f"Type mismatch for list, expected list type, got {hint}", node.loc)
            given_list = hint
        eh = given_list.elem if given_list is not None else None
        vals = [self.value(x, scope, cur, eh) for x in node.items]
        et = None
        for v in vals:
            if isinstance(v, TypedInit):
                if et is None:
                    et = v.ty
                else:
                    et = T.resolve_types(et, v.ty)
                    if et is None:
                        raise err("Incompatible types in list elements", node.loc)
        if node.elem_type is not None:
            gt = self.k.type_of(node.elem_type)
            if et is not None and not et.convertible_to(gt):
                raise err("Incompatible types in list elements", node.loc)
            et = gt
        if et is None:
            if given_list is None:
                raise err("No type for list", node.loc)
            et = given_list.elem
        elif given_list is not None and not et.convertible_to(given_list.elem):
            raise err(f"Element type mismatch for list: element type '{et}' not convertible to "
                      f"'{given_list.elem}'", node.loc)
        return ListInit(vals, et)

    def bits_lit(self, node, scope, cur):
        vals = []
        for r in node.items:
            if r.hi is not None:
                raise err("expected ',' or '}'", r.loc)
            vals.append(self.value(r.lo, scope, cur))
        new = []
        for i, v in enumerate(vals):
            if isinstance(v, BitsInit):
                new.extend(reversed(v.bits))
                continue
            if isinstance(v, VarInit) and v.ty.kind == "bits":
                new.extend(v.bit(j) for j in reversed(range(v.ty.size)))
                continue
            b = cast_value(v, T.BIT)
            if b is None:
                raise err(f"Element #{i} ({v}) is not convertable to a bit", node.loc)
            new.append(b)
        e = check_count(len(new), MAX_BITS, "bits in a bits value", node.loc)
        if e is not None:  # `{b, b}` doubles: a few nested defvars would exhaust memory
            raise e
        new.reverse()
        return BitsInit(new)

    def ranges(self, ranges, scope, cur, unsigned=True, what="values in a range"):
        """The integers of a range list (``{0-3, 7}``, ``foreach i = 0...n``).

        llvm-tblgen keeps bit ranges and foreach ranges as 32-bit unsigned values (so
        ``9223372036854775807`` is 4294967295 there); ``unsigned=False`` keeps int64 values
        (list slices). A range longer than :data:`.limits.MAX_ITEMS` is an error, not a hang."""
        out = []
        for r in ranges:
            lo = self.k.forced(self.value(r.lo, scope, cur))
            li = lo.convert(T.INT) if isinstance(lo, TypedInit) else None
            if not isinstance(li, IntInit):
                raise err("expected integer or bitrange", r.loc)
            if r.hi is None:
                if unsigned and li.value < 0:
                    raise err("invalid range, cannot be negative", r.loc)
                out.append(li.value & 0xFFFFFFFF if unsigned else li.value)
                continue
            hi = self.k.forced(self.value(r.hi, scope, cur))
            hv = hi.convert(T.INT) if isinstance(hi, TypedInit) else None
            if not isinstance(hv, IntInit):
                raise err("expected integer value as end of range", r.loc)
            a, b = li.value, hv.value
            if a < 0 or b < 0:
                raise err("invalid range, cannot be negative", r.loc)
            e = check_count(abs(b - a) + 1 + len(out), MAX_ITEMS, what, r.loc)
            if e is not None:
                raise e
            rng = range(a, b + 1) if a <= b else range(a, b - 1, -1)
            out.extend((i & 0xFFFFFFFF for i in rng) if unsigned and max(a, b) >> 32 else rng)
        return out

    def list_slice(self, node, scope, cur, name_mode):
        base = self.value(node.base, scope, cur, name_mode=name_mode)
        if not isinstance(base, TypedInit) or base.ty.kind != "list":
            raise err(f"Type '{getattr(base, 'ty', '?')}' of value '{base}' is not a list"
                      if False else "Unable to index into a non-list value" if False else
                      f"Type '{base.ty if isinstance(base, TypedInit) else '?'}' is not a list",
                      node.loc)
        rs = node.ranges
        if len(rs) == 1 and rs[0].hi is None:
            idx = self.value(rs[0].lo, scope, cur)
            if not isinstance(idx, TypedInit) or not idx.ty.convertible_to(T.INT):
                raise err(f"expected int for list index, got {idx}", node.loc)
            return BinOp("listelem", base, idx, base.ty.elem).fold(cur)
        items = []
        for r in rs:
            if r.hi is None:
                items.append(self.value(r.lo, scope, cur).convert(T.INT) or UNSET)
            else:
                for i in self.ranges((r,), scope, cur, unsigned=False):
                    items.append(IntInit(i))
        return BinOp("listslice", base, ListInit(items, T.INT), base.ty).fold(cur)

    def paste(self, node, scope, cur, name_mode, hint=None):
        """``a # b # c``: string or list concatenation, right-nested as llvm-tblgen parses it.

        The chain of pastes is walked in a loop and runs of known strings (or lists) are
        joined once at the end, so ``n`` pastes cost ``O(n)``, not ``O(n**2)`` copying and
        ``n`` levels of recursion (llvm-tblgen accepts 20,000 in one value)."""
        levels = []
        while True:
            lhs = self.value(node.lhs, scope, cur, hint, name_mode=name_mode)
            if not isinstance(lhs, TypedInit):
                raise err("LHS of paste is not typed!", node.loc)
            is_list = lhs.ty.kind == "list"
            levels.append((node, lhs, is_list))
            # llvm-tblgen reads the right of a string paste in "name mode" (an unknown
            # identifier is its own spelling), but the right of a list paste as a value.
            if is_list:
                name_mode = None
            else:
                hint = None
                name_mode = name_mode if name_mode is not None else [False]
            rhs = node.rhs
            if type(rhs) is not A.Paste:
                break
            node = rhs
        acc = (self.value(rhs, scope, cur, hint, name_mode=name_mode)
               if rhs is not None else StringInit(""))
        return self._fold_pastes(levels, acc, cur)

    def _fold_pastes(self, levels, acc, cur):
        """Concatenate ``levels`` (innermost last) onto ``acc`` as llvm-tblgen folds them."""
        pieces = None  # a run of known strings or lists, right to left, not joined yet
        for node, lhs, is_list in reversed(levels):
            if is_list:
                if pieces is not None and not isinstance(acc, ListInit):
                    acc, pieces = _join(acc, pieces), None
                if not isinstance(acc, TypedInit) or acc.ty.kind != "list":
                    raise err("RHS of paste is not a list", node.loc)
                if isinstance(lhs, ListInit) and isinstance(acc, ListInit):
                    pieces = _grow(pieces, acc, lhs, len(lhs.items), cur)
                    acc = lhs  # the leftmost list gives the element type
                    continue
                acc, pieces = _join(acc, pieces), None
                acc = BinOp("listconcat", lhs, acc, lhs.ty).fold(cur)
                continue
            if pieces is not None and not isinstance(acc, StringInit):
                acc, pieces = _join(acc, pieces), None
            lhs = self.to_string(lhs, cur, node.loc)
            if not isinstance(acc, TypedInit):
                raise err("RHS of paste is not typed!", node.loc)
            acc = self.to_string(acc, cur, node.loc)
            if isinstance(lhs, StringInit) and isinstance(acc, StringInit):
                pieces = _grow(pieces, acc, lhs, len(lhs.value), cur)
                acc = lhs
                continue
            acc, pieces = _join(acc, pieces), None
            acc = BinOp("strconcat", lhs, acc, T.STRING).fold(cur)
        return _join(acc, pieces)

    def to_string(self, v, cur, loc):
        if v.ty is T.STRING:
            return v
        c = UnOp("cast", v, T.STRING).fold(cur)
        if not isinstance(c, TypedInit):
            raise err(f"can't cast '{v}' to string", loc)
        return c

    def cond(self, node, scope, cur, hint):
        conds, vals = [], []
        ty = None
        for c, v in node.clauses:
            conds.append(self.value(c, scope, cur))
            val = self.value(v, scope, cur, hint)
            vals.append(val)
            if isinstance(val, TypedInit):
                vt = val.ty
                ty = vt if ty is None else T.resolve_types(ty, vt)
                if ty is None:
                    raise err("Incompatible types in !cond values", node.loc)
        if ty is None:
            ty = hint
        if ty is None:
            raise err("could not determine type for !cond from its arguments", node.loc)
        return CondOp(conds, vals, ty).fold(cur)

    def class_args(self, cls, args, scope, cur, loc):
        """Evaluate and type-check ``args`` for template class ``cls``: (name, named, value)."""
        targs = cls.targs
        out = []
        seen_named = False
        for i, a in enumerate(args):
            if a.name is None:
                if seen_named:
                    raise err("Positional argument should be put before named argument", loc)
                if i >= len(targs):
                    raise err(f"Too many template arguments: {len(args)}",
                              getattr(a.value, "loc", None) or loc)
                qn = targs[i]
                named = False
            else:
                seen_named = True
                # `name=value`: llvm-tblgen takes the identifier itself as the name.
                n = (StringInit(a.name.name) if isinstance(a.name, A.Ident)
                     else self.value(a.name, scope, cur, name_mode=[False]))
                if not isinstance(n, StringInit):
                    raise err("The name of named argument should be a valid identifier", loc)
                qn = cls.name + ":" + n.value
                if qn not in cls.values or not cls.values[qn].targ:
                    raise err(f"Argument {n.value} doesn't exist", loc)
                named = True
            rv = cls.values[qn]
            v = self.value(a.value, scope, cur, rv.ty)
            if isinstance(v, TypedInit) and not declared_uncast(a.value, scope, rv.ty):
                c = cast_value(v, rv.ty)
                if c is None:
                    raise err(f"Value specified for template argument '{qn}' is of type {v.ty};"
                              f" expected type {rv.ty}: {v}", loc)
                v = c
            out.append((qn, named, v))
        given = {n for n, _, _ in out}
        for qn in targs:
            if qn not in given and not cls.values[qn].value.complete():
                e = err(f"value not specified for template argument '{qn}'", loc)
                e.notes = ((f"declared in '{cls.name}'", None),)
                raise e
        return out

    def anon_inst(self, node, scope, cur):
        cls = self.k.classes.get(node.cls)
        if cls is None:
            raise err(f"Expected a class name, got '{node.cls}'", node.loc)
        if cls.values is None:
            raise err(f"Class '{node.cls}' is not defined", node.loc)
        args = self.class_args(cls, node.args, scope, cur, node.loc)
        k = self.k
        if k.taint and A.mentions(node.args, k.taint):
            if k.suppress:
                return VarDefInit(cls, args)
            if not any(v.refs for _, _, v in args):
                k.lates += 1
                return LateVarDefInit(cls, args)
        return VarDefInit(cls, args).fold()


class _Pieces:
    """Known strings or lists met right to left while folding a paste chain: joined once."""

    __slots__ = ("parts", "size", "code")

    def __init__(self):
        self.parts = []
        self.size = 0
        self.code = False


def _grow(pieces, acc, lhs, n, cur):
    """Note ``acc`` (the value so far, when ``pieces`` is new) and then ``lhs`` in front."""
    if pieces is None:
        pieces = _Pieces()
        pieces.parts.append(acc)
        pieces.size = len(acc.items) if isinstance(acc, ListInit) else len(acc.value)
    pieces.parts.append(lhs)
    pieces.size += n
    if isinstance(lhs, ListInit):
        e = check_count(pieces.size, MAX_ITEMS, "elements in a list", None)
    else:
        e = check_count(pieces.size, MAX_STRING, "characters in a string", None)
    if e is not None:
        raise e.place(cur.locs[0] if cur is not None and cur.locs else None)
    return pieces


def _join(acc, pieces):
    """The value of ``pieces`` (``acc``, the leftmost of them, when there are none)."""
    if pieces is None:
        return acc
    parts = pieces.parts[::-1]
    if isinstance(acc, ListInit):
        items = []
        for p in parts:
            items.extend(p.items)
        return ListInit(items, acc.ty.elem)
    return StringInit("".join(p.value for p in parts), any(p.code for p in parts))


def bit_range(v, bits):
    """llvm's ``convertInitializerBitRange``: bits ``bits`` of ``v`` (LSB first) or None."""
    if isinstance(v, BitsInit):
        n = len(v.bits)
        if any(b >= n for b in bits):
            return None
        return BitsInit([v.bits[b] for b in bits])
    if isinstance(v, IntInit):
        if any(b >= 64 for b in bits):
            return None
        return BitsInit([v.bit(b) for b in bits])
    if isinstance(v, TypedInit) and v.ty.kind == "bits":
        n = v.ty.size
        if any(b >= n for b in bits):
            return None
        from .values import VarBitInit

        return BitsInit([VarBitInit(v, b) for b in bits])
    return None
