#!/usr/bin/env python3
"""Server check on a GPU (scripts/gpu/check.sh): `ggserve serve ARGS...` with stories260K must give the golden
greedy tokens for every case, one request at a time and all cases at once beside a long prompt (batch
invariance: a stream's tokens do not depend on what else is in the batch).

  server_goldens.py BIN GOLDEN MODEL [serve args...]
Exit status 0 when every case matches in both phases. Only the Python standard library."""
import json, re, subprocess, sys, threading, urllib.request


def post(port, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.loads(r.read())


def main():
    binary, golden, model, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    g = json.load(open(golden))
    p = subprocess.Popen([binary, "serve", "--port", "0", "-m", model] + extra, stderr=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, text=True)
    port, log = None, ""
    for line in p.stderr:
        log += line
        m = re.search(r"listening on http://[^:]+:(\d+)", line)
        if m:
            port = int(m.group(1))
        if port and "ready:" in line:
            break
    else:
        print("server exited before ready:\n" + log)
        return 1
    threading.Thread(target=p.stderr.read, daemon=True).start()
    ok = True
    try:
        def req(c):
            return {"prompt": c["prompt"], "n_predict": len(c["completion_tokens"]), "temperature": 0,
                    "cache_prompt": False, "return_tokens": True}

        def check(phase, ci, r):
            nonlocal ok
            want = g["cases"][ci]["completion_tokens"]
            got = r.get("tokens", [])
            if got != want:
                ok = False
                first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                print(f"{phase}: case {ci} differs from the golden at token {first} ({len(got)} tokens)")
        tps = []
        for ci, c in enumerate(g["cases"]):
            r = post(port, req(c))
            tps.append(r["timings"]["predicted_per_second"])
            check("alone", ci, r)
        # All cases at once, with a long prompt arriving beside them.
        results = {}
        long_prompt = " ".join(c["completion_text"] for c in g["cases"])[:1500]

        def run(ci):
            results[ci] = post(port, req(g["cases"][ci]))

        def run_long():
            results["long"] = post(port, {"prompt": long_prompt, "n_predict": 32, "temperature": 0})
        threads = [threading.Thread(target=run, args=(ci,)) for ci in range(len(g["cases"]))]
        threads.insert(len(threads) // 2, threading.Thread(target=run_long))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for ci in range(len(g["cases"])):
            check("concurrent", ci, results[ci])
        print(f"server {' '.join(extra)}: {len(g['cases'])} cases alone and concurrently: "
              f"{'all equal the golden' if ok else 'DIFFERENCES'}; single-stream tokens/s median "
              f"{sorted(tps)[len(tps) // 2]:.0f}")
    finally:
        p.terminate()
        p.wait(timeout=30)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
