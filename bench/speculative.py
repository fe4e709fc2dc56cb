#!/usr/bin/env python3
"""Speculative decoding benchmark (docs/performance.md, "Speculative decoding").

Starts `ggserve serve` (or, with --llama-server, llama.cpp's llama-server with the same flags) once per
--spec-type configuration and measures, for each workload:
  - one stream: generation tokens/s (the server's own timings.predicted_per_second, median of rounds),
    draft tokens evaluated and accepted, accepted tokens per target pass;
  - four streams at once: aggregate generated tokens / wall time.
Workloads: "story" (free continuation of a story opening) and "grounded" (a passage given in the prompt
and its start repeated: the continuation can copy the passage, where n-gram drafts should shine).
"vs plain": for ggserve, against plain requests (`speculative.n_max` 0) interleaved with the drafter's on
the same server; for llama-server, which has no per-request switch, against its own "none" server.
Only the Python standard library; talks HTTP to 127.0.0.1 only.
"""
import argparse, json, os, re, statistics, subprocess, sys, threading, time, urllib.request

PASSAGE = ("Once upon a time, there was a little girl named Lily. She loved to play outside in the park with "
           "her friends. One day, she saw a big red ball under a tree. She wanted to play with it, so she ran to "
           "the tree and picked it up. Her friend Tom came to play with her. They threw the ball high in the sky "
           "and laughed. When the sun went down, Lily and Tom went home. They were happy and tired.")
WORKLOADS = {
    "story": ["Once upon a time", "One day, a little dog", "Tom and Sue went to the park", "The sun was shining"],
    "grounded": [PASSAGE + "\n\n" + PASSAGE[:60], PASSAGE + "\n\nOnce upon a time, there was a little girl",
                 PASSAGE + "\n\n" + PASSAGE[:120], PASSAGE + "\n\nLily"],
}


def post(port, path, body, timeout=600):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


class Server:
    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.port = None
        deadline = time.time() + 120
        log = ""
        while time.time() < deadline:
            line = self.p.stderr.readline()
            if not line:
                raise RuntimeError("server exited:\n" + log)
            log += line
            m = re.search(r"listening on http://[^:]+:(\d+)", line) or re.search(r"server is listening on http://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
            if self.port and ("ready:" in line or "all slots are idle" in line):
                break
            if self.port and "llama_server: listening" in line:  # newer llama-servers log nothing more
                break
        if not self.port:
            raise RuntimeError("server not ready:\n" + log)
        threading.Thread(target=self.p.stderr.read, daemon=True).start()
        while time.time() < deadline:  # /health answers 200 once the model is loaded
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("server not ready:\n" + log)

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=30)


def body(prompt, n, spec_off=False):
    b = {"prompt": prompt, "n_predict": n, "temperature": 0, "cache_prompt": False, "seed": 1}
    if spec_off:
        b["speculative.n_max"] = 0
    return b


def one_stream(port, prompts, n, rounds):
    tps, drafted, accepted, steps, predicted = [], 0, 0, 0, 0
    for _ in range(rounds):
        for p in prompts:
            r = post(port, "/completion", body(p, n))
            t = r["timings"]
            tps.append(t["predicted_per_second"])
            drafted += t.get("draft_n", 0)
            accepted += t.get("draft_n_accepted", 0)
            steps += t.get("decode_iterations", 0)
            predicted += t["predicted_n"]
    return {"tps": statistics.median(tps), "draft_n": drafted, "accepted": accepted,
            "tokens_per_pass": predicted / steps if steps else float("nan")}


