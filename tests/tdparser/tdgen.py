"""Hypothesis strategies for random, valid TableGen programs (used by test_properties.py).

Programs are built from typed expression generators (``int``, ``bit``, ``string``,
``list<int>``) over the variables in scope, so nearly every program is one llvm-tblgen accepts:
classes with template arguments and defaults (one deriving from another, overriding a field that
a third field refers to, to exercise late binding), ``defvar``, ``def`` with bodies and ``let``,
top-level ``let ... in``, ``foreach``, ``if/then/else``, anonymous defs, and the arithmetic,
comparison, string and list bang operators. Integers stay small so no operator overflows.

>>> from hypothesis import find
>>> "class C0" in find(programs(), lambda p: True)
True
"""

from __future__ import annotations

from hypothesis import strategies as st

SMALL_INT = st.integers(min_value=-20, max_value=40)
WORDS = st.sampled_from(["a", "B", "op", "Add", "x_1", "", "mlir", "Zz", "tensor"])


@st.composite
def int_expr(draw, scope: dict[str, str], depth: int = 2) -> str:
    ints = [n for n, t in scope.items() if t == "int"]
    leaves = [SMALL_INT.map(str)]
    if ints:
        leaves.append(st.sampled_from(ints))
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(*leaves))
    kind = draw(st.sampled_from(
        ["add", "sub", "mul", "and", "or", "xor", "shl", "sra", "srl", "div", "if", "size",
         "cond", "head", "hex", "neg", "foldl", "find", "logtwo"]))
    sub = int_expr(scope, depth - 1)
    if kind in ("add", "sub", "mul", "and", "or", "xor"):
        args = draw(st.lists(sub, min_size=2, max_size=3 if kind != "sub" else 2))
        return f"!{kind}({', '.join(args)})"
    if kind in ("shl", "sra", "srl"):
        return f"!{kind}({draw(sub)}, {draw(st.integers(0, 6))})"
    if kind == "div":
        return f"!div({draw(sub)}, {draw(st.sampled_from([-3, -2, 1, 2, 3, 7]))})"
    if kind == "if":
        return f"!if({draw(bit_expr(scope, depth - 1))}, {draw(sub)}, {draw(sub)})"
    if kind == "size":
        return f"!size({draw(list_expr(scope, depth - 1))})"
    if kind == "cond":
        return (f"!cond({draw(bit_expr(scope, depth - 1))}: {draw(sub)}, "
                f"true: {draw(sub)})")
    if kind == "head":
        return f"!head([{draw(sub)}, {draw(sub)}])"
    if kind == "hex":
        return draw(st.sampled_from(["0x1f", "0b101", "0b0", "-7"]))
    if kind == "neg":
        return f"!sub(0, {draw(sub)})"
    if kind == "foldl":
        acc, e = f"acc{depth}", f"fe{depth}"  # foldl variables may not shadow outer ones
        return f"!foldl(0, {draw(list_expr(scope, depth - 1))}, {acc}, {e}, !add({acc}, {e}))"
    if kind == "find":
        return f"!find({draw(str_expr(scope, depth - 1))}, {draw(WORDS.map(quote))})"
    return f"!logtwo({draw(st.integers(1, 1000))})"


@st.composite
def bit_expr(draw, scope: dict[str, str], depth: int = 2) -> str:
    if depth <= 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(["0", "1", "true", "false"]))
    kind = draw(st.sampled_from(["cmp", "not", "empty", "streq", "and"]))
    if kind == "cmp":
        op = draw(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]))
        return f"!{op}({draw(int_expr(scope, depth - 1))}, {draw(int_expr(scope, depth - 1))})"
    if kind == "not":
        return f"!not({draw(bit_expr(scope, depth - 1))})"
    if kind == "empty":
        return f"!empty({draw(list_expr(scope, depth - 1))})"
    if kind == "streq":
        return f"!eq({draw(str_expr(scope, depth - 1))}, {draw(WORDS.map(quote))})"
    return f"!and({draw(bit_expr(scope, depth - 1))}, {draw(bit_expr(scope, depth - 1))})"


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


