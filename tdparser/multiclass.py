"""Multiclasses and ``defm`` (llvm-tblgen's ``ParseMultiClass``/``ParseDefm``), as a mixin of
:class:`~.evaluator.Evaluator`.

A multiclass body is kept as syntax with the ``let``s around its definition; each ``defm``
evaluates it again with the arguments and ``NAME`` bound, which yields the records llvm-tblgen
derives from its prototypes. Records come back as ``(record, made_in_argument_loop)``.
"""

from __future__ import annotations

from . import ast as A
from .ops import cast_value
from .prototypes import PrototypeParse
from .scope import Scope, declared_uncast, err
from .values import UNSET, Resolver, StringInit, TypedInit


class MulticlassInfo:
    __slots__ = ("node", "lets", "targs", "scope", "protos")

    def __init__(self, node, lets, targs, scope=None):
        self.node = node
        self.lets = lets
        self.targs = targs  # [(name, RecTy, default node or None)]
        self.scope = scope  # the local variables visible where it was defined
        # The prototypes llvm-tblgen would keep that can still make records (see prototypes).
        self.protos: list = []


def _visible_vars(scope) -> Scope | None:
    """A copy of the local variables ``scope`` sees (inner ones win), or None at top level.

    A multiclass body sees the ``defvar``s of the blocks around its definition (llvm-tblgen
    parses the body there); a copy, because later ``defvar``s of the block are not visible.
    """
    chain = []
    while scope is not None:
        chain.append(scope.vars)
        scope = scope.parent
    if not chain:
        return None
    out = Scope(None)
    for vars_ in reversed(chain):
        out.vars.update(vars_)
    return out


class _Sink(list):
    """The records list of a multiclass body being run for a defm that takes each record as
    it is made: ``append`` hands it to ``fn`` with the evaluator's state back to the defm's
    (``state``: what ``instantiate_mc`` saved; ``loop_vars``: the defm's loops)."""

    def __init__(self, ev, fn, state, loop_vars):
        super().__init__()
        self.ev, self.fn, self.state, self.loop_vars = ev, fn, state, loop_vars

    def append(self, item):
        ev = self.ev
        cur, cur_vars = ev.body_state(), ev.loop_vars
        ev.set_body_state(self.state)
        ev.loop_vars = self.loop_vars
        try:
            self.fn(*item)
        finally:
            ev.set_body_state(cur)
            ev.loop_vars = cur_vars

    def extend(self, items):
        for x in items:
            self.append(x)


