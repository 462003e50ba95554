"""Statement evaluation: classes, defs, multiclasses, loops and lets, as llvm-tblgen's
``TGParser`` performs them, producing resolved :class:`~.rec.Rec` records.

Multiclass bodies and loop bodies are re-evaluated per instantiation with their arguments
bound, which gives the records llvm-tblgen builds from its prototypes.
"""

from __future__ import annotations

import sys

from tdflow.core.errors import SourceLoc

from . import ast as A
from . import types as T
from .errors import TdError
from .expr import ExprBuilder
from .limits import MAX_ITEMS, MAX_RECORDS, check_count, too_deep
from .multiclass import MulticlassInfo, MulticlassStatements
from .ops import as_int, cast_value, fatal
from .prototypes import PrototypeParse
from .rec import Rec, RecordVal
from .scope import Scope, err
from .values import (
    UNSET,
    BitsInit,
    DefInit,
    IntInit,
    ListInit,
    Resolver,
    StringInit,
    TypedInit,
    VarBitInit,
    VarInit,
)

# A def's own name while llvm-tblgen would not know it yet (see Evaluator.st_Def); the `!`
# keeps it apart from every field and argument name.
LATE_NAME = VarInit("!NAME", T.STRING)


class Evaluator(MulticlassStatements):
    """Runs a program's statements; the results are ``classes`` and ``defs``."""

    def __init__(self):
        self.classes: dict[str, Rec] = {}
        self.defs: dict[str, Rec] = {}
        self.globals: dict = {}
        self.multiclasses: dict[str, MulticlassInfo] = {}
        self.mc_active: list = []  # [multiclass, statement index] of bodies being run
        # id(anonymous Def/Defm statement) -> its name, for the statements llvm-tblgen parses
        # once and instantiates many times (multiclass and foreach bodies); see anon_name_of.
        self.stmt_anon_names: dict[int, tuple] = {}
        self.loop_vars: list = []  # (iterator, value) of the foreach iterations being run
        # While an `if` condition or a `foreach ... = !if(...)` list is evaluated: llvm-tblgen
        # resolves those conditions finally (a missing record makes `!exists` false).
        self.exists_final = False
        self.types: dict[str, T.RecTy] = {}
        self.record_tys: dict[tuple, T.RecordTy] = {}  # see types.record_ty
        self.anon = 0
        self.anon_memo: dict = {}
        self.let_stack: list = []
        self.in_multiclass = False
        self.mc_out = None
        self.late_name = None  # the def whose parents see NAME as LATE_NAME (see st_Def)
        # llvm-tblgen appends a defm's location only to records that are direct entries of the
        # multiclass, not to those made inside a foreach/if of its body.
        self.loop_depth = 0  # enclosing loops of a multiclass body that depend on its arguments
        # Names llvm-tblgen cannot know while parsing: `mc_taint` (the multiclass's arguments
        # and what derives from them) and `taint` (that plus loop variables). They decide
        # which loops keep a defm's location and which `C<...>` an `!if` leaves unmade.
        self.mc_taint = None
        # The same for each multiclass further out whose body (through defms) is being run,
        # outermost first: which names here its definition could not know, and how many loops
        # on them enclose the statement. A record made in such a loop stays in a loop of that
        # multiclass when llvm-tblgen builds it, so that multiclass's defm adds no location.
        self.outer_taints: list[set] = []
        self.outer_depths: list[int] = []
        self.taint: set = set()
        self.suppress = 0
        self.top_loops = 0  # top-level foreach/if bodies being run (see st_Defm)
        # Iterations the enclosing foreach loops will run in all: nested loops multiply, so
        # each loop's own cap is not enough (1000 x 1000 x 1000 is a billion bodies).
        self.loop_iterations = 1
        self.lates = 0  # class instances made late so far (ops.LateVarDefInit)
        self._nobody = Rec("", self, [])
        self.proto_free: dict = {}  # see prototypes.PrototypeParse._info
        self.proto = False  # replaying llvm-tblgen's parse of a multiclass (see prototypes)
        self.defsets: list = []
        self.errors: list[TdError] = []
        self.dump_output: list[str] = []
        self.eb = ExprBuilder(self)

    def release(self):
        """Take this finished evaluation apart, so that it is freed as soon as it is dropped.

        Records, classes and their types refer to each other in cycles, which only the cycle
        collector could free, walking the millions of objects of a large target (X86: ~5M)
        each time it runs while the output is written. Nothing may use the evaluator after.
        """
        for rec in (*self.classes.values(), *self.defs.values()):
            rec.keeper = rec._type = rec.defref = None
            rec.values = {}
            rec.supers = []
            rec.super_set = set()
            rec.direct = []
            rec.assertions = rec.dumps = []
        for t in self.record_tys.values():  # a type and its cached list type hold each other
            while t is not None:
                t._list, t = None, t._list
        self.__dict__.clear()

    # ---- helpers ----------------------------------------------------------------------------
    def new_anon(self) -> str:
        n = f"anonymous_{self.anon}"
        self.anon += 1
        return n

    def anon_name_of(self, s) -> str:
        """The anonymous name of a ``def``/``defm`` statement without a name.

        llvm-tblgen names it once, when it parses the statement, and every instantiation of a
        multiclass or iteration of a foreach starts from that name: a defm's records are all
        ``anonymous_N<suffix>``, and a def that clashes is renamed when it is added. Bodies
        run here once per instantiation, so the name is kept per statement (multiclass bodies
        are named when defined, see ``st_Multiclass``)."""
        got = self.stmt_anon_names.get(id(s))
        if got is None:  # the statement is kept with its name so that its id stays its own
            got = self.stmt_anon_names[id(s)] = (s, self.new_anon())
        return got[1]

    def type_of(self, t: A.TypeRef):
        k = t.kind
        if k == "bit":
            return T.BIT
        if k == "int":
            return T.INT
        if k in ("string", "code"):
            return T.STRING
        if k == "dag":
            return T.DAG
        if k == "bits":
            return T.BITS(t.arg)
        if k == "list":
            return self.type_of(t.arg).list()
        c = self.classes.get(t.arg)
        if c is not None:
            return T.record_ty([c])
        ty = self.types.get(t.arg)
        if ty is not None:
            return ty
        raise err(f"Couldn't find class '{t.arg}'", t.loc)

    def value(self, node, scope, cur, hint=None):
        return self.eb.value(node, scope, cur, hint)

    def forced(self, v):
        """``v`` with its late class instances made: for what must be known at once (names,
        ``if`` conditions, loop lists), which llvm-tblgen resolves there too."""
        if self.lates and v.refs:
            # A record of no name as the current one, so that `!cast`s find the defs.
            return v.resolve(Resolver(self._nobody))
        return v

    def soft(self, e: TdError):
        """Record an error that does not stop evaluation (llvm-tblgen keeps going too)."""
        self.errors.append(e)

    # ---- statements -------------------------------------------------------------------------
    def run(self, stmts, scope=None):
        for s in stmts:
            self.stmt(s, scope)

    def stmt(self, s, scope):
        """Evaluate statement ``s``; an error without a location (or running out of recursion
        depth) is reported at the innermost statement."""
        m = getattr(self, "st_" + type(s).__name__)
        try:
            m(s, scope)
        except RecursionError:
            raise too_deep(s.loc) from None
        except TdError as e:
            e.place(s.loc)
            raise

    def st_ClassDef(self, s, scope):
        if self.in_multiclass:
            raise err("class definitions are not allowed inside a multiclass", s.loc)
        rec = self.classes.get(s.name)
        if rec is not None:
            if rec.values or rec.supers or rec.targs:
                raise err(f"Class '{s.name}' already defined", s.loc)
            rec.locs = [s.loc]
        else:
            if s.name in self.multiclasses:
                pass
            rec = Rec(s.name, self, [s.loc], is_class=True)
            self.classes[s.name] = rec
        rscope = Scope(scope, rec)
        for ta in s.targs:
            ty = self.type_of(ta.type)
            qn = f"{s.name}:{ta.name}"
            if qn in rec.values:
                raise err("template argument with the same name has already been defined",
                          ta.loc)
            # llvm-tblgen makes the argument a template argument only after its default is
            # parsed, so `class S<N store = store>` defaults to the global def `store`.
            rv = RecordVal(qn, ty, UNSET, targ=False)
            rec.add_value(rv)
            if ta.default is not None:
                v = self.value(ta.default, rscope, rec, ty)
                if not rv.set(v):
                    raise err(f"Field '{qn}' of type '{ty}' is incompatible with value '{v}'"
                              + _type_suffix(v), ta.loc)
            rv.targ = True
            rec.targs.append(qn)
        self.record_body(rec, s.parents, s.body, rscope)

    def record_body(self, rec, parents, body, rscope):
        for ref in parents:
            self.add_subclass(rec, ref, rscope)
        for lets in self.let_stack:
            for name, bits, v, loc in lets:
                self.set_value(rec, name, bits, v, loc)
        for item in body or ():
            t = type(item)
            if t is A.FieldDecl:
                self.field_decl(rec, item, rscope)
            elif t is A.BodyLet:
                rv = rec.values.get(item.name)
                if rv is None or rv.targ:
                    raise err(f"Value '{item.name}' unknown!",
                              getattr(item.value, "loc", None) or item.loc)
                bits = None
                ty = rv.ty
                if item.bits is not None:
                    bits = list(reversed(self.eb.ranges(item.bits, rscope, rec)))
                    if ty.kind == "bits":
                        ty = T.BITS(len(bits))
                v = self.value(item.value, rscope, rec, ty)
                self.set_value(rec, item.name, bits, v, item.loc)
            elif t is A.Defvar:
                if item.name in rscope.vars:
                    raise err("local variable of this name already exists", item.loc)
                if item.name in rec.values:
                    raise err("field of this name already exists", item.loc)
                rscope.vars[item.name] = self.value(item.value, rscope, rec)
            elif t is A.Assert:
                c = self.value(item.cond, rscope, rec)
                m = self.value(item.message, rscope, rec)
                rec.assertions.append((item.loc, c, m))
            elif t is A.Dump:
                rec.dumps.append((item.loc, self.value(item.value, rscope, rec)))

    def field_decl(self, rec, item, rscope):
        ty = self.type_of(item.type)
        rv = rec.values.get(item.name)
        if rv is not None:
            rv.set(UNSET)
        else:
            rec.add_value(RecordVal(item.name, ty, UNSET, field=item.is_field))
        if item.value is not None:
            try:
                v = self.value(item.value, rscope, rec, ty)
                # llvm-tblgen points at the value of a declaration, at the name of a `let`.
                self.set_value(rec, item.name, None, v,
                               getattr(item.value, "loc", None) or item.loc)
            except TdError as e:
                if e.message.startswith("Variable not defined") or \
                        e.message.startswith("value not specified"):
                    if not self.proto:  # a prototype's errors are the defm's to report
                        self.soft(e)
                else:
                    raise

    def set_value(self, rec, name, bits, v, loc, allow_self=False):
        rv = rec.values.get(name)
        if rv is None:
            raise err(f"Value '{name}' unknown!", loc)
        if not allow_self and isinstance(v, VarInit) and v.name == name:
            raise err("Recursion / self-assignment forbidden", loc)
        if bits:
            cur = rv.value
            if not isinstance(cur, BitsInit):
                raise err(f"Value '{name}' is not a bits type", loc)
            bi = cast_value(v, T.BITS(len(bits)))
            if bi is None:
                raise err("Initializer is not compatible with bit range", loc)
            new = [None] * len(cur.bits)
            for i, b in enumerate(bits):
                if b >= len(new):
                    raise err("Invalid bit range for value", loc)
                if new[b] is not None:
                    raise err(f"Cannot set bit #{b} of value '{name}' more than once", loc)
                new[b] = bi.bit(i)
            v = BitsInit([n if n is not None else cur.bits[i] for i, n in enumerate(new)])
        if not rv.set(v):
            raise err(f"Field '{name}' of type '{rv.ty}' is incompatible with value '{v}"
                      + _type_suffix(v), loc)

    def add_subclass(self, rec, ref, scope, args=None):
        cls = self.classes.get(ref.name)
        if cls is None:
            if ref.name in self.multiclasses:
                raise err(f"Couldn't find class '{ref.name}'", ref.loc)
            raise err(f"Couldn't find class '{ref.name}'", ref.loc)
        if args is None:
            args = self.eb.class_args(cls, ref.args, scope, rec, ref.loc)
        values = rec.values
        todo = []  # the fields just copied from `cls` whose values hold references
        for name, crv in cls.values.items():
            if crv.targ:
                continue
            rv = values.get(name)
            if rv is None:
                rv = values[name] = crv.copy()
            elif not rv.set(crv.value):
                raise err(f"New definition of '{name}' of type '{crv.ty}' is incompatible with "
                          f"previous definition of type '{rv.ty}'", ref.loc)
            if rv.value.refs:
                todo.append(name)
        rec.assertions.extend(cls.assertions)
        rec.dumps.extend(cls.dumps)
        if not todo and not rec.assertions and not rec.dumps:
            # Nothing can mention the arguments: resolving would change nothing (X86: over
            # 55k of its 181k class references), so the resolver is not even made.
            self.add_supers(rec, cls, ref)
            return
        r = Resolver(rec)
        for qn in cls.targs:
            r.set(qn, cls.values[qn].value)
        for qn, _named, v in args:
            r.set(qn, v)
        if rec.is_class:
            r.set(cls.name + ":NAME", VarInit(rec.name + ":NAME", T.STRING))
        elif rec is self.late_name:
            r.set(cls.name + ":NAME", LATE_NAME)
        else:
            r.set(cls.name + ":NAME", StringInit(rec.name))
        # llvm-tblgen resolves the whole record here, but only the fields just copied from
        # `cls` can mention its arguments, so the others are left alone (same result), and of
        # those only the ones holding references can change.
        rec.resolve(r, todo)
        self.add_supers(rec, cls, ref)

    def add_supers(self, rec, cls, ref):
        """Make ``cls`` and its superclasses superclasses of ``rec``."""
        for sc in cls.supers:
            if sc in rec.super_set:
                raise err(f"Already subclass of '{sc.name}'!", ref.loc)
            rec.add_super(sc)
        if cls in rec.super_set:
            raise err(f"Already subclass of '{cls.name}'!", ref.loc)
        rec.add_super(cls)

    def object_name(self, node, scope, loc, is_defm=False):
        """The name of a def/defm: (name string, anonymous?)."""
        if node is None:
            return self.new_anon(), True
        nm = [False]
        before = self.eb.name_refs
        v = self.forced(self.eb.value(node, scope, None, T.STRING, name_mode=nm))
        nm[0] = self.eb.name_refs != before
        if isinstance(v, TypedInit) and v.ty is not T.STRING:
            c = cast_value(v, T.STRING)
            v = c if c is not None else v
            if not isinstance(v, StringInit):
                from .ops import UnOp

                v = UnOp("cast", v, T.STRING).fold(None)
        if not isinstance(v, StringInit):
            raise err(f"record name '{v}' could not be fully resolved", loc)
        name = v.value
        if self.in_multiclass and not nm[0]:
            name = self.mc_name + name
        return name, False

    def st_Def(self, s, scope):
        if s.name is None and (self.in_multiclass or self.loop_vars or self.top_loops):
            name, anon = self.anon_name_of(s), True
        else:
            name, anon = self.object_name(s.name, scope, s.name_loc)
        rec = Rec(name, self, [s.name_loc if not anon else s.loc], anonymous=anon)
        # llvm-tblgen parses a def whose name depends on a multiclass argument (NAME) or a
        # loop iterator with that name unresolved: its parents' NAME stays a reference until
        # the defm or loop resolves it, after the body and the lets, so `C<NAME>` in a parent
        # field that a let replaces is never made (RISCV's PseudoToVInst under
        # `let BaseInstr = ...`). LATE_NAME stands for it until the body is done.
        late = not anon and (self.in_multiclass or (self.taint and A.mentions(s.name, self.taint)))
        saved, self.late_name = self.late_name, rec if late else None
        try:
            self.record_body(rec, s.parents, s.body, Scope(scope, rec))
        finally:
            self.late_name = saved
        if late:
            r = Resolver(rec)
            r.set(LATE_NAME.name, StringInit(rec.name))
            rec.resolve(r)
        elif self.lates and self.taint:  # only a tainted C<...> is late (anon_inst)
            # llvm-tblgen resolves the prototype whole here (the loop or defm substituting
            # into it): its late class instances (made by its parents' arguments, or held
            # by a let, a defvar or an argument around it) are made in its fields' order.
            rec.resolve(Resolver(rec))
        self.finish_def(rec)

    def finish_def(self, rec, in_loops=()):
        """Add ``rec``, or hand it to the defm running this multiclass body with, per
        multiclass level (outermost first), whether it was made in a loop deferred there
        (``in_loops`` says that for a record of a nested defm)."""
        if self.loop_vars:
            self.resolve_loop_vars(rec)
        if self.mc_out is not None:
            depths = (*self.outer_depths, self.loop_depth)
            if in_loops:
                flags = tuple(d > 0 or f for d, f in zip(depths, in_loops))
            else:
                flags = tuple(d > 0 for d in depths)
            self.mc_out.append((rec, flags))
        else:
            self.add_def_one(rec)

    def resolve_loop_vars(self, rec):
        """Substitute the enclosing ``foreach`` iterators into ``rec``, as llvm-tblgen does
        when it expands a loop: by name, so a reference to a field named like an iterator
        (``foreach Size = ... in def X : C`` where ``C`` has a field ``Size``) becomes the
        iterator's value."""
        values = rec.values
        hit = {n: v for n, v in self.loop_vars if n in values and not values[n].targ}
        if hit:
            r = Resolver(rec)
            for n, v in hit.items():
                r.set(n, v)
            rec.resolve(r)

    def add_def_one(self, rec):
        if len(self.defs) >= MAX_RECORDS:
            raise check_count(len(self.defs) + 1, MAX_RECORDS, "records", None).place(
                rec.locs[0] if rec.locs else None)
        if rec.name in self.defs:
            if not rec.anonymous:
                prev = self.defs[rec.name]
                pl = prev.locs[0] if prev.locs else None
                raise fatal(f"def already exists: {rec.name}", rec).__class__(
                    f"def already exists: {rec.name}", *_where(rec),
                    notes=(("location of previous definition",
                            SourceLoc(pl.file, pl.line, pl.column) if pl else None),))
            rec.name = self.new_anon()
        rec.resolve_self(final=True)
        for name, rv in rec.values.items():
            if not rv.targ and not rv.field and not _concrete_enough(rec, rv.value):
                raise fatal(f"Initializer of '{name}' in '{rec.name}' could not be fully "
                            f"resolved: {rv.value}", rec)
        self.check_asserts(rec)
        self.defs[rec.name] = rec
        for ds in self.defsets:
            ds.append(rec)

    def check_asserts(self, rec):
        for loc, c, m in rec.assertions:
            self.check_assert(loc, c, m)
        for _loc, m in rec.dumps:
            self.dump_output.append(m.unquoted() if isinstance(m, StringInit) else str(m))

    def check_assert(self, loc, c, m):
        i = c.convert(T.INT) if isinstance(c, TypedInit) else None
        if not isinstance(i, IntInit):
            self.soft(err("assert condition must of type bit, bits, or int.", loc))
        elif not i.value:
            note = m.value if isinstance(m, StringInit) else "(assert message is not a string)"
            e = err("assertion failed", loc)
            e.notes = ((note, None),)
            self.soft(e)

    def instantiate(self, cls, args):
        """The anonymous def for ``cls<args>`` (llvm's ``VarDefInit::instantiate``).

        llvm-tblgen makes one record per distinct argument list *as written*: ``C<"a", x=1>``,
        ``C<"a", 1>`` and ``C<"a", 1, 0>`` (0 the default) are three records, since its
        ``VarDefInit``s are uniqued by their ``ArgumentInit``s (named or positional, in the
        order given); only the values are compared by content here (llvm uniques those)."""
        key = (id(cls), tuple((n, named, str(v.ty) if v.ty is not None else "", str(v))
                              for n, named, v in args))
        d = self.anon_memo.get(key)
        if d is not None:
            return d
        if len(self.defs) >= MAX_RECORDS:  # the caller's value places the error
            raise check_count(len(self.defs) + 1, MAX_RECORDS, "records", None)
        rec = Rec(self.new_anon(), self, cls.locs[-1:], anonymous=True)
        for name, rv in cls.values.items():
            rec.values[name] = rv.copy()
        rec.assertions.extend(cls.assertions)
        rec.dumps.extend(cls.dumps)
        r = Resolver(rec)
        for qn in cls.targs:
            r.set(qn, rec.values.pop(qn).value)
        for qn, _named, v in args:
            r.set(qn, v)
        rec.resolve(r)
        for sc in cls.supers:
            rec.add_super(sc)
        rec.add_super(cls)
        rec.resolve_self(final=False)
        self.defs[rec.name] = rec
        self.check_asserts(rec)
        d = DefInit(rec)
        self.anon_memo[key] = d
        return d

    # ---- other statements -------------------------------------------------------------------
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



def _concrete_enough(rec, v):
    """llvm's ``checkConcrete``: bits may hold references to the record's own fields."""
    if not isinstance(v, BitsInit):
        return v.concrete()
    for b in v.bits:
        if isinstance(b, VarInit):
            continue
        if isinstance(b, VarBitInit) and isinstance(b.var, VarInit) and b.var.name in rec.values:
            continue
        if not b.concrete():
            return False
    return True


def _type_suffix(v):
    if isinstance(v, BitsInit):
        return f"' of type bit initializer with length {len(v.bits)}'"
    if isinstance(v, TypedInit):
        return f"' of type '{v.ty}'"
    return "'"


def _where(rec):
    loc = rec.locs[0] if rec.locs else None
    if loc is None:
        return ("<unknown>", 0, 0, ())
    return (loc.file, loc.line, loc.column, loc.stack)


_ = sys
