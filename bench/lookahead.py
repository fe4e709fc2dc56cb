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
Configurations: plain decoding, lookahead with the adaptive step shape (the default), and lookahead with
the full W, N, G on every step (--lookahead-fixed: what llama.cpp's llama-lookahead runs).
Only the Python standard library; talks HTTP to 127.0.0.1 only.
"""
import argparse, os, sys, time

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
    a = ap.parse_args()
    w, n, g = a.wng.split(",")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU: {cpu_model()}, {os.cpu_count()} CPUs; "
          f"load {open('/proc/loadavg').read().split()[:3]}")
    print(f"model {os.path.basename(a.model)}, W {w} N {n} G {g}, n_predict {a.n_predict}, greedy, "
          f"{a.rounds} rounds\n")
    print("| config | workload | 1 stream t/s | vs plain | tokens per pass | accepted per pass "
          "| evaluated per accepted | 4 streams t/s | vs plain |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
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
                else:
                    # Each request also plainly on the same server, alternating (speculative.paired): this VM
                    # drifts by 10-30 % within minutes, more than the differences measured here.
                    st, p1, four, p4 = speculative.paired(s.port, prompts, a.n_predict, a.rounds)
                    one = {"tps": st["tps"], "tokens_per_pass": st["tokens_per_pass"]}
                    evaluated, accepted = st["draft_n"], st["accepted"]
                    steps = st["steps"]
                acc = accepted / steps if steps else 0.0
                cost = f"{evaluated / accepted:.1f}" if accepted else "-"
                print(f"| {cfg} | {wl} | {one['tps']:.0f} | {one['tps'] / p1:.2f}x | {one['tokens_per_pass']:.2f} | "
                      f"{acc:.2f} | {cost} | {four:.0f} | {four / p4:.2f}x |", flush=True)
        finally:
            s.stop()
    print(f"\nload after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    sys.exit(main())
