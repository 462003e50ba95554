"""``tdflow.compile``: a program (a ``Module``, MLIR text or a path) lowered for one device and
loaded as a callable :class:`CompiledProgram`.

Compiling verifies the program, lowers the entry function with this runtime's kernel table
(:func:`lower`) and loads the plan into an :class:`~tdflow.runtime.executor.Executor`. A
function with ``?`` argument dims is lowered when called, once per distinct set of argument
shapes. Calls take numpy arrays or Tensors, checked by the executor's ``bind_arguments``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from tdflow.lowering.plan import ExecutablePlan

from tdflow.core.errors import TdflowError

from .arguments import ArgumentError, bind_arguments, type_text
from .executor import Executor

if TYPE_CHECKING:
    import os

    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import Module
    from tdflow.lowering.pass_manager import LoweringResult


def load_module(source: Module | str | os.PathLike[str]) -> Module:
    """A ``Module`` from a ``Module`` (copied), MLIR text, or a path to a ``.mlir`` file.

    >>> m = load_module('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\\n'
    ...                 '  return %x : tensor<2xf32>\\n}')
    >>> [f.name for f in m]
    ['f']
    """
    return module_loader(source)()


def module_loader(source: Module | str | os.PathLike[str]) -> Callable[[], Module]:
    """A function that parses ``source`` into a fresh ``Module`` each time it is called.

    Paths are re-read from disk by the parser so locations keep the file name.
    """
    import os

    from tdflow.dialect.ir import Module, parse_file, parse_module

    if isinstance(source, Module):
        # a deep copy per call (passes rewrite the program), not a print and parse: an imported
        # model's weights would go through megabytes of hex text
        return source.clone
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        return lambda: parse_file(path)
    if isinstance(source, str):
        if "func.func" in source or "{" in source or "\n" in source:
            return lambda: parse_module(source, "<string>")
        if not os.path.isfile(source):
            raise FileNotFoundError(f"no such program file: {source!r} (pass MLIR text, a "
                                    f"path or a Module)")
        return lambda: parse_file(source)
    raise TypeError(f"compile() takes a Module, MLIR text or a path, not {type(source).__name__}")


class _SignatureOf:
    """``CompiledProgram.__signature__``: an instance's :meth:`~CompiledProgram.signature`;
    ``None`` read on the class (then ``inspect`` reads the class as any other)."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return None if obj is None else obj.signature()


