"""The LALR(1) loop for ``tablegen.lark``, run from a plain table: no Lark at parse time.

Lark builds the table (70-130 ms, plus 25 ms to import Lark); :mod:`.grammar_table` writes it
once, as ``tablegen_lark.json`` next to the grammar, in the form :func:`driver_table` derives
from Lark's own serialized parser (``Lark.memo_serialize``, what ``Lark.save`` pickles):

* ``states``: one dict per state, symbol -> ``n >= 0`` (shift, or goto, to state ``n``) or
  ``-1 - r`` (reduce by rule ``r``); ``start`` and ``end``, the states the parse starts and
  accepts in;
* ``rules``: ``[origin, size, callback name, expand single child, children kept or None]``,
  where the children kept are ``[index, inline]`` pairs, ``inline`` for a ``_rule`` child
  whose own children take its place.

:func:`callbacks` makes the rule callbacks of a Transformer from it exactly as Lark makes them
for an LALR parser without placeholders or positions (``lark.parse_tree_builder``): the method
named after the rule's alias or origin (a :class:`Subtree` when there is none; for a
``_rule`` helper, whose parent inlines it, just the list of its children), behind Lark's
single-child expansion and child filter. The table is checked to be well formed before use.

>>> t = {"states": [{"A": 1, "start": 2}, {"$END": -1}, {"$END": 0}], "start": 0, "end": 2,
...      "rules": [["start", 1, "start", False, None]]}
>>> class T:
...     def start(self, c):
...         return ["parsed", c[0].type]
>>> class Tok:
...     type = "A"
>>> LalrDriver(check_table(t), T(), None).parse([Tok()], [None])
['parsed', 'A']
"""

from __future__ import annotations

import hashlib
import json
import os
from operator import itemgetter

from .errors import TdError

#: The table of ``tablegen.lark`` shipped with the package (:mod:`.grammar_table` writes it).
SHIPPED = os.path.join(os.path.dirname(__file__), "tablegen_lark.json")
TABLE_FORMAT = 2  # 2: the driver's own table (1 was Lark's serialization)


def table_json(table: dict, grammar: str, made_by: str = "") -> str:
    """The JSON text of a driver ``table`` made from ``grammar`` (text), as shipped;
    ``made_by`` says which Lark built it (for the record: the table does not depend on it).

    >>> table_json({"states": [], "start": 0, "end": 0, "rules": []}, "g")[:30]
    '{"format":2,"grammar_sha256":"'
    """
    doc = {"format": TABLE_FORMAT, "grammar_sha256": _sha(grammar), "made_by": made_by,
           "table": table}
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True) + "\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_shipped(path: str, grammar: str) -> dict | None:
    """The driver table at ``path`` when it was made from ``grammar`` (text) and is well
    formed; ``None`` otherwise (missing, another grammar, damaged).

    >>> from .parser import GRAMMAR
    >>> text = open(GRAMMAR, encoding="utf-8").read()
    >>> len(load_shipped(SHIPPED, text)["states"]) > 100, load_shipped(SHIPPED, text + " ")
    (True, None)
    """
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        if (not isinstance(doc, dict) or doc.get("format") != TABLE_FORMAT
                or doc.get("grammar_sha256") != _sha(grammar)):
            return None
        return check_table(doc["table"])
    except (OSError, ValueError, KeyError):  # ValueError: bad JSON, UTF-8 or table
        return None


class Subtree:
    """What a rule with no Transformer method makes (Lark's default ``Tree``), but for the
    ``_rule`` helpers, whose children their parent inlines: their value is the list.

    >>> Subtree("_x", [1, 2]).children
    [1, 2]
    """

    __slots__ = ("data", "children")

    def __init__(self, data, children):
        self.data = data
        self.children = children

    def __repr__(self):
        return f"Subtree({self.data!r}, {self.children!r})"


