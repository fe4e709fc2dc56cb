"""The languages of engine/grammars/*.gbnf, written by hand as combinators (combinators.py) from each
grammar's description, plus a second, differently built check for complete texts (json.loads, Python's
own expression parser, regular expressions)."""
import ast
import json
import re

from combinators import Alt, Chars, Lit, Opt, Plus, Rep, Rule, Seq, Star, none_of, one_of, rng

DIGIT = rng("0", "9")
HEX = Chars(lambda c: c in "0123456789abcdefABCDEF")
LETTER_ = Chars(lambda c: c == "_" or "a" <= c <= "z" or "A" <= c <= "Z")
WORD_CHAR = Chars(lambda c: c == "_" or "a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9")


def json_language(top):
    """JSON as json.gbnf / json_arr.gbnf write it: bounded whitespace, escapes without lone surrogates."""
    ws = Opt(Alt(" ", Seq("\n", Rep(one_of(" \t"), 0, 20))))
    value, obj, arr = Rule("value"), Rule("object"), Rule("array")
    char = Alt(Chars(lambda c: c not in '"\\' and not (ord(c) < 0x20 or ord(c) == 0x7F)),
               Seq("\\", Alt(one_of('"\\/bfnrt'),
                             Seq("u", Chars(lambda c: c in "0123456789abcABCefEF"), Rep(HEX, 3, 3)),
                             Seq("u", one_of("dD"), rng("0", "7"), Rep(HEX, 2, 2)),
                             Seq("u", one_of("dD"), one_of("89abAB"), Rep(HEX, 2, 2), "\\u", one_of("dD"),
                                 Chars(lambda c: c in "cdefCDEF"), Rep(HEX, 2, 2)))))
    string = Seq('"', Star(char), '"', ws)
    integer = Alt("0", Seq(rng("1", "9"), Rep(DIGIT, 0, 15)))
    number = Seq(Opt("-"), integer, Opt(Seq(".", Rep(DIGIT, 1, 16))),
                 Opt(Seq(one_of("eE"), Opt(one_of("-+")), Rep(DIGIT, 1, 3))), ws)
    literal = Seq(Alt("true", "false", "null"), ws)
    value.define(Alt(obj, arr, string, number, literal))
    member = Seq(string, ":", ws, value)
    obj.define("{", ws, Opt(Seq(member, Star(Seq(",", ws, member)))), "}", ws)
    elements = Opt(Seq(value, Star(Seq(",", ws, value))))
    arr.define("[", ws, elements, "]", ws)
    if top == "object":
        return Rule("root").define(obj)
    return Rule("root").define("[", ws, elements, "]")


def arithmetic_language():
    ws = Opt(" ")
    expr, term, factor, unary, atom = Rule("expr"), Rule("term"), Rule("factor"), Rule("unary"), Rule("atom")
    number = Seq(Plus(DIGIT), Opt(Seq(".", Plus(DIGIT))))
    name = Seq(LETTER_, Star(WORD_CHAR))
    expr.define(term, Star(Seq(ws, one_of("-+"), ws, term)))
    term.define(factor, Star(Seq(ws, one_of("*/"), ws, factor)))
    factor.define(unary, Opt(Seq(ws, "^", ws, factor)))
    unary.define(Alt(Seq("-", ws, unary), atom))
    args = Opt(Seq(expr, Star(Seq(ws, ",", ws, expr))))
    atom.define(Alt(number, Seq(name, Opt(Seq(ws, "(", ws, args, ws, ")"))), Seq("(", ws, expr, ws, ")")))
    return Rule("root").define(ws, expr, ws)


def list_language():
    item = Seq("- ", Plus(none_of("\r\n")), "\n")
    return Rule("root").define(Plus(item))


def chess_language():
    square = Seq(rng("a", "h"), rng("1", "8"))
    piece_move = Seq(one_of("KQRBN"), Opt(rng("a", "h")), Opt(rng("1", "8")), Opt("x"), square)
    pawn_move = Seq(Opt(Seq(rng("a", "h"), "x")), square, Opt(Seq("=", one_of("QRBN"))))
    castle = Seq("O-O", Opt("-O"))
    move = Seq(Alt(castle, piece_move, pawn_move), Opt(one_of("+#")))
    number = Seq(rng("1", "9"), Rep(DIGIT, 0, 2))
    turn = Seq(number, ". ", move, Opt(Seq(" ", move)))
    result = Alt("1-0", "0-1", "1/2-1/2")
    return Rule("root").define(turn, Star(Seq("\n", turn)), Opt(Seq(" ", result)), Opt("\n"))