class CompiledProgram:
    """A program lowered for one device: call it with arrays, get arrays back.

    Arguments are numpy arrays or ``tdflow`` Tensors, positional or by argument name (``x=``);
    each is checked against the function's argument type (no silent casts). A single result is
    returned as is, several as a tuple. Results are numpy arrays when every argument was a
    numpy array (or array-like), and Tensors when any argument was a Tensor. They are fresh
    arrays owned by the caller.

    A function whose argument types have ``?`` dims is lowered when it is called, once per
    distinct set of argument shapes (shape inference then resolves every type).

    ``plan`` is the ``ExecutablePlan`` (of the latest specialisation for dynamic programs;
    ``None`` before the first call); ``lowering`` the pass pipeline's result (IR after
    lowering, timings); ``arguments`` the ``(name, shape, dtype)`` of each argument as
    declared, ``None`` for unknown dims.
    """

    def __init__(self, name: str, arguments: list[tuple[str, Any, str]],
                 build: Callable[[tuple], tuple[Any, ExecutablePlan, Executor]], static: bool):
        self.__name__ = name
        self.arguments = arguments
        self._build = build
        self._static = static
        self._variants: dict[tuple, tuple[Any, ExecutablePlan, Executor]] = {}
        self.lowering: Any = None
        self.plan: ExecutablePlan | None = None
        self.executor: Executor | None = None
        self._plain: Callable[..., Any] = _not_plain  # run_plain's, called with *args
        self._call: Callable[..., Any] = lambda *args, **kwargs: self._general(args, kwargs)
        if static:
            ex = self._select(tuple(shape for _, shape, _ in arguments))
            self._plain = ex.plain_caller(_not_plain)
            self._call = ex.plain_caller(self._general)

    def _select(self, shapes: tuple) -> Executor:
        variant = self._variants.get(shapes)
        if variant is None:
            variant = self._variants[shapes] = self._build(shapes)
        self.lowering, self.plan, self.executor = variant
        return variant[2]

    @property
    def argument_names(self) -> tuple[str, ...]:
        return tuple(name for name, _, _ in self.arguments)

    def run_plain(self, args: Sequence[Any]) -> Any:
        """The call's result when ``args`` are positional numpy arrays of exactly the
        arguments' types (a training loop's call, checked without the general binding);
        ``None`` otherwise (then call the program).

        >>> import numpy as np
        >>> f = compile('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\\n'
        ...             '  %0 = "tdflow.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\\n'
        ...             '  return %0 : tensor<2xf32>\\n}')
        >>> f.run_plain([np.array([-1.0, 2.0], np.float32)]).tolist(), f.run_plain([[1, 2]])
        ([0.0, 2.0], None)
        """
        return self._plain(*args)

    # ``f(x, ...)`` calls ``self._call`` with no frame of this class in between (a property
    # read in C): a static program's is the executor's plain_caller, which checks and runs
    # the plan in one frame and hands anything else to _general.
    __call__ = property(operator.attrgetter("_call"))

    def signature(self) -> Any:
        """The call's ``inspect.Signature``: the arguments by name, each positional or by
        keyword (what ``inspect.signature(f)`` reads: ``__call__`` is a property above).

        >>> import inspect
        >>> str(inspect.signature(compile('func.func @f(%x: tensor<2xf32>, %y: tensor<2xf32>)'
        ...     ' -> tensor<2xf32> {\\n  return %x : tensor<2xf32>\\n}')))
        '(x, y)'
        """
        import inspect

        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        return inspect.Signature([inspect.Parameter(n, kind) for n in self.argument_names])

    __signature__ = _SignatureOf()

    def _general(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        """A call that is not positional arrays of exactly the arguments' types: bound (and
        checked, naming the bad argument) by the general binder."""
        ex = self.executor
        if self._static:
            arrays = ex.bind_arguments(args, kwargs)  # type: ignore[union-attr]
        else:
            arrays = bind_arguments(self.__name__, self.arguments, args, kwargs)
            ex = self._select(tuple(a.shape for a in arrays))
        results = ex.run(arrays)
        if any(_is_tensor(v) for v in (*args, *kwargs.values())):
            from tdflow.runtime.tensor import Tensor

            results = [Tensor._wrap(r) for r in results]
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self) -> str:
        sig = ", ".join(f"{n}: {type_text(s, d)}" for n, s, d in self.arguments)
        device = self.plan.device if self.plan is not None else "?"
        return f"<CompiledProgram @{self.__name__}({sig}) on {device}>"


def _not_plain(*args: Any, **kwargs: Any) -> None:
    """``run_plain``'s answer for arguments that are not plain (and a dynamic program's
    for any: its arguments choose the plan)."""
    return None


def _is_tensor(v: Any) -> bool:
    return not isinstance(v, np.ndarray) and callable(getattr(v, "numpy", None))


def context_of(ops: Dialect | None) -> Dialect:
    """The context programs are verified and lowered with: ``ops`` (a context from
    ``tdflow.load_ops``, or any dialect) or, for ``None``, the standard library's."""
    if ops is None:
        from tdflow.dialect.context import standard_context

        return standard_context()
    if not callable(getattr(ops, "lookup", None)):
        raise TypeError(f"ops= must be a context from tdflow.load_ops(...), not "
                        f"{type(ops).__name__}")
    return ops