def paired(port, prompts, n, rounds):
    """ggserve only: each request twice on the same server, plainly (`speculative.n_max` 0) and with the
    drafter, alternating, so that both see the same machine (this VM drifts by 10-30 % within minutes; a
    plain server measured minutes apart made drafters look up to 15 % slower than they are). Returns the
    one-stream stats with the interleaved plain median, and the four-stream rates likewise."""
    plain_one, spec_one, drafted, accepted, steps, predicted = [], [], 0, 0, 0, 0
    for _ in range(rounds):
        for p in prompts:
            # The drafter's request first: drafters that learn from finished requests (ngram-cache) must not
            # see its plain twin's identical reply before it.
            t = post(port, "/completion", body(p, n))["timings"]
            spec_one.append(t["predicted_per_second"])
            drafted += t.get("draft_n", 0)
            accepted += t.get("draft_n_accepted", 0)
            steps += t.get("decode_iterations", 0)
            predicted += t["predicted_n"]
            plain_one.append(post(port, "/completion", body(p, n, spec_off=True))["timings"]["predicted_per_second"])
    plain_four, spec_four = [], []
    # A four-stream batch lasts a fraction of a second here: many of them, the order alternating (with the
    # drafter's batch always first, ngram-map-k read 0.95-0.98x on story prompts, alternating 0.97-0.99x).
    for i in range(3 * rounds):
        batches = [(spec_four, None), (plain_four, lambda p, k: body(p, k, spec_off=True))]
        for out, make in batches if i % 2 == 0 else batches[::-1]:
            out.append(four_streams(port, prompts, n, 1, make))
    # The first round apart: drafters that remember earlier requests (ngram-mod, ngram-cache, lookahead's
    # pool) have not seen these replies yet there.
    k = len(prompts)
    first = statistics.median(spec_one[:k]) / statistics.median(plain_one[:k])
    return ({"tps": statistics.median(spec_one), "draft_n": drafted, "accepted": accepted,
             "tokens_per_pass": predicted / steps if steps else float("nan"), "steps": steps,
             "first_vs_plain": first},
            statistics.median(plain_one), statistics.median(spec_four), statistics.median(plain_four))


def four_streams(port, prompts, n, rounds, make_body=None):
    """Aggregate generated tokens/s of four concurrent streams; make_body(prompt, n) builds each request."""
    make_body = make_body or body
    total, t0 = 0, time.time()
    lock = threading.Lock()

    def worker(p):
        nonlocal total
        for _ in range(rounds):
            r = post(port, "/completion", make_body(p, n))
            with lock:
                total += r["timings"]["predicted_n"]

    ths = [threading.Thread(target=worker, args=(p,)) for p in prompts[:4]]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    return total / (time.time() - t0)


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin/ggserve")
    ap.add_argument("--llama-server", default="", help="also run llama.cpp's llama-server with the same flags")
    ap.add_argument("--model", required=True)
    ap.add_argument("--draft", default="")
    ap.add_argument("--configs", default="none,ngram-simple,ngram-map-k,ngram-map-k4v,ngram-mod,ngram-cache,draft-simple")
    ap.add_argument("--n-predict", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--workloads", default="story,grounded")
    ap.add_argument("--server-args", default="", help="more flags for both servers, e.g. '--draft-p-min 0'")
    a = ap.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU: {cpu_model()}, {os.cpu_count()} CPUs; "
          f"load {open('/proc/loadavg').read().split()[:3]}")
    print(f"model {os.path.basename(a.model)}, draft {os.path.basename(a.draft) or '-'}, n_predict {a.n_predict}, "
          f"greedy, {a.rounds} rounds{', server flags ' + a.server_args if a.server_args else ''}\n")
    print("| server | spec-type | workload | 1 stream t/s | vs plain | accepted/drafted | tokens per target pass "
          "| 4 streams t/s | vs plain |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    servers = [("ggserve", [a.bin, "serve"])]
    if a.llama_server:
        servers.append(("llama-server", [a.llama_server]))
    plain = {name: {} for name, _ in servers}
    # Configurations outside, servers inside: both servers run each configuration back to back, so they see
    # the same background load.
    for cfg in a.configs.split(","):
        for name, base in servers:
            if cfg == "draft-simple" and not a.draft:
                continue
            cmd = base + ["-m", a.model, "--port", "0" if name == "ggserve" else "18431", "-c", "4096", "-np", "4",
                          "-t", a.threads] + a.server_args.split()
            if cfg != "none":
                cmd += ["--spec-type", cfg]
                if cfg == "draft-simple":
                    cmd += ["-md", a.draft]
            s = Server(cmd)
            try:
                for wl in a.workloads.split(","):
                    prompts = WORKLOADS[wl]
                    if name == "ggserve" and cfg != "none":
                        one, p1, four, p4 = paired(s.port, prompts, a.n_predict, a.rounds)
                    else:
                        one = one_stream(s.port, prompts, a.n_predict, a.rounds)
                        four = four_streams(s.port, prompts, a.n_predict, max(1, a.rounds - 1))
                        if cfg == "none":
                            plain[name][wl] = (one["tps"], four)
                        p1, p4 = plain[name].get(wl, (float("nan"), float("nan")))
                    acc = f"{one['accepted']}/{one['draft_n']}" if cfg != "none" else "-"
                    print(f"| {name} | {cfg} | {wl} | {one['tps']:.0f} | {one['tps'] / p1:.2f}x | {acc} | "
                          f"{one['tokens_per_pass']:.2f} | {four:.0f} | {four / p4:.2f}x |", flush=True)
            finally:
                s.stop()
    print(f"\nload after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    sys.exit(main())
