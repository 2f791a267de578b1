"""Safe parsing and checking of typed answers. Students' answers are hostile input.

Nothing here calls ``eval``, ``exec``, ``compile``, ``sympify`` or ``parse_expr``: a
hand-written tokenizer accepts a whitelist of characters and a recursive-descent parser
evaluates this grammar with floats::

    answer  := item (',' item)*                 a number, or a vector of 2..64 entries
    item    := expr | '(' expr (',' expr)+ ')'  (the vector may sit in ( ) or [ ])
    expr    := term (('+' | '-') term)*
    term    := unary (('*' | '/') unary)*
    unary   := ('+' | '-') unary | power
    power   := atom (('^' | '**') unary)?       right-associative: 2^3^2 = 2^9
    atom    := NUMBER | '(' expr ')' | ('sqrt' | '√') atom

``NUMBER`` is ASCII digits with an optional decimal point and exponent (``1.5e-3``);
a fraction is just a division (``3/4``). Accepted Unicode: ``−`` (U+2212) and ``–``
(U+2013) for minus, ``×`` and ``·`` for times, ``÷`` for division, ``√`` for sqrt,
and the no-break space. Everything else (fullwidth digits, direction marks, letters other
than ``sqrt`` and ``e`` inside a number) is refused with the character's name.

Bounds keep every verdict fast: at most :data:`MAX_LENGTH` characters (checked before
anything else), :data:`MAX_DEPTH` nested parentheses or signs, :data:`MAX_EXPONENT` for
the size of a power's exponent (so ``9**9**9**9`` is refused at once: its exponent
``9**9`` is too large), and :data:`MAX_MAGNITUDE` for every intermediate value.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

from lnworked.practice.problem import Answer, letter

__all__ = [
    "AnswerError",
    "Verdict",
    "parse_answer",
    "parse_choice",
    "check_answer",
    "MAX_LENGTH",
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_MAGNITUDE",
    "MAX_ENTRIES",
]

MAX_LENGTH = 200
MAX_DEPTH = 20
MAX_EXPONENT = 64
MAX_MAGNITUDE = 1e100
MAX_ENTRIES = 64
MAX_EXPONENT_DIGITS = 4  # in scientific notation: 1e9999 at most (then refused as too large)

_TRANSLATE = {"−": "-", "–": "-", "×": "*", "·": "*", "÷": "/", "[": "(", "]": ")", "\u00a0": " "}
_SINGLE = set("+-*/^(),")
_DIGITS = set("0123456789")


class AnswerError(ValueError):
    """An answer that cannot be read; the message says why (shown to the student)."""


@dataclass(frozen=True)
class Verdict:
    """The result of checking one typed answer."""

    correct: bool
    message: str
    value: object = None  # the parsed number, vector or choice index; None if unreadable


def _describe(ch: str) -> str:
    name = unicodedata.name(ch, "unnamed character")
    return f"U+{ord(ch):04X} {name}"


def _number(text: str, i: int) -> tuple[str, int]:
    """Scan an ASCII number starting at ``i``; return its text and the next index."""
    j = i
    while j < len(text) and text[j] in _DIGITS:
        j += 1
    if j < len(text) and text[j] == ".":
        j += 1
        while j < len(text) and text[j] in _DIGITS:
            j += 1
    if text[i:j] == ".":
        raise AnswerError(f"a lone '.' at position {i + 1} is not a number")
    if j < len(text) and text[j] in "eE":
        k = j + 1
        if k < len(text) and text[k] in "+-":
            k += 1
        start = k
        while k < len(text) and text[k] in _DIGITS:
            k += 1
        if k == start:
            raise AnswerError(f"the exponent after 'e' at position {j + 1} has no digits")
        if k - start > MAX_EXPONENT_DIGITS:
            raise AnswerError(f"the exponent at position {j + 1} is too large")
        j = k
    return text[i:j], j


def tokenize(text: str) -> list[tuple[str, object, int]]:
    """Tokens ``(kind, value, position)`` with kinds num, op, (, ), ',', sqrt."""
    tokens = []
    i = 0
    while i < len(text):
        ch = _TRANSLATE.get(text[i], text[i])
        if ch in " \t":
            i += 1
        elif ch in _DIGITS or ch == ".":
            word, i_next = _number(text, i)
            value = float(word)
            if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
                raise AnswerError(f"the number {word} is too large (at most {MAX_MAGNITUDE:g})")
            tokens.append(("num", value, i + 1))
            i = i_next
        elif ch == "*" and i + 1 < len(text) and _TRANSLATE.get(text[i + 1], text[i + 1]) == "*":
            tokens.append(("op", "^", i + 1))
            i += 2
        elif ch in _SINGLE:
            kind = ch if ch in "()," else "op"
            tokens.append((kind, ch, i + 1))
            i += 1
        elif ch == "√":
            tokens.append(("sqrt", None, i + 1))
            i += 1
        elif ch.isascii() and ch.isalpha():
            j = i
            while j < len(text) and text[j].isascii() and text[j].isalpha():
                j += 1
            word = text[i:j]
            if word.lower() != "sqrt":
                raise AnswerError(f"unknown name {word!r} at position {i + 1}; only sqrt is allowed")
            tokens.append(("sqrt", None, i + 1))
            i = j
        else:
            raise AnswerError(f"unexpected character {_describe(text[i])} at position {i + 1}")
    return tokens


class _Parser:
    """Recursive descent over the tokens; evaluates as it parses (floats, bounded)."""

    def __init__(self, tokens):
        self.tokens = tokens
        self.i = 0
        self.depth = 0

    # -- helpers -----------------------------------------------------------------------
    def peek(self, kind=None, value=None):
        if self.i >= len(self.tokens):
            return None
        token = self.tokens[self.i]
        if kind is not None and token[0] != kind:
            return None
        if value is not None and token[1] not in value:
            return None
        return token

    def take(self):
        token = self.tokens[self.i]
        self.i += 1
        return token

    def expect(self, kind, what):
        if self.peek(kind) is None:
            raise AnswerError(f"expected {what} {self.where()}")
        return self.take()

    def where(self) -> str:
        if self.i >= len(self.tokens):
            return "at the end"
        return f"at position {self.tokens[self.i][2]}"

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise AnswerError(f"too deeply nested (more than {MAX_DEPTH} levels)")

    @staticmethod
    def checked(value: float) -> float:
        if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
            raise AnswerError(f"a value is too large (at most {MAX_MAGNITUDE:g} in size)")
        return value

    # -- grammar -----------------------------------------------------------------------
    def answer(self):
        if not self.tokens:
            raise AnswerError("the answer is empty")
        items = [self.item()]
        while self.peek(","):
            self.take()
            items.append(self.expr())
        if self.i != len(self.tokens):
            raise AnswerError(f"unexpected input {self.where()}")
        if len(items) > 1:
            return self.vector(items)
        return items[0]

    def vector(self, items):
        if len(items) > MAX_ENTRIES:
            raise AnswerError(f"a vector may have at most {MAX_ENTRIES} entries")
        return tuple(items)

    def item(self):
        """A bracketed vector ``(a, b, ...)`` or an expression."""
        start = self.i
        if self.peek("("):
            self.take()
            first = self.expr()
            if self.peek(","):
                items = [first]
                while self.peek(","):
                    self.take()
                    items.append(self.expr())
                self.expect(")", "')' to close the vector")
                if self.i != len(self.tokens):
                    raise AnswerError(f"a vector must stand alone; unexpected input {self.where()}")
                return self.vector(items)
            self.i = start
        return self.expr()

    def expr(self) -> float:
        value = self.term()
        while self.peek("op", "+-"):
            op = self.take()[1]
            right = self.term()
            value = self.checked(value + right if op == "+" else value - right)
        return value

    def term(self) -> float:
        value = self.unary()
        while self.peek("op", "*/"):
            op = self.take()[1]
            right = self.unary()
            if op == "*":
                value = self.checked(value * right)
            elif right == 0:
                raise AnswerError("division by zero")
            else:
                value = self.checked(value / right)
        return value

    def unary(self) -> float:
        if self.peek("op", "+-"):
            op = self.take()[1]
            self.enter()
            value = self.unary()
            self.depth -= 1
            return -value if op == "-" else value
        return self.power()

    def power(self) -> float:
        base = self.atom()
        if not self.peek("op", "^"):
            return base
        self.take()
        self.enter()
        exponent = self.unary()
        self.depth -= 1
        if abs(exponent) > MAX_EXPONENT:
            raise AnswerError(f"the exponent {exponent:g} is too large (at most {MAX_EXPONENT} in size)")
        if base == 0 and exponent < 0:
            raise AnswerError("0 to a negative power is undefined")
        if base < 0 and exponent != int(exponent):
            raise AnswerError("a negative number to a fractional power is not a real number")
        try:
            return self.checked(math.pow(base, exponent))
        except OverflowError:
            raise AnswerError(f"a value is too large (at most {MAX_MAGNITUDE:g} in size)") from None

    def atom(self) -> float:
        token = self.peek()
        if token is None:
            raise AnswerError("the answer ends too early: a number is missing")
        kind = token[0]
        if kind == "num":
            return self.take()[1]
        if kind == "(":
            self.take()
            self.enter()
            value = self.expr()
            if self.peek(","):
                raise AnswerError(f"a vector must stand alone, not inside a formula ({self.where()})")
            self.expect(")", "')'")
            self.depth -= 1
            return value
        if kind == "sqrt":
            self.take()
            self.enter()
            value = self.atom()
            self.depth -= 1
            if value < 0:
                raise AnswerError("sqrt of a negative number is not a real number")
            return math.sqrt(value)
        raise AnswerError(f"expected a number {self.where()}, got {token[1]!r}")


def parse_answer(text) -> float | tuple[float, ...]:
    """A typed answer as a float or a tuple of floats; raises :class:`AnswerError` with the reason."""
    if not isinstance(text, str):
        raise AnswerError(f"the answer must be text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise AnswerError(f"the answer is too long ({len(text)} characters; at most {MAX_LENGTH})")
    if not text.strip():
        raise AnswerError("the answer is empty")
    return _Parser(tokenize(text)).answer()


def parse_choice(text, n_choices: int) -> int:
    """A letter ``A``, ``b``, ``(C)``, ``D.`` or ``D)`` as a choice index."""
    if not isinstance(text, str):
        raise AnswerError(f"the answer must be text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise AnswerError(f"the answer is too long ({len(text)} characters; at most {MAX_LENGTH})")
    core = text.strip().strip("().").strip().upper()
    letters = [letter(i) for i in range(n_choices)]
    if core not in letters:
        raise AnswerError(f"answer with one letter out of {', '.join(letters)}")
    return letters.index(core)


def check_answer(answer: Answer, text) -> Verdict:
    """Parse ``text`` and compare it with ``answer`` within its tolerance (see :mod:`.problem`)."""
    try:
        if answer.kind == "choice":
            index = parse_choice(text, len(answer.choices))
            ok = index == answer.value
            return Verdict(ok, "correct" if ok else f"wrong: {letter(index)} is not the right choice", index)
        value = parse_answer(text)
    except AnswerError as err:
        return Verdict(False, f"could not read the answer: {err}")
    tol = answer.tolerance()
    if answer.kind == "number":
        if isinstance(value, tuple):
            return Verdict(
                False, f"expected one number, got a vector of {len(value)} entries (use '.' for decimals)", value
            )
        ok = abs(value - answer.value) <= tol
        # the tolerance is not printed: a relative one would give the answer's size away
        return Verdict(ok, "correct" if ok else f"wrong: {value:.6g} is not within the problem's tolerance of the answer",
                       value)
    expected = answer.value
    if not isinstance(value, tuple):
        return Verdict(False, f"expected a vector of {len(expected)} entries, got one number", value)
    if len(value) != len(expected):
        return Verdict(False, f"expected {len(expected)} entries, got {len(value)}", value)
    off = [i + 1 for i, (g, r) in enumerate(zip(value, expected)) if abs(g - r) > tol]
    if off:
        entries = ", ".join(map(str, off))
        return Verdict(False, f"wrong: entry {entries} not within the problem's tolerance of the answer", value)
    return Verdict(True, "correct", value)
