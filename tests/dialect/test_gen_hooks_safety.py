"""`tdflow gen-hooks` on hostile input: nothing a `.td` file says can become code in the skeleton.

Every string that reaches the generated module (names, defaults, summaries, the file name) tries
to end its docstring, comment or string literal and run code that would create a marker file.
The skeleton must parse to exactly the expected top-level statements, use only valid
identifiers, and loading it must not create the marker. Names that MLIR would reject (op
mnemonics, dialect names) are refused at load time, at the record's location.
"""

from __future__ import annotations

import ast
import importlib.util
import keyword
import sys

import pytest
from tdflow.dialect import load_dialect
from tdflow.dialect.gen_hooks import escape, py_ident, skeleton
from tdflow.dialect.hooks import HookRegistry
from tdflow.tdparser.errors import TdError

HEADER = '''include "tdflow/Base.td"
def Evil_Dialect : Dialect { let name = "evil"; }
class Evil_Op<string mnemonic> : Op<Evil_Dialect, mnemonic, []> {
  dag input = (ins);
  dag output = (outs);
  dag attrs = (ins);
  bit has_check_fn = 1;
  bit has_logical_tensor_desc_infer_fn = 1;
  bit has_data_type_infer_fn = 1;
  bit has_get_sbp_fn = 1;
  bit has_input_arg_modify_fn = 1;
}
'''


def _payloads(marker) -> list[str]:
    """Strings that try every way out of a docstring, comment or literal into code."""
    run = f"open({str(marker)!r}, 'w').write('pwned')"
    return [
        f'"""\n{run}\n"""',  # end the docstring, a statement, reopen one
        f"'''\n{run}\n'''",
        f'"); {run}; ("',  # end a "..." literal
        f"'); {run}; ('",
        f"\\\n{run}",  # a backslash that swallows the closing quote / joins lines
        # (a raw \r cannot reach a string: reading the file turns it into a newline)
        f"x\x0b{run}\x1c",  # line breaks to str.splitlines()
        f"x\x0c\n{run}",
        "\\N{x}\\u12\\x",  # invalid escapes: a SyntaxError if copied raw into a literal
        f"x\u2028{run}\x00",  # U+2028 and NUL
    ]


def _td_string(s: str) -> str:
    """``s`` as a TableGen string literal (other control characters may appear raw in one)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _cpp_string(s: str) -> str:
    """``s`` as a C++ string literal (what a StrAttr default holds)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def hostile_td(marker) -> str:
    """Ops whose names, defaults, summaries and descriptions carry the payloads."""
    body = [HEADER]
    for i, p in enumerate(_payloads(marker)):
        s = _td_string(p)
        body.append(f'''def Evil_Op{i} : Evil_Op<"op{i}"> {{
  let summary = {s};
  let description = [{{ {p.replace("}]", "")} }}];
  let input = !dag(ins, [TDF_Tensor, TDF_Tensor], [{s}, "in2"]);
  let output = !dag(outs, [TDF_Tensor], [{_td_string("r" + p)}]);
  let attrs = !dag(ins, [DefaultValuedAttr<StrAttr, {_td_string(_cpp_string(p))}>, F32Attr],
                   [{_td_string("a" + p)}, {_td_string("b" + p)}]);
}}
''')
    return "\n".join(body)


@pytest.fixture
def hostile(tmp_path):
    marker = tmp_path / "PWNED"
    td = tmp_path / 'e"""vil\nimport os.td'
    td.write_text(hostile_td(marker))
    return load_dialect(td, registry=HookRegistry()), td, marker


def test_hostile_names_stay_data(hostile, tmp_path):
    dialect, td, marker = hostile
    ops = list(dialect)
    assert len(ops) == len(_payloads(marker))
    # the hostile strings really reached the op definitions (else the test proves nothing)
    assert any('"""' in o.name for op in ops for o in op.operands)
    assert any("\x0b" in a.name for op in ops for a in op.attributes)
    assert any(isinstance(a.default, str) and "'''" in a.default for op in ops for a in op.attributes)

    text, n = skeleton(dialect, td.name)
    assert n == 5 * len(ops)
    tree = ast.parse(text)  # a SyntaxError here would already be a failure
    compile(tree, "skeleton.py", "exec")

    # Exactly: docstring, `from __future__`, one import from tdflow.dialect.hooks, one def per hook.
    body = tree.body
    assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    assert td.name in body[0].value.value  # the file name survived as text
    assert isinstance(body[1], ast.ImportFrom) and body[1].module == "__future__"
    assert isinstance(body[2], ast.ImportFrom) and body[2].module == "tdflow.dialect.hooks"
    defs = body[3:]
    assert len(defs) == n and all(isinstance(d, ast.FunctionDef) for d in defs)

    want_names = {op.name for op in ops}
    for d in defs:
        # one decorator: a known hook kind called with the op's name as one string constant
        (dec,) = d.decorator_list
        assert isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name)
        assert [type(a) for a in dec.args] == [ast.Constant] and not dec.keywords
        assert dec.args[0].value in want_names
        # the docstring is the first statement, and the rest is the placeholder body only
        doc = ast.get_docstring(d, clean=False)
        assert doc is not None and doc.lstrip().startswith(dec.args[0].value)
        for stmt in d.body[1:]:
            assert isinstance(stmt, (ast.Pass, ast.Return, ast.Expr, ast.Raise)), ast.dump(stmt)
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call):
                    # only ctx.set_output_*/ctx.input_* and NotImplementedError are called
                    f = node.func
                    assert (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                            and f.value.id == "ctx") or (
                        isinstance(f, ast.Name) and f.id == "NotImplementedError"), ast.dump(f)
                    assert all(isinstance(a, (ast.Constant, ast.Call)) for a in node.args)

    # every string constant the body passes holds a name from the .td file, unchanged
    names = {o.name for op in ops for o in (*op.operands, *op.results)}
    for d in defs:
        for node in ast.walk(ast.Module(body=d.body[1:], type_ignores=[])):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value in names

    # importing it registers hooks and runs nothing else
    path = tmp_path / "evil_hooks.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("evil_hooks_skeleton", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["evil_hooks_skeleton"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("evil_hooks_skeleton", None)
    assert not marker.exists()


