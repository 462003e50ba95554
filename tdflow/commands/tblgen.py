"""``tdflow tblgen``: a pure-Python ``llvm-tblgen`` (record printing and ``--dump-json``).

    $ tdflow tblgen ops.td -I include --dump-json -o ops.json
    $ tdflow tblgen ops.td -D GPU            # the records, printed as llvm-tblgen prints them

Output is byte-for-byte what ``llvm-tblgen`` writes for the same options, up to the numbering of
``anonymous_N`` records. Errors are rendered diagnostics (exit 1), never tracebacks.
"""

from __future__ import annotations

import argparse
import os
import re
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tblgen",
        help="parse and resolve a TableGen file; print its records or llvm-tblgen's JSON",
        description="Parse and resolve FILE.td as llvm-tblgen does. Without an action flag the "
        "records are printed (llvm-tblgen's default, --print-records).",
    )
    p.add_argument("file", metavar="FILE.td", help="the TableGen file to read ('-' for stdin)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add DIR to the include search path (repeatable)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME",
                   help="define preprocessor macro NAME (repeatable)")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--dump-json", dest="action", action="store_const", const="json",
                        help="write every def as llvm-tblgen --dump-json does")
    action.add_argument("--print-records", dest="action", action="store_const", const="records",
                        help="print classes and defs (the default)")
    p.add_argument("-o", dest="output", default="-", metavar="OUT",
                   help="write the output to OUT instead of stdout")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the on-disk record cache")


def run(args: argparse.Namespace) -> int:
    from tdflow.commands import print_diagnostic

    if args.file != "-" and not os.path.isfile(args.file):
        why = "Is a directory" if os.path.isdir(args.file) else "No such file or directory"
        print_diagnostic(f"Could not open input file '{args.file}': {why}")
        return 1

    if args.file == "-":
        from tdflow.tdparser import parse_string

        records = parse_string(sys.stdin.read(), filename="<stdin>",
                               include_dirs=args.include_dirs, defines=args.defines)
    else:
        records = load_records(args.file, args.include_dirs, args.defines, not args.no_cache)

    if args.action == "json":
        from tdflow.tdparser import to_json

        text = dump_json_text(to_json(records))
    else:
        text = _records_text(records)
    return _emit(text, args.output)


def load_records(path: str, include_dirs: list[str], defines: list[str], use_cache: bool):
    """``parse_file(path, ...)``, except that a cache hit never imports the parser.

    Importing the lexer, parser and evaluator costs more than loading a cached keeper, and a
    command-line call pays it every time; so the cache is asked first and the parser is only
    imported to build on a miss.
    """

    def build():
        from tdflow.tdparser import parse_file

        return parse_file(path, include_dirs=include_dirs, defines=defines, use_cache=False)

    if not use_cache:
        return build()
    from tdflow.tdparser.cache import load_or_build

    return load_or_build(path, include_dirs, defines, build)


def dump_json_text(doc: dict) -> str:
    """Serialise a ``--dump-json`` document exactly as LLVM's ``json::OStream`` does.

    Compact, keys sorted bytewise, non-ASCII written raw, and only ``"``, ``\\``, ``\\n``,
    ``\\r``, ``\\t`` and ``\\uXXXX`` (lowercase hex) as escapes; invalid text becomes U+FFFD.

    >>> dump_json_text({"b": [1, None], "a": "x\\by"})
    '{"a":"x\\\\u0008y","b":[1,null]}\\n'
    """
    import json

    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    if "\\b" in text or "\\f" in text:
        # Python writes \b and \f short; LLVM spells them \u0008 and \u000c.
        text = _ESCAPE.sub(_llvm_escape, text)
    return text + "\n"


_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _llvm_escape(m: re.Match) -> str:
    esc = m.group(1)
    if esc == "b":
        return "\\u0008"
    if esc == "f":
        return "\\u000c"
    if esc[0] == "u":
        return "\\" + esc.lower()
    return m.group(0)


def _records_text(records) -> str:
    from tdflow.tdparser.json_export import print_records

    return print_records(records)


def _emit(text: str, output: str) -> int:
    if _SURROGATE.search(text):  # undecodable source bytes: LLVM prints U+FFFD for them
        text = _SURROGATE.sub("\ufffd", text)
    data = text.encode("utf-8")
    if output == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    try:
        with open(output, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        from tdflow.commands import print_diagnostic

        print_diagnostic(f"error: cannot write '{output}': {exc.strerror}")
        return 1
    return 0
