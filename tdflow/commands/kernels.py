"""``tdflow kernels``: the CUDA kernels tdflow compiled, with their resources.

    $ tdflow kernels                      # every cubin in tdflow's cache dir (cuda/)
    $ tdflow kernels examples/mlp.mlir    # compile the program's kernels, ptxas's report

Without a program, each cached cubin's kernels are listed with registers and static shared
memory read from the cubin itself (its ELF ``.nv.info.<kernel>`` register count and
``.nv.shared.<kernel>`` section, less sm_90's system-reserved 1 KiB, as ptxas counts it;
ptxas's own figure where a report was recorded), and stack/spills when ``tdflow kernels PROGRAM`` recorded
ptxas's report for it. With a program, it is lowered for ``--device`` (default cuda), every
launch's code compiled in one nvcc call (and cached, as a run would), and ptxas's report
(registers, shared memory, stack frame, spill stores and loads) printed per kernel with the
op and location it computes. Without nvcc it says so (exit 1).
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import sys


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser(
        "kernels", help=summary,
        description="List the cubins in tdflow's cache dir, or compile PROGRAM.mlir's kernels "
        "and print ptxas's resource report for each.",
    )
    p.add_argument("program", metavar="PROGRAM.mlir", nargs="?",
                   help="compile this program's kernels and report on them")
    p.add_argument("--device", default="cuda", help="GPU device to lower for (default: cuda)")
    p.add_argument("--entry", default=None, metavar="NAME", help="only function NAME")
    from tdflow.commands._args import add_ops_args

    add_ops_args(p)


_FUNC = re.compile(r"Function properties for (\S+)\n\s*(\d+) bytes stack frame, (\d+) bytes "
                   r"spill stores, (\d+) bytes spill loads\n.*?Used (\d+) registers"
                   r"(?:, used \d+ barriers)?(?:, (\d+) bytes smem)?", re.S)


def parse_ptxas(report: str) -> dict[str, dict[str, int]]:
    """Per kernel: registers, smem, stack, spill_stores, spill_loads from ``ptxas -v``.

    >>> r = parse_ptxas("ptxas info    : Function properties for k\\n    8 bytes stack frame, "
    ...                 "4 bytes spill stores, 4 bytes spill loads\\nptxas info    : Used 40 "
    ...                 "registers, used 1 barriers, 1024 bytes smem, 356 bytes cmem[0]\\n")
    >>> r["k"]["registers"], r["k"]["smem"], r["k"]["spill_stores"]
    (40, 1024, 4)
    """
    out = {}
    for m in _FUNC.finditer(report):
        name, stack, st, ld, regs, smem = m.groups()
        out[name] = {"registers": int(regs), "smem": int(smem or 0), "stack": int(stack),
                     "spill_stores": int(st), "spill_loads": int(ld)}
    return out


def cubin_kernels(data: bytes) -> dict[str, dict[str, int]]:
    """Kernels of a cubin (ELF64) with ``registers`` and ``smem`` read from its sections.

    The register count is an ``EIATTR_REGCOUNT`` (0x2f) attribute of the ``.nv.info`` section
    (format ``EIFMT_SVAL``: symbol index, count); static shared memory the size of
    ``.nv.shared.<kernel>``, less the 1 KiB a ``.nv.shared.reserved.*`` section says is
    reserved in it (sm_90). Returns ``{}`` for data that is not an ELF64 file.
    """
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = []
    for i in range(shnum):
        name, _, _, _, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        sections.append((name, off, size))
    strtab = sections[shstrndx]

    def name_of(idx: int) -> str:
        start = strtab[1] + idx
        return data[start:data.index(b"\0", start)].decode(errors="replace")

    named = {name_of(n): (off, size) for n, off, size in sections}
    symbols: list[str] = []
    if ".symtab" in named and ".strtab" in named:
        off, size = named[".symtab"]
        strs = named[".strtab"][0]
        for pos in range(off, off + size, 24):  # Elf64_Sym
            n = struct.unpack_from("<I", data, pos)[0]
            symbols.append(data[strs + n:data.index(b"\0", strs + n)].decode(errors="replace"))
    # sm_90 cubins place the block's system-reserved 1 KiB of shared memory (a
    # .nv.shared.reserved.<n> section) inside each kernel's .nv.shared.<kernel> section;
    # ptxas's "bytes smem" (what `tdflow kernels PROGRAM` prints) counts only the kernel's own
    reserved = 1024 if any(n.startswith(".nv.shared.reserved.") for n in named) else 0
    kernels: dict[str, dict[str, int]] = {}
    for sec in named:
        if sec.startswith(".text."):
            k = sec[len(".text."):]
            smem = named.get(f".nv.shared.{k}", (0, 0))[1]
            kernels[k] = {"registers": -1, "smem": smem - reserved if smem >= reserved else smem}
    # EIATTR_REGCOUNT entries of the global .nv.info: (symbol index, registers)
    off, size = named.get(".nv.info", (0, 0))
    pos = off
    while pos + 4 <= off + size:
        fmt, attr, length = struct.unpack_from("<BBH", data, pos)
        if fmt != 0x04:  # EIFMT_NVAL / BVAL / HVAL: the value sits in the length field
            pos += 4
            continue
        if attr == 0x2F and length >= 8:
            sym, regs = struct.unpack_from("<II", data, pos + 4)
            if sym < len(symbols) and symbols[sym] in kernels:
                kernels[symbols[sym]]["registers"] = regs
        pos += 4 + length
    return kernels


def run(args: argparse.Namespace) -> int:
    from tdflow.runtime.backends.cuda_status import find_nvcc
    from tdflow.runtime.backends.kernel_build import CompileError

    if find_nvcc() is None:
        raise CompileError("nvcc not found on PATH, under $CUDA_HOME/bin or "
                           "/usr/local/cuda/bin: tdflow kernels needs the CUDA toolkit")
    if args.program is None:
        return _list_cache()
    return _report_program(args)


def _table(title: str, columns: tuple[str, ...], n_names: int, rows: list[tuple[str, ...]]):
    """A rich table whose first ``n_names`` columns are names: the kernel column keeps its
    whole width (a kernel name is searched for, so it never ends in "…" in a narrow terminal);
    other names and the headings fold onto more lines instead."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    kernel = columns.index("kernel")
    for i, col in enumerate(columns):
        widest = max((len(r[i]) for r in rows), default=0) if i == kernel else None
        table.add_column(col, justify="left" if i < n_names else "right", overflow="fold",
                         min_width=widest, no_wrap=i == kernel)
    for r in rows:
        table.add_row(*r)
    return table


