"""The statements that are not records: ``defvar``, ``deftype``, ``assert``, ``dump``, ``let``
blocks, ``foreach``, ``if`` and ``defset``, as a mixin of :class:`~.evaluator.Evaluator`.

>>> from tdflow.tdparser import parse_string
>>> sorted(parse_string("foreach i = [1, 2] in { if !eq(i, 2) then def d#i; }").defs)
['d2']
"""

from __future__ import annotations

from . import ast as A
from . import types as T
from .limits import MAX_ITEMS, check_count
from .ops import as_int
from .prototypes import PrototypeParse
from .scope import Scope, err
from .values import (
    DefInit,
    IntInit,
    ListInit,
    StringInit,
    TypedInit,
)


class ControlStatements:
    """Loops, conditionals, ``let`` blocks, variables and checks (see the module)."""

    def st_Defvar(self, s, scope):
        v = self.value(s.value, scope, None)
        if self.taint and A.mentions(s.value, self.taint):
            self.taint.add(s.name)
            for t in (*self.outer_taints, self.mc_taint):
                if t is not None and A.mentions(s.value, t):
                    t.add(s.name)
        if scope is None:
            if s.name in self.globals or s.name in self.defs:
                raise err("def or global variable of this name already exists", s.loc)
            self.globals[s.name] = v
        else:
            if s.name in scope.vars:
                raise err("local variable of this name already exists", s.loc)
            scope.vars[s.name] = v

    def st_Deftype(self, s, scope):
        if s.name in self.types or s.name in self.classes:
            raise err(f"type of this name '{s.name}' already exists", s.loc)
        self.types[s.name] = self.type_of(s.type)

    def st_Assert(self, s, scope):
        self.check_assert(s.loc, self.forced(self.value(s.cond, scope, None)),
                          self.forced(self.value(s.message, scope, None)))

    def st_Dump(self, s, scope):
        v = self.forced(self.value(s.value, scope, None))
        self.dump_output.append(v.unquoted() if isinstance(v, StringInit) else str(v))

    def st_Let(self, s, scope):
        items = []
        for it in s.items:
            bits = None
            if it.bits is not None:
                bits = list(reversed(self.eb.ranges(it.bits, scope, None)))
            v = self.value(it.value, scope, None)
            items.append((it.name, bits, v, it.loc))
        self.let_stack.append(items)
        try:
            self.run(s.body, Scope(scope))
        finally:
            self.let_stack.pop()

    def st_Foreach(self, s, scope):
        if not self.loop_vars and not self.in_multiclass and not self.top_loops:
            # llvm-tblgen parses the whole body before the first iteration: it names each
            # anonymous def/defm of it and makes the class instances it knows by then.
            PrototypeParse(self).toplevel(s, scope)
        it = s.iter
        if it.hi is None and isinstance(it.lo, A.BitsLit):
            items = [IntInit(i) for i in self.eb.ranges(it.lo.items, scope, None)]
        elif it.hi is None:
            v = self.final_value(it.lo, scope) if isinstance(it.lo, A.Bang) and \
                it.lo.op == "if" else self.forced(self.value(it.lo, scope, None))
            iv = v.convert(T.INT) if isinstance(v, TypedInit) and v.ty.kind != "list" else None
            if isinstance(iv, IntInit):
                v = ListInit([iv], T.INT)  # a single value is a one-element range
            if not isinstance(v, ListInit):
                if isinstance(v, TypedInit) and v.ty.kind == "list":
                    raise err("foreach only works on a list", it.loc)
                raise err("expected a list or a range" if False else
                          "Expected a list, got " + str(v), it.loc)
            items = v.items
        else:
            items = [IntInit(i) for i in self.eb.ranges((it,), scope, None,
                                                        what="foreach iterations")]
        # llvm-tblgen expands a loop while parsing the multiclass when its list is already a
        # list literal; only other argument-dependent lists wait for the defm.
        deferred = (self.mc_taint is not None and not isinstance(it.lo, A.ListLit)
                    and A.mentions(s.iter, self.mc_taint))
        saved = (set(self.taint), set(self.mc_taint) if self.mc_taint is not None else None,
                 self.outer_taints, list(self.outer_depths))
        self.taint.add(s.var)
        if deferred:
            self.mc_taint.add(s.var)
        self.loop_depth += deferred
        self.outer_taints = [set(t) for t in self.outer_taints]
        for i, t in enumerate(self.outer_taints):
            if not isinstance(it.lo, A.ListLit) and A.mentions(s.iter, t):
                t.add(s.var)
                self.outer_depths[i] += 1
        total = self.loop_iterations * max(len(items), 1)
        e = check_count(total, MAX_ITEMS, "foreach iterations (nested loops multiply)", it.loc)
        if e is not None:
            raise e
        saved_total, self.loop_iterations = self.loop_iterations, total
        top = not self.in_multiclass
        self.top_loops += top
        try:
            for x in items:
                inner = Scope(scope)
                inner.vars[s.var] = x
                self.loop_vars.append((s.var, x))
                try:
                    self.run(s.body, inner)
                finally:
                    self.loop_vars.pop()
        finally:
            self.loop_iterations = saved_total
            self.top_loops -= top
            self.loop_depth -= deferred
            self.taint, self.mc_taint, self.outer_taints, self.outer_depths = saved

    def final_value(self, node, scope):
        """The value of an `if` condition (or a foreach's `!if` list), which llvm-tblgen
        resolves finally: ``!exists`` of a record not defined (yet) is false there."""
        saved = self.exists_final
        self.exists_final = True
        try:
            return self.forced(self.value(node, scope, None))
        finally:
            self.exists_final = saved

    def st_If(self, s, scope):
        if not self.loop_vars and not self.in_multiclass and not self.top_loops:
            PrototypeParse(self).toplevel(s, scope)  # both arms are parsed, as for foreach
        c = self.final_value(s.cond, scope)
        i = as_int(c)
        if i is None:
            raise err(f"if condition must be of type bit, bits or int, got '{c}'"
                      if not (isinstance(c, TypedInit) and c.ty.convertible_to(T.INT)) else
                      f"if condition could not be resolved: '{c}'", s.loc)
        body = s.then if i else s.orelse
        if body:
            deferred = self.mc_taint is not None and A.mentions(s.cond, self.mc_taint)
            self.loop_depth += deferred
            saved = list(self.outer_depths)
            for i, t in enumerate(self.outer_taints):
                self.outer_depths[i] += A.mentions(s.cond, t)
            top = not self.in_multiclass  # llvm-tblgen runs an `if` as a loop
            self.top_loops += top
            try:
                self.run(body, Scope(scope))
            finally:
                self.top_loops -= top
                self.loop_depth -= deferred
                self.outer_depths = saved

    def st_Defset(self, s, scope):
        ty = self.type_of(s.type)
        if ty.kind != "list" or ty.elem.kind != "record":
            raise err("expected list of records after defset", s.loc)
        if s.name in self.globals or s.name in self.defs:
            raise err("def or global variable of this name already exists", s.loc)
        coll = []
        self.defsets.append(coll)
        try:
            self.run(s.body, scope)
        finally:
            self.defsets.pop()
        self.globals[s.name] = ListInit([DefInit(r) for r in coll], ty.elem)