def lower(module: Module, device: str = "cpu", entry: str | None = None,
          pipeline: str | None = None, *, donate: Sequence[str] = (), verify_each: bool = True,
          ops: Dialect | None = None, verified: bool = False, **options: Any) -> LoweringResult:
    """Run the lowering pipeline on ``module`` (rewritten in place) with this runtime's kernels.

    ``ops`` is the context of op libraries (``tdflow.load_ops(...)``; default: the standard
    ops). Returns the ``LoweringResult`` (``.plan(entry)`` is the plan). ``verified=True``
    says the caller has just verified ``module`` with ``ops`` (it is not verified again).
    ``options`` go to the ``PassManager`` (``print_ir_after_all=``, ``timing=``, ``stream=``...).
    """
    from tdflow.lowering.pass_manager import PipelineError, lower_module

    from .op_kernels import selection_table

    dialect = context_of(ops)

    def table() -> Any:
        found = selection_table(dialect, device)  # a user's formula-only ops' kernels included
        if not found.ops():
            from tdflow.runtime.kernels.registry import registered_kernels

            why = ""
            if device == "cuda":
                from tdflow.runtime.backends.cuda_status import cuda_status

                why = f" ({cuda_status()})"
            devices = sorted({k.device for k in registered_kernels()})
            raise PipelineError(f"no kernels for device {device!r}{why}; devices with kernels: "
                                f"{', '.join(devices)}")
        return found

    return lower_module(module, dialect, device, entry, pipeline, table,
                        donate=frozenset(donate), verify_each=verify_each, verified=verified,
                        **options)


class CompileOptionError(TdflowError, ValueError):
    """A ``compile()`` option with an impossible value (unknown device, pass, mode or entry);
    ``option`` names it, so the CLI can say which of its flags was wrong.

    >>> CompileOptionError("mode", "mode 'x' is not one of auto").args[0]
    "compile(): mode 'x' is not one of auto"
    """

    def __init__(self, option: str, why: str) -> None:
        super().__init__(f"compile(): {why}")
        self.option = option
        self.why = why


MODES = ("auto", "direct", "engine")
KNOWN_DEVICES = ("cpu", "cuda", "cudasim")


def _check_compile_options(device: Any, entry: Any, pipeline: Any, donate: Any,
                           mode: Any) -> None:
    """Type and value checks of ``compile()``'s options, before any work, naming the option."""
    from tdflow.lowering.pass_manager import PipelineError, parse_pipeline
    from tdflow.runtime.kernels.registry import registered_kernels

    for name, value in (("device", device), ("mode", mode)):
        if not isinstance(value, str):
            raise TypeError(f"compile(): argument {name!r} must be str, not "
                            f"{type(value).__name__}")
    for name, value in (("entry", entry), ("pipeline", pipeline)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"compile(): argument {name!r} must be str or None, not "
                            f"{type(value).__name__}")
    if (isinstance(donate, str) or not isinstance(donate, Iterable)
            or not all(isinstance(d, str) for d in donate)):
        raise TypeError("compile(): argument 'donate' must be a sequence of argument names")
    if mode not in MODES:
        raise CompileOptionError("mode", f"mode {mode!r} is not one of {', '.join(MODES)}")
    # cuda and cudasim are known even without kernels: lower() then says why (cuda_status);
    # another device is known when a kernel names it (that needs every kernel loaded)
    if device not in KNOWN_DEVICES:
        devices = sorted({*KNOWN_DEVICES, *(k.device for k in registered_kernels())})
        if device not in devices:
            raise CompileOptionError("device", f"unknown device {device!r}; devices: "
                                               f"{', '.join(devices)}")
    if pipeline is not None:
        try:
            parse_pipeline(pipeline)
        except PipelineError as e:
            raise CompileOptionError("pipeline", f"argument 'pipeline': {e}") from e