def _reports_dir():
    from tdflow.core.cache_dir import usable_dir

    return usable_dir("cuda-reports")


def _list_cache() -> int:

    from tdflow.commands._args import console
    from tdflow.core.cache_dir import usable_dir

    folder = usable_dir("cuda")
    cubins = sorted(folder.glob("*.cubin")) if folder is not None else []
    reports = _reports_dir()
    rows = []
    for path in cubins:
        known = {}
        rep = reports / f"{path.stem}.json" if reports is not None else None
        if rep is not None and rep.is_file():
            try:
                known = json.loads(rep.read_text())
            except (OSError, ValueError):
                known = {}  # a damaged report: the cubin's own numbers still show
        for name, res in sorted(cubin_kernels(path.read_bytes()).items()):
            r = known.get(name, {})
            spills = f"{r['spill_stores']}/{r['spill_loads']}" if r else "-"
            rows.append((path.stem[:12], name, str(res["registers"]),
                         str(r.get("smem", res["smem"])), str(r.get("stack", "-")), spills))
    table = _table(f"{len(cubins)} cached cubin(s) in {folder}",
                   ("cubin", "kernel", "registers", "smem", "stack", "spills (st/ld)"), 2, rows)
    console(min_width=120).print(table)
    return 0


def _report_program(args: argparse.Namespace) -> int:

    from tdflow.commands._args import check_ops_args, console, context_from_args
    from tdflow.commands.lower import cuda_source
    from tdflow.core.files import read_input
    from tdflow.dialect.ir import parse_module
    from tdflow.runtime.backends.cuda_status import find_nvcc
    from tdflow.runtime.backends.kernel_build import (
        DEFAULT_ARCH,
        NVCC_FLAGS,
        cache_key,
        compile_cubin,
        nvcc_version,
        ptxas_report,
    )
    from tdflow.runtime.compiled import lower

    check_ops_args(args)
    if args.device.split(":")[0] not in ("cuda", "cudasim"):
        # the cpu device has no CUDA kernels: an empty report would look like success
        sys.stderr.write("usage: tdflow kernels [PROGRAM.mlir] [--device cuda]\n"
                         "tdflow kernels: error: PROGRAM.mlir's kernels need a GPU device (cuda "
                         f"or cudasim), not {args.device!r}\n")
        return 2
    context = context_from_args(args)
    name = "<stdin>" if args.program == "-" else args.program
    module = parse_module(read_input(args.program), name)
    result = lower(module, args.device, args.entry, ops=context)
    source = cuda_source(result.plans.values(), args.device, context)
    compile_cubin(source)  # cached, as a run on the GPU would
    report = parse_ptxas(ptxas_report(source))
    reports = _reports_dir()
    if reports is not None:
        from tdflow.core.cache_dir import atomic_write

        nvcc = find_nvcc()
        key = cache_key(source, nvcc_version(nvcc), (f"-arch={DEFAULT_ARCH}", "--cubin",
                                                     *NVCC_FLAGS))
        atomic_write(reports / f"{key}.json", json.dumps(report).encode())
    where = {}
    for line in source.splitlines():
        m = re.match(r"//   launch \d+: (\S+) at (\S+): (.*)", line)
        if m:
            for k in re.findall(r"(\w+)<<<", m.group(3)):
                where.setdefault(k, (m.group(1), m.group(2)))
    rows = [(k, *where.get(k, ("?", "?")), str(r["registers"]), str(r["smem"]),
             str(r["stack"]), str(r["spill_stores"]), str(r["spill_loads"]))
            for k, r in report.items()]
    table = _table(f"{len(report)} kernel(s) of {name} for {DEFAULT_ARCH}",
                   ("kernel", "op", "loc", "registers", "smem", "stack", "spill stores",
                    "spill loads"), 3, rows)
    console(min_width=140).print(table)
    return 0
