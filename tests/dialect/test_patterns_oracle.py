"""DRR patterns against mlir-tblgen-19 -gen-rewriters, the reference: on the shared corpus's
DRR files (Toy chapters 3-7, mlir-tblgen's rewriter tests) and on a generated file, tdflow
lists the same patterns with the same names, root ops, benefits and generated ops; on
rewriter-errors.td each malformed pattern fails in both, at the same record, with the same
complaint (tdflow's messages are golden in golden_patterns/)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from tdflow.dialect.dialect import include_dirs_for, load_records
from tdflow.dialect.patterns.reader import read_patterns
from tdflow.tdparser.errors import TdError
from tdflow.tdparser.llvm_tools import find_llvm_tool, mlir_include_dir

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / ".." / "shared" / "corpus" / "drr"
GOLDEN = Path(__file__).resolve().parent / "golden_patterns"
MLIR_TBLGEN = find_llvm_tool("mlir-tblgen")
MLIR_INC = mlir_include_dir()

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus/drr is absent")
needs_mlir = pytest.mark.skipif(MLIR_TBLGEN is None or MLIR_INC is None,
                                reason="mlir-tblgen-19 or MLIR 19's include dir is absent")

# (file, extra include dirs) of every DRR file of the corpus mlir-tblgen accepts
CASES = [(f"toy/Ch{n}/ToyCombine.td", [f"toy/Ch{n}/include"]) for n in range(3, 8)] + [
    ("rewriter-indexing.td", []), ("rewriter-static-matcher.td", [])]

_STRUCT = re.compile(r"struct (\w+) : public ::mlir::RewritePattern \{.*?"
                     r"::mlir::RewritePattern\(\"([^\"]+)\", (\d+), context, \{([^}]*)\}\)",
                     re.S)


def reference(path: Path, incs: list[Path], defines=()) -> subprocess.CompletedProcess:
    cmd = [MLIR_TBLGEN, "-gen-rewriters", str(path), "-I", str(MLIR_INC)]
    for d in incs:
        cmd += ["-I", str(d)]
    cmd += [f"-D{d}" for d in defines]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def reference_patterns(path: Path, incs: list[Path]) -> dict:
    """name -> (root, benefit, generated ops) from the C++ mlir-tblgen writes."""
    proc = reference(path, incs)
    assert proc.returncode == 0, proc.stderr
    return {m[1]: (m[2], int(m[3]), tuple(re.findall(r'"([^"]+)"', m[4])))
            for m in _STRUCT.finditer(proc.stdout)}


def ours(path: Path, incs: list[Path], defines=()) -> dict:
    rk = load_records(path, include_dirs_for([*incs, MLIR_INC or ""]), list(defines))
    return {p.name: (p.root, p.benefit, p.generated_ops) for p in read_patterns(rk)}


@pytest.mark.oracle
@needs_corpus
@needs_mlir
@pytest.mark.parametrize("name,incs", CASES, ids=[c[0] for c in CASES])
def test_corpus_patterns_match_mlir_tblgen(name, incs):
    path = CORPUS / name
    want = reference_patterns(path, [CORPUS / i for i in incs])
    assert want, "mlir-tblgen produced no pattern: the regex no longer fits its output"
    assert ours(path, [CORPUS / i for i in incs]) == want


GENERATED_OPS = """
include "mlir/IR/OpBase.td"
include "mlir/IR/PatternBase.td"
def G_Dialect : Dialect { let name = "g"; }
class G_Op<string m> : Op<G_Dialect, m>;
def UnOp : G_Op<"un">, Arguments<(ins AnyInteger:$x)>, Results<(outs AnyInteger:$y)>;
def BinOp : G_Op<"bin">, Arguments<(ins AnyInteger:$a, AnyInteger:$b)>,
            Results<(outs AnyInteger:$c)>;
def AttrOp : G_Op<"attr">, Arguments<(ins AnyInteger:$x, I32Attr:$k, F32Attr:$f)>,
             Results<(outs AnyInteger:$y)>;
def TwoOp : G_Op<"two">, Arguments<(ins AnyInteger:$x)>,
            Results<(outs AnyInteger:$p, AnyInteger:$q)>;
