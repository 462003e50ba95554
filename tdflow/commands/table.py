"""The CLI's tables: rich's look, without importing rich when its output would be plain text.

Importing ``rich.table`` costs ~30 ms of CPU, a third of the start-up budget (issue 23). When
rich would print no styles (stdout not a terminal, as when piped or captured, and no
``FORCE_COLOR`` / ``TTY_COMPATIBLE``), and the table fits its width with nothing rich would
reinterpret (markup tags, emoji codes, tabs, characters wider or narrower than one cell), the
table is printed here, character for character as rich prints it (``HEAVY_HEAD`` box, one space
of padding, titles justified over the table's width). Everything else goes to rich, unchanged:
a terminal's colours, a table narrowed where a column crops or never wraps, the unusual
text. The tests
hold the two to the same output over many tables.

>>> t = Table()
>>> t.add_column("name"); t.add_column("bytes", justify="right")
>>> t.add_row("a", "16 B"); t.add_row("bb", "4 KiB")
>>> print(t.render_plain(80), end="")
┏━━━━━━┳━━━━━━━┓
┃ name ┃ bytes ┃
┡━━━━━━╇━━━━━━━┩
│ a    │  16 B │
│ bb   │ 4 KiB │
└──────┴───────┘
"""

from __future__ import annotations

import os
import re
import sys

# rich.markup's tags and rich's emoji codes (rich/markup.py, rich/_emoji_replace.py); compiled
# on first use (re caches them), not at import
_TAG = r"((\\*)\[([a-z#/@][^[]*?)])"
_EMOJI = r"(:(\S*?)(?:(?:\-)(emoji|text))?:)"
#: The names of digits only among rich's emoji codes (``a.mlir:100:3`` prints ``a.mlir💯3``):
#: a location's ``:4:`` is checked against these without importing rich's table of them
#: (~6 ms); the tests hold this set to the installed rich's.
DIGIT_EMOJI = frozenset({"100", "1234"})


class Table:
    """A table for :func:`Table.print` (the subset of ``rich.table.Table`` the CLI uses).

    >>> t = Table(title="t"); t.add_column("x"); t.add_row("1"); len(t.rows)
    1
    """

    def __init__(self, title: str | None = None, title_justify: str = "center",
                 show_lines: bool = False) -> None:
        self.title = title
        self.title_justify = title_justify
        self.show_lines = show_lines
        self.columns: list[dict] = []
        self.rows: list[tuple[str, ...]] = []

    def add_column(self, header: str, justify: str = "left", overflow: str = "ellipsis",
                   no_wrap: bool = False, min_width: int | None = None) -> None:
        """Add a column (``rich.table.Table.add_column``'s arguments of those names)."""
        self.columns.append({"header": header, "justify": justify, "overflow": overflow,
                             "no_wrap": no_wrap, "min_width": min_width})

    def add_row(self, *cells: str) -> None:
        """Add a row of strings, one per column."""
        self.rows.append(tuple(cells))

    def rich_table(self):
        """The same table as a ``rich.table.Table`` (imports rich).

        >>> t = Table(); t.add_column("x"); t.rich_table().columns[0].header.plain
        'x'
        """
        from rich.table import Table as RichTable
        from rich.text import Text

        # Text, not str: a cell is data, never rich markup or emoji codes (a result starting
        # "[nan" was read as a style tag and vanished; a location "a.mlir:100:3" became an emoji)
        table = RichTable(title=None if self.title is None else Text(self.title, "table.title"),
                          title_justify=self.title_justify, show_lines=self.show_lines)
        for col in self.columns:
            table.add_column(**{**col, "header": Text(col["header"])})
        for row in self.rows:
            table.add_row(*(Text(cell) for cell in row))
        return table

    def render_plain(self, width: int) -> str | None:
        """The text rich prints for this table on an unstyled console ``width`` columns wide, or
        ``None`` when only rich can say (see the module docstring).

        >>> t = Table(); t.add_column("x"); t.add_row("[bold]y[/bold]"); t.render_plain(80) is None
        True
        """
        if self.show_lines or not self.rows or not self.columns:
            return None
        if any(c["justify"] not in ("left", "right") for c in self.columns):
            return None
        if any(len(row) != len(self.columns) for row in self.rows):
            return None
        texts = [c["header"] for c in self.columns] + [c for row in self.rows for c in row]
        if self.title:
            texts.append(self.title)
        if not all(isinstance(t, str) and inert(t) for t in texts):
            return None
        if any(ln != ln.strip(" ") for t in texts for ln in t.split("\n")):
            return None  # rich may strip or fold spaces at the ends of a line
        widths = []
        for i, col in enumerate(self.columns):
            cells = [col["header"]] + [row[i] for row in self.rows]
            w = max(len(ln) for c in cells for ln in c.split("\n"))
            widths.append(max(w, col["min_width"] or 0) + 2)
        n = len(widths)
        if sum(widths) > width - (n + 1):  # rich narrows the widest columns and folds them
            if any(c["overflow"] not in ("fold", "ellipsis") or c["no_wrap"] or c["min_width"]
                   for c in self.columns):
                return None  # crops, no wrapping: rich's business
            inner = width - (n + 1)
            # rich measures each column within the table's width, then narrows them
            widths = _collapse([min(w, inner) for w in widths], inner) if inner > 2 else None
            if widths is None:
                return None
        if min(widths) < 3:
            return None  # an empty column: rich renders zero-width text its own way
        table_width = sum(widths) + n + 1
        out = []
        if self.title:
            if len(self.title) > table_width or "\n" in self.title:
                return None
            out.append(_justify(self.title, table_width, self.title_justify))
        out.append("┏" + "┳".join("━" * w for w in widths) + "┓")
        out.extend(_row_lines([c["header"] for c in self.columns], self.columns, widths, "┃",
                              header=True))
        out.append("┡" + "╇".join("━" * w for w in widths) + "┩")
        for row in self.rows:
            out.extend(_row_lines(row, self.columns, widths, "│"))
        out.append("└" + "┴".join("─" * w for w in widths) + "┘")
        return "\n".join(out) + "\n"

    def print(self, min_width: int = 0) -> None:
        """Print the table to ``sys.stdout`` as ``tdflow.commands._args.console(min_width)``
        prints the rich table: here when the output is plain (:func:`plain_width`), else by
        rich."""
        width = plain_width(min_width)
        text = self.render_plain(width) if width is not None else None
        if text is None:
            from tdflow.commands._args import console

            console(min_width=min_width).print(self.rich_table())
        else:
            sys.stdout.write(text)


