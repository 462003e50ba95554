"""Statement evaluation: classes, defs, multiclasses, loops and lets, as llvm-tblgen's
``TGParser`` performs them, producing resolved :class:`~.rec.Rec` records.

Multiclass bodies and loop bodies are re-evaluated per instantiation with their arguments
bound, which gives the records llvm-tblgen builds from its prototypes.
"""

from __future__ import annotations

from . import ast as A
from . import types as T
from .control import ControlStatements
from .definitions import RecordStatements
from .errors import TdError
from .expr import ExprBuilder
from .limits import too_deep
from .multiclass import MulticlassInfo, MulticlassStatements
from .rec import Rec
from .scope import err
from .values import Resolver


class Evaluator(RecordStatements, ControlStatements, MulticlassStatements):
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
        self.proto_vals: dict = {}  # the same, per value
        self.ident_memo: dict = {}  # see ast.ident_names (MulticlassStatements.sub_taints)
        self.free_memo: dict = {}  # see freevars.free_names
        self.concrete_memo: dict = {}  # see RecordStatements.add_def_one
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
            rec.keeper = rec._type = rec.defref = rec.plan = None
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