def c_language():
    blank = one_of(" \t\n")
    comment = Seq("//", Star(none_of("\n")), "\n")
    ws = Star(Alt(blank, comment))
    ident = Seq(LETTER_, Star(WORD_CHAR))
    number = Seq(Plus(DIGIT), Opt(Seq(".", Plus(DIGIT))))
    string = Seq('"', Star(Alt(none_of('"\\\n'), Seq("\\", none_of("\n")))), '"')
    char_lit = Seq("'", Alt(none_of("'\\\n"), Seq("\\", none_of("\n"))), "'")
    expr, unary, postfix, block, statement = Rule("expr"), Rule("unary"), Rule("postfix"), Rule("block"), Rule("stmt")
    primary = Alt(ident, number, string, char_lit, Seq("(", ws, expr, ws, ")"))
    call_args = Opt(Seq(expr, Star(Seq(ws, ",", ws, expr))))
    postfix.define(primary, Star(Alt(Seq(ws, "(", ws, call_args, ws, ")"), Seq(ws, "[", ws, expr, ws, "]"), "++", "--")))
    unary.define(Alt(Seq(one_of("-!~&*"), ws, unary), postfix))
    binary_op = Alt(one_of("-+*/%<>&|^"), "==", "!=", "<=", ">=", "&&", "||", "<<", ">>")
    expr.define(unary, Star(Seq(ws, binary_op, ws, unary)))
    base_type = Seq(Opt(Seq("unsigned", Plus(blank))),
                    Alt("int", "char", "long", "short", "float", "double", "void"))
    typed_name = Rule("typed-name").define(base_type, Alt(Plus(blank), Seq(ws, "*", ws)), Star(Seq("*", ws)), ident)
    declaration = Rule("decl").define(typed_name, Opt(Seq(ws, "[", ws, number, ws, "]")),
                                      Opt(Seq(ws, "=", ws, expr)), ws, ";")
    assign_op = Alt("=", "+=", "-=", "*=", "/=")
    simple = Alt(Seq(unary, ws, assign_op, ws, expr), expr)
    body = Alt(block, statement)
    statement.define(Alt(
        declaration,
        Seq(unary, ws, assign_op, ws, expr, ws, ";"),
        Seq("return", Opt(Alt(Seq(Plus(blank), expr), Seq(ws, "(", ws, expr, ws, ")"))), ws, ";"),
        Seq("if", ws, "(", ws, expr, ws, ")", ws, body, Opt(Seq(ws, "else", ws, body))),
        Seq("while", ws, "(", ws, expr, ws, ")", ws, body),
        Seq("for", ws, "(", ws, Opt(simple), ws, ";", ws, Opt(expr), ws, ";", ws, Opt(simple), ws, ")", ws, body),
        Seq("break", ws, ";"), Seq("continue", ws, ";"),
        Seq(expr, ws, ";"),
        block))
    block.define("{", ws, Star(Seq(statement, ws)), "}")
    params = Alt("void", Seq(typed_name, Star(Seq(ws, ",", ws, typed_name))))
    function = Seq(typed_name, ws, "(", ws, Opt(params), ws, ")", ws, block)
    top = Alt(declaration, function)
    return Rule("root").define(ws, Plus(Seq(top, ws)))


LANGUAGES = {
    "json": lambda: json_language("object"),
    "json_arr": lambda: json_language("array"),
    "arithmetic": arithmetic_language,
    "list": list_language,
    "chess": chess_language,
    "c": c_language,
}


def _reject_constant(name):
    raise ValueError("not JSON: " + name)


def second_opinion(name, text):
    """A differently built check of a complete text; returns an error message or None."""
    if name in ("json", "json_arr"):
        try:
            v = json.loads(text, parse_constant=_reject_constant)
        except ValueError as e:
            return "json.loads: %s" % e
        want = dict if name == "json" else list
        return None if isinstance(v, want) else "top-level value is a %s" % type(v).__name__
    if name == "arithmetic":
        try:
            ast.parse("(" + text.replace("^", "**") + ")", mode="eval")  # parentheses: any blanks
        except SyntaxError as e:
            return "not an expression: %s" % e
        return None
    if name == "list":
        return None if re.fullmatch(r"(- [^\r\n]+\n)+", text) else "not a bullet list"
    if name == "chess":
        move = r"(?:O-O(?:-O)?|[KQRBN][a-h]?[1-8]?x?[a-h][1-8]|(?:[a-h]x)?[a-h][1-8](?:=[QRBN])?)[+#]?"
        turn = r"[1-9][0-9]{0,2}\. %s(?: %s)?" % (move, move)
        game = r"%s(?:\n%s)*(?: (?:1-0|0-1|1/2-1/2))?\n?" % (turn, turn)
        return None if re.fullmatch(game, text) else "not a game in algebraic notation"
    if name == "c":
        # Brackets balance outside strings, character literals and comments.
        stripped = re.sub(r'//[^\n]*\n|"(?:[^"\\\n]|\\[^\n])*"|\'(?:[^\'\\\n]|\\[^\n])\'', " ", text)
        depth = []
        pairs = {")": "(", "]": "[", "}": "{"}
        for ch in stripped:
            if ch in "([{":
                depth.append(ch)
            elif ch in pairs:
                if not depth or depth.pop() != pairs[ch]:
                    return "unbalanced '%s'" % ch
        return "unclosed brackets" if depth else None
    return "unknown language " + name
