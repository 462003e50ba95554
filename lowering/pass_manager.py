"""Pass pipelines: parse a pipeline string, run its passes in order, verify and trace between them.

A pass is a small class with a kebab-case ``name``, typed ``options`` (with defaults) and
``run(module, context)``. The context carries what the caller hands in: the dialect, the kernel
table of the target runtime (lowering never imports the runtime), the device, and what passes
produce for later ones (kernel choices, the ``ExecutablePlan``).

>>> pm = PassManager.parse("infer-shapes,select-kernels{device=cpu}")
>>> [str(p) for p in pm.passes]
['infer-shapes', 'select-kernels{device=cpu}']
>>> PassManager.parse("no-such-pass")
Traceback (most recent call last):
...
tdflow.lowering.pass_manager.PipelineError: unknown pass 'no-such-pass' in pipeline 'no-such-pass'; valid passes: apply-patterns, autodiff, canonicalize, fuse-elementwise, infer-sbp, infer-shapes, physicalize, plan-memory, select-kernels
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

from tdflow.core.errors import TdflowError
from tdflow.core.valueclass import field, value_class

from .passes import PASSES

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import Module

    from .ir_access import LoweringDialect

DEFAULT_PIPELINE = (
    "infer-shapes,canonicalize,fuse-elementwise,select-kernels{device=%s},plan-memory"
)


def default_pipeline(device: str = "cpu") -> str:
    """The standard pipeline for ``device``.

    >>> default_pipeline("cpu").split(",")[-2:]
    ['select-kernels{device=cpu}', 'plan-memory']
    >>> default_pipeline("cudasim").split(",")[-1]
    'plan-memory{tile=0}'
    """
    if device.split(":", 1)[0] in GPU_DEVICES:
        # a GPU kernel is specialised per shape and runs the whole tensor in one launch:
        # slicing elementwise launches into cache-sized tiles would only add kernels
        return (DEFAULT_PIPELINE % device).replace("plan-memory", "plan-memory{tile=0}")
    return DEFAULT_PIPELINE % device


GPU_DEVICES = ("cuda", "cudasim")


class PipelineError(TdflowError):
    """A bad pipeline string or pass option; ``render()`` gives the CLI's diagnostic line."""

    def render(self) -> str:
        return f"error: {self}"


class PassFailure(TdflowError):
    """A pass found the program cannot be lowered; carries the diagnostics it collected.

    ``diagnostics`` are the IR's ``Diagnostic`` objects (or plain strings); ``render()`` renders
    each one, so the CLI prints them with locations and never a traceback.
    """

    def __init__(self, pass_name: str, diagnostics: Iterable[Any]):
        self.pass_name = pass_name
        self.diagnostics = list(diagnostics)
        first = self.diagnostics[0] if self.diagnostics else "failed"
        super().__init__(f"{pass_name}: {_diag_message(first)}")

    def render(self) -> str:
        parts = []
        for d in self.diagnostics:
            render = getattr(d, "render", None)
            parts.append(render() if callable(render) else f"error: {d}")
        parts.append(f"note: pass '{self.pass_name}' failed")
        return "\n".join(parts)


def _diag_message(d: Any) -> str:
    return str(getattr(d, "message", d))


@value_class
class PassContext:
    """What passes share: inputs from the caller and results for later passes.

    ``kernels`` maps each operation (the object, so it stays alive) to the chosen kernel once
    ``select-kernels`` ran; ``plans`` maps function names to their ``ExecutablePlan``.
    """

    dialect: Dialect | LoweringDialect | None = None
    kernel_table: Any = None
    device: str = "cpu"
    entry: str | None = None
    donate: frozenset[str] = frozenset()
    kernels: dict[Any, Any] = field(default_factory=dict)
    plans: dict[str, Any] = field(default_factory=dict)
    warnings: list[Any] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)


