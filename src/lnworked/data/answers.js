/* lnworked practice: the safe answer parser and checker, kernel-free form.
 *
 * A port of lnworked/practice/answers.py (same grammar, same whitelist of characters, same
 * bounds, same tolerance rule, the same verdict messages), so that the practice page's
 * checker works in the static HTML. Like the Python parser it never calls eval, Function
 * or any other dynamic evaluation: a hand-written tokenizer and a recursive-descent parser
 * evaluate with floats:
 *
 *   answer := item (',' item)*                 a number, or a vector of 2..64 entries
 *   item   := expr | '(' expr (',' expr)+ ')'  (the vector may sit in ( ) or [ ])
 *   expr   := term (('+' | '-') term)*
 *   term   := unary (('*' | '/') unary)*
 *   unary  := ('+' | '-') unary | power
 *   power  := atom (('^' | '**') unary)?       right-associative
 *   atom   := NUMBER | '(' expr ')' | ('sqrt' | '√') atom
 *
 * Text is read by code point (as Python does), so lengths and positions agree with the
 * Python messages. Python names a refused character with unicodedata.name; JavaScript has
 * no such table, so NAMES below holds the names of the characters a reader is likely to
 * type (tests/test_practice_static_checker.py checks each against unicodedata); any other
 * character is named by its code point only.
 *
 * In a browser the API is window.lnwAnswers; under Node it is module.exports.
 */
