"""Tiny parser combinators for checking generated text against a language, written independently of
ggserve's GBNF engine.

A parser maps (text, start position) to the set of positions where a match can end, so ambiguous
languages need no backtracking. While parsing, any terminal that wanted more input at the end of the
text records it: then the text is a valid *prefix* of the language (what a generation cut off by its
token limit must be).
"""
import sys

sys.setrecursionlimit(20000)


class Ctx:
    def __init__(self, text):
        self.text = text
        self.hit_end = False
        self.memo = {}


class P:
    def parse(self, ctx, i):
        raise NotImplementedError


class Lit(P):
    def __init__(self, s):
        self.s = s

    def parse(self, ctx, i):
        t = ctx.text
        if t.startswith(self.s, i):
            return {i + len(self.s)}
        rest = t[i:]
        if len(rest) < len(self.s) and self.s.startswith(rest):
            ctx.hit_end = True
        return set()


class Chars(P):
    """One character satisfying pred."""

    def __init__(self, pred):
        self.pred = pred

    def parse(self, ctx, i):
        if i >= len(ctx.text):
            ctx.hit_end = True
            return set()
        return {i + 1} if self.pred(ctx.text[i]) else set()


class Seq(P):
    def __init__(self, *ps):
        self.ps = [wrap(p) for p in ps]

    def parse(self, ctx, i):
        pos = {i}
        for p in self.ps:
            nxt = set()
            for j in pos:
                nxt |= p.parse(ctx, j)
            pos = nxt
            if not pos:
                break
        return pos


class Alt(P):
    def __init__(self, *ps):
        self.ps = [wrap(p) for p in ps]

    def parse(self, ctx, i):
        out = set()
        for p in self.ps:
            out |= p.parse(ctx, i)
        return out


class Rep(P):
    """p repeated lo..hi times (hi None: unbounded); p must not match empty text."""

    def __init__(self, p, lo=0, hi=None):
        self.p, self.lo, self.hi = wrap(p), lo, hi

    def parse(self, ctx, i):
        out = {i} if self.lo == 0 else set()
        frontier, seen, n = {i}, {i}, 0
        while frontier and (self.hi is None or n < self.hi):
            nxt = set()
            for j in frontier:
                nxt |= self.p.parse(ctx, j)
            n += 1
            if n >= self.lo:
                out |= nxt
            frontier = nxt - seen if n >= self.lo else nxt
            seen |= nxt
        return out


class Rule(P):
    """A named, memoized rule; define its body later with .define() (rules may be recursive)."""

    def __init__(self, name):
        self.name, self.body = name, None

    def define(self, *body):
        self.body = Seq(*body) if len(body) > 1 else wrap(body[0])
        return self

    def parse(self, ctx, i):
        key = (id(self), i)
        if key not in ctx.memo:
            ctx.memo[key] = set()  # no left recursion in our languages; this only guards loops
            ctx.memo[key] = self.body.parse(ctx, i)
        return ctx.memo[key]


def wrap(p):
    return Lit(p) if isinstance(p, str) else p


def Opt(p):
    return Rep(p, 0, 1)


def Plus(p):
    return Rep(p, 1)


def Star(p):
    return Rep(p)


def one_of(chars):
    return Chars(lambda c: c in chars)


def none_of(chars):
    return Chars(lambda c: c not in chars)


def rng(a, b):
    return Chars(lambda c: a <= c <= b)


def check(root, text):
    """'complete' if text is in the language, 'prefix' if it can be continued into it, else 'invalid'."""
    ctx = Ctx(text)
    ends = root.parse(ctx, 0)
    if len(text) in ends:
        return "complete"
    return "prefix" if ctx.hit_end else "invalid"
