#!/usr/bin/env python3
"""Lookahead decoding benchmark (docs/performance.md, "Lookahead decoding").

Starts `ggserve serve` once per configuration and measures, for each workload (bench/speculative.py's
"story" and "grounded" prompts, and "repetitive": sentences repeated in the prompt):
  - one stream: generation tokens/s (the server's timings.predicted_per_second, median over rounds and
    prompts), tokens emitted per target pass, accepted branch tokens per pass, extra tokens evaluated
    (window and branches) per accepted token;
  - four streams at once: aggregate generated tokens / wall time.
"vs plain" compares with the same requests sent plainly (`speculative.n_max` 0) to the same server,
alternating with the lookahead ones (bench/speculative.py's paired()); the "none" rows are a plain server.
Each prompt is asked once per round: from the second round on, a slot's n-gram pool holds the replies it
gave before (lookahead's pool stays from a slot's earlier requests), so "first round vs plain" gives the
first round's medians apart, where the pool knew only the prompt.
Configurations: plain decoding, lookahead with the adaptive step shape (the default), and lookahead with
the full W, N, G on every step (--lookahead-fixed: what llama.cpp's llama-lookahead runs).
With --llamacpp PREFIX (e.g. "bench/llamacpp.sh", which runs Debian's llama.cpp binaries), llama.cpp's
single-sequence programs run the same prompts in the same run, one stream: `llama-completion` (plain greedy
decoding) and `llama-lookahead` (W 15, N 5, G 15, fixed in that program); their "vs plain" is against
llama-completion, and their last column gives ggserve's one-stream rate over theirs (plain over
llama-completion; lookahead, adaptive and fixed, over llama-lookahead) on the same prompts.
Only the Python standard library; talks HTTP to 127.0.0.1 only.
"""
import argparse, os, re, shlex, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speculative  # noqa: E402
from speculative import WORKLOADS, Server, cpu_model  # noqa: E402


# Where lookahead pays: text that repeats itself, so the pool (seeded from the prompt) predicts whole branches.
WORKLOADS = dict(WORKLOADS)
WORKLOADS["repetitive"] = [
    "Tom said: I like the red ball. " * 8 + "Tom said:",
    "The cat sat on the mat and the dog sat on the log. " * 6 + "The cat",
    "One, two, three, four, five. " * 10 + "One,",
    "Lily ran to the park. Lily ran to the tree. " * 6 + "Lily ran",
]


def llamacpp(prefix, tool, model, prompt, n, threads):
    """Runs one of llama.cpp's example programs on one prompt (greedy); returns what it printed about the
    generation: tokens, seconds, accepted draft tokens and all tokens evaluated (llama-lookahead)."""
    cmd = shlex.split(prefix) + [tool, "-m", model, "-p", prompt, "-n", str(n), "--temp", "0", "-t", threads]
    if tool == "llama-completion":
        cmd += ["-no-cnv"]
    patterns = {"tokens": r"decoded\s+(\d+) tokens in", "seconds": r"decoded\s+\d+ tokens in\s+([\d.]+) seconds",
                "prompt": r"encoded\s+(\d+) tokens", "accepted": r"n_accept\s*=\s*(\d+)",
                "evaluated": r"prompt eval time =.*?/\s*(\d+) tokens"}
    if tool != "llama-lookahead":
        patterns = {"ms": r"perf_print:\s+eval time =\s+([\d.]+) ms /",
                    "runs": r"perf_print:\s+eval time =\s+[\d.]+ ms /\s+(\d+) runs"}
    # llama.cpp's log thread sometimes loses its last lines at exit (about 1 run in 10 here): run it again.
    for _ in range(5):
        out = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace", timeout=3600).stdout
        found = {k: re.search(p, out) for k, p in patterns.items()}
        if all(found.values()):
            break
    else:
        raise RuntimeError(f"{tool}: its summary is missing from its output:\n{out[-3000:]}")
    v = {k: float(m.group(1)) for k, m in found.items()}
    if tool == "llama-lookahead":
        tokens, accepted = int(v["tokens"]), int(v["accepted"])
        return {"tokens": tokens, "seconds": v["seconds"], "accepted": accepted,
                "extra": int(v["evaluated"] - v["prompt"]) - (tokens - accepted), "passes": tokens - accepted}
    return {"tokens": int(v["runs"]), "seconds": v["ms"] / 1000, "accepted": 0, "extra": 0, "passes": int(v["runs"])}


