"""``tdflow tblgen``: a pure-Python ``llvm-tblgen`` (record printing and ``--dump-json``).

    $ tdflow tblgen ops.td -I include --dump-json -o ops.json
    $ tdflow tblgen ops.td -D GPU            # the records, printed as llvm-tblgen prints them

Output is byte-for-byte what ``llvm-tblgen`` writes for the same options, up to the numbering of
``anonymous_N`` records. Errors are rendered diagnostics (exit 1), never tracebacks.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys

# The cache's name for the output and tdflow's include dir: one definition for this command
# and its warm path (tblgen_warm answers a cache hit before this module is imported).
from tdflow.commands.tblgen_warm import output_kind, tdflow_include_dir


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser(
        "tblgen", help=summary,
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
                   help="neither read nor write any on-disk cache (records, grammar)")


def run(args: argparse.Namespace) -> int:
    from tdflow.commands.output import print_diagnostic

    if args.file != "-" and not os.path.isfile(args.file):
        why = ("Is a directory" if os.path.isdir(args.file) else "Not a regular file"
               if os.path.exists(args.file) else "No such file or directory")
        print_diagnostic(f"Could not open input file '{args.file}': {why}")
        return 1

    # tdflow's own include dir (tdflow/Base.td, tdflow/ops/*.td) is searched last, as every
    # other command searches it: `tdflow tblgen ops.td` needs no -I
    args.include_dirs = [*args.include_dirs, tdflow_include_dir()]
    # No cycle collection for the whole command: the evaluation frees its own cycles
    # (Evaluator.release) and the records have none, but the first collection after the
    # evaluation walked every record's objects for nothing (X86: ~1 s). Back on before the
    # caller (an in-process main()) goes on, once the records are freed.
    gc_was_on = gc.isenabled()
    gc.disable()
    # When the process ends after this command (`tdflow`, not an in-process main()), the
    # evaluation is not taken apart (X86: ~0.4 s of frees) but left, cycles and all, for the
    # exit, which frees none of it; the collector is frozen before it is back on, so that no
    # collection, nor the interpreter's last one, walks those millions of objects.
    ending = getattr(args, "process_ends", False)
    try:
        if args.no_cache:
            # Every cache, not only the records': the parser's grammar cache obeys it too.
            from tdflow.core.cache_dir import caches_disabled

            with caches_disabled():
                return _run(args, ending)
        return _run(args, ending)
    finally:
        if ending:
            gc.freeze()
        if gc_was_on:
            gc.enable()


def _run(args: argparse.Namespace, ending: bool = False) -> int:
    render = _render_json if args.action == "json" else _render_records
    if args.file == "-":
        from tdflow.tdparser import parse_string

        # Bytes, decoded as files are (undecodable bytes become U+FFFD, as llvm-tblgen prints
        # them), whatever the locale makes of sys.stdin.
        text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        data = render(parse_string(text, filename="<stdin>", include_dirs=args.include_dirs,
                                   defines=args.defines))
    elif args.no_cache and args.action == "json":
        # Written straight from the evaluation: no records are wanted here (X86: converting
        # its 68k records only to write them was a tenth of the command).
        from tdflow.tdparser.api import json_of_file

        data = _encode(json_of_file(args.file, args.include_dirs, args.defines,
                                    release=not ending))
    elif args.no_cache:
        data = render(_parse(args.file, args.include_dirs, args.defines, ending))
    else:
        # The output itself is cached next to the records: a warm call reads it back without
        # importing the parser or unpickling anything.
        from tdflow.tdparser.cache import load_or_render

        data = load_or_render(
            args.file, args.include_dirs, args.defines,
            build=lambda: _parse(args.file, args.include_dirs, args.defines, ending),
            render=render, kind=output_kind(args.action))
    return _emit(data, args.output)


def _parse(path: str, include_dirs: list[str], defines: list[str], ending: bool = False):
    from tdflow.tdparser.api import parse_file

    return parse_file(path, include_dirs=include_dirs, defines=defines, use_cache=False,
                      release=not ending)


def _render_json(records) -> bytes:
    from tdflow.tdparser.json_text import json_text

    # dump_json_text(to_json(records)), byte for byte, without the intermediate document
    # (X86: 68k records, millions of dicts and lists made only to be serialised)
    return _encode(json_text(records))


def _render_records(records) -> bytes:
    from tdflow.tdparser.json_export import print_records

    return _encode(print_records(records))


def _encode(text: str) -> bytes:
    # Undecodable source bytes: LLVM prints U+FFFD for them. isascii() is O(1) (a flag of
    # the string), the search a scan of the whole text (X86: 140 MB).
    if not text.isascii() and _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    return text.encode("utf-8")


def dump_json_text(doc: dict) -> str:
    """Serialise a ``--dump-json`` document exactly as LLVM's ``json::OStream`` does.

    Compact, keys sorted bytewise, non-ASCII written raw, and only ``"``, ``\\``, ``\\n``,
    ``\\r``, ``\\t`` and ``\\uXXXX`` (lowercase hex) as escapes.

    >>> dump_json_text({"b": [1, None], "a": "x\\by"})
    '{"a":"x\\\\u0008y","b":[1,null]}\\n'
    """
    import json

    from tdflow.tdparser.json_text import llvm_escapes

    return llvm_escapes(json.dumps(doc, sort_keys=True, ensure_ascii=False,
                                   separators=(",", ":"))) + "\n"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _emit(data: bytes, output: str) -> int:
    from tdflow.commands._args import write_output

    write_output(data, output)  # an unwritable OUT is a FileAccessError (exit 1)
    return 0
