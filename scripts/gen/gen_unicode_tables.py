#!/usr/bin/env python3
"""Generates engine/tokenizer/unicode_tables.cpp from Python's unicodedata.

The tokenizer's pre-tokenizer regexes need Unicode general categories (\\p{L}, \\p{N}, ...), the
White_Space property, simple lowercase mappings (BERT lowercasing) and the first code point of each
canonical decomposition (BERT accent stripping). The data comes from Python's unicodedata, or, with
--ucd DIR, from the Unicode Character Database files in DIR (UnicodeData.txt and ReadMe.txt; Debian's
unicode-data package puts them in /usr/share/unicode), for a Unicode version newer than Python's. The
version is written into the output. The committed tables: Unicode 15.0, llama.cpp 0.7.0's.

    python3 scripts/gen/gen_unicode_tables.py --ucd /usr/share/unicode > engine/tokenizer/unicode_tables.cpp
"""

import os
import re
import sys
import unicodedata


class PythonData:
    """Python's own unicodedata."""

    version = unicodedata.unidata_version
    source = f"Python {sys.version.split()[0]}"

    def category(self, cp):
        return unicodedata.category(chr(cp))

    def lower(self, cp):
        return chr(cp).lower()

    def nfd(self, cp):
        return unicodedata.normalize("NFD", chr(cp))


class UcdData:
    """UnicodeData.txt: general categories, simple lowercase mappings and canonical decompositions (with
    Hangul syllables decomposed algorithmically and combining marks put in canonical order, as NFD does)."""

    def __init__(self, directory):
        self.cat, self.low, self.decomp, self.ccc = {}, {}, {}, {}
        first = None
        with open(os.path.join(directory, "UnicodeData.txt"), encoding="utf-8") as f:
            for line in f:
                fields = line.rstrip("\n").split(";")
                cp, name, cat = int(fields[0], 16), fields[1], fields[2]
                if name.endswith(", First>"):
                    first = cp
                    continue
                for c in range(first if name.endswith(", Last>") else cp, cp + 1):
                    self.cat[c] = cat
                    if int(fields[3]):
                        self.ccc[c] = int(fields[3])
                first = None
                if fields[5] and not fields[5].startswith("<"):
                    self.decomp[cp] = [int(x, 16) for x in fields[5].split()]
                if fields[13]:
                    self.low[cp] = int(fields[13], 16)
        with open(os.path.join(directory, "ReadMe.txt"), encoding="utf-8") as f:
            self.version = re.search(r"Version (\d+\.\d+\.\d+)", f.read()).group(1)
        self.source = "UnicodeData.txt"

    def category(self, cp):
        return self.cat.get(cp, "Cn")

    def lower(self, cp):
        # Unconditional full lowercase mappings differ from the simple ones only for U+0130 (i + U+0307).
        return "i\u0307" if cp == 0x130 else chr(self.low.get(cp, cp))

    def _decompose(self, cp, out):
        if 0xAC00 <= cp <= 0xD7A3:  # Hangul syllable: L V (T)
            s = cp - 0xAC00
            out += [0x1100 + s // 588, 0x1161 + (s % 588) // 28] + ([0x11A7 + s % 28] if s % 28 else [])
        elif cp in self.decomp:
            for c in self.decomp[cp]:
                self._decompose(c, out)
        else:
            out.append(cp)

    def nfd(self, cp):
        out = []
        self._decompose(cp, out)
        # Canonical ordering: each run of non-starters sorted (stably) by combining class.
        i = 0
        while i < len(out):
            if self.ccc.get(out[i], 0) == 0:
                i += 1
                continue
            j = i
            while j < len(out) and self.ccc.get(out[j], 0) != 0:
                j += 1
            out[i:j] = sorted(out[i:j], key=lambda c: self.ccc[c])
            i = j
        return "".join(chr(c) for c in out)


DATA = PythonData()

MAX_CODEPOINT = 0x110000

# Order must match engine::unicode::Category in engine/tokenizer/unicode.h.
CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
              "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"]

# The White_Space property (PropList.txt); unicodedata does not expose it, and str.isspace() differs
# (it also accepts U+001C..U+001F), so the list is spelled out.
WHITESPACE = list(range(0x09, 0x0E)) + [0x20, 0x85, 0xA0, 0x1680] + list(range(0x2000, 0x200B)) + \
    [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]


def category_runs():
    index = {c: i for i, c in enumerate(CATEGORIES)}
    runs = []
    prev = None
    for cp in range(MAX_CODEPOINT):
        cat = index[DATA.category(cp)]
        if cat != prev:
            runs.append((cp, cat))
            prev = cat
    return runs


def simple_lowercase():
    pairs = []
    for cp in range(MAX_CODEPOINT):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        low = DATA.lower(cp)
        if low == chr(cp):
            continue
        if len(low) != 1:
            # Only U+0130 has an unconditional multi-character lowercase; its simple mapping is the
            # first character (U+0069).
            assert cp == 0x130, hex(cp)
        pairs.append((cp, ord(low[0])))
    return pairs


def nfd_first():
    # Runs (first, last, nfd) of consecutive code points whose canonical decomposition starts with the
    # same code point nfd (Hangul syllables compress to one run per leading jamo).
    runs = []
    for cp in range(MAX_CODEPOINT):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        first = ord(DATA.nfd(cp)[0])
        if first == cp:
            continue
        if runs and runs[-1][1] == cp - 1 and runs[-1][2] == first:
            runs[-1] = (runs[-1][0], cp, first)
        else:
            runs.append((cp, cp, first))
    return runs


def emit_pairs(out, name, ctype, pairs, fmt, per_line):
    out.append(f"const {ctype} {name}[] = {{")
    for i in range(0, len(pairs), per_line):
        out.append("    " + " ".join(fmt(p) for p in pairs[i:i + per_line]))
    out.append("};")
    out.append(f"const size_t {name}_size = {len(pairs)};")
    out.append("")


def main():
    global DATA
    if len(sys.argv) == 3 and sys.argv[1] == "--ucd":
        DATA = UcdData(sys.argv[2])
    elif len(sys.argv) != 1:
        sys.exit("usage: gen_unicode_tables.py [--ucd DIR]")
    out = [
        "// Generated by scripts/gen/gen_unicode_tables.py; do not edit.",
        f"// {DATA.source}, Unicode {DATA.version}.",
        "#include \"engine/tokenizer/unicode_tables.h\"",
        "",
        "namespace engine::unicode::tables {",
        "",
        "// clang-format off",
        f"const char* const kUnicodeVersion = \"{DATA.version}\";",
        "",
    ]
    emit_pairs(out, "kCategoryRuns", "CategoryRun", category_runs(),
               lambda p: f"{{0x{p[0]:X}, {p[1]}}},", 6)
    emit_pairs(out, "kWhitespace", "uint32_t", WHITESPACE, lambda p: f"0x{p:X},", 10)
    emit_pairs(out, "kLowercase", "CodepointPair", simple_lowercase(),
               lambda p: f"{{0x{p[0]:X}, 0x{p[1]:X}}},", 5)
    emit_pairs(out, "kNfdFirst", "NfdRun", nfd_first(),
               lambda p: f"{{0x{p[0]:X}, 0x{p[1]:X}, 0x{p[2]:X}}},", 4)
    out.append("// clang-format on")
    out.append("")
    out.append("}  // namespace engine::unicode::tables")
    print("\n".join(out))


if __name__ == "__main__":
    main()
