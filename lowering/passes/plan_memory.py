"""``plan-memory``: buffers, reuse and in-place decisions; produces the ``ExecutablePlan``.

Runs after ``select-kernels``. Every SSA value of a function gets a buffer (``lowering/memory.py``
decides which): a buffer is reused once all values held in it are dead; an op writes its output
over an input when its kernel declares it can, that input dies there, and it is not a function
argument (unless donated with ``donate=`` / ``{donate=x,y}``), a constant or a result; a
``reshape`` whose kernel may work in place is a view of its input's buffer even where the input
is read later (no copy; ``{reuse=false}`` turns views off with the reuse). Ops that
depend on no argument (constants and what is folded from them) go to the plan's prologue, run
once when the plan is loaded. Large elementwise launches without broadcasting are marked
for tiling (``{tile=65536}`` elements; 0 disables), which the executor runs slice by slice;
not ``tdflow.fused_elementwise``, whose kernel evaluates cache-sized blocks (or one native loop)
by itself: cut into tiles it would pay its per-call work once per tile (``{tile_fused=true}``
tiles them too, as before); nor float32 formulas with ``erf`` (``gelu``, ``gelu_grad``), whose
kernels are native loops over blocks of their own for the same reason.

The pass leaves the IR unchanged and stores one plan per function in ``context.plans``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.ir import RETURN
from tdflow.dialect.types import TensorType

from ..ir_access import diagnostic, traits
from ..memory import Step, assign_buffers, naive_peak_bytes, planned_bytes
from ..pass_manager import Pass, PassContext, PassFailure
from ..plan import Argument, Buffer, ExecutablePlan, Launch, Result
from .select_kernels import kernel_attrs

#: The fused-expression op (its launches are never tiled).
FUSED = "tdflow.fused_elementwise"

#: Ops whose output is their input's elements in the same order: with a kernel that may write
#: output 0 over input 0 (it then does nothing), the output is planned as a view of the input's
#: buffer even while the input is still read (lowering/memory.py), instead of a copy.
VIEW_OPS = frozenset({"tdflow.reshape"})


def _is_view(name: str, in_place: tuple[tuple[int, int], ...]) -> bool:
    """Whether a launch of op ``name`` whose kernel allows ``in_place`` can be a view.

    >>> _is_view("tdflow.reshape", ((0, 0),)), _is_view("tdflow.reshape", ())
    (True, False)
    """
    return name in VIEW_OPS and (0, 0) in in_place


def _native_erf(name: str, dtype: str) -> bool:
    """Whether op ``name``'s float32 formula holds ``erf``: its kernel is then native C over
    the whole array or cache-sized blocks (the native erf, with C segments around it), and
    64K tiles only add per-call work (``gelu`` on 512K f32: 1.32 -> 1.11 ms untiled).

    >>> _native_erf("tdflow.gelu", "f32"), _native_erf("tdflow.gelu", "f64")
    (True, False)
    """
    if dtype != "f32":
        return False  # float64's erf is the exact numpy path, which tiles help
    from tdflow.dialect.formula.expr import Unary, walk
    from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

    d = ELEMENTWISE_OPS.get(name)
    return d is not None and any(isinstance(n, Unary) and n.op == "erf"
                                 for e in d.exprs for n in walk(e))


if TYPE_CHECKING:
    from tdflow.dialect.ir.core import FuncOp, Module, Operation


class PlanMemoryPass(Pass):
    name = "plan-memory"
    summary = "liveness-based buffer reuse and in-place execution; builds the ExecutablePlan"
    options = {"reuse": True, "donate": "", "tile": 65536, "tile_fused": False}

    def run(self, module: Module, context: PassContext) -> None:
        donate = set(context.donate) | {d for d in self.option("donate").split(";") if d}
        errors: list[Any] = []
        for func in module:
            if context.entry is not None and func.name != context.entry:
                continue
            dynamic = [a for a in func.args
                       if not (isinstance(a.type, TensorType) and a.type.is_static)]
            if context.entry is None and dynamic:
                # Planning every function: one with dynamic arguments is planned per call.
                context.warnings.append(diagnostic(
                    f"@{func.name} not planned: argument %{dynamic[0].name} has dynamic type "
                    f"{dynamic[0].type}; it is planned when called with concrete inputs",
                    func.loc, "warning"))
                continue
            plan = build_plan(func, context, donate, self.option("reuse"), errors,
                              tile=self.option("tile"), tile_fused=self.option("tile_fused"))
            if plan is not None:
                context.plans[func.name] = plan
        if errors:
            raise PassFailure(self.name, errors)


def _static(value: Any, what: str, errors: list[Any]) -> tuple[tuple[int, ...], str] | None:
    t = value.type
    if not isinstance(t, TensorType) or not t.is_static:
        errors.append(diagnostic(f"{what} has type {t}; a plan needs static shapes (run "
                                 f"infer-shapes, or call the program with concrete inputs)",
                                 value.loc))
        return None
    return tuple(int(d) for d in t.shape), t.dtype  # type: ignore[union-attr]


def build_plan(func: FuncOp, context: PassContext, donate: set[str], reuse: bool,
               errors: list[Any], tile: int = 0, tile_fused: bool = False
               ) -> ExecutablePlan | None:
    """The plan of one function, or ``None`` (with ``errors`` filled) if it cannot be built.

    ``tile``: elementwise launches (``Elementwise`` trait, no broadcasting) over at least twice
    that many elements may run tile by tile (0 disables); fused expressions only with
    ``tile_fused`` (as before they evaluated in blocks themselves; benchmarks compare both).
    """
    ids: dict[Any, int] = {}
    values: dict[int, tuple[tuple[int, ...], str]] = {}
    n_err = len(errors)

    def number(v: Any, what: str) -> None:
        st = _static(v, what, errors)
        ids[v] = len(ids)
        if st is not None:
            values[ids[v]] = st

    for a in func.args:
        number(a, f"argument %{a.name} of @{func.name}")
    ret = None
    ops = []
    for op in func.body:
        if op.name == RETURN:
            ret = op
            continue
        ops.append(op)
        for r in op.results:
            number(r, f"result #{r.index} of '{op.name}'")
    missing = [op for op in ops if op not in context.kernels]
    for op in missing:
        errors.append(diagnostic(f"no kernel chosen for '{op.name}': run select-kernels "
                                 f"before plan-memory", op.loc))
    if len(errors) > n_err:
        return None

    # Ops reading no argument, directly or not, run once in the prologue.
    depends: set[Any] = set(func.args)
    prologue_ops, main_ops = [], []
    for op in ops:
        if any(v in depends for v in op.operands) or not context.kernels[op].hoistable:
            depends.update(op.results)
            main_ops.append(op)
        else:
            prologue_ops.append(op)
    const_values = tuple(ids[r] for op in prologue_ops for r in op.results)
    arg_ids = tuple(ids[a] for a in func.args)
    donated = frozenset(ids[a] for a in func.args if a.name in donate)
    result_ids = tuple(ids[v] for v in ret.operands) if ret is not None else ()

    steps = [Step(tuple(ids[v] for v in op.operands), tuple(ids[r] for r in op.results),
                  context.kernels[op].in_place,
                  view=_is_view(op.name, context.kernels[op].in_place))
             for op in main_ops]
    pre_steps = [Step(tuple(ids[v] for v in op.operands), tuple(ids[r] for r in op.results))
                 for op in prologue_ops]
    assignment = assign_buffers(values, pre_steps + steps, arguments=arg_ids, donated=donated,
                                constants=const_values, results=result_ids, reuse=reuse)
    n_pre = len(pre_steps)

    buffers = []
    for b, members in assignment.members.items():
        shapes = {values[v][0] for v in members}
        shape = next(iter(shapes)) if len(shapes) == 1 else (assignment.capacity[b],)
        buffers.append(Buffer(b, shape, assignment.dtype[b]))

    def tile_of(op: Operation) -> int:
        if tile <= 0 or "Elementwise" not in traits(context.dialect, op.name):
            return 0
        if op.name == FUSED and not tile_fused:
            return 0  # its kernel goes in blocks (or one C loop) itself; tiles only add calls
        shapes = {values[ids[v]][0] for v in (*op.operands, *op.results)}
        if len(shapes) != 1 or len(op.results) != 1:
            return 0  # broadcasting (or several results): slices would not line up
        if _native_erf(op.name, values[ids[op.results[0]]][1]):
            return 0
        n = 1
        for d in next(iter(shapes)):
            n *= d
        return tile if n >= 2 * tile else 0

    def launch(op: Operation, step_index: int) -> Launch:
        choice = context.kernels[op]
        return Launch(
            kernel=choice.kernel,
            inputs=tuple(assignment.buffer_of[ids[v]] for v in op.operands),
            outputs=tuple(assignment.buffer_of[ids[r]] for r in op.results),
            attrs=kernel_attrs(op, context.dialect),
            op=op.name,
            loc=str(op.loc),
            in_place=assignment.in_place.get(step_index, ()),
            input_shapes=tuple(values[ids[v]][0] for v in op.operands),
            output_shapes=tuple(values[ids[r]][0] for r in op.results),
            tile=tile_of(op),
        )

    return ExecutablePlan(
        name=func.name,
        device=context.device,
        buffers=tuple(buffers),
        launches=tuple(launch(op, n_pre + i) for i, op in enumerate(main_ops)),
        prologue=tuple(launch(op, i) for i, op in enumerate(prologue_ops)),
        arguments=tuple(Argument(a.name or f"arg{i}", assignment.buffer_of[ids[a]],
                                 *values[ids[a]], donated=ids[a] in donated)
                        for i, a in enumerate(func.args)),
        results=tuple(Result(assignment.buffer_of[v], *values[v]) for v in result_ids),
        peak_bytes_before=naive_peak_bytes(values),
        peak_bytes_after=planned_bytes(assignment),
    )
