"""Typing and construction of bang operators (``!op(...)``) from syntax, as llvm-tblgen's
``ParseOperation`` does; the folding itself lives in :mod:`.ops`.
"""

from __future__ import annotations

from . import ast as A
from . import types as T
from .errors import TdError
from .limits import MAX_ITEMS, MAX_STRING, check_count
from .ops import BinOp, UnOp, as_int
from .scope import Scope, err
from .ternary import ExistsOp, FoldOp, IsAOp, TernOp
from .values import UNSET, DagInit, ListInit, StringInit, TypedInit, VarInit

_UNARY = {"cast", "not", "head", "tail", "size", "empty", "getdagop", "getop", "logtwo",
          "tolower", "toupper", "repr"}
_ARITH = {"add", "sub", "mul", "div", "and", "or", "xor", "shl", "sra", "srl"}
_CMP = {"eq", "ne", "lt", "le", "gt", "ge"}
_ASSOC = {"strconcat", "listconcat", "con", "add", "and", "or", "xor", "mul"}


def _ty(v):
    return v.ty if isinstance(v, TypedInit) else None


def build_bang(b, node, scope, cur, hint):  # noqa: C901
    op = node.op
    loc = node.loc
    k = b.k
    given = k.type_of(node.type) if node.type is not None else None
    args = node.args

    def need(n, m=None):
        if not (n <= len(args) <= (m if m is not None else n)):
            if n == 2 and m is None:
                raise err("expected two operands to operator", loc)
            if n == 3 and m is None:
                raise err("expected three operands to operator"
                          if len(args) < 3 else "expected ')' in ternary operator", loc)
            if n == 1 and m is None:
                raise err("expected ')' in unary operator" if args else
                          "expected an operand to operator", loc)
            raise err(f"!{op} expects {n} to {m} arguments", loc)

    def val(x, h=None):
        return b.value(x, scope, cur, h)

    if op in ("foreach", "filter"):
        need(3)
        if not isinstance(args[0], A.Ident):
            raise err("first argument of !foreach must be an identifier"
                      if op == "foreach" else "first argument of !filter must be an identifier",
                      loc)
        name = args[0].name
        lst = val(args[1])
        lt = _ty(lst)
        if lt is None or lt.kind not in ("list", "dag") or (op == "filter" and lt.kind != "list"):
            raise err(f"!{op} must have a list or dag argument"
                      if op == "foreach" else "!filter must have a list argument", loc)
        ety = lt.elem if lt.kind == "list" else T.DAG
        var = VarInit(name, ety)
        inner = Scope(scope)
        inner.vars[name] = var
        expr = b.value(args[2], inner, cur)
        if op == "filter":
            ty = lt
        elif lt.kind == "dag":
            ty = T.DAG
        else:
            et = _ty(expr)
            if et is None:
                raise err("!foreach expression must be typed", loc)
            ty = et.list()
        return TernOp(op, StringInit(name), lst, expr, ty).fold(cur)

    if op == "foldl":
        need(5)
        if not isinstance(args[2], A.Ident) or not isinstance(args[3], A.Ident):
            raise err("third and fourth arguments of !foldl must be identifiers", loc)
        start = val(args[0], hint)
        lst = val(args[1])
        lt = _ty(lst)
        if lt is None or lt.kind != "list":
            raise err(f"!foldl list must be a list, but is of type '{lt}'", loc)
        st = _ty(start) or hint
        if st is None:
            raise err("could not get type of !foldl start", loc)
        acc = VarInit(args[2].name, st)
        var = VarInit(args[3].name, lt.elem)
        inner = Scope(scope)
        inner.vars[acc.name] = acc
        inner.vars[var.name] = var
        expr = b.value(args[4], inner, cur, st)
        et = _ty(expr)
        if et is not None and not et.convertible_to(st):
            raise err(f"!foldl expression must be of same type as start ({st}), "
                      f"but is of type {et}", loc)
        return FoldOp(start, lst, StringInit(acc.name), StringInit(var.name), expr, st).fold(cur)

    if op in ("isa", "exists"):
        need(1)
        if given is None:
            raise err(f"expected type name for !{op}", loc)
        v = val(args[0])
        if op == "exists":
            if _ty(v) is not T.STRING:
                raise err("expected string type argument in !exists operator", loc)
            return ExistsOp(given, v).fold(cur, b.k.exists_final, keeper=b.k)
        return IsAOp(given, v).fold(cur)

    if op in _UNARY:
        need(1)
        if op == "getop":
            op = "getdagop"
        v = val(args[0], hint if op in ("cast",) else None)
        vt = _ty(v)
        if op == "cast":
            if given is None:
                raise err("expected type name for !cast", loc)
            return UnOp("cast", v, given).fold(cur, keeper=b.k)
        aloc = node.end or loc
        if op in ("head", "tail"):
            if vt is None or vt.kind != "list":
                raise err("expected list type argument in unary operator", aloc)
            if isinstance(v, ListInit) and not v.items and not (
                    k.taint and A.mentions(args[0], k.taint)):
                raise err("empty list argument in unary operator", loc)
            return UnOp(op, v, vt.elem if op == "head" else vt).fold(cur)
        if op in ("size", "empty"):
            if vt is None or vt.kind not in ("list", "dag", "string"):
                raise err("expected string, list, or dag type argument in unary operator",
                          loc)
            return UnOp(op, v, T.INT).fold(cur)  # both int in llvm-tblgen
        if op == "getdagop":
            if vt is not T.DAG:
                raise err("expected dag type argument in unary operator", aloc)
            return UnOp(op, v, given or T.record_ty([])).fold(cur)
        if op == "not":
            if vt is None or not vt.convertible_to(T.INT):
                raise err("expected bit, bits, or int type argument in unary operator", loc)
            return UnOp(op, v, T.INT).fold(cur)  # llvm-tblgen types !not as int
        if op == "logtwo":
            return UnOp(op, v, T.INT).fold(cur)
        if op in ("tolower", "toupper"):
            if vt is not T.STRING:
                raise err("expected string type argument in unary operator", aloc)
            return UnOp(op, v, T.STRING).fold(cur)
        return UnOp(op, v, T.STRING).fold(cur)

    if op == "if":
        need(3)
        c = val(args[0])
        ci = as_int(c)
        if ci is not None and k.taint and A.mentions(args[0], k.taint):
            # llvm-tblgen only learns this condition when resolving, and then never builds
            # the records (`C<...>`) of the arm it does not take.
            k.suppress += 1
            try:
                x = val(args[1], hint) if not ci else None
                y = val(args[2], hint) if ci else None
            except TdError:
                x = y = None  # llvm-tblgen never evaluates the arm it does not take
            finally:
                k.suppress -= 1
            x = val(args[1], hint) if ci else x
            y = val(args[2], hint) if not ci else y
        else:
            x = val(args[1], hint)
            y = val(args[2], hint)
        xt, yt = _ty(x), _ty(y)
        if xt is None and yt is None:
            ty = hint
            if ty is None:
                raise err("could not determine type for !if", loc)
        elif xt is None:
            ty = yt
        elif yt is None:
            ty = xt
        else:
            ty = T.resolve_types(xt, yt)
            if ty is None:
                raise err(f"inconsistent types '{xt}' and '{yt}' for !if", loc)
        return TernOp("if", c, x, y, ty).fold(cur)

    if op == "dag":
        need(3)
        o = val(args[0])
        vals = val(args[1])
        names = val(args[2], T.STRING.list())
        if not isinstance(vals, TypedInit) or vals.ty.kind != "list":
            raise err("expected list value for !dag arguments", loc)
        return TernOp("dag", o, vals, names, T.DAG).fold(cur)

    if op in ("subst", "substr", "find", "setdagarg", "setdagname"):
        if op in ("substr", "find"):
            need(2, 3)
        else:
            need(3)
        x, y = val(args[0]), val(args[1])
        if len(args) > 2:
            z = val(args[2])
        else:
            from .values import IntInit

            z = IntInit((1 << 63) - 1 if op == "substr" else 0)
        if op == "subst":
            ty = _ty(z) or hint
            return TernOp(op, x, y, z, ty).fold(cur)
        ty = {"substr": T.STRING, "find": T.INT}.get(op, T.DAG)
        return TernOp(op, x, y, z, ty).fold(cur)

    if op == "range":
        # llvm-tblgen keeps every !range as !range(start, end, step).
        need(1, 3)
        from .values import IntInit

        vs = [val(a) for a in args]
        if len(vs) == 1:
            vt = _ty(vs[0])
            end = (UnOp("size", vs[0], T.INT).fold(cur)
                   if vt is not None and vt.kind == "list" else vs[0])
            vs = [IntInit(0), end]
        if len(vs) == 2:
            vs.append(IntInit(1))
        return TernOp("range", vs[0], vs[1], vs[2], T.INT.list()).fold(cur)

    # binary operators
    if op in _ASSOC:
        if len(args) < 2:
            raise err(f"!{op} expects at least two arguments" if False else
                      "expected two operands to operator", loc)
    else:
        need(2)
    code = "concat" if op == "con" else op
    if op == "listconcat":
        first = val(args[0], hint)
        ft = _ty(first)
        if ft is None or ft.kind != "list":
            raise err(f"expected a list, got value of type '{ft}'", loc)
        # Only an empty `[]` takes its element type from the first list (llvm-tblgen
        # accepts `!listconcat([A], [B])` with unrelated record types A and B).
        vs = [first] + [val(a, ft if isinstance(a, A.ListLit) and not a.items else hint)
                        for a in args[1:]]
        ty = ft
        for v in vs[1:]:
            vt = _ty(v)
            if vt is None or vt.kind != "list":
                raise err(f"expected a list, got value of type '{vt}'", loc)
            nt = T.resolve_types(ty, vt)
            if nt is None:
                raise err(f"inconsistent types '{ty}' and '{vt}' for !listconcat", loc)
            ty = nt
    else:
        vs = [val(a, _arg_hint(op, i, hint)) for i, a in enumerate(args)]
        ty = _bin_type(op, vs, given, loc)
    if op == "strconcat":
        for a, v in zip(args, vs):
            vt = _ty(v)
            if vt is not None and vt is not T.STRING:
                raise err(f"expected value of type 'string', got '{vt}'",
                          getattr(a, "loc", None) or loc)
    if op in _ARITH:
        for a, v in zip(args, vs):
            vt = _ty(v)
            if vt is not None and not vt.convertible_to(T.INT):
                raise err(f"expected value of type 'int', got '{vt}'",
                          getattr(a, "loc", None) or loc)
    if op in _ARITH or op in _CMP:
        for v in vs:
            vt = _ty(v)
            if op in ("eq", "ne") and vt is not None and vt.kind in ("string", "record"):
                continue
            if op in _CMP and vt is T.STRING:
                continue
            if vt is None or not vt.convertible_to(T.INT):
                raise err(f"expected bit, bits, int, string, or record; found {vt}"
                          if op in _CMP else f"expected bit, bits or int; found {vt}"
                          if False else f"expected int, bits, or bit; found {vt}", loc)
    if code in ("strconcat", "listconcat") and len(vs) > 2:
        vs = _join_known_tail(vs, cur)
        if len(vs) == 1:
            return vs[0]
    while len(vs) > 2:
        r = vs.pop()
        vs[-1] = BinOp(code, vs[-1], r, ty).fold(cur)
    return BinOp(code, vs[0], vs[1], ty).fold(cur)


