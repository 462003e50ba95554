"""The CLI's subcommands as a light table: name, module under :mod:`tdflow.commands`, and the
one line ``tdflow --help`` shows. :func:`tdflow.cli.build_parser` lists every command from it
and imports only the module of the command that runs (its ``register`` adds the options).

>>> COMMANDS["gen-hooks"][0], module_of("import-onnx")
('gen_hooks', 'tdflow.commands.import_onnx')
"""

from __future__ import annotations

#: CLI name -> (module under tdflow.commands, one-line help), in the order ``--help`` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "tblgen": ("tblgen",
        "parse and resolve a TableGen file; print its records or llvm-tblgen's JSON"),
    "ops": ("ops",
        "list the ops of op libraries (table or --json)"),
    "patterns": ("patterns",
        "list the rewrite patterns (DRR) of a .td file"),
    "verify": ("verify",
        "verify programs (or, without any, the ops' hooks)"),
    "doc": ("doc",
        "write a markdown reference of the ops of op libraries"),
    "opt": ("opt",
        "parse, verify and print a program"),
    "gen-hooks": ("gen_hooks",
        "write a Python skeleton for missing hooks"),
    "lower": ("lower",
        "lower a program through the pass pipeline; print the IR and the executable plan"),
    "run": ("run",
        "compile a program and run one of its functions on given or random inputs"),
    "kernels": ("kernels",
        "list compiled CUDA kernels with registers, shared memory and spills"),
    "import-onnx": ("import_onnx",
        "import an ONNX model as an onnx.* program"),
    "view": ("view",
        "write an HTML graph of a program (needs Graphviz's dot)"),
    "launch": ("launch",
        "run a Python script on N MPI ranks (mpiexec from the mpich wheel)"),
}


def module_of(command: str) -> str:
    """The module implementing CLI command ``command`` (``register(subparsers, summary)``,
    ``run(args)``); a name not in the table is its module's name with ``-`` as ``_``.

    >>> module_of("verify"), module_of("my-cmd")
    ('tdflow.commands.verify', 'tdflow.commands.my_cmd')
    """
    entry = COMMANDS.get(command)
    return f"tdflow.commands.{entry[0] if entry else command.replace('-', '_')}"
