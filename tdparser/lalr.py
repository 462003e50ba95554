"""The LALR(1) loop that runs Lark's parse table for ``tablegen.lark``.

Lark builds the table and the rule callbacks (the Transformer, with its child filtering); this
loop only replaces Lark's per-token ``feed_token``, which is about twice as slow.
"""

from __future__ import annotations

from .errors import TdError


class LalrDriver:
    """A tight LALR loop over Lark's own parse table and callbacks (Lark's generic
    ``feed_token`` costs about twice as much per token); same grammar, same Transformer."""

    def __init__(self, lark_inst, syntax_error):
        self.syntax_error = syntax_error
        pp = lark_inst.parser.parser.parser
        table = pp.parse_table
        self.start = table.start_states["start"]
        self.end = table.end_states["start"]
        cbs = pp.callbacks
        from lark.parsers.lalr_analysis import Shift

        states = {}
        for st, row in table.states.items():
            out = {}
            for sym, (action, arg) in row.items():
                if action is Shift:
                    out[sym] = arg
                else:
                    out[sym] = (len(arg.expansion), cbs[arg], arg.origin.name)
            states[st] = out
        self.states = states

    def parse(self, tokens, track):
        states = self.states
        state_stack = [self.start]
        value_stack = []
        push_s = state_stack.append
        push_v = value_stack.append
        for tok in tokens:
            track[0] = tok
            t = tok.type
            while True:
                a = states[state_stack[-1]].get(t)
                if a is None:
                    if t == "ERROR":  # a lexical error, reached in source order
                        raise tok.value
                    raise self.syntax_error(tok, [k for k in states[state_stack[-1]] if k.isupper()])
                if a.__class__ is int:
                    push_s(a)
                    push_v(tok)
                    break
                size, cb, origin = a
                if size:
                    args = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    args = []
                push_v(cb(args))
                push_s(states[state_stack[-1]][origin])
        end = self.end
        while True:
            a = states[state_stack[-1]].get("$END")
            if a is None or a.__class__ is int:
                t = track[0]
                if t is None:
                    raise TdError("Unexpected end of file")
                raise TdError("Unexpected end of file", t.file, t.line, t.column, t.stack)
            size, cb, origin = a
            if size:
                args = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                args = []
            push_v(cb(args))
            push_s(states[state_stack[-1]][origin])
            if state_stack[-1] == end:
                return value_stack[-1]
