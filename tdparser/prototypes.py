"""What llvm-tblgen's parser does to the numbering of anonymous records while it reads a
multiclass body: it builds *prototype* records there, with the multiclass's arguments and
``NAME`` unresolved, and every class instance ``C<...>`` whose arguments become known on the way
is made then, as ``anonymous_N``.

tdflow makes a defm's records by evaluating the multiclass body again with the arguments bound
(:mod:`.multiclass`); this module only replays the parse, so that the class instances llvm-tblgen
makes at the definition are made (and numbered) there too, in its order:

* a ``def``: its name and parents' arguments are read (instances with known arguments are
  made), then each parent class is added and its fields resolved with those arguments
  (``MTBUF_Load_Pseudo<opName, BUFAddrKind.Offset, ...>`` makes ``getMTBUFAsmOps<0>`` from a
  field of the class, AMDGPU), then the lets and the body;
* a ``foreach`` is parsed with its iterator unresolved, then, once the outermost loop of the
  body ends, expanded over its list where that is known: each prototype of the loop is copied
  and resolved with the iterators' values (``GetVRegNoV0<vreg>`` in ``VPseudoUSSegLoad``,
  RISCV);
* an ``if`` parses both arms, and keeps the one its condition selects (both, undecided, when
  it depends on an argument);
* a ``defm`` (and a parent multiclass) resolves the prototypes of the multiclass it names with
  the arguments it gives, then adds its classes to them.

The prototypes are kept per multiclass (``MulticlassInfo.protos``) for the defms of later
multiclass bodies, but only those holding an unresolved ``C<...>`` (nothing else can make a
record when resolved). Errors are left to the defms that evaluate the body for real.

>>> from tdflow.tdparser import parse_string
>>> rk = parse_string('''
... class G<int n> { int v = n; }
... class P<int k> { int w = G<k>.v; }
... multiclass M<int x> { def _a : P<3>; }
... def top : P<4>;
... defm m : M<1>;
... ''')
>>> [(r.name, r.fields["v"]) for r in rk if r.anonymous]  # G<3>: made at the definition
[('anonymous_0', 3), ('anonymous_1', 4)]
"""

from __future__ import annotations

from . import ast as A
from . import types as T
from .errors import TdError
from .ops import VarDefInit, as_int
from .rec import Rec
from .resolvers import Resolver
from .scope import Scope
from .values import Init, IntInit, ListInit, VarInit


def has_pending(v, seen=None) -> bool:
    """Whether value ``v`` holds a class instance ``C<...>`` not made yet (unresolved args).

    >>> from .values import IntInit
    >>> has_pending(IntInit(1))
    False
    """
    if not v.refs:
        return False
    if type(v) is VarDefInit:
        return True
    if seen is None:
        seen = set()
    if id(v) in seen:
        return False
    seen.add(id(v))
    return any(has_pending(x, seen) for x in _parts(v))


def _parts(v):
    """The values directly inside composite value ``v``."""
    for cls in type(v).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            x = getattr(v, slot, None)
            if isinstance(x, Init):
                yield x
            elif isinstance(x, (tuple, list)):
                for y in x:
                    if isinstance(y, Init):
                        yield y
                    elif isinstance(y, tuple):
                        yield from (z for z in y if isinstance(z, Init))


def _names(v, out, seen):
    """Collect the variable names value ``v`` refers to into ``out``."""
    if not v.refs or id(v) in seen:
        return
    seen.add(id(v))
    if type(v) is VarInit:
        out.add(v.name)
        return
    for x in _parts(v):
        _names(x, out, seen)


def _copy(rec):
    new = Rec(rec.name, rec.keeper, rec.locs, anonymous=rec.anonymous)
    new.values = dict(rec.values)  # shared until written (Rec.own)
    new.supers = list(rec.supers)
    new.super_set = set(rec.super_set)
    new.assertions = list(rec.assertions)
    new.dumps = list(rec.dumps)
    return new