@st.composite
def str_expr(draw, scope: dict[str, str], depth: int = 2) -> str:
    strs = [n for n, t in scope.items() if t in ("string", "code")]
    leaves = [WORDS.map(quote), st.sampled_from(["[{c0}]", "[{ x }]", "[{}]"])]  # code too
    if strs:
        leaves.append(st.sampled_from(strs))
    if depth <= 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.one_of(*leaves))
    kind = draw(st.sampled_from(
        ["concat", "paste", "strconcat", "upper", "lower", "substr", "cast", "interleave",
         "if", "adjacent", "subst"]))
    sub = str_expr(scope, depth - 1)
    if kind == "concat":
        return f"!strconcat({draw(sub)}, {draw(sub)})"
    if kind == "paste":
        return f"!strconcat({draw(sub)} # {draw(int_expr(scope, depth - 1))}, \"\")"
    if kind == "strconcat":
        return f"!strconcat({draw(sub)}, \"_\", {draw(sub)})"
    if kind == "upper":
        return f"!toupper({draw(sub)})"
    if kind == "lower":
        return f"!tolower({draw(sub)})"
    if kind == "substr":
        # the start must be within the string; 0 always is
        return f"!substr({draw(sub)}, 0, {draw(st.integers(0, 4))})"
    if kind == "cast":
        return f"!cast<string>({draw(int_expr(scope, depth - 1))})"
    if kind == "interleave":
        return f"!interleave({draw(list_expr(scope, depth - 1))}, \", \")"
    if kind == "if":
        return f"!if({draw(bit_expr(scope, depth - 1))}, {draw(sub)}, {draw(sub)})"
    if kind == "adjacent":
        return f"!strconcat({draw(WORDS.map(quote))} {draw(WORDS.map(quote))}, \"\")"
    if kind == "hash":  # a bare paste, not wrapped in !strconcat
        return f"{draw(sub)} # {draw(sub)}"
    return f"!subst(\"a\", {draw(WORDS.map(quote))}, {draw(sub)})"


@st.composite
def list_expr(draw, scope: dict[str, str], depth: int = 2) -> str:
    sub = int_expr(scope, depth - 1)
    if depth <= 0 or draw(st.integers(0, 2)) == 0:
        items = draw(st.lists(sub, min_size=0, max_size=3))
        return f"[{', '.join(items)}]" if items else "[]<int>"
    kind = draw(st.sampled_from(["concat", "range", "foreach", "filter", "splat", "tail"]))
    if kind == "concat":
        return f"!listconcat({draw(list_expr(scope, depth - 1))}, [{draw(sub)}])"
    if kind == "range":
        return f"!range({draw(st.integers(0, 4))})"
    if kind == "foreach":
        return f"!foreach(e, {draw(list_expr(scope, depth - 1))}, !mul(e, {draw(sub)}))"
    if kind == "filter":
        return f"!filter(e, {draw(list_expr(scope, depth - 1))}, !gt(e, {draw(sub)}))"
    if kind == "splat":
        return f"!listsplat({draw(sub)}, {draw(st.integers(0, 3))})"
    return f"!tail([{draw(sub)}, {draw(sub)}])"


EXPR = {"int": int_expr, "bit": bit_expr, "string": str_expr, "code": str_expr,
        "list<int>": list_expr}


