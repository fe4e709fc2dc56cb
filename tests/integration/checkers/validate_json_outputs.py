"""Validates generated JSON against its JSON Schema with the jsonschema package (python3-jsonschema).

    python3 validate_json_outputs.py CASES.json

CASES.json: [{"schema": {...}, "text": "..."}, ...]. Prints one JSON result per case:
{"ok": bool, "why": str}. Formats (date, uuid, email, ...) are checked too.
"""
import json
import sys

import jsonschema


def _reject_constant(name):
    raise ValueError("not JSON: " + name)


def judge(case):
    try:
        instance = json.loads(case["text"], parse_constant=_reject_constant)
    except ValueError as e:
        return {"ok": False, "why": "not JSON: %s" % e}
    cls = jsonschema.validators.validator_for(case["schema"], default=jsonschema.Draft202012Validator)
    cls.check_schema(case["schema"])
    errors = list(cls(case["schema"], format_checker=cls.FORMAT_CHECKER).iter_errors(instance))
    if errors:
        return {"ok": False, "why": "; ".join("%s at /%s" % (e.message, "/".join(map(str, e.absolute_path)))
                                             for e in errors)}
    return {"ok": True, "why": ""}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    json.dump([judge(c) for c in cases], sys.stdout)


if __name__ == "__main__":
    main()