class PrototypeParse:
    """Replays llvm-tblgen's parse of one multiclass definition (see the module docstring).

    Entries: ``("def", rec, env)`` is the prototype ``rec`` with the substitution ``env``
    (name -> value) still to apply: it is applied (the record copied and resolved) only once
    the result could make a record, i.e. when ``rec`` or a value ``env`` gives one of its
    variables holds a ``C<...>``; ``("loop", var, list, entries)`` a foreach whose list is not
    known; ``("if", cond, then, else)`` an ``if`` not decided.
    """

    def __init__(self, ev):
        self.ev = ev
        self.loops = 0  # foreach/if bodies being parsed (entries go to the innermost one)
        self.free = ev.proto_free  # id(rec) -> (rec, its variable names, pending?)
        self.vals = ev.proto_vals  # id(value) -> (value, its variable names, pending?)

    # ---- the multiclass -------------------------------------------------------------------
    def multiclass(self, s, info):
        """Parse ``s`` (its arguments' defaults, parent multiclasses, body); returns the
        prototypes to keep as ``info.protos``."""
        ev = self.ev
        saved = (ev.in_multiclass, getattr(ev, "mc_name", ""), ev.late_name, ev.let_stack,
                 ev.taint, ev.mc_taint, ev.loop_vars, ev.proto)
        ev.in_multiclass, ev.mc_name, ev.late_name = True, "", None
        ev.let_stack, ev.taint, ev.mc_taint, ev.loop_vars = list(info.lets), set(), None, []
        ev.proto = True
        try:
            scope = Scope(info.scope)
            scope.vars["NAME"] = VarInit(f"{s.name}::NAME", T.STRING)
            for name, ty, default, _loc in info.targs:
                if default is not None:
                    self._try(lambda d=default, t=ty: ev.value(d, scope, None, t))
                scope.vars[name] = VarInit(f"{s.name}::{name}", ty)
            out: list = []
            for ref in s.parents:
                sub = ev.multiclasses[ref.name]
                got = self._try(lambda r=ref, m=sub: self._defm_entries(
                    m, r, scope, scope.vars["NAME"], parent_ref=True))
                out.extend(got or ())
            self.body(s.body or (), scope, out)
            return out
        finally:
            (ev.in_multiclass, ev.mc_name, ev.late_name, ev.let_stack, ev.taint,
             ev.mc_taint, ev.loop_vars, ev.proto) = saved

    def toplevel(self, st, scope):
        """Parse the top-level ``foreach`` or ``if`` ``st`` as llvm-tblgen does before it runs
        it: anonymous defs and defms named, the class instances known then made, both arms of
        an ``if`` read; nothing is expanded (the evaluator runs the iterations after)."""
        ev = self.ev
        saved = (ev.late_name, ev.taint, ev.proto, ev.let_stack)
        ev.late_name, ev.taint, ev.proto, ev.let_stack = None, set(), True, list(ev.let_stack)
        self.loops = 1  # as inside a loop: its entries stay there
        try:
            self._try(lambda: self.stmt(st, Scope(scope), []))
        finally:
            ev.late_name, ev.taint, ev.proto, ev.let_stack = saved

    @staticmethod
    def _try(fn):
        try:
            return fn()
        except (TdError, RecursionError):
            return None  # the defm that evaluates this for real reports it

    # ---- statements -----------------------------------------------------------------------
    def body(self, stmts, scope, out):
        for st in stmts:
            self._try(lambda st=st: self.stmt(st, scope, out))

    def stmt(self, st, scope, out):  # noqa: C901
        ev = self.ev
        t = type(st)
        if t is A.Def:
            if st.name is None:
                ev.anon_name_of(st)
            else:
                ev.eb.value(st.name, scope, None, T.STRING, name_mode=[False])
            rec = Rec("!prototype", ev, [st.loc], anonymous=st.name is None)
            saved, ev.late_name = ev.late_name, rec
            try:
                ev.record_body(rec, st.parents, st.body, Scope(scope, rec))
            finally:
                ev.late_name = saved
            out.append(("def", rec, {}))
        elif t is A.Defm:
            if st.name is None:
                ev.anon_name_of(st)
            else:
                ev.eb.value(st.name, scope, None, T.STRING, name_mode=[False])
            name = VarInit("!defm", T.STRING)  # a multiclass's defm names hold NAME
            refs = list(st.refs)
            new: list = []
            while refs and refs[0].name in ev.multiclasses:
                ref = refs.pop(0)
                new.extend(self._defm_entries(ev.multiclasses[ref.name], ref, scope, name))
            for ref in refs:
                cls = ev.classes.get(ref.name)
                if cls is None:
                    return
                args = ev.eb.class_args(cls, ref.args, scope, None, ref.loc)
                for i, e in enumerate(new):
                    if e[0] == "def":
                        rec = self._materialize(e)
                        saved, ev.late_name = ev.late_name, rec
                        try:
                            ev.add_subclass(rec, ref, scope, args)
                        finally:
                            ev.late_name = saved
                        new[i] = ("def", rec, {})
            lets = [it for items in ev.let_stack for it in items if has_pending(it[2])]
            if lets:  # llvm-tblgen's ApplyLetStack on the new prototypes
                new = self._apply_lets(new, lets)
            out.extend(new)
        elif t is A.Foreach:
            lst, elem = self._loop_list(st.iter, scope)
            inner = Scope(scope)
            inner.vars[st.var] = VarInit(st.var, elem or T.INT)
            entries: list = []
            self.loops += 1
            try:
                self.body(st.body, inner, entries)
            finally:
                self.loops -= 1
            loop = ("loop", st.var, lst, entries)
            if self.loops:
                out.append(loop)
            else:
                out.extend(self.expand(loop, {}))
        elif t is A.If:
            c = ev.value(st.cond, scope, None)
            arms = []
            for arm in (st.then, st.orelse):
                entries = []
                self.loops += 1
                try:
                    self.body(arm or (), Scope(scope), entries)
                finally:
                    self.loops -= 1
                arms.append(entries)
            ci = as_int(c)
            if ci is None:
                out.append(("if", c, arms[0], arms[1]))
            else:
                out.extend(arms[0] if ci else arms[1])
        elif t is A.Let:
            items = []
            for it in st.items:
                bits = None
                if it.bits is not None:
                    bits = list(reversed(ev.eb.ranges(it.bits, scope, None)))
                items.append((it.name, bits, ev.value(it.value, scope, None), it.loc))
            ev.let_stack.append(items)
            try:
                self.body(st.body, Scope(scope), out)
            finally:
                ev.let_stack.pop()
        elif t is A.Defvar:
            scope.vars[st.name] = ev.value(st.value, scope, None)
        elif t is A.Assert:
            ev.value(st.cond, scope, None)
            ev.value(st.message, scope, None)
        elif t is A.Dump:
            ev.value(st.value, scope, None)

    def _apply_lets(self, entries, lets):
        """``entries`` with the ``let`` values that hold class instances set in each
        prototype (into loops too)."""
        ev = self.ev
        out: list = []
        for e in entries:
            if e[0] == "def":
                rec = self._materialize(e)
                for name, bits, v, vloc in lets:
                    self._try(lambda n=name, b=bits, v=v, lc=vloc, r=rec:
                              ev.set_value(r, n, b, v, lc))
                out.append(("def", rec, {}))
            elif e[0] == "loop":
                out.append((*e[:3], self._apply_lets(e[3], lets)))
            else:
                out.append((*e[:2], self._apply_lets(e[2], lets),
                            self._apply_lets(e[3], lets)))
        return out

    def _loop_list(self, it, scope):
        """A foreach's list as parsed (None if unknown) and its element type."""
        ev = self.ev
        if it.hi is None and isinstance(it.lo, A.BitsLit):
            r = self._try(lambda: ev.eb.ranges(it.lo.items, scope, None))
        elif it.hi is None:
            v = ev.value(it.lo, scope, None)
            ty = getattr(v, "ty", None)
            if ty is not None and ty.kind == "list":
                return v, ty.elem
            return None, None
        else:
            r = self._try(lambda: ev.eb.ranges((it,), scope, None))
        if r is None:
            return None, T.INT
        return ListInit([IntInit(i) for i in r], T.INT), T.INT

    def _defm_entries(self, mc, ref, scope, name, parent_ref=False):
        """The prototypes of ``mc`` resolved with ``ref``'s arguments and ``name`` (llvm's
        ``resolveArgumentsOfMultiClass`` then ``resolve(MC->Entries, ...)``); a parent
        multiclass's arguments are substituted as given (see ``mc_args``)."""
        protos = mc.protos
        if not protos:
            return []
        inner = self.ev.mc_args(mc, ref.args, scope, ref.loc, parent_ref=parent_ref,
                                defm_name=name)
        substs = {f"{mc.node.name}::{t[0]}": inner.vars[t[0]] for t in mc.targs}
        substs[f"{mc.node.name}::NAME"] = name
        return self.resolve_entries(protos, substs)

    # ---- resolving prototypes -------------------------------------------------------------
    def resolve_entries(self, entries, substs):
        out: list = []
        pend = {n for n, v in substs.items() if has_pending(v)}
        for e in entries:
            kind = e[0]
            if kind == "def":
                out.append(self._resolve_def(e, substs, pend))
            elif kind == "loop":
                out.extend(self.expand(e, substs))
            else:  # "if"
                c = self._try(lambda c=e[1]: c.resolve(self._resolver(None, substs)))
                ci = as_int(c) if c is not None else None
                if ci is None:
                    out.append(("if", c if c is not None else e[1],
                                self.resolve_entries(e[2], substs),
                                self.resolve_entries(e[3], substs)))
                else:
                    out.extend(self.resolve_entries(e[2] if ci else e[3], substs))
        return out

    def expand(self, loop, substs):
        """llvm-tblgen's ``resolve(ForeachLoop, ...)``: per element of a known list, the
        loop's prototypes resolved with the iterators; an unknown list stays a loop."""
        _, var, lst, entries = loop
        if lst is not None and substs:
            lst = self._try(lambda: lst.resolve(self._resolver(None, substs)))
        if not isinstance(lst, ListInit):
            return [("loop", var, lst, self.resolve_entries(entries, substs))]
        out: list = []
        for x in lst.items:
            out.extend(self.resolve_entries(entries, {**substs, var: x}))
        return out

    def _info(self, rec):
        got = self.free.get(id(rec))
        if got is None or got[0] is not rec:
            # Per value, kept by identity: prototypes share most values with their classes
            # (X86: 6.3k prototypes of ~100 fields, a few thousand distinct values), and the
            # walks below go through every slot of every part (~0.7 s when made per record).
            vals = self.vals
            names: set = set()
            pending = False
            for rv in rec.values.values():
                v = rv.value
                if not v.refs:
                    continue  # no names, and nothing pending
                known = vals.get(id(v))
                if known is None or known[0] is not v:
                    vnames: set = set()
                    _names(v, vnames, set())
                    known = vals[id(v)] = (v, frozenset(vnames), has_pending(v))
                names |= known[1]
                pending = pending or known[2]
            got = self.free[id(rec)] = (rec, names, pending)
        return got

    def _resolve_def(self, e, substs, pend):
        """Entry ``e`` with ``substs`` applied after its own substitution: the record is
        copied and resolved only if that can make (or later make) a class instance."""
        if not substs:
            return e
        _, rec, env = e
        _, names, pending = self._info(rec)
        r = None
        new_env = {}
        for n, v in env.items():
            if v.refs:
                if r is None:
                    r = self._resolver(None, substs)
                v = self._try(lambda v=v, r=r: v.resolve(r)) or v
            new_env[n] = v
        for n in names:
            if n in substs and n not in new_env:
                new_env[n] = substs[n]
        if pending or (pend and any(n in pend for n in names)) or \
                any(has_pending(v) for n, v in new_env.items() if n not in substs):
            new = _copy(rec)
            self._try(lambda: new.resolve(self._resolver(new, new_env)))
            return ("def", new, {})
        return ("def", rec, new_env)

    def _materialize(self, e):
        """A copy of entry ``e``'s record with its substitution applied."""
        _, rec, env = e
        new = _copy(rec)
        if env:
            self._try(lambda: new.resolve(self._resolver(new, env)))
        return new

    @staticmethod
    def _resolver(cur, substs):
        r = Resolver(cur)
        for n, v in substs.items():
            r.set(n, v)
        return r