def test_every_identifier_in_the_skeleton_is_valid(hostile):
    dialect, td, _ = hostile
    tree = ast.parse(skeleton(dialect, td.name)[0])
    idents: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            idents.append(node.name)
            idents += [a.arg for a in node.args.args]
        elif isinstance(node, ast.Name):
            idents.append(node.id)
        elif isinstance(node, ast.Attribute):
            idents.append(node.attr)
        elif isinstance(node, ast.alias):
            idents.append(node.name)
    assert idents
    for name in idents:
        assert name.isascii() and name.isidentifier() and not keyword.iskeyword(name), name
    fn_names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert len(fn_names) == len(set(fn_names))  # no def silently replaces another


def test_comment_for_undeclared_hook_is_one_line(tmp_path):
    td = tmp_path / "u.td"
    td.write_text(HEADER + 'def Evil_Plain : Evil_Op<"plain"> {\n'
                  '  let has_check_fn = 0; let has_logical_tensor_desc_infer_fn = 0;\n'
                  '  let has_data_type_infer_fn = 0; let has_get_sbp_fn = 0;\n'
                  '  let has_input_arg_modify_fn = 0;\n}\n')
    reg = HookRegistry()
    d = load_dialect(td, registry=reg)
    reg.register("evil.plain", "check_attr", lambda ctx: None)  # a hook it does not declare
    text, n = skeleton(d, 'x"""\n__import__("os")')
    assert n == 0
    tree = ast.parse(text)
    assert [type(s) for s in tree.body] == [ast.Expr, ast.ImportFrom]
    assert sum(1 for line in text.splitlines() if line.startswith("# NOTE:")) == 1


@pytest.mark.parametrize("text", [
    'a"""b', "a'''b", "a\\", "\\", "a\nb", "a\rb", "\x00", "\u2028", "\ud800", "\\N{x}", "é€😀",
])
def test_escape_round_trips_in_every_literal_form(text):
    for form in ('"{}"', '"""{}"""', "# {}"):
        src = form.format(escape(text))
        tree = ast.parse(src)  # never a syntax error
        if form.startswith("#"):
            assert tree.body == [] and "\n" not in src and "\r" not in src
        else:
            (stmt,) = tree.body
            assert stmt.value.value == text


@pytest.mark.parametrize("text", ["GL.FAbs", "2d", "é", "class", "match", "", "___", "a-b c"])
def test_py_ident_is_always_an_identifier(text):
    name = py_ident(text) + "_check_attr"
    assert name.isascii() and name.isidentifier() and not keyword.iskeyword(py_ident(text))


@pytest.mark.parametrize("mnemonic", ['bad"""name', "with space", "1st", "semi;colon", "a\nb",
                                      "", "é"])
def test_bad_mnemonic_is_a_located_load_error(tmp_path, mnemonic):
    td = tmp_path / "m.td"
    td.write_text(HEADER + f"def Evil_Bad : Evil_Op<{_td_string(mnemonic)}> {{\n"
                  "  let opName = " + _td_string(mnemonic) + ";\n}\n")
    if mnemonic == "":
        # an empty opName falls back to the def's name, which is a fine mnemonic
        assert [op.mnemonic for op in load_dialect(td, registry=HookRegistry())] == ["bad"]
        return
    with pytest.raises(TdError) as e:
        load_dialect(td, registry=HookRegistry())
    err = e.value
    assert (err.file, err.line) == (str(td), HEADER.count("\n") + 1) and err.col
    assert "mnemonic" in str(err) and "not an MLIR op name" in str(err)


def test_bad_dialect_name_is_a_located_load_error(tmp_path):
    td = tmp_path / "d.td"
    td.write_text(HEADER.replace('let name = "evil";', 'let name = "ev\\"il; import os";')
                  + 'def Evil_X : Evil_Op<"x">;\n')
    with pytest.raises(TdError) as e:
        load_dialect(td, registry=HookRegistry())
    err = e.value
    assert (err.file, err.line) == (str(td), 2)  # the Dialect record's own line
    assert "dialect name" in str(err)