def print_markup(text: str, min_width: int = 0) -> None:
    """``console(min_width).print(text)`` for a line whose only markup is ``[bold]`` /
    ``[/bold]``: written here when the output is plain and the line fits.

    >>> print_markup("[bold]plan @f[/bold] on cpu")  # doctest: +SKIP
    plan @f on cpu
    """
    width = plain_width(min_width)
    plain = text.replace("[bold]", "").replace("[/bold]", "")
    if width is None or not inert(plain) or "\n" in plain or len(plain) > width \
            or plain != plain.rstrip(" "):
        from tdflow.commands._args import console

        console(min_width=min_width).print(text)
    else:
        sys.stdout.write(plain + "\n")


def inert(text: str) -> bool:
    """Whether rich prints ``text`` as it is: printable ASCII (one cell a character) and
    newlines, no markup tag, no emoji code rich knows (only then is rich's table of them
    imported).

    >>> inert("a.mlir:4:3"), inert("[0.5, 1]"), inert("[b]x[/b]"), inert(":smile:"), inert("é")
    (True, True, False, False, False)
    """
    if not (text.isascii() and text.replace("\n", "").isprintable()):
        return False
    if "[" in text and re.search(_TAG, text):
        return False
    names = [m.group(2) for m in re.finditer(_EMOJI, text)] if ":" in text else []
    if all(name.isdigit() or not name for name in names):
        return not any(name in DIGIT_EMOJI for name in names)
    from rich._emoji_codes import EMOJI

    return not any(name.lower() in EMOJI for name in names)


def plain_width(min_width: int = 0) -> int | None:
    """The width rich's console for the CLI's tables would have when it prints no styles, else
    ``None`` (rich decides: a terminal, forced colours, Jupyter, Windows, a non-UTF-8 stdout).

    >>> w = plain_width(120); w is None or w >= 120 or bool(os.environ.get("COLUMNS"))
    True
    """
    env = os.environ
    if sys.platform == "win32" or "IPython" in sys.modules or "idlelib" in sys.modules:
        return None
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower()
    if not encoding.startswith("utf"):
        return None  # rich draws ASCII boxes
    tty_compatible = env.get("TTY_COMPATIBLE", "")
    if tty_compatible == "1":
        return None
    isatty = getattr(sys.stdout, "isatty", None)
    try:
        terminal = isatty is not None and isatty()
    except ValueError:
        terminal = False
    if tty_compatible != "0":
        force = env.get("FORCE_COLOR")
        if (force != "") if force is not None else terminal:
            return None
    width = None
    for fd in (0, 1, 2):  # rich's Console.size
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = env.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    width = width or 80
    if min_width and not columns and not terminal:  # _args.console
        width = max(min_width, width)
    return width