@st.composite
def programs(draw) -> str:
    """A whole TableGen program (text)."""
    out: list[str] = []
    n_classes = draw(st.integers(1, 3))
    classes: list[tuple[str, list[tuple[str, str]], dict[str, str]]] = []
    for c in range(n_classes):
        name = f"C{c}"
        params = [("a", "int"), ("s", "string")][: draw(st.integers(1, 2))]
        # a default may only refer to the template arguments before it
        targs = ", ".join(f"{t} {n} = {draw(EXPR[t](dict(params[:k]), 1))}"
                          for k, (n, t) in enumerate(params))
        scope = dict(params)
        fields: dict[str, str] = {}
        body: list[str] = []
        parent = ""
        if classes and draw(st.booleans()):
            pname, pparams, pfields = classes[-1]
            pargs = ", ".join(draw(EXPR[t](scope, 1)) for _, t in pparams)
            parent = f" : {pname}<{pargs}>"
            fields.update(pfields)
            overridable = [f for f, t in pfields.items() if t == "int" and f != "late"]
            if overridable:
                f = draw(st.sampled_from(overridable))
                body.append(f"  let {f} = {draw(int_expr(scope, 2))};")
        for i, t in enumerate(draw(st.lists(st.sampled_from(list(EXPR)), min_size=1,
                                            max_size=4))):
            fname = f"f{c}_{i}"
            body.append(f"  {t} {fname} = {draw(EXPR[t](scope, 2))};")
            fields[fname] = t
        if "x" not in fields:
            body.append(f"  int x = {draw(int_expr(scope, 1))};")
            fields["x"] = "int"
        if "late" not in fields:
            body.append("  int late = !add(x, 1);  // late-bound: sees every let of x")
            fields["late"] = "int"
        out.append(f"class {name}<{targs}>{parent} {{\n" + "\n".join(body) + "\n}")
        classes.append((name, params, fields))

    globals_: dict[str, str] = {}
    for g in range(draw(st.integers(0, 2))):
        t = draw(st.sampled_from(list(EXPR)))
        out.append(f"defvar g{g} = {draw(EXPR[t](globals_, 2))};")
        globals_[f"g{g}"] = t

    def inst(scope: dict[str, str]) -> tuple[str, dict[str, str]]:
        cname, params, fields = draw(st.sampled_from(classes))
        n = draw(st.integers(0, len(params)))
        args = ", ".join(draw(EXPR[t](scope, 1)) for _, t in params[:n])
        return (f"{cname}<{args}>" if n else cname), fields

    for d in range(draw(st.integers(1, 5))):
        form = draw(st.sampled_from(["plain", "body", "let", "foreach", "if", "anon", "range"]))
        cls, fields = inst(globals_)
        if form == "plain":
            out.append(f"def D{d} : {cls};")
        elif form == "body":
            f = draw(st.sampled_from(sorted(fields)))
            out.append(f"def D{d} : {cls} {{\n  let {f} = {draw(EXPR[fields[f]](globals_, 2))};\n"
                       f"  string extra = {draw(str_expr(globals_, 1))};\n}}")
        elif form == "let":
            out.append(f"let x = {draw(int_expr(globals_, 1))} in {{\n  def D{d} : {cls};\n"
                       f"  def D{d}b : {cls};\n}}")
        elif form == "foreach":
            items = draw(st.lists(SMALL_INT.filter(lambda v: v >= 0).map(str), min_size=1,
                                  max_size=3, unique=True))
            scope = {**globals_, "i": "int"}
            cls2, _ = inst(scope)
            out.append(f"foreach i = [{', '.join(items)}] in {{\n  def D{d}_ # i : {cls2} {{\n"
                       f"    int idx = !mul(i, {draw(int_expr(scope, 1))});\n  }}\n}}")
        elif form == "range":
            out.append(f"foreach i = 0...{draw(st.integers(0, 3))} in\n"
                       f"  def D{d}_r # i : {cls};")
        elif form == "if":
            cls2, _ = inst(globals_)
            out.append(f"if {draw(bit_expr(globals_, 2))} then {{\n  def D{d} : {cls};\n}} "
                       f"else {{\n  def D{d} : {cls2};\n}}")
        else:
            out.append(f"def : {cls};")
    return "\n".join(out) + "\n"


# -- records, dags, multiclasses ------------------------------------------------------------------

TYPE_NAMES = ["T8", "T16", "T32"]


@st.composite
def type_list(draw) -> str:
    items = draw(st.lists(st.sampled_from(TYPE_NAMES + ["T<3>", "T<8>", "T<64>"]), max_size=3))
    return f"[{', '.join(items)}]" if items else "[]<T>"


@st.composite
def dag_expr(draw, depth: int = 2) -> str:
    if depth <= 0 or draw(st.integers(0, 2)) == 0:
        args = draw(st.lists(st.tuples(st.sampled_from(TYPE_NAMES + ["?", "7", '"s"']),
                                       st.sampled_from(["", ":$a", ":$b", ":$in"])),
                             max_size=3))
        op = draw(st.sampled_from(["ins", "outs"]))
        return f"({op}{' ' if args else ''}{', '.join(v + n for v, n in args)})"
    kind = draw(st.sampled_from(["con", "dag", "setop", "setarg", "setname"]))
    if kind == "con":  # both operands need the same operator
        d = draw(dag_expr(depth - 1))
        return f"!con({d}, {d})"
    if kind == "dag":
        n = draw(st.integers(0, 3))
        vals = ", ".join(draw(st.sampled_from(TYPE_NAMES)) for _ in range(n))
        names = ", ".join(draw(st.sampled_from(['"p"', '"q"', "?"])) for _ in range(n))
        return f"!dag(ins, [{vals}]<T>, [{names}]<string>)"
    if kind == "setop":
        return f"!setdagop({draw(dag_expr(depth - 1))}, outs)"
    # llvm-tblgen folds both arms of an !if, so index 0 must exist either way
    d = draw(dag_expr(depth - 1))
    d = f"!con({d}, !setdagop((ins T8:$z), !getdagop({d})))"
    if kind == "setarg":
        return f"!setdagarg({d}, 0, T32)"
    return f"!setdagname({d}, 0, \"nm\")"


