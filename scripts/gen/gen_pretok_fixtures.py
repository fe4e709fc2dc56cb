#!/usr/bin/env python3
"""Generates tests/unit/tokenizer/data/pretok_splits.json: how the upstream pre-tokenizer regexes
(as written in the models' tokenizer.json, run with the third-party `regex` module) split a set of
test strings. The tokenizer tests compare engine::PreTokenizer with these splits, which covers the
pre-tokenizers whose vocabularies are not in shared/ (llama3, qwen2, command-r, ...).

    python3 scripts/gen/gen_pretok_fixtures.py > tests/unit/tokenizer/data/pretok_splits.json

Needs: python3 with the `regex` package. Inputs: the .inp strings in shared/models/vocab plus a few
extra strings defined here.
"""

import glob
import json
import os
import sys

import regex

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# tokenizer.ggml.pre name -> the chain of Split patterns (each splits the pieces of the previous one;
# matches and the text between them are kept, HF's "Isolated" behaviour).
FAMILIES = {
    "gpt-2": [GPT2],
    "llama3": [r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""],
    "qwen2": [r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""],
    "qwen35": [r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""],
    # Digits(individual_digits) then ByteLevel.
    "command-r": [r"\p{N}", GPT2],
    "starcoder": [r"\p{N}", GPT2],
    "deepseek-coder": [r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", r"[一-龥ࠀ-一가-퟿]+", r"\p{N}"],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, r"[0-9][0-9][0-9]"],
}

EXTRA = [
    "I'VE don'T We'Re they'LL you'd",
    "1234567 12.5 ٣٤٥٦",
    "line one\r\nline two\n\n\n   indented\n\t\ttabs  \n",
    "trailing spaces   ",
    "   ",
    "a  b   c",
    "mixed: 東京タワーは333m, Ελληνικά, עברית, हिन्दी।",
    "café naïve coöperate e\u0301",
    "x == y && z != w || (a >= b) -> c :: d",
    "emoji 👍🏽👩‍👩‍👧 flags 🇫🇷 keycap 1\ufe0f\u20e3",
]


def split_chain(text, patterns):
    pieces = [text]
    for pat in patterns:
        rx = regex.compile(pat)
        out = []
        for piece in pieces:
            last = 0
            for m in rx.finditer(piece):
                if m.start() > last:
                    out.append(piece[last:m.start()])
                if m.end() > m.start():
                    out.append(m.group())
                last = m.end()
            if last < len(piece):
                out.append(piece[last:])
        pieces = out
    return pieces


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    shared = os.environ.get("GGSERVE_SHARED_DIR", os.path.join(here, "..", "..", "..", "shared"))
    strings = []
    for path in sorted(glob.glob(os.path.join(shared, "models", "vocab", "*.inp"))):
        raw = open(path, encoding="utf-8").read()
        for s in raw.split("\n__ggml_vocab_test__\n"):
            if s not in strings:
                strings.append(s)
    strings += [s for s in EXTRA if s not in strings]
    doc = {
        "generator": "scripts/gen/gen_pretok_fixtures.py",
        "python": sys.version.split()[0],
        "regex": regex.__version__,
        "strings": strings,
        "splits": {name: [split_chain(s, pats) for s in strings] for name, pats in FAMILIES.items()},
    }
    json.dump(doc, sys.stdout, ensure_ascii=False, indent=1)
    print()


if __name__ == "__main__":
    main()