class MulticlassStatements:
    def st_Multiclass(self, s, scope):
        if s.name in self.multiclasses:
            raise err(f"multiclass '{s.name}' already defined", s.loc)
        if s.body is not None and len(s.body) == 0:
            raise err("multiclass must contain at least one def", s.loc)
        for st in s.body or ():
            if isinstance(st, (A.ClassDef, A.Multiclass, A.Defset, A.Deftype)):
                raise err("Unexpected token in multiclass body"
                          if not isinstance(st, A.Multiclass) else
                          "expected 'assert', 'def', 'defm', 'defvar', 'dump', 'foreach', 'if',"
                          " or 'let' in multiclass body", st.loc)
        targs = []
        for ta in s.targs:
            targs.append((ta.name, self.type_of(ta.type), ta.default, ta.loc))
        for ref in s.parents:
            if ref.name not in self.multiclasses:
                raise err(f"Couldn't find multiclass '{ref.name}'", ref.loc)
        info = MulticlassInfo(s, tuple(self.let_stack), targs, _visible_vars(scope))
        # llvm-tblgen parses the body here: it names each anonymous def (or defm) once (every
        # instantiation starts from that name; a clash renames it when added) and makes the
        # class instances whose arguments it knows by then, in its order (see prototypes).
        self.multiclasses[s.name] = info
        info.protos = PrototypeParse(self).multiclass(s, info)

    def mc_args(self, mc, args, scope, loc, parent_ref=False, defm_name=None):
        """Bind a multiclass's template arguments; returns the scope for its body.

        For a parent reference (``multiclass B : A<...>``) llvm-tblgen substitutes the values
        as they are, without checking them against the argument types (ARM passes a def,
        ``null_frag``, for a ``dag`` argument); ``parent_ref`` does the same. ``defm_name``
        is NAME for the defaults (AMDGPU: ``string name = !tolower(NAME)``)."""
        inner = Scope(mc.scope)
        if defm_name is not None:
            inner.vars["NAME"] = (defm_name if isinstance(defm_name, TypedInit)
                                  else StringInit(defm_name))
        targs = mc.targs
        given = {}
        pos = 0
        for a in args:
            if a.name is None:
                if pos >= len(targs):
                    raise err(f"Too many template arguments: {len(args)}",
                              getattr(a.value, "loc", None) or loc)
                given[targs[pos][0]] = a.value
                pos += 1
            else:
                n = (StringInit(a.name.name) if isinstance(a.name, A.Ident)
                     else self.eb.value(a.name, scope, None, name_mode=[False]))
                nm = n.value if isinstance(n, StringInit) else str(n)
                if nm not in [t[0] for t in targs]:
                    raise err(f"Argument {nm} doesn't exist", loc)
                given[nm] = a.value
        vals = {}
        for name, ty, default, _tloc in targs:
            if name in given:
                v = self.value(given[name], scope, None, ty)
            elif default is not None:
                v = self.value(default, inner, None, ty)
            else:
                raise err(f"value not specified for template argument '{mc.node.name}::{name}'",
                          loc)
            if name in given and (parent_ref or declared_uncast(given[name], scope, ty)):
                # As given, uncast: VOP2eInst's -1 for a bits<5> argument stays -1; and a
                # reference to such an argument passes it on as it is (llvm-tblgen checked
                # the reference's declared type, not the value substituted later).
                if inner.uncast is None:
                    inner.uncast = {}
                inner.uncast[name] = ty
            elif isinstance(v, TypedInit):
                c = cast_value(v, ty)
                if c is None:
                    raise err(f"Value specified for template argument '{mc.node.name}::{name}' "
                              f"is of type {v.ty}; expected type {ty}: {v}", loc)
                v = c
            elif v is UNSET and default is None and name not in given:
                pass
            vals[name] = v
            inner.vars[name] = v
        return inner

    def sub_taints(self, mc, args):
        """For a defm of ``mc`` (or a parent reference) with ``args`` inside a multiclass body:
        per enclosing multiclass level, the names of ``mc``'s body that level's definition
        cannot know (its NAME, and the arguments given or defaulted from what it cannot)."""
        if self.mc_taint is None:
            return []
        names = [t[0] for t in mc.targs]
        out = []
        # The same syntax asked about with a new name set at each instantiation of the
        # multiclass around the defm (X86: 600k walks of the arguments): its names are kept
        idents = self.ident_memo
        for taint in (*self.outer_taints, self.mc_taint):
            rel = {"NAME"}
            pos = 0
            given = set()
            for a in args:
                if a.name is None:
                    nm = names[pos] if pos < len(names) else None
                    pos += 1
                else:
                    nm = a.name.name if isinstance(a.name, A.Ident) else None
                given.add(nm)
                if nm is not None and not A.ident_names(a.value, idents).isdisjoint(taint):
                    rel.add(nm)
            for nm, _ty, default, _loc in mc.targs:
                if nm not in given and default is not None and \
                        not A.ident_names(default, idents).isdisjoint(rel):
                    rel.add(nm)
            out.append(rel)
        return out

    def instantiate_mc(self, mc, inner, name, upto=None, rel_taints=(), sink=None):
        """The records of ``defm name : mc<...>`` (``inner`` binds the arguments); with
        ``upto``, only the first ``upto`` statements of the body run (see :meth:`_own_prefix`).
        ``rel_taints`` (from :meth:`sub_taints`) relate its body to the multiclasses around
        the defm. Each record comes with its loop flags (see ``finish_def``), one per level
        of ``rel_taints`` and a last one for ``mc`` itself. With ``sink``, each record is
        handed to ``sink(rec, flags)`` as soon as it is made, in the state around the defm
        (see :class:`_Sink`), and nothing is returned.
        """
        saved = self.body_state()
        self.let_stack = list(mc.lets)
        self.mc_out = [] if sink is None else _Sink(self, sink, saved, list(self.loop_vars))
        self.loop_depth = 0
        self.outer_taints = [set(t) for t in rel_taints]
        self.outer_depths = [0] * len(rel_taints)
        self.mc_taint = {t[0] for t in mc.targs} | {"NAME"}
        self.taint = set(self.mc_taint)
        self.in_multiclass = True
        self.mc_name = name
        inner.vars["NAME"] = StringInit(name)
        try:
            for ref in mc.node.parents:
                sub = self.multiclasses[ref.name]
                sscope = self.mc_args(sub, ref.args, inner, ref.loc, parent_ref=True,
                                      defm_name=name)
                out = self.mc_out
                # The parent's entries become this multiclass's: its loops over arguments
                # this one gives stay loops here.
                recs = self.instantiate_mc(sub, sscope, name, None,
                                           self.sub_taints(sub, ref.args))
                out.extend((r, flags[:-1]) for r, flags in recs)
            body = mc.node.body or ()
            frame = [mc, 0]
            self.mc_active.append(frame)
            try:
                for i, st in enumerate(body if upto is None else body[:upto]):
                    frame[1] = i
                    self.stmt(st, inner)
            finally:
                self.mc_active.pop()
            return self.mc_out if sink is None else []
        finally:
            self.set_body_state(saved)

    def body_state(self) -> tuple:
        """What running a multiclass body changes in the evaluator (see ``instantiate_mc``),
        to put back with :meth:`set_body_state`."""
        return (self.let_stack, self.mc_out, self.in_multiclass, getattr(self, "mc_name", ""),
                self.loop_depth, self.mc_taint, self.taint, self.outer_taints,
                self.outer_depths)

    def set_body_state(self, state: tuple) -> None:
        (self.let_stack, self.mc_out, self.in_multiclass, self.mc_name, self.loop_depth,
         self.mc_taint, self.taint, self.outer_taints, self.outer_depths) = state

    def _own_prefix(self, mc):
        """For a ``defm`` of ``mc`` inside ``mc``'s own body: how many of its statements
        precede it (None elsewhere). llvm-tblgen builds a multiclass while parsing its body,
        so such a defm instantiates only the records defined above it; re-running the whole
        body would recurse for ever."""
        for m, i in reversed(self.mc_active):
            if m is mc:
                return i
        return None

    def st_Defm(self, s, scope):
        if s.name is None:
            if self.in_multiclass:
                name = self.mc_name + self.anon_name_of(s)
            else:
                name = self.anon_name_of(s) if self.loop_vars or self.top_loops \
                    else self.new_anon()
        else:
            name, _ = self.object_name(s.name, scope, s.name_loc, is_defm=True)
        refs = list(s.refs)
        mcs = []
        while refs and refs[0].name in self.multiclasses:
            mcs.append(refs.pop(0))
        if not mcs:
            raise err(f"Couldn't find multiclass '{refs[0].name}'", refs[0].loc)
        for ref in refs:
            if ref.name not in self.classes:
                raise err(f"Couldn't find class '{ref.name}'", ref.loc)
        new = []
        class_args = []

        def finish(rec, in_loops):
            if len(class_args) < len(refs):  # read when the first record needs them
                class_args[:] = [self.eb.class_args(self.classes[r.name], r.args, scope, None,
                                                    r.loc) for r in refs]
            for ref, args in zip(refs, class_args):
                self.add_subclass(rec, ref, scope, args)
            for lets in self.let_stack:
                for lname, bits, v, loc in lets:
                    self.set_value(rec, lname, bits, v, loc)
            if one_by_one and self.lates:
                # The loop resolves the record before adding it: the late instances its
                # lets hold come before its anonymous name's renaming.
                rec.resolve(Resolver(rec), self.mentioning(rec, ()))
            self.finish_def(rec, in_loops)

        # In a top-level foreach or if, llvm-tblgen resolves and adds the defm's records one
        # by one, so each is finished (its final resolution makes its class instances)
        # before the next is made; elsewhere all are made, then finished.
        one_by_one = self.top_loops > 0 and not self.in_multiclass
        for ref in mcs:
            mc = self.multiclasses[ref.name]
            inner = self.mc_args(mc, ref.args, scope, ref.loc, defm_name=name)
            upto = self._own_prefix(mc)
            mc_name = name
            if upto is not None and s.name is not None:
                # llvm-tblgen substitutes the new arguments for the multiclass's own
                # arguments everywhere, the defm's name included.
                own = Scope(scope)
                own.vars.update((t[0], inner.vars[t[0]]) for t in mc.targs)
                mc_name, _ = self.object_name(s.name, own, s.name_loc, is_defm=True)
            rel = self.sub_taints(mc, ref.args)

            def made(rec, flags, ref=ref):
                if not flags[-1]:
                    rec.locs.append(ref.loc)
                if one_by_one:
                    finish(rec, flags[:-1])
                else:
                    new.append((rec, flags[:-1]))

            if one_by_one:
                self.instantiate_mc(mc, inner, mc_name, upto, rel, sink=made)
            else:
                for rec, flags in self.instantiate_mc(mc, inner, mc_name, upto, rel):
                    made(rec, flags)
        for rec, in_loops in new:
            finish(rec, in_loops)