def compile(source: Module | str | os.PathLike[str], device: str = "cpu", entry: str | None = None, *,  # noqa: A001
            pipeline: str | None = None, donate: Sequence[str] = (),
            mode: str = "auto", ops: Dialect | None = None) -> CompiledProgram:
    """Lower a program and load its plan: ``tdflow.compile("examples/mlp.mlir")(x, w1, ...)``.

    ``source`` is a ``Module``, MLIR text or a path; ``entry`` picks the function (default: the
    first); ``donate`` names arguments whose buffers the program may overwrite; ``mode`` is
    the executor's (``"auto"``, ``"direct"``, ``"engine"``); ``ops`` the context of op
    libraries the program's ops come from (``tdflow.load_ops("my_ops.td", hooks=[...])``;
    default: the standard ops). Programs with dynamic argument shapes are verified now and
    lowered per argument shapes when called.
    """
    from tdflow.dialect.ir import DiagnosticError, verify_module

    _check_compile_options(device, entry, pipeline, donate, mode)
    loader = module_loader(source)
    module = loader()
    if not len(module):
        raise CompileOptionError("source", "the program has no function to compile")
    context = context_of(ops)
    errors = [d for d in verify_module(module, context) if d.severity == "error"]
    if errors:
        raise DiagnosticError(errors)
    return _compile_module(module, loader, device, entry, pipeline, donate, mode, context)


def compile_verified(module: Module, device: str = "cpu", entry: str | None = None, *,
                     pipeline: str | None = None, donate: Sequence[str] = (),
                     mode: str = "auto", ops: Dialect | None = None) -> CompiledProgram:
    """:func:`compile` of a ``Module`` the caller has just parsed and verified with ``ops``
    (``tdflow run`` does, to report the program's errors first): it is neither copied nor
    verified again, and a static program is lowered in place (the caller gives it up).

    >>> from tdflow.dialect.ir import parse_module
    >>> m = parse_module('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\\n'
    ...     '  %0 = "tdflow.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\\n'
    ...     '  return %0 : tensor<2xf32>\\n}')
    >>> compile_verified(m)(np.array([-1.0, 2.0], np.float32))
    array([0., 2.], dtype=float32)
    """
    _check_compile_options(device, entry, pipeline, donate, mode)
    if not len(module):
        raise CompileOptionError("source", "the program has no function to compile")
    return _compile_module(module, module.clone, device, entry, pipeline, donate, mode,
                           context_of(ops))


def _compile_module(module: Module, loader: Callable[[], Module], device: str,
                    entry: str | None, pipeline: str | None, donate: Sequence[str], mode: str,
                    context: Dialect) -> CompiledProgram:
    """``compile``'s work after the verification: ``loader`` gives a fresh copy of the
    program for each specialisation of a dynamic one."""
    from tdflow.dialect.types import TensorType

    from .op_kernels import selection_table

    entry = entry or module.funcs[0].name
    try:
        func = module[entry]
    except KeyError as exc:
        raise CompileOptionError("entry", f"argument 'entry': {exc.args[0]}") from None
    arguments = []
    for i, a in enumerate(func.args):
        t = a.type
        if not isinstance(t, TensorType):
            raise ArgumentError(f"@{entry}: argument #{i} has type {t}; only tensors can be passed")
        arguments.append((a.name or f"arg{i}", t.shape, t.dtype))
    static = all(t.is_static for t in func.arg_types)
    from tdflow.runtime.backends import get_backend

    backend = get_backend(device)  # BackendUnavailableError("CUDA unavailable: ...") first
    table = selection_table(context, device)  # the standard ops on the CPU: 3-4 modules loaded
    engine = None
    if mode != "direct":
        from tdflow.runtime.engine import get_engine

        engine = get_engine()

    def build(shapes: tuple) -> tuple[Any, ExecutablePlan, Executor]:
        m = module if static else loader()
        if not static:  # specialise the entry's argument types; inference does the rest
            for arg, shape in zip(m[entry].args, shapes):
                arg.type = TensorType(tuple(shape), arg.type.dtype)
        from tdflow.runtime import tracing

        with tracing.span(f"lower @{entry}", "compile", device=device):
            # a static program is the module verified above, unchanged since
            result = lower(m, device, entry, pipeline, donate=donate, ops=context,
                           verified=static)
            plan = result.plan(entry)
        with tracing.span(f"load @{entry}", "compile", device=device,
                          launches=len(plan.launches)):
            return result, plan, Executor(plan, lambda name: table.get(name).fn, mode=mode,
                                          engine=engine, backend=backend)

    return CompiledProgram(entry, arguments, build, static)
