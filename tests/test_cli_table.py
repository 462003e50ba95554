"""The CLI's tables printed without rich (issue 23, start-up): character for character what rich
prints, or left to rich. Differential: every table is also rendered by rich itself."""

from __future__ import annotations

import io

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from tdflow.commands import table as plain

# characters that matter to rich: markup brackets, emoji colons, digits of the :100: emoji,
# spaces at the ends of lines, newlines, a tab, characters wider or narrower than one cell
ALPHABET = "ab019:[]/@ \n\t.%-é中\u0301"
SAFE = "ab01:[]/. %-"  # mostly printed here: drawn more often


def rich_output(t: plain.Table, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, highlight=False, soft_wrap=False).print(t.rich_table())
    return out.getvalue()


def make(title, justify, columns, rows, overflow="fold") -> plain.Table:
    t = plain.Table(title=title, title_justify=justify)
    for header, col_justify, min_width in columns:
        t.add_column(header, justify=col_justify, min_width=min_width, overflow=overflow)
    for row in rows:
        t.add_row(*row)
    return t


cells = st.text(SAFE, max_size=12) | st.text(ALPHABET, max_size=12)
justify = st.sampled_from(["left", "right", "left", "right", "center"])


@st.composite
def tables(draw):
    n = draw(st.integers(1, 4))
    columns = [(draw(cells), draw(justify), draw(st.none() | st.integers(0, 12)))
               for _ in range(n)]
    rows = draw(st.lists(st.tuples(*[cells] * n), min_size=1, max_size=4))
    return make(draw(st.none() | cells), draw(justify), columns, rows)


@settings(max_examples=300, deadline=None)
@given(tables(), st.integers(10, 120))
@example(make("buffers", "left", [("buf", "right", None), ("role", "left", None)],
              [("0", "arg %x"), ("1", "result 0\nand more")]), 80)
@example(make("t", "center", [("loc", "left", None)], [("a.mlir:100:3",), ("b.mlir:4:3",)]), 80)
def test_plain_tables_are_richs_tables(t, width):
    text = t.render_plain(width)
    if text is not None:
        assert text == rich_output(t, width)


def test_plain_tables_cover_the_clis_usual_tables():
    """Not vacuous: the tables lower and run print (ASCII, fitting) are printed here."""
    t = make("launches", "left", [("#", "left", None), ("kernel", "left", None),
                                  ("loc", "left", None)],
             [("0", "cpu.fused_elementwise", "/tmp/small.mlir:4:3"),
              ("init", "cpu.constant", "x.mlir:12:5")])
    assert t.render_plain(120) == rich_output(t, 120)
    r = make("@f returned 1 result(s)", "left", [("first values", "left", None),
                                                 ("min", "right", None)],
             [("[0.111, -0.06432, ...]", "-0.25")])
    assert r.render_plain(160) == rich_output(r, 160)


@pytest.mark.parametrize("text, inert", [
    ("a.mlir:4:3", True), ("[0.5, 1]", True), ("a.mlir:100:3", False),  # rich: a.mlir💯3
    ("[bold]x", False), ("[nan, 1.0]", False), (":smile:", False), ("é", False), ("a\tb", False),
])
def test_inert_text_is_what_rich_prints_unchanged(text, inert):
    assert plain.inert(text) is inert
    out = io.StringIO()
    Console(file=out, width=200, highlight=False, soft_wrap=False).print(text)
    if inert:
        assert out.getvalue() == text + "\n"


@pytest.mark.parametrize("env", [
    {}, {"COLUMNS": "50"}, {"COLUMNS": "300"}, {"FORCE_COLOR": "1"}, {"FORCE_COLOR": ""},
    {"TTY_COMPATIBLE": "1"}, {"TTY_COMPATIBLE": "0"}, {"TTY_COMPATIBLE": "0", "COLUMNS": "70"},
])
@pytest.mark.parametrize("min_width", [0, 120, 200])
def test_plain_width_is_the_width_of_the_clis_unstyled_console(monkeypatch, env, min_width):
    """plain_width is the CLI's console's width exactly when that console prints no styles."""
    from tdflow.commands._args import console

    for name in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    c = console(min_width)
    width = plain.plain_width(min_width)
    assert (width is None) == c.is_terminal
    if width is not None:
        assert width == c.width


def test_print_markup_strips_bold_as_rich_does(capsys):
    plain.print_markup("[bold]plan @f[/bold] on cpu: 2 buffers", 120)
    assert capsys.readouterr().out == "plan @f on cpu: 2 buffers\n"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.text("ab01./%-x", max_size=10), st.text("ab01./%-x", max_size=10),
                          st.text("ab01 ./%-x\n", max_size=10).map(str.strip)),
                min_size=1, max_size=5),
       st.sampled_from(["left", "right"]), st.sampled_from(["left", "right", "center"]))