def Mk : NativeCodeCall<"mk($_builder, $0)">;
def Same : Constraint<CPred<"$0.getType() == $1.getType()">, "same type">;
"""

# anonymous and named patterns mixed, more than ten anonymous ones (mlir-tblgen numbers them
# in record-name order, where anonymous_10 sorts before anonymous_2), benefits added,
# natives, either, constants and auxiliary result patterns
GENERATED_PATTERNS = [
    "def : Pat<(UnOp (UnOp $x)), (UnOp $x)>;",
    "def : Pat<(BinOp $a, (UnOp $b)), (BinOp $b, $a), [], [], (addBenefit 7)>;",
    "def Named1 : Pat<(BinOp (either (UnOp $a), $b)), (UnOp (BinOp $a, $b))>;",
    "def : Pat<(AttrOp $x, $k, ConstF32Attr<\"1.0\">), (replaceWithValue $x)>;",
    "def : Pat<(UnOp:$r $x), (replaceWithValue $x), [(Same $r, $x)]>;",
    "def : Pat<(BinOp (BinOp $a, $b), (BinOp $c, $d)), (BinOp (UnOp $a), (Mk $d))>;",
    "def Named2 : Pat<(UnOp (AttrOp $x, $k, $f)), (AttrOp (UnOp $x), $k, $f)>;",
    "def : Pat<(UnOp (BinOp $a, $a)), (BinOp $a, (UnOp $a)), [], [], (addBenefit -1)>;",
    "def : Pattern<(UnOp $x), [(UnOp:$t $x), (BinOp $t, $x)]>;",
    "def : Pat<(BinOp $a, $b), (BinOp $b, $a), [], [], (addBenefit 3)>;",
    "def : Pat<(UnOp (UnOp (UnOp $x))), (UnOp $x)>;",
    "def : Pat<(AttrOp (UnOp $x), $k, $f), (UnOp (AttrOp $x, $k, $f))>;",
    "def : Pat<(BinOp (UnOp $a), (UnOp $b)), (UnOp (BinOp $a, $b))>;",
    "def : Pattern<(TwoOp $x), [(UnOp $x), (UnOp $x)]>;",
]


@pytest.mark.oracle
@needs_mlir
def test_generated_patterns_match_mlir_tblgen(tmp_path):
    path = tmp_path / "gen.td"
    path.write_text(GENERATED_OPS + "\n".join(GENERATED_PATTERNS) + "\n")
    want = reference_patterns(path, [])
    assert len(want) == len(GENERATED_PATTERNS)
    assert ours(path, []) == want


def _golden_errors() -> dict:
    return json.loads((GOLDEN / "rewriter-errors.json").read_text())


ERROR_CASES = [f"ERROR{i}" for i in range(1, 9)]


def our_error(define: str) -> TdError:
    with pytest.raises(TdError) as info:
        ours(CORPUS / "rewriter-errors.td", [], [define])
    return info.value


@needs_corpus
@pytest.mark.skipif(MLIR_INC is None, reason="MLIR 19's include dir is absent (the file "
                    "includes mlir/IR/OpBase.td)")
@pytest.mark.parametrize("define", ERROR_CASES)
def test_rewriter_errors_golden(define):
    """tdflow's error for each RUN case: one error, at the golden record, golden message."""
    err = our_error(define)
    assert not err.others
    want = _golden_errors()[define]
    assert (Path(err.file).name, err.line, err.col) == ("rewriter-errors.td", want["line"], 1)
    assert err.message == want["message"]


def test_rewriter_errors_run_lines_are_all_covered():
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus/drr is absent")
    runs = re.findall(r"-D(ERROR\d+)", (CORPUS / "rewriter-errors.td").read_text())
    assert sorted(set(runs)) == sorted(ERROR_CASES) == sorted(_golden_errors())


@pytest.mark.oracle
@needs_corpus
@needs_mlir
@pytest.mark.parametrize("define", ERROR_CASES)
def test_rewriter_errors_match_mlir_tblgen(define):
    """mlir-tblgen rejects the same record, with the complaint tdflow's message starts with."""
    proc = reference(CORPUS / "rewriter-errors.td", [], [define])
    assert proc.returncode != 0
    m = re.search(r"rewriter-errors\.td:(\d+):(\d+): error: (.*)", proc.stderr)
    assert m, proc.stderr
    err = our_error(define)
    assert (err.line, err.col) == (int(m[1]), int(m[2]))
    # the same complaint: tdflow's message says what mlir-tblgen's does, sometimes with more
    words = m[3].split()[:5]
    assert err.message.split()[:5] == words, (err.message, m[3])


LLVM_TBLGEN = find_llvm_tool("llvm-tblgen")


@pytest.mark.oracle
@needs_corpus
@pytest.mark.skipif(LLVM_TBLGEN is None or MLIR_INC is None,
                    reason="llvm-tblgen-19 or MLIR 19's include dir is absent")
@pytest.mark.parametrize("name,incs", CASES, ids=[c[0] for c in CASES])
def test_patterns_same_from_llvm_records(name, incs):
    """The reader gives the same patterns from llvm-tblgen's records as from tdflow's."""
    from tdflow.tdparser.records import RecordKeeper

    path = CORPUS / name
    dirs = include_dirs_for([*(CORPUS / i for i in incs), MLIR_INC])
    cmd = [LLVM_TBLGEN, "--dump-json", str(path)] + [a for d in dirs for a in ("-I", d)]
    llvm = RecordKeeper.from_json(json.loads(subprocess.run(
        cmd, capture_output=True, text=True, check=True, timeout=120).stdout))

    def key(p):  # llvm's JSON names files by base name: compare all but the location
        return (p.name, p.root, p.benefit, p.source, p.results, p.constraints, p.matched_ops,
                p.generated_ops, p.natives, p.loc.line)

    # (llvm's JSON lists records by name, not in definition order)
    want = sorted(key(p) for p in read_patterns(load_records(path, dirs)))
    assert sorted(key(p) for p in read_patterns(llvm)) == want and want