class Pass:
    """Base class of passes: subclasses set ``name``, ``summary``, ``options`` and ``run``.

    ``options`` maps option name to default; the default's type is the option's type (a
    pipeline string ``{device=cuda,max-ops=8}`` is converted accordingly).
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    options: ClassVar[Mapping[str, Any]] = {}

    def __init__(self, **options: Any):
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            valid = ", ".join(sorted(self.options)) or "none"
            raise PipelineError(f"pass '{self.name}' has no option {unknown[0]!r}; "
                                f"valid options: {valid}")
        # Options spelled in the pipeline are kept apart so printing round-trips the text.
        self.given = {k: _convert_option(self.name, k, v, self.options[k])
                      for k, v in options.items()}
        self.values: dict[str, Any] = {**self.options, **self.given}

    def option(self, key: str) -> Any:
        return self.values[key]

    def run(self, module: Module, context: PassContext) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def annotate(self, module: Module, context: PassContext) -> str:
        """Extra lines printed after this pass's IR dump (decisions not visible in the IR)."""
        return ""

    def __str__(self) -> str:
        if not self.given:
            return self.name
        body = ",".join(f"{k}={_format_option(v)}" for k, v in self.given.items())
        return f"{self.name}{{{body}}}"


def _convert_option(pass_name: str, key: str, raw: Any, default: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        if isinstance(default, bool):
            if raw.lower() in ("true", "1", "yes"):
                return True
            if raw.lower() in ("false", "0", "no"):
                return False
            raise ValueError(raw)
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError:
        raise PipelineError(f"option {key}={raw!r} of pass '{pass_name}' must be "
                            f"{type(default).__name__}") from None
    return raw


def _format_option(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def pass_class(name: str) -> type[Pass]:
    """The class registered for pass ``name``; ``PipelineError`` listing valid names if none."""
    try:
        module, cls = PASSES[name]
    except KeyError:
        raise PipelineError(f"unknown pass {name!r}; valid passes: {', '.join(sorted(PASSES))}")\
            from None
    return getattr(importlib.import_module(module), cls)


def parse_pipeline(text: str) -> list[Pass]:
    """Split ``"a,b{k=v,k2=v2},c"`` into pass instances.

    >>> [p.name for p in parse_pipeline(" infer-shapes , plan-memory ")]
    ['infer-shapes', 'plan-memory']
    """
    passes: list[Pass] = []
    for item in _split_top(text):
        name, _, rest = item.partition("{")
        name = name.strip()
        if not name:
            raise PipelineError(f"empty pass name in pipeline {text!r}")
        opts: dict[str, str] = {}
        if rest:
            if not rest.endswith("}"):
                raise PipelineError(f"unterminated options for pass {name!r} in {text!r}")
            last = None
            for kv in filter(None, (s.strip() for s in rest[:-1].split(","))):
                key, eq, value = kv.partition("=")
                if not eq:
                    if last is None:
                        raise PipelineError(f"option {kv!r} of pass {name!r} must be KEY=VALUE")
                    opts[last] += "," + kv  # a list value: autodiff{wrt=x,w1}
                    continue
                last = key.strip()
                opts[last] = value.strip()
        if name not in PASSES:
            raise PipelineError(f"unknown pass {name!r} in pipeline {text!r}; "
                                f"valid passes: {', '.join(sorted(PASSES))}")
        passes.append(pass_class(name)(**opts))
    return passes


def _split_top(text: str) -> list[str]:
    items, depth, cur = [], 0, []
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced '}}' in pipeline {text!r}")
        if ch == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise PipelineError(f"unbalanced '{{' in pipeline {text!r}")
    items.append("".join(cur).strip())
    if any(not i for i in items):
        raise PipelineError(f"empty pass name in pipeline {text!r}")
    return items


@value_class(frozen=True)
class PassTiming:
    name: str
    seconds: float


@value_class
class LoweringResult:
    """What a pipeline run leaves: the rewritten module, plans per function, timings."""

    module: Module
    context: PassContext
    timings: list[PassTiming]

    @property
    def plans(self) -> dict[str, Any]:
        return self.context.plans

    def plan(self, entry: str | None = None) -> Any:
        """The plan of ``entry`` (default: the first function planned)."""
        if not self.context.plans:
            raise PipelineError("the pipeline produced no plan; end it with 'plan-memory'")
        if entry is None:
            return next(iter(self.context.plans.values()))
        try:
            return self.context.plans[entry]
        except KeyError:
            raise PipelineError(f"no function @{entry}; functions: "
                                f"{', '.join('@' + n for n in self.context.plans)}") from None

    def timing_report(self) -> str:
        total = sum(t.seconds for t in self.timings) or 1e-12
        lines = ["pass timing:"]
        for t in self.timings:
            lines.append(f"  {t.seconds * 1e3:9.3f} ms  {100 * t.seconds / total:5.1f}%  {t.name}")
        lines.append(f"  {total * 1e3:9.3f} ms  100.0%  total")
        return "\n".join(lines)


class PassManager:
    """Runs passes in order with optional verification, IR printing and timing.

    ``context`` keywords (``dialect=``, ``kernel_table=``, ``device=``, ``entry=``, ``donate=``)
    become the ``PassContext`` the passes see.
    """

    def __init__(
        self,
        passes: Iterable[Pass],
        *,
        verify_each: bool = True,
        print_ir_after_all: bool = False,
        print_ir_after: Iterable[str] = (),
        timing: bool = False,
        stream: TextIO | None = None,
        **context: Any,
    ):
        self.passes = list(passes)
        self.verify_each = verify_each
        self.print_ir_after_all = print_ir_after_all
        self.print_ir_after = set(print_ir_after)
        unknown = sorted(self.print_ir_after - set(PASSES))
        if unknown:
            raise PipelineError(f"--print-ir-after: unknown pass {unknown[0]!r}; valid passes: "
                                f"{', '.join(sorted(PASSES))}")
        self.timing = timing
        self.stream = stream
        self.context_args = context

    @classmethod
    def parse(cls, pipeline: str, **kwargs: Any) -> PassManager:
        """Build a manager from a pipeline string; keywords as for ``__init__``."""
        return cls(parse_pipeline(pipeline), **kwargs)

    @property
    def pipeline(self) -> str:
        return ",".join(str(p) for p in self.passes)

    def run(self, module: Module) -> LoweringResult:
        """Run every pass on ``module`` (rewritten in place) and return the result."""
        from . import ir_access

        context = PassContext(**self.context_args)
        context.dialect = ir_access.with_lowering_ops(context.dialect)
        timings: list[PassTiming] = []
        out = self.stream if self.stream is not None else sys.stdout
        for p in self.passes:
            wants_dump = self.print_ir_after_all or p.name in self.print_ir_after
            start = time.perf_counter()
            try:
                p.run(module, context)
                if self.verify_each and context.dialect is not None:
                    errors = ir_access.verify(module, context.dialect)
                    if errors:
                        raise PassFailure(p.name, [*errors, f"IR invalid after pass '{p.name}'"])
            except PassFailure:
                if wants_dump:  # as mlir-opt does: show the IR the failure is about
                    self._dump(out, p, module, context, " Failed")
                raise
            timings.append(PassTiming(str(p), time.perf_counter() - start))
            if wants_dump:
                self._dump(out, p, module, context)
        result = LoweringResult(module, context, timings)
        if self.timing:
            out.write(result.timing_report() + "\n")
        return result

    @staticmethod
    def _dump(out: TextIO, p: Pass, module: Module, context: PassContext, failed: str = "") -> None:
        from . import ir_access

        out.write(f"// -----// IR Dump After {_camel(p.name)}Pass ({p.name}){failed} //----- //\n")
        out.write(ir_access.print_module(module).rstrip("\n") + "\n")
        note = "" if failed else p.annotate(module, context)
        out.write((note.rstrip("\n") + "\n\n") if note else "\n")


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def lower_module(module: Module, dialect: Dialect | LoweringDialect | None, device: str,
                 entry: str | None,
                 pipeline: str | None, kernel_table: Any, *, donate: frozenset[str] = frozenset(),
                 verified: bool = False, **options: Any) -> Any:
    """Verify ``module`` against ``dialect`` (unless ``verified``), check ``entry`` names one
    of its functions, then run ``pipeline`` (default: the device's) with the kernel table
    ``kernel_table()`` returns: a callable, so that the checks come before the table is built
    (the runtime's ``lower`` builds and checks its table there). ``options`` go to the
    ``PassManager``. The runtime's ``lower`` and ``tdflow lower``'s data-table path share it.
    """
    from tdflow.dialect.ir import DiagnosticError, verify_module

    errors = [] if verified else [d for d in verify_module(module, dialect)
                                  if d.severity == "error"]
    if errors:
        raise DiagnosticError(errors)
    if entry is not None and entry not in {f.name for f in module}:
        raise PipelineError(f"no function @{entry}; functions: "
                            f"{', '.join('@' + f.name for f in module) or '(none)'}")
    pm = PassManager.parse(pipeline or default_pipeline(device), dialect=dialect,
                           kernel_table=kernel_table(), device=device, entry=entry,
                           donate=donate, **options)
    return pm.run(module)