def driver_table(data: dict, memo: dict) -> dict:
    """The driver's table from Lark's serialized LALR parser (``memo_serialize``'s pair),
    numbered independently of string hashing: states breadth first from the start state,
    transitions in symbol-name order; rules in Lark's order.

    >>> import lark  # doctest: +SKIP
    >>> driver_table(*lark.Lark('start: "a"', parser="lalr").memo_serialize(  # doctest: +SKIP
    ...     [lark.lexer.TerminalDef, lark.grammar.Rule]))["rules"]
    [['start', 1, 'start', False, []]]
    """
    table = data["parser"]["parser"]
    names = table["tokens"]
    states = table["states"]
    start = table["start_states"]["start"]
    rows = {st: sorted(((names[t], act) for t, act in row.items()), key=lambda kv: kv[0])
            for st, row in states.items()}
    order, seen = [start], {start}
    for st in order:  # grows while it is walked: breadth first
        for _, (action, arg) in rows[st]:
            if action == 0 and arg not in seen:
                seen.add(arg)
                order.append(arg)
    if len(order) != len(states):
        raise ValueError("grammar table: unreachable states")
    num = {old: i for i, old in enumerate(order)}
    rule_ids = sorted((k for k, v in memo.items() if v.get("__type__") == "Rule"), key=int)
    rule_num = {int(r): i for i, r in enumerate(rule_ids)}
    out_states = []
    for old in order:
        row = {}
        for sym, (action, arg) in rows[old]:
            row[sym] = num[arg] if action == 0 else -1 - rule_num[int(arg["@"])]
        out_states.append(row)
    return {"states": out_states, "start": num[start],
            "end": num[table["end_states"]["start"]],
            "rules": [_rule(memo[r]) for r in rule_ids]}


def _rule(r: dict) -> list:
    """One rule as the driver keeps it (Lark: ``ParseTreeBuilder._init_builders`` and
    ``maybe_create_child_filter``, without placeholders or ambiguity)."""
    opts = r["options"]
    exp = r["expansion"]
    keep_all = opts["keep_all_tokens"]
    kept = []
    for i, sym in enumerate(exp):
        term = sym["__type__"] == "Terminal"
        if keep_all or not (term and sym["filter_out"]):
            kept.append([i, not term and sym["name"].startswith("_")])
    filtered = len(kept) < len(exp) or any(inline for _, inline in kept)
    name = r["alias"] or opts["template_source"] or r["origin"]["name"]
    return [r["origin"]["name"], len(exp), name, bool(opts["expand1"] and not r["alias"]),
            kept if filtered else None]


def check_table(t) -> dict:
    """``t`` when it is a well-formed driver table (every target a state, every reduce a rule,
    every rule well formed), else ``ValueError``: a damaged file must not misparse.

    >>> check_table({"states": [], "start": 0, "end": 0, "rules": []})
    Traceback (most recent call last):
    ...
    ValueError: grammar table: malformed
    """
    try:
        states, rules, start, end = t["states"], t["rules"], t["start"], t["end"]
        n, m = len(states), len(rules)
        ok = (isinstance(states, list) and isinstance(rules, list)
              and all(type(x) is int and 0 <= x < n for x in (start, end)))
        for row in states if ok else ():
            ok = ok and isinstance(row, dict) and all(
                isinstance(k, str) and type(v) is int and -m <= v < n for k, v in row.items())
        for r in rules if ok else ():
            ok = ok and (isinstance(r, list) and len(r) == 5 and isinstance(r[0], str)
                         and type(r[1]) is int and r[1] >= 0 and isinstance(r[2], str)
                         and type(r[3]) is bool
                         and (r[4] is None or isinstance(r[4], list) and all(
                             isinstance(k, list) and len(k) == 2 and type(k[0]) is int
                             and 0 <= k[0] < r[1] and type(k[1]) is bool for k in r[4])))
        if ok:
            return t
    except (KeyError, TypeError):
        pass
    raise ValueError("grammar table: malformed")


class _ExpandSingleChild:
    """Lark's ``ExpandSingleChild``: a ``?rule`` with one child is that child."""

    __slots__ = ("node_builder",)

    def __init__(self, node_builder):
        self.node_builder = node_builder

    def __call__(self, children):
        if len(children) == 1:
            return children[0]
        return self.node_builder(children)


def _same(children):
    return children


class _ChildFilter:
    """Lark's ``ChildFilterLALR_NoPlaceholders``: drop filtered tokens, inline ``_rule``s
    (whose values are their children's lists)."""

    __slots__ = ("node_builder", "to_include")

    def __init__(self, to_include, node_builder):
        self.node_builder = node_builder
        self.to_include = to_include

    def __call__(self, children):
        filtered = []
        for i, to_expand in self.to_include:
            if to_expand:
                if filtered:
                    filtered += children[i]
                else:  # as Lark: reuse the first inlined list (left recursion)
                    filtered = children[i]
            else:
                filtered.append(children[i])
        return self.node_builder(filtered)