def test_plain_ascii_tables_that_fit_are_printed_here(rows, col_justify, title_justify):
    rows = [(a, b, "\n".join(ln.strip() for ln in c.split("\n"))) for a, b, c in rows]
    t = make("title", title_justify, [("name", "left", None), ("n", col_justify, None),
                                      ("more", "right", 3)], rows)
    text = t.render_plain(200)
    assert text is not None and text == rich_output(t, 200)


words = st.text("abc01./-", min_size=1, max_size=14)
folding_cells = (st.lists(words, max_size=6).map(" ".join)
                 | st.lists(words, max_size=3).map("\n".join)
                 | st.text("ab0 -", max_size=30).map(str.strip))


@st.composite
def wide_tables(draw, overflow="fold"):
    n = draw(st.integers(1, 6))
    rows = draw(st.lists(st.tuples(*[folding_cells] * n), min_size=1, max_size=4))
    columns = [(f"h{i}" + draw(st.sampled_from(["", " name", "\nx"])),
                draw(st.sampled_from(["left", "right"])), None) for i in range(n)]
    return make(draw(st.none() | words), draw(st.sampled_from(["left", "right", "center"])),
                columns, rows, overflow)


@settings(max_examples=400, deadline=None)
@given(wide_tables(), st.integers(8, 90))
def test_tables_rich_folds_are_folded_here_alike(t, width):
    """Tables wider than the console: rich narrows the widest columns and folds their cells
    (``overflow="fold"``, as ``tdflow ops`` asks); done here, the same characters come out."""
    text = t.render_plain(width)
    if text is not None:
        assert text == rich_output(t, width)


@settings(max_examples=400, deadline=None)
@given(wide_tables("ellipsis"), st.integers(8, 90))
def test_tables_rich_cuts_short_are_cut_here_alike(t, width):
    """Columns of rich's default overflow (``"ellipsis"``, ``tdflow lower``'s launches): a word
    longer than its narrowed column ends in an ellipsis; the same characters as rich's."""
    text = t.render_plain(width)
    if text is not None:
        assert text == rich_output(t, width)


def test_a_long_location_in_lowers_launches_is_cut_here_as_rich_cuts_it():
    """``tdflow lower /a/long/path.mlir``: the location does not fit the 120 columns; rich
    narrows the widest columns and ends the cell with an ellipsis; so does the table here
    (rich was imported for it: ~40 ms of the command)."""
    t = plain.Table(title="launches", title_justify="left")
    for col in ("#", "kernel", "inputs", "outputs", "in-place", "op", "loc"):
        t.add_column(col)
    loc = "/tmp/tdflow-startup-abcdefgh/a-rather-long-folder-name/small.mlir:2:8"
    t.add_row("0", "cpu.fused_elementwise", "buf0, buf1", "buf2", "out0<-in0",
              "tdflow.fused_elementwise", loc)
    t.add_row("1", "cpu.matmul", "buf2, buf3", "buf4", "", "tdflow.matmul", loc)
    text = t.render_plain(120)
    assert text is not None and "…" in text
    assert text == rich_output(t, 120)


def test_the_ops_table_is_printed_here_as_rich_prints_it(monkeypatch):
    """The standard library's table at 200 columns (``tdflow ops`` piped): folded cells."""
    from tdflow.dialect.context import standard_context

    from tdflow.commands import ops

    captured = []
    monkeypatch.setattr(plain.Table, "print", lambda self, min_width=0: captured.append(self))
    ops._table(standard_context().libraries[0])
    t = captured[0]
    text = t.render_plain(200)
    assert text is not None and text == rich_output(t, 200)
    assert t.render_plain(100) == rich_output(t, 100)


def test_digit_emoji_are_richs():
    """Locations (``x.mlir:4:3``) are checked against the emoji codes made of digits only,
    without importing rich's table of codes: the set must be the installed rich's."""
    from rich._emoji_codes import EMOJI

    assert {k for k in EMOJI if k.isdigit()} == plain.DIGIT_EMOJI
    assert "" not in EMOJI


@pytest.mark.parametrize("cell", ["a.mlir:100:3", "[nan, 1.0, inf]", "[bold]x[/bold]",
                                  ":smile: :100:", "[inf]"])
def test_rich_prints_cells_as_data_never_as_markup_or_emoji(cell):
    t = make("[b]t:100:", "left", [("[loc]", "left", None)], [(cell,)])
    text = rich_output(t, 80)
    assert cell in text and "[b]t:100:" in text and "[loc]" in text
    assert "\U0001f4af" not in text and "\U0001f604" not in text