def _justify(text: str, width: int, how: str) -> str:
    """rich's ``Lines.justify``: right and center first strip the line's trailing spaces."""
    if how == "right":
        text = text.rstrip()
        return " " * (width - len(text)) + text
    if how == "center":
        text = text.rstrip()
        left = (width - len(text)) // 2
        return " " * left + text + " " * (width - len(text) - left)
    return text + " " * (width - len(text))


def _row_lines(cells, columns, widths, edge: str, header: bool = False) -> list[str]:
    """A row's lines; a cell shorter than the row is at its top (rich's header: the bottom)."""
    split = [_wrap(c, w - 2, col["overflow"]) for c, w, col in zip(cells, widths, columns)]
    height = max(len(s) for s in split)
    if header:
        split = [[""] * (height - len(s)) + s for s in split]
    lines = []
    for k in range(height):
        parts = []
        for lines_of, col, w in zip(split, columns, widths):
            text = lines_of[k] if k < len(lines_of) else ""
            parts.append(" " + _justify(text, w - 2, col["justify"]) + " ")
        lines.append(edge + edge.join(parts) + edge)
    return lines


def _collapse(widths: list[int], max_width: int) -> list[int] | None:
    """rich's ``Table._collapse_widths`` for columns that all may wrap: the widest columns are
    narrowed, together, to the next widest, until the table fits (``None``: it cannot, rich
    then narrows every column)."""
    widths = list(widths)
    excess = sum(widths) - max_width
    while excess > 0:
        widest = max(widths)
        second = max((w for w in widths if w != widest), default=0)
        if not widest - second:
            break
        ratios = [1 if w == widest else 0 for w in widths]
        widths = _ratio_reduce(excess, ratios, [min(excess, widest - second)] * len(widths),
                               widths)
        excess = sum(widths) - max_width
    if excess > 0 or min(widths) < 3:
        return None
    return widths


def _ratio_reduce(total: int, ratios: list[int], maximums: list[int],
                  values: list[int]) -> list[int]:
    """``total`` taken from ``values`` in proportion to ``ratios``, at most ``maximums``
    (rich's ``_ratio.ratio_reduce``, its rounding included)."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return list(values)
    out = []
    for ratio, maximum, value in zip(ratios, maximums, values):
        if ratio and total_ratio > 0:
            taken = min(maximum, round(ratio * total / total_ratio))
            out.append(value - taken)
            total -= taken
            total_ratio -= ratio
        else:
            out.append(value)
    return out


_WORD = r"\s*\S+\s*"


def _wrap(text: str, width: int, overflow: str = "fold") -> list[str]:
    """The lines of a cell wrapped to ``width`` as rich's ``Text.wrap`` wraps them: words
    greedily; a word longer than a line cut into pieces (``overflow="fold"``) or cut short
    with an ellipsis (``"ellipsis"``, rich's default: a long location in ``tdflow lower``'s
    launches).

    >>> _wrap("a.mlir:12:3 x", 8, "ellipsis"), _wrap("a.mlir:12:3", 8)
    (['a.mlir:…', 'x'], ['a.mlir:1', '2:3'])
    """
    lines = []
    for line in text.split("\n"):
        breaks = _divide_line(line, width, overflow == "fold")
        pieces = [line[a:b] for a, b in zip([0, *breaks], [*breaks, len(line)])]
        for piece in pieces:
            if len(piece) > width:  # Text.rstrip_end, then Text.truncate
                stripped = piece.rstrip()
                piece = piece[:max(len(stripped), width)]
                if len(piece) > width:
                    piece = piece[:width - 1] + "…" if overflow == "ellipsis" else piece[:width]
            lines.append(piece)
    return lines


def _divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """rich's ``_wrap.divide_line(text, width, fold)`` for one-cell characters."""
    breaks: list[int] = []
    offset = 0
    for m in re.finditer(_WORD, text):
        start, word = m.start(), m.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width and not fold:  # the word alone on its line, cut short later
            if start:
                breaks.append(start)
            offset = len(word)
        elif length > width:
            pieces = [word[i:i + width] for i in range(0, len(word), width)]
            for k, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if k == len(pieces) - 1:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    return breaks
