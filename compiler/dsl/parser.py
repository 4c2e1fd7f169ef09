"""Tokenizer and precedence-climbing parser for the expression DSL (docs/dsl.md).

Precedence, loosest first: OR < AND < NOT < comparisons < + - < * / < unary minus.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .ast import Binary, Call, ColumnRef, Literal, Node, Paren, SelectorRef, Unary


class DslSyntaxError(Exception):
    """A syntax error at ``pos`` of the expression text."""

    def __init__(self, message: str, pos: int, text: str = ""):
        super().__init__(message)
        self.message, self.pos, self.text = message, pos, text


@dataclass(frozen=True)
class Token:
    kind: str  # num, str, ident, op, lparen, rparen, comma, selector, eof
    value: str
    pos: int


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<selector>\{\{\s*(?P<selname>[A-Za-z_][A-Za-z0-9_]*)\s*\}\})
  | (?P<num>[0-9]+(?:\.[0-9]+)?|\.[0-9]+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)
  | (?P<op><>|!=|<=|>=|=|<|>|\+|-|\*|/)
  | (?P<lparen>\()
  | (?P<rparen>\))
  | (?P<comma>,)
""", re.VERBOSE)

KEYWORDS = {"AND", "OR", "NOT", "TRUE", "FALSE", "NULL"}
COMPARISONS = {"=", "<>", "!=", "<", "<=", ">", ">="}


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens; strings use single or double quotes, a doubled quote escapes itself."""
    tokens, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"":
            j, buf = i + 1, []
            while True:
                if j >= n:
                    raise DslSyntaxError("unterminated string literal", i, text[i:i + 20])
                if text[j] == ch:
                    if j + 1 < n and text[j + 1] == ch:
                        buf.append(ch)
                        j += 2
                        continue
                    break
                buf.append(text[j])
                j += 1
            tokens.append(Token("str", "".join(buf), i))
            i = j + 1
            continue
        m = _TOKEN.match(text, i)
        if not m or m.end() == i:
            raise DslSyntaxError(f"unexpected character '{ch}'", i, ch)
        kind = m.lastgroup if m.lastgroup != "selname" else "selector"
        if m.group("selector"):
            tokens.append(Token("selector", m.group("selname"), i))
        elif kind != "ws":
            tokens.append(Token(kind, m.group(kind), i))
        i = m.end()
    tokens.append(Token("eof", "", n))
    return tokens


class Parser:
    """Recursive-descent parser over the token list."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def next(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def keyword(self, word: str) -> bool:
        tok = self.peek()
        return tok.kind == "ident" and tok.value.upper() == word

    def expect(self, kind: str, what: str) -> Token:
        tok = self.peek()
        if tok.kind != kind:
            found = tok.value or "end of expression"
            raise DslSyntaxError(f"expected {what}, found '{found}'", tok.pos, found)
        return self.next()

    def parse(self) -> Node:
        if self.peek().kind == "eof":
            raise DslSyntaxError("empty expression", 0)
        node = self.parse_or()
        tok = self.peek()
        if tok.kind != "eof":
            raise DslSyntaxError(f"unexpected '{tok.value}' after a complete expression", tok.pos, tok.value)
        return node

    def parse_or(self) -> Node:
        left = self.parse_and()
        while self.keyword("OR"):
            pos = self.next().pos
            left = Binary("OR", left, self.parse_and(), pos)
        return left

    def parse_and(self) -> Node:
        left = self.parse_not()
        while self.keyword("AND"):
            pos = self.next().pos
            left = Binary("AND", left, self.parse_not(), pos)
        return left

    def parse_not(self) -> Node:
        if self.keyword("NOT"):  # NOT(x) is the same as the operator applied to (x)
            pos = self.next().pos
            return Unary("NOT", self.parse_not(), pos)
        return self.parse_comparison()

    def parse_comparison(self) -> Node:
        left = self.parse_additive()
        tok = self.peek()
        if tok.kind == "op" and tok.value in COMPARISONS:
            self.next()
            op = "<>" if tok.value == "!=" else tok.value
            right = self.parse_additive()
            nxt = self.peek()
            if nxt.kind == "op" and nxt.value in COMPARISONS:
                raise DslSyntaxError("comparisons cannot be chained; combine them with AND", nxt.pos, nxt.value)
            return Binary(op, left, right, tok.pos)
        return left

    def parse_additive(self) -> Node:
        left = self.parse_multiplicative()
        while self.peek().kind == "op" and self.peek().value in "+-":
            tok = self.next()
            left = Binary(tok.value, left, self.parse_multiplicative(), tok.pos)
        return left

    def parse_multiplicative(self) -> Node:
        left = self.parse_unary()
        while self.peek().kind == "op" and self.peek().value in "*/":
            tok = self.next()
            left = Binary(tok.value, left, self.parse_unary(), tok.pos)
        return left

    def parse_unary(self) -> Node:
        tok = self.peek()
        if tok.kind == "op" and tok.value == "-":
            self.next()
            return Unary("-", self.parse_unary(), tok.pos)
        return self.parse_primary()

    def parse_primary(self) -> Node:
        tok = self.next()
        if tok.kind == "num":
            return Literal("number", tok.value, tok.pos)
        if tok.kind == "str":
            return Literal("string", tok.value, tok.pos)
        if tok.kind == "selector":
            return SelectorRef(tok.value, tok.pos)
        if tok.kind == "lparen":
            inner = self.parse_or()
            self.expect("rparen", "')'")
            return Paren(inner, tok.pos)
        if tok.kind == "ident":
            upper = tok.value.upper()
            if self.peek().kind == "lparen" and upper == "CAST":
                return self.parse_cast(tok)
            if self.peek().kind == "lparen" and "." not in tok.value:
                return self.parse_call(tok)
            if upper in ("TRUE", "FALSE"):
                return Literal("boolean", upper == "TRUE", tok.pos)
            if upper == "NULL":
                return Literal("null", None, tok.pos)
            if upper in KEYWORDS:
                raise DslSyntaxError(f"'{tok.value}' needs an operand before it", tok.pos, tok.value)
            if "." in tok.value:
                table, name = tok.value.split(".", 1)
                return ColumnRef(table, name, tok.pos)
            return ColumnRef(None, tok.value, tok.pos)
        found = tok.value or "end of expression"
        raise DslSyntaxError(f"expected a value, found '{found}'", tok.pos, found)

    def parse_call(self, name_tok: Token) -> Node:
        self.expect("lparen", "'('")
        args: list[Node] = []
        star = False
        if self.peek().kind == "op" and self.peek().value == "*":
            self.next()
            star = True
        elif self.peek().kind != "rparen":
            args.append(self.parse_or())
            while self.peek().kind == "comma":
                self.next()
                args.append(self.parse_or())
        self.expect("rparen", "')' or ','")
        return Call(name_tok.value.upper(), tuple(args), name_tok.pos, star)


    def parse_cast(self, name_tok: Token) -> Node:
        """``CAST(x AS type)``, the type a name with an optional ``(p,s)``; the translator judges the name."""
        self.expect("lparen", "'('")
        value = self.parse_or()
        if not self.keyword("AS"):
            found = self.peek().value or "end of expression"
            raise DslSyntaxError(f"expected AS and a type in CAST, found '{found}'", self.peek().pos, found)
        self.next()
        type_tok = self.expect("ident", "a type name after AS")
        target = type_tok.value
        if self.peek().kind == "lparen":
            self.next()
            numbers = [self.expect("num", "a whole number").value]
            while self.peek().kind == "comma":
                self.next()
                numbers.append(self.expect("num", "a whole number").value)
            self.expect("rparen", "')'")
            target += "(" + ",".join(numbers) + ")"
        self.expect("rparen", "')' after the type")
        return Call("CAST", (value,), name_tok.pos, target=target, target_pos=type_tok.pos)


def parse_expression(text: str) -> Node:
    """Parse DSL ``text`` into an AST; raises :class:`DslSyntaxError` with the offending position."""
    try:
        return Parser(text).parse()
    except RecursionError:
        raise DslSyntaxError("expression is nested too deeply", 0, text[:20]) from None