def callbacks(rules: list, transformer) -> list:
    """The callback of each rule of a driver table, for ``transformer``'s methods.

    >>> class T:
    ...     def pair(self, c):
    ...         return tuple(c)
    >>> cb = callbacks([["pair", 3, "pair", False, [[0, False], [2, False]]]], T())
    >>> cb[0](["a", ",", "b"])
    ('a', 'b')
    """
    out = []
    for origin, _size, name, expand1, kept in rules:
        f = getattr(transformer, name, None)
        if origin.startswith("_"):
            # A `_rule` helper (Lark's repetitions): its parent inlines its children, so its
            # value is just their list (Lark makes a Tree and reads its .children).
            if f is not None or expand1:
                raise ValueError(f"grammar table: rule {origin} is inlined but has a method")
            f = _same
        elif f is None:
            def f(children, _name=name):
                return Subtree(_name, children)
        if expand1:
            f = _ExpandSingleChild(f)
        if kept is not None:
            f = _filter(kept, f)
        out.append(f)
    return out


def _filter(kept: list, f):
    """Lark's child filter; without ``_rule`` children to inline it only picks children, as
    one ``itemgetter`` (the common case: punctuation dropped)."""
    if any(inline for _, inline in kept):
        return _ChildFilter([(i, inline) for i, inline in kept], f)
    idx = [i for i, _ in kept]
    if not idx:
        return lambda children: f([])
    if len(idx) == 1:
        (i0,) = idx
        return lambda children: f([children[i0]])
    pick = itemgetter(*idx)
    return lambda children: f(list(pick(children)))


class LalrDriver:
    """A tight LALR loop over a driver table (:func:`check_table`'d) with ``transformer``'s
    callbacks; ``syntax_error(token, expected)`` makes the error for an unexpected token."""

    def __init__(self, table: dict, transformer, syntax_error):
        self.syntax_error = syntax_error
        cbs = callbacks(table["rules"], transformer)
        # A `?rule` of one symbol, unfiltered, returns its one child: its reduction only
        # changes the state (cb None). ArithOps.td: 15k of 40k reductions.
        reduce = [(size, None if (expand1 and size == 1 and kept is None) else cb, origin)
                  for (origin, size, _, expand1, kept), cb in zip(table["rules"], cbs)]
        # The stack holds the states' rows themselves, and a shift or goto names its target
        # row: one lookup fewer per step than rows by number.
        rows = [{} for _ in table["states"]]
        for row, src in zip(rows, table["states"]):
            for sym, a in src.items():
                row[sym] = rows[a] if a >= 0 else reduce[-1 - a]
        self.start = rows[table["start"]]
        self.end = rows[table["end"]]

    def parse(self, tokens, track):
        """The statements of ``tokens``; ``track[0]`` is left at the last token read."""
        state_stack = [self.start]
        value_stack = []
        push_s = state_stack.append
        push_v = value_stack.append
        tok = None
        for tok in tokens:
            t = tok.type
            while True:
                a = state_stack[-1].get(t)
                if a is None:
                    track[0] = tok
                    if t == "ERROR":  # a lexical error, reached in source order
                        raise tok.value
                    raise self.syntax_error(tok, [k for k in state_stack[-1] if k.isupper()])
                if a.__class__ is dict:
                    push_s(a)
                    push_v(tok)
                    break
                size, cb, origin = a
                if cb is None:  # a `?rule` of one child: the value stays, the state moves
                    state_stack[-1] = state_stack[-2][origin]
                    continue
                if size:
                    args = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    args = []
                push_v(cb(args))
                push_s(state_stack[-1][origin])
        track[0] = tok
        end = self.end
        while True:
            a = state_stack[-1].get("$END")
            if a is None or a.__class__ is dict:
                if tok is None:
                    raise TdError("Unexpected end of file")
                raise TdError("Unexpected end of file", tok.file, tok.line, tok.column,
                              tok.stack)
            size, cb, origin = a
            if cb is None:
                state_stack[-1] = state_stack[-2][origin]
            else:
                if size:
                    args = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    args = []
                push_v(cb(args))
                push_s(state_stack[-1][origin])
            if state_stack[-1] is end:
                return value_stack[-1]