def llamacpp_rows(a, ggserve_tps):
    """llama-completion and llama-lookahead on each workload's prompts, a round at a time, alternating."""
    print("\n| llama.cpp program | workload | 1 stream t/s | vs llama-completion | tokens per pass | accepted per pass "
          "| evaluated per accepted | ggserve / this |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for wl in a.workloads.split(","):
        rates = {"llama-completion": [], "llama-lookahead": []}
        sums = {"accepted": 0, "extra": 0, "passes": 0, "tokens": 0}
        for _ in range(a.rounds):
            for p in WORKLOADS[wl]:
                for tool in rates:
                    r = llamacpp(a.llamacpp, tool, a.model, p, a.n_predict, a.threads)
                    rates[tool].append(r["tokens"] / r["seconds"])
                    if tool == "llama-lookahead":
                        for k in sums:
                            sums[k] += r[k]
        plain = statistics.median(rates["llama-completion"])
        look = statistics.median(rates["llama-lookahead"])
        def vs_ours(x, cfgs):
            cells = [f"{c} {ggserve_tps[c][wl] / x:.2f}x" for c in cfgs if wl in ggserve_tps.get(c, {})]
            return ", ".join(cells) or "-"
        cost = f"{sums['extra'] / sums['accepted']:.1f}" if sums["accepted"] else "-"
        print(f"| llama-completion | {wl} | {plain:.0f} | 1.00x | 1.00 | 0.00 | - | {vs_ours(plain, ['none'])} |", flush=True)
        print(f"| llama-lookahead | {wl} | {look:.0f} | {look / plain:.2f}x | {sums['tokens'] / sums['passes']:.2f} | "
              f"{sums['accepted'] / sums['passes']:.2f} | {cost} | {vs_ours(look, ['lookahead', 'lookahead-fixed'])} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin/ggserve")
    ap.add_argument("--model", required=True)
    ap.add_argument("--configs", default="none,lookahead,lookahead-fixed")
    ap.add_argument("--n-predict", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--wng", default="15,5,15", help="W,N,G")
    ap.add_argument("--workloads", default="story,grounded,repetitive")
    ap.add_argument("--llamacpp", default="", help="command prefix running llama.cpp's programs by name, "
                    "e.g. bench/llamacpp.sh: adds llama-completion and llama-lookahead rows")
    a = ap.parse_args()
    w, n, g = a.wng.split(",")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU: {cpu_model()}, {os.cpu_count()} CPUs; "
          f"load {open('/proc/loadavg').read().split()[:3]}")
    print(f"model {os.path.basename(a.model)}, W {w} N {n} G {g}, n_predict {a.n_predict}, greedy, "
          f"{a.rounds} rounds\n")
    print("| config | workload | 1 stream t/s | vs plain | first round vs plain | tokens per pass | accepted per pass "
          "| evaluated per accepted | 4 streams t/s | vs plain |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ggserve_tps = {}  # config -> workload -> ggserve's one-stream rate, for the llama.cpp rows
    for cfg in a.configs.split(","):
        cmd = [a.bin, "serve", "-m", a.model, "--port", "0", "-c", "4096", "-np", "4", "-t", a.threads]
        if cfg != "none":
            cmd += ["--spec-type", "lookahead", "--lookahead-w", w, "--lookahead-n", n, "--lookahead-g", g]
        if cfg == "lookahead-fixed":
            cmd += ["--lookahead-fixed"]
        s = Server(cmd)
        try:
            for wl in a.workloads.split(","):
                prompts = WORKLOADS[wl]
                if cfg == "none":
                    one = speculative.one_stream(s.port, prompts, a.n_predict, a.rounds)
                    four = speculative.four_streams(s.port, prompts, a.n_predict, max(1, a.rounds - 1))
                    p1, p4 = one["tps"], four
                    evaluated, accepted, steps = 0, 0, 0
                    first = "-"
                else:
                    # Each request also plainly on the same server, alternating (speculative.paired): this VM
                    # drifts by 10-30 % within minutes, more than the differences measured here.
                    st, p1, four, p4 = speculative.paired(s.port, prompts, a.n_predict, a.rounds)
                    one = {"tps": st["tps"], "tokens_per_pass": st["tokens_per_pass"]}
                    evaluated, accepted = st["draft_n"], st["accepted"]
                    steps = st["steps"]
                    # The first round: the slot's pool has not seen these replies yet.
                    first = f"{st['first_vs_plain']:.2f}x"
                ggserve_tps.setdefault(cfg, {})[wl] = one["tps"]
                ggserve_tps.setdefault("none", {}).setdefault(wl, p1)
                acc = accepted / steps if steps else 0.0
                cost = f"{evaluated / accepted:.1f}" if accepted else "-"
                print(f"| {cfg} | {wl} | {one['tps']:.0f} | {one['tps'] / p1:.2f}x | {first} | {one['tokens_per_pass']:.2f} | "
                      f"{acc:.2f} | {cost} | {four:.0f} | {four / p4:.2f}x |", flush=True)
        finally:
            s.stop()
    if a.llamacpp:
        llamacpp_rows(a, ggserve_tps)
    print(f"\nload after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    sys.exit(main())