(function (root, factory) {
  "use strict";
  var api = factory();
  if (typeof module === "object" && module.exports) { module.exports = api; }
  else if (!root.lnwAnswers) { root.lnwAnswers = api; }
}(typeof window !== "undefined" ? window : this, function () {
  "use strict";

  var MAX_LENGTH = 200, MAX_DEPTH = 20, MAX_EXPONENT = 64, MAX_MAGNITUDE = 1e100, MAX_ENTRIES = 64;
  var MAX_EXPONENT_DIGITS = 4;
  var TRANSLATE = { "\u2212": "-", "\u2013": "-", "\u00d7": "*", "\u00b7": "*", "\u00f7": "/",
                    "[": "(", "]": ")", "\u00a0": " " };
  var SINGLE = "+-*/^(),";
  var LETTERS = "ABCDEFGHIJ";
  // Python's str.isspace() characters (str.strip() removes these).
  var SPACE = "\t\n\u000b\u000c\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003" +
              "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000";

  /* Unicode names of the characters a reader is likely to type by mistake. */
  var NAMES = {
    "!": "EXCLAMATION MARK", "\"": "QUOTATION MARK", "#": "NUMBER SIGN", "$": "DOLLAR SIGN",
    "%": "PERCENT SIGN", "&": "AMPERSAND", "'": "APOSTROPHE", ":": "COLON", ";": "SEMICOLON",
    "<": "LESS-THAN SIGN", "=": "EQUALS SIGN", ">": "GREATER-THAN SIGN", "?": "QUESTION MARK",
    "@": "COMMERCIAL AT", "\\": "REVERSE SOLIDUS", "_": "LOW LINE", "`": "GRAVE ACCENT",
    "{": "LEFT CURLY BRACKET", "|": "VERTICAL LINE", "}": "RIGHT CURLY BRACKET", "~": "TILDE",
    "\u00b2": "SUPERSCRIPT TWO", "\u00b3": "SUPERSCRIPT THREE", "\u00b9": "SUPERSCRIPT ONE",
    "\u00b0": "DEGREE SIGN", "\u00b1": "PLUS-MINUS SIGN", "\u00bd": "VULGAR FRACTION ONE HALF",
    "\u00bc": "VULGAR FRACTION ONE QUARTER", "\u00be": "VULGAR FRACTION THREE QUARTERS",
    "\u00e9": "LATIN SMALL LETTER E WITH ACUTE", "\u03b3": "GREEK SMALL LETTER GAMMA",
    "\u03b2": "GREEK SMALL LETTER BETA", "\u03b5": "GREEK SMALL LETTER EPSILON",
    "\u03c0": "GREEK SMALL LETTER PI", "\u03c3": "GREEK SMALL LETTER SIGMA",
    "\u03b1": "GREEK SMALL LETTER ALPHA", "\u03b7": "GREEK SMALL LETTER ETA",
    "\u2014": "EM DASH", "\u2009": "THIN SPACE", "\u202f": "NARROW NO-BREAK SPACE",
    "\u2002": "EN SPACE", "\u2003": "EM SPACE", "\u3000": "IDEOGRAPHIC SPACE",
    "\u200b": "ZERO WIDTH SPACE", "\u200e": "LEFT-TO-RIGHT MARK", "\u200f": "RIGHT-TO-LEFT MARK",
    "\u202a": "LEFT-TO-RIGHT EMBEDDING", "\u202b": "RIGHT-TO-LEFT EMBEDDING",
    "\u202c": "POP DIRECTIONAL FORMATTING", "\u202d": "LEFT-TO-RIGHT OVERRIDE",
    "\u202e": "RIGHT-TO-LEFT OVERRIDE", "\ufeff": "ZERO WIDTH NO-BREAK SPACE",
    "\u2026": "HORIZONTAL ELLIPSIS", "\u2018": "LEFT SINGLE QUOTATION MARK",
    "\u2019": "RIGHT SINGLE QUOTATION MARK", "\u201c": "LEFT DOUBLE QUOTATION MARK",
    "\u201d": "RIGHT DOUBLE QUOTATION MARK", "\u2044": "FRACTION SLASH", "\u2215": "DIVISION SLASH",
    "\u2217": "ASTERISK OPERATOR", "\u22c5": "DOT OPERATOR", "\u221a": "SQUARE ROOT",
    "\u2248": "ALMOST EQUAL TO", "\u221e": "INFINITY", "\u2011": "NON-BREAKING HYPHEN",
    "\u2010": "HYPHEN", "\u2012": "FIGURE DASH", "\ufe63": "SMALL HYPHEN-MINUS",
    "\uff0d": "FULLWIDTH HYPHEN-MINUS", "\uff0b": "FULLWIDTH PLUS SIGN",
    "\uff0c": "FULLWIDTH COMMA", "\uff0e": "FULLWIDTH FULL STOP",
    "\uff08": "FULLWIDTH LEFT PARENTHESIS", "\uff09": "FULLWIDTH RIGHT PARENTHESIS",
    "\uff0f": "FULLWIDTH SOLIDUS", "\u3002": "IDEOGRAPHIC FULL STOP"
  };
  var DIGIT_NAMES = ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"];

  function AnswerError(message) { this.message = message; }

  function hex(code) {
    var h = code.toString(16).toUpperCase();
    while (h.length < 4) { h = "0" + h; }
    return "U+" + h;
  }

  /* The character's Unicode name where known; "" where this port has no name for it. */
  function charName(ch) {
    var code = ch.codePointAt(0);
    if (code < 0x20 || (code >= 0x7f && code < 0xa0)) { return "unnamed character"; }
    if (Object.prototype.hasOwnProperty.call(NAMES, ch)) { return NAMES[ch]; }
    if (code >= 0xff10 && code <= 0xff19) { return "FULLWIDTH DIGIT " + DIGIT_NAMES[code - 0xff10]; }
    if (code >= 0xff21 && code <= 0xff3a) {
      return "FULLWIDTH LATIN CAPITAL LETTER " + String.fromCharCode(code - 0xff21 + 65);
    }
    if (code >= 0xff41 && code <= 0xff5a) {
      return "FULLWIDTH LATIN SMALL LETTER " + String.fromCharCode(code - 0xff41 + 65);
    }
    if (code >= 0x660 && code <= 0x669) { return "ARABIC-INDIC DIGIT " + DIGIT_NAMES[code - 0x660]; }
    if (code >= 0x966 && code <= 0x96f) { return "DEVANAGARI DIGIT " + DIGIT_NAMES[code - 0x966]; }
    return "";
  }

  function describe(ch) {
    var name = charName(ch);
    return hex(ch.codePointAt(0)) + (name ? " " + name : "");
  }

  /* Python's format(x, "." + precision + "g") for a finite float. */
  function formatG(x, precision) {
    if (x === 0) { return (1 / x < 0) ? "-0" : "0"; }
    var sci = x.toExponential(precision - 1);  // mantissa rounded to `precision` digits
    var parts = sci.split("e"), exp = parseInt(parts[1], 10);
    var text;
    if (exp >= -4 && exp < precision) {
      text = x.toFixed(precision - 1 - exp);
      if (text.indexOf(".") >= 0) { text = text.replace(/0+$/, "").replace(/\.$/, ""); }
      return text;
    }
    var mantissa = parts[0];
    if (mantissa.indexOf(".") >= 0) { mantissa = mantissa.replace(/0+$/, "").replace(/\.$/, ""); }
    var digits = String(Math.abs(exp));
    if (digits.length < 2) { digits = "0" + digits; }
    return mantissa + "e" + (exp < 0 ? "-" : "+") + digits;
  }

  function isDigit(ch) { return ch !== undefined && ch >= "0" && ch <= "9"; }
  function isAsciiLetter(ch) { return ch !== undefined && /^[A-Za-z]$/.test(ch); }
  function tr(ch) { return Object.prototype.hasOwnProperty.call(TRANSLATE, ch) ? TRANSLATE[ch] : ch; }

  /* Scan an ASCII number starting at i; return [its text, the next index]. */
  function number(chars, i) {
    var j = i;
    while (j < chars.length && isDigit(chars[j])) { j++; }
    if (j < chars.length && chars[j] === ".") {
      j++;
      while (j < chars.length && isDigit(chars[j])) { j++; }
    }
    if (chars.slice(i, j).join("") === ".") {
      throw new AnswerError("a lone '.' at position " + (i + 1) + " is not a number");
    }
    if (j < chars.length && (chars[j] === "e" || chars[j] === "E")) {
      var k = j + 1;
      if (k < chars.length && (chars[k] === "+" || chars[k] === "-")) { k++; }
      var start = k;
      while (k < chars.length && isDigit(chars[k])) { k++; }
      if (k === start) { throw new AnswerError("the exponent after 'e' at position " + (j + 1) + " has no digits"); }
      if (k - start > MAX_EXPONENT_DIGITS) { throw new AnswerError("the exponent at position " + (j + 1) + " is too large"); }
      j = k;
    }
    return [chars.slice(i, j).join(""), j];
  }

  /* Tokens [kind, value, position] with kinds num, op, (, ), ',', sqrt. */
  function tokenize(chars) {
    var tokens = [], i = 0;
    while (i < chars.length) {
      var ch = tr(chars[i]);
      if (ch === " " || ch === "\t") {
        i++;
      } else if (isDigit(ch) || ch === ".") {
        var scanned = number(chars, i), value = Number(scanned[0]);
        if (!isFinite(value) || Math.abs(value) > MAX_MAGNITUDE) {
          throw new AnswerError("the number " + scanned[0] + " is too large (at most " + formatG(MAX_MAGNITUDE, 6) + ")");
        }
        tokens.push(["num", value, i + 1]);
        i = scanned[1];
      } else if (ch === "*" && i + 1 < chars.length && tr(chars[i + 1]) === "*") {
        tokens.push(["op", "^", i + 1]);
        i += 2;
      } else if (SINGLE.indexOf(ch) >= 0) {
        tokens.push(["(),".indexOf(ch) >= 0 ? ch : "op", ch, i + 1]);
        i++;
      } else if (ch === "\u221a") {
        tokens.push(["sqrt", null, i + 1]);
        i++;
      } else if (isAsciiLetter(ch)) {
        var j = i;
        while (j < chars.length && isAsciiLetter(chars[j])) { j++; }
        var word = chars.slice(i, j).join("");
        if (word.toLowerCase() !== "sqrt") {
          throw new AnswerError("unknown name '" + word + "' at position " + (i + 1) + "; only sqrt is allowed");
        }
        tokens.push(["sqrt", null, i + 1]);
        i = j;
      } else {
        throw new AnswerError("unexpected character " + describe(chars[i]) + " at position " + (i + 1));
      }
    }
    return tokens;
  }

  function Parser(tokens) { this.tokens = tokens; this.i = 0; this.depth = 0; }

  Parser.prototype.peek = function (kind, values) {
    if (this.i >= this.tokens.length) { return null; }
    var token = this.tokens[this.i];
    if (kind !== undefined && token[0] !== kind) { return null; }
    if (values !== undefined && values.indexOf(token[1]) < 0) { return null; }
    return token;
  };
  Parser.prototype.take = function () { return this.tokens[this.i++]; };
  Parser.prototype.where = function () {
    return this.i >= this.tokens.length ? "at the end" : "at position " + this.tokens[this.i][2];
  };
  Parser.prototype.expect = function (kind, what) {
    if (this.peek(kind) === null) { throw new AnswerError("expected " + what + " " + this.where()); }
    return this.take();
  };
  Parser.prototype.enter = function () {
    this.depth++;
    if (this.depth > MAX_DEPTH) { throw new AnswerError("too deeply nested (more than " + MAX_DEPTH + " levels)"); }
  };
  function checked(value) {
    if (!isFinite(value) || Math.abs(value) > MAX_MAGNITUDE) {
      throw new AnswerError("a value is too large (at most " + formatG(MAX_MAGNITUDE, 6) + " in size)");
    }
    return value;
  }

  Parser.prototype.answer = function () {
    if (this.tokens.length === 0) { throw new AnswerError("the answer is empty"); }
    var items = [this.item()];
    while (this.peek(",")) { this.take(); items.push(this.expr()); }
    if (this.i !== this.tokens.length) { throw new AnswerError("unexpected input " + this.where()); }
    return items.length > 1 ? this.vector(items) : items[0];
  };
  Parser.prototype.vector = function (items) {
    if (items.length > MAX_ENTRIES) { throw new AnswerError("a vector may have at most " + MAX_ENTRIES + " entries"); }
    return items;
  };
  Parser.prototype.item = function () {
    var start = this.i;
    if (this.peek("(")) {
      this.take();
      var first = this.expr();
      if (this.peek(",")) {
        var items = [first];
        while (this.peek(",")) { this.take(); items.push(this.expr()); }
        this.expect(")", "')' to close the vector");
        if (this.i !== this.tokens.length) {
          throw new AnswerError("a vector must stand alone; unexpected input " + this.where());
        }
        return this.vector(items);
      }
      this.i = start;
    }
    return this.expr();
  };
  Parser.prototype.expr = function () {
    var value = this.term();
    while (this.peek("op", "+-")) {
      var op = this.take()[1], right = this.term();
      value = checked(op === "+" ? value + right : value - right);
    }
    return value;
  };
  Parser.prototype.term = function () {
    var value = this.unary();
    while (this.peek("op", "*/")) {
      var op = this.take()[1], right = this.unary();
      if (op === "*") { value = checked(value * right); }
      else if (right === 0) { throw new AnswerError("division by zero"); }
      else { value = checked(value / right); }
    }
    return value;
  };
  Parser.prototype.unary = function () {
    if (this.peek("op", "+-")) {
      var op = this.take()[1];
      this.enter();
      var value = this.unary();
      this.depth--;
      return op === "-" ? -value : value;
    }
    return this.power();
  };
  Parser.prototype.power = function () {
    var base = this.atom();
    if (!this.peek("op", "^")) { return base; }
    this.take();
    this.enter();
    var exponent = this.unary();
    this.depth--;
    if (Math.abs(exponent) > MAX_EXPONENT) {
      throw new AnswerError("the exponent " + formatG(exponent, 6) + " is too large (at most " + MAX_EXPONENT + " in size)");
    }
    if (base === 0 && exponent < 0) { throw new AnswerError("0 to a negative power is undefined"); }
    if (base < 0 && exponent !== Math.trunc(exponent)) {
      throw new AnswerError("a negative number to a fractional power is not a real number");
    }
    return checked(Math.pow(base, exponent));
  };
  Parser.prototype.atom = function () {
    var token = this.peek();
    if (token === null) { throw new AnswerError("the answer ends too early: a number is missing"); }
    var kind = token[0], value;
    if (kind === "num") { return this.take()[1]; }
    if (kind === "(") {
      this.take();
      this.enter();
      value = this.expr();
      if (this.peek(",")) {
        throw new AnswerError("a vector must stand alone, not inside a formula (" + this.where() + ")");
      }
      this.expect(")", "')'");
      this.depth--;
      return value;
    }
    if (kind === "sqrt") {
      this.take();
      this.enter();
      value = this.atom();
      this.depth--;
      if (value < 0) { throw new AnswerError("sqrt of a negative number is not a real number"); }
      return Math.sqrt(value);
    }
    throw new AnswerError("expected a number " + this.where() + ", got '" + token[1] + "'");
  };

  function textOf(text) {
    if (typeof text !== "string") {
      throw new AnswerError("the answer must be text, got " + (text === null ? "NoneType" : typeof text));
    }
    var chars = Array.from(text);  // code points, as Python counts them
    if (chars.length > MAX_LENGTH) {
      throw new AnswerError("the answer is too long (" + chars.length + " characters; at most " + MAX_LENGTH + ")");
    }
    return chars;
  }

  function stripSet(chars, set) {
    var a = 0, b = chars.length;
    while (a < b && set.indexOf(chars[a]) >= 0) { a++; }
    while (b > a && set.indexOf(chars[b - 1]) >= 0) { b--; }
    return chars.slice(a, b);
  }

  /* A typed answer as a number or an array of numbers; throws AnswerError with the reason. */
  function parseAnswer(text) {
    var chars = textOf(text);
    if (stripSet(chars, SPACE).length === 0) { throw new AnswerError("the answer is empty"); }
    return new Parser(tokenize(chars)).answer();
  }

  function letter(index) { return LETTERS.charAt(index); }

  /* A letter A, b, (C), D. or D) as a choice index. */
  function parseChoice(text, nChoices) {
    var chars = textOf(text);
    var core = stripSet(stripSet(stripSet(chars, SPACE), "()."), SPACE).join("").toUpperCase();
    var letters = [];
    for (var i = 0; i < nChoices; i++) { letters.push(letter(i)); }
    if (letters.indexOf(core) < 0) { throw new AnswerError("answer with one letter out of " + letters.join(", ")); }
    return letters.indexOf(core);
  }

  /* max(rel * scale, abs): scale |r| for a number, max |r_j| for a vector, 0 for a choice. */
  function tolerance(answer) {
    if (answer.kind === "number") { return Math.max(answer.rel * Math.abs(answer.value), answer.abs); }
    if (answer.kind === "vector") {
      var biggest = 0;
      for (var i = 0; i < answer.value.length; i++) { biggest = Math.max(biggest, Math.abs(answer.value[i])); }
      return Math.max(answer.rel * biggest, answer.abs);
    }
    return 0;
  }

  function verdict(correct, message, value) {
    return { correct: correct, message: message, value: value === undefined ? null : value };
  }

  /* Check typed text against an answer {kind, value, rel, abs, choices} (Answer.to_json()). */
  function checkAnswer(answer, text) {
    var value;
    try {
      if (answer.kind === "choice") {
        var index = parseChoice(text, answer.choices.length);
        var ok = index === answer.value;
        return verdict(ok, ok ? "correct" : "wrong: " + letter(index) + " is not the right choice", index);
      }
      value = parseAnswer(text);
    } catch (err) {
      if (err instanceof AnswerError) { return verdict(false, "could not read the answer: " + err.message); }
      throw err;
    }
    var tol = tolerance(answer);
    if (answer.kind === "number") {
      if (Array.isArray(value)) {
        return verdict(false, "expected one number, got a vector of " + value.length +
                       " entries (use '.' for decimals)", value);
      }
      var good = Math.abs(value - answer.value) <= tol;
      // the tolerance is not printed: a relative one would give the answer's size away
      return verdict(good, good ? "correct" : "wrong: " + formatG(value, 6) +
                     " is not within the problem's tolerance of the answer", value);
    }
    var expected = answer.value;
    if (!Array.isArray(value)) {
      return verdict(false, "expected a vector of " + expected.length + " entries, got one number", value);
    }
    if (value.length !== expected.length) {
      return verdict(false, "expected " + expected.length + " entries, got " + value.length, value);
    }
    var off = [];
    for (var i = 0; i < value.length; i++) {
      if (Math.abs(value[i] - expected[i]) > tol) { off.push(i + 1); }
    }
    if (off.length) {
      return verdict(false, "wrong: entry " + off.join(", ") + " not within the problem's tolerance of the answer", value);
    }
    return verdict(true, "correct", value);
  }

  /* parseAnswer without throwing: {ok: true, value} or {ok: false, error}. */
  function tryParse(text) {
    try { return { ok: true, value: parseAnswer(text) }; }
    catch (err) {
      if (err instanceof AnswerError) { return { ok: false, error: err.message }; }
      throw err;
    }
  }

  return {
    parseAnswer: parseAnswer, parseChoice: parseChoice, checkAnswer: checkAnswer, tryParse: tryParse,
    tolerance: tolerance, formatG: formatG, charName: charName, NAMES: NAMES, AnswerError: AnswerError,
    MAX_LENGTH: MAX_LENGTH, MAX_DEPTH: MAX_DEPTH, MAX_EXPONENT: MAX_EXPONENT, MAX_MAGNITUDE: MAX_MAGNITUDE,
    MAX_ENTRIES: MAX_ENTRIES
  };
}));
