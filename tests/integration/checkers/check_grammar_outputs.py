"""Checks generated texts against the library grammars' languages (languages.py).

    python3 check_grammar_outputs.py CASES.json

CASES.json: [{"grammar": "json", "text": "...", "complete": true}, ...], where complete says the
generation ended by itself (finish_reason "stop") rather than at its token limit. A complete text must
be in the language and pass the second check; a cut-off one must be a prefix of the language. Prints
one JSON result per case: {"ok": bool, "verdict": "complete"|"prefix"|"invalid", "why": str}.
"""
import json
import sys

from combinators import check
from languages import LANGUAGES, second_opinion


def judge(case, roots):
    name, text = case["grammar"], case["text"]
    if name not in roots:
        return {"ok": False, "verdict": "invalid", "why": "unknown grammar " + name}
    verdict = check(roots[name], text)
    if case["complete"]:
        if verdict != "complete":
            return {"ok": False, "verdict": verdict, "why": "the text is not in the language"}
        why = second_opinion(name, text)
        return {"ok": why is None, "verdict": verdict, "why": why or ""}
    if text.endswith("\ufffd"):  # cut off inside a UTF-8 character
        verdict = check(roots[name], text.rstrip("\ufffd"))
    ok = verdict in ("prefix", "complete")
    return {"ok": ok, "verdict": verdict, "why": "" if ok else "not a prefix of the language"}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    roots = {name: make() for name, make in LANGUAGES.items()}
    json.dump([judge(c, roots) for c in cases], sys.stdout)


if __name__ == "__main__":
    main()