RECORD_PRELUDE = """\
def ins;
def outs;
class T<int w = 1> {
  int width = w;
  string tname = "t" # w;
}
def T8 : T<8>;
def T16 : T<16>;
def T32 : T<32>;
class Op<string m, list<T> ts = [], dag a = (ins)> {
  string mnemonic = m;
  list<T> types = ts;
  dag args = a;
  int n = !size(ts);
  bits<8> enc = 0;
  T first = !if(!empty(ts), T8, !head(ts));
  string widths = !interleave(!foreach(t, ts, t.width), ",");
  int total = !foldl(0, ts, acc, t, !add(acc, t.width));
  string self = NAME;
}
"""


@st.composite
def record_programs(draw) -> str:
    """Programs about records: class-typed fields, anonymous instantiation (uniqued), field
    access, bit slices, dags and their bang operators, multiclass/defm with NAME, defset."""
    out = [RECORD_PRELUDE]
    k = draw(st.integers(0, 3))
    mc = [f"multiclass M<string m, int k = {k}> {{",
          f"  def _a : Op<m # \"_a\", {draw(type_list())}>;",
          f"  def _b : Op<m # \"_b\", !listsplat(T16, k), {draw(dag_expr())}> {{",
          f"    let enc{{{draw(st.sampled_from(['3-0', '7-4', '0', '5-2']))}}} = "
          f"{draw(st.sampled_from(['0', '1', '3', '10'][:1 + k]))};",
          "  }",
          "  defvar v = !mul(k, 2);",
          "  def NAME # _c : Op<!tolower(NAME), [T<v>]>;"]
    if draw(st.booleans()):
        mc.append("  foreach i = !range(k) in\n    def _f # i : Op<m # i, [T<i>]>;")
    mc.append("}")
    out.append("\n".join(mc))
    defms = draw(st.lists(st.sampled_from(["X", "Yy", "Zed", "Q1"]), min_size=1, max_size=3,
                          unique=True))
    for i, name in enumerate(defms):
        k_arg = f", {i}" if draw(st.booleans()) else ""
        out.append(f"defm {name} : M<{quote(name.lower())}{k_arg}>;")
    for i in range(draw(st.integers(1, 4))):
        body = []
        if draw(st.booleans()):
            enc = draw(st.sampled_from(["0b10100110", "255", "0x0f", "{1, 0, 1, 1, 0, 0, 0, 1}", "7"]))
            body.append(f"  let enc = {enc};")
        if draw(st.booleans()):
            body.append("  int w = first.width;")
        if draw(st.booleans()):
            body.append("  bits<4> lo = enc{3-0};")
        out.append(f"def D{i} : Op<\"d{i}\", {draw(type_list())}, {draw(dag_expr())}>"
                   + (" {\n" + "\n".join(body) + "\n}" if body else ";"))
    d = draw(dag_expr())
    cast_width = draw(st.sampled_from(["8", "16", "32"]))
    isa_arg = draw(st.sampled_from(TYPE_NAMES))
    exists_arg = quote(draw(st.sampled_from(["D0", "T8", "nope"])))
    repr_arg = draw(st.sampled_from(["T8", "[1, 2]", quote("s"), "(ins T8:$x)"]))
    out.append("\n".join([
        "def Z {",
        f"  dag d = {d};",
        "  int size = !size(d);",
        f"  T viaCast = !cast<T>(\"T\" # {cast_width});",
        "  int width = viaCast.width;",
        f"  bit isaT = !isa<T>({isa_arg});",
        f"  bit exists = !exists<Op>({exists_arg});",
        f"  string rep = !repr({repr_arg});",
        "}",
    ]))
    if draw(st.booleans()):
        out.append("defset list<Op> Some = {\n  def S0 : Op<\"s0\">;\n  defm Sm : M<\"sm\", 1>;\n}\n"
                   "def Count {\n  int n = !size(Some);\n"
                   "  list<string> names = !foreach(o, Some, o.mnemonic);\n}")
    return "\n".join(out) + "\n"