def _join_known_tail(vs, cur):
    """``vs`` with its longest tail of known strings (or lists) joined into one value.

    llvm-tblgen folds ``!strconcat(a, b, ..., z)`` from the right, pair by pair, and a pair
    folds only when both sides are known; so the known tail folds to one value and nothing
    left of it folds. Joining that tail at once gives the same value in linear time (folding
    pair by pair copies the growing string ``n`` times)."""
    kind = StringInit if isinstance(vs[-1], StringInit) else ListInit
    i = len(vs)
    while i > 0 and isinstance(vs[i - 1], kind):
        i -= 1
    if len(vs) - i < 3:
        return vs
    tail = vs[i:]
    if kind is StringInit:
        size = sum(len(v.value) for v in tail)
        e = check_count(size, MAX_STRING, "characters in a string", None)
        joined = None if e else StringInit("".join(v.value for v in tail),
                                           any(v.code for v in tail))
    else:
        size = sum(len(v.items) for v in tail)
        e = check_count(size, MAX_ITEMS, "elements in a list", None)
        joined = None if e else ListInit([x for v in tail for x in v.items], tail[0].ty.elem)
    if e is not None:
        raise e.place(cur.locs[0] if cur is not None and cur.locs else None)
    return vs[:i] + [joined]


def _zero():
    from .values import IntInit

    return IntInit(0)


def _arg_hint(op, i, hint):
    if op == "interleave" and i == 1:
        return T.STRING
    if op in ("listremove",) and hint is not None:
        return hint
    return None


def _bin_type(op, vs, given, loc):
    if op in _ARITH:
        return T.INT
    if op in _CMP:
        return T.BIT
    if op in ("strconcat", "interleave", "getdagname"):
        return T.STRING
    if op in ("con", "setdagop"):
        return T.DAG
    if op == "listsplat":
        t = _ty(vs[0])
        if t is None:
            raise err("untyped argument to !listsplat", loc)
        return t.list()
    if op == "listremove":
        t = _ty(vs[0])
        if t is None or t.kind != "list":
            raise err(f"expected a list, got value of type '{t}'", loc)
        return t
    if op == "getdagarg":
        return given or T.record_ty([])
    raise err(f"Unknown operator '!{op}'", loc)


_ = (UNSET, DagInit, StringInit)