# patterns over MLIR's installed Arith dialect, in the shapes MLIR's ArithCanonicalization.td
# uses: ConstantLikeMatcher leaves, `$res__1`, `$_`, enum cases, inline Constraint<CPred>,
# auxiliary result patterns, a class-made NativeCodeCall
ARITH = """\
include "mlir/IR/PatternBase.td"
include "mlir/Dialect/Arith/IR/ArithOps.td"
def Zero : NativeCodeCall<"$_builder.getZeroAttr($0.getType())">;
def Merge : NativeCodeCall<"merge($0, $1)">;
def AddAttrs : NativeCodeCall<"add($_builder, $0, $1, $2)">;
defvar NoOverflow = ConstantEnumCase<Arith_IntegerOverflowAttr, "none">;
class castTo<string t> : NativeCodeCall<"::mlir::cast<" # t # ">($0)">;
def P1 : Pat<(Arith_AddIOp:$res (Arith_AddIOp $x, (ConstantLikeMatcher APIntAttr:$c0), $o1),
              (ConstantLikeMatcher APIntAttr:$c1), $o2),
             (Arith_AddIOp $x, (Arith_ConstantOp (AddAttrs $res, $c0, $c1)), (Merge $o1, $o2))>;
def P2 : Pattern<(Arith_MulSIExtendedOp:$res $x, $y),
                 [(Arith_MulIOp $x, $y, NoOverflow), (replaceWithValue $x)],
                 [(Constraint<CPred<"$0.getUses().empty()">> $res__1)]>;
def P3 : Pat<(Arith_MulFOp (Arith_NegFOp $x, $_), (Arith_NegFOp $y, $_), $fmf),
             (Arith_MulFOp $x, $y, $fmf)>;
def : Pat<(SelectOp $p, (ConstantLikeMatcher ConstantAttr<I1Attr, "0">),
                              (ConstantLikeMatcher ConstantAttr<I1Attr, "1">)),
          (Arith_XOrIOp $p, (Arith_ConstantOp ConstantAttr<I1Attr, "1">))>;
def : Pattern<(Arith_MulSIExtendedOp $x, (ConstantLikeMatcher AnyAttr:$c)),
              [(replaceWithValue $x),
               (Arith_ExtSIOp (Arith_CmpIOp ConstantEnumCase<Arith_CmpIPredicateAttr, "slt">, $x,
                                            (Arith_ConstantOp (Zero $x))))]>;
def P4 : Pat<(Arith_TruncIOp:$tr (Arith_ShRSIOp $x, (ConstantLikeMatcher TypedAttrInterface:$c))),
             (Arith_TruncIOp (Arith_ShRUIOp $x, (Arith_ConstantOp (castTo<"TypedAttr"> $c))))>;
def P5 : Pat<(Arith_SubIOp:$res (Arith_SubIOp $x, $y, $o1), $x, $o2),
             (Arith_SubIOp (Arith_ConstantOp (Zero $y)), $y, (Merge $o1, $o2)), [], [], (addBenefit 10)>;
"""


@pytest.mark.oracle
@needs_mlir
def test_arith_patterns_match_mlir_tblgen(tmp_path):
    if not (MLIR_INC / "mlir" / "Dialect" / "Arith" / "IR" / "ArithOps.td").is_file():
        pytest.skip("MLIR 19's Arith ODS is not installed")
    path = tmp_path / "arith.td"
    path.write_text(ARITH)
    want = reference_patterns(path, [])
    assert len(want) == 7
    assert ours(path, []) == want


@needs_corpus
@pytest.mark.skipif(MLIR_INC is None, reason="MLIR 19's include dir is absent (the corpus "
                    "files include mlir/IR/PatternBase.td)")
@pytest.mark.parametrize("name,incs", CASES, ids=[c[0] for c in CASES])
def test_corpus_patterns_match_recorded_mlir_tblgen(name, incs):
    """Without mlir-tblgen: its output for the corpus, recorded (golden_patterns/), holds."""
    recorded = json.loads((GOLDEN / "corpus-mlir-tblgen.json").read_text())[name]
    want = {k: (v["root"], v["benefit"], tuple(v["generated_ops"])) for k, v in recorded.items()}
    assert ours(CORPUS / name, [CORPUS / i for i in incs]) == want
