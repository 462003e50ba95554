"""``tdflow patterns``: list the rewrite patterns (DRR ``Pat<...>``) of a ``.td`` file.

    $ tdflow patterns rules.td                                   # a table
    $ tdflow patterns ToyCombine.td -I toy/include -I $(llvm-config-19 --includedir) --json

Each pattern shows its name (mlir-tblgen's: the record name, or ``GeneratedConvertN``), root
op, benefit, the ops it matches and generates, its constraints and the natives (``CPred`` and
``NativeCodeCall`` records) it needs from Python. Without a file: the standard library's.
A malformed pattern is reported at its record (every one at once), exit 1.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser("patterns", help=summary,
                       description="List every rewrite pattern (Pat<...>/Pattern<...> record) "
                       "of FILE.td (default: the standard library's): name, root op, benefit, "
                       "matched and generated ops, constraints, natives.")
    p.add_argument("td", nargs="?", metavar="FILE.td",
                   help="the pattern file (it includes its ops: tdflow/ops.td, your library, "
                        "or MLIR's ODS)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add DIR to the include search path (repeatable; tdflow's own include "
                        "dir with tdflow/Patterns.td and tdflow/ops.td is always searched)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME",
                   help="define preprocessor macro NAME (repeatable)")
    p.add_argument("--json", action="store_true",
                   help="print a JSON list: name, root, benefit, matched_ops, generated_ops, "
                        "constraints, natives, location")


def run(args: argparse.Namespace) -> int:
    from tdflow.core.files import check_input_file
    from tdflow.dialect.dialect import include_dirs_for, load_records, standard_ops_path
    from tdflow.dialect.patterns.reader import read_patterns

    path = args.td or str(standard_ops_path())
    check_input_file(path, "pattern definitions")
    records = load_records(path, include_dirs_for(args.include_dirs), args.defines)
    patterns = read_patterns(records)
    if args.json:
        import json
        import sys

        # one write, not json.dump's thousands through the CLI's guarded stdout
        sys.stdout.write(json.dumps([pattern_to_json(p) for p in patterns], indent=2) + "\n")
        return 0
    _table(patterns, path)
    n = len(patterns)
    print(f"{n} pattern{'s' if n != 1 else ''}")
    return 0


def pattern_to_json(p) -> dict:
    """A pattern as the JSON ``tdflow patterns --json`` prints.

    >>> from tdflow.dialect.patterns import Bind, OpNode, Pattern
    >>> src = OpNode("op", "tdflow.relu", (Bind("x", "any"),), ("x",))
    >>> pattern_to_json(Pattern("P", "tdflow.relu", 1, src, (Bind("x", "any"),)))["root"]
    'tdflow.relu'
    """
    loc = p.loc
    return {
        "name": p.name,
        "root": p.root,
        "benefit": p.benefit,
        "matched_ops": list(p.matched_ops),
        "generated_ops": list(p.generated_ops),
        "constraints": [{"record": c.record, "args": list(c.args), "kind": c.kind,
                         "pred": c.pred, "summary": c.summary} for c in p.constraints],
        "natives": list(p.natives),
        "location": f"{loc.file}:{loc.line}:{loc.col}" if loc else None,
    }


def _constraint_text(c) -> str:
    args = ", ".join("$" + a for a in c.args)
    return f"{c.record}({args})" + (" [native]" if c.kind == "cpred" else "")


def _table(patterns, path: str) -> None:
    from tdflow.commands.table import Table

    table = Table(title=f"{len(patterns)} patterns ({path})", show_lines=False)
    for col in ("pattern", "root", "benefit", "matches", "generates", "constraints",
                "natives", "at"):
        table.add_column(col, overflow="fold")
    for p in patterns:
        loc = f"{p.loc.file}:{p.loc.line}" if p.loc else ""
        table.add_row(p.name, p.root, str(p.benefit), ", ".join(p.matched_ops),
                      ", ".join(p.generated_ops) or "-",
                      "\n".join(_constraint_text(c) for c in p.constraints),
                      ", ".join(p.natives), loc)
    table.print(200)
