#!/usr/bin/env python3
"""ggserve serve and llama.cpp's llama-server side by side under the same load (docs/performance.md,
"Server side by side").

Both servers get the same model, threads, context, slots and batch flags; `ggserve loadgen` (a C++ client,
so the client's own overhead stays small and equal) drives each with N concurrent streaming `/completion`
requests (`ignore_eos`, a fixed number of tokens each, sampled at temperature 0.8) and reports aggregate
generated tokens/s, TTFT and inter-token latency (ITL) p50/p99/max. For each stream count the servers
run one after the other, REPEAT times interleaved, so both see the same background noise; the table
keeps each server's best aggregate rate and the latencies of that run.

A last scenario, "long prompt mid-run": the highest stream count with a fraction of the requests
carrying a long prompt, once more for ggserve with --max-prefill-tokens (llama-server has no such cap),
to show what a prefill does to the other streams' inter-token gaps.
Only the Python standard library; everything runs on 127.0.0.1.
"""
import argparse, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speculative import Server, cpu_model  # noqa: E402


def loadgen(bin_path, port, streams, requests, max_tokens, long_ratio, long_prompt):
    cmd = [bin_path, "loadgen", "--port", str(port), "-c", str(streams), "-n", str(requests),
           "--max-tokens", str(max_tokens), "--short-prompt", "16", "--long-prompt", str(long_prompt),
           "--long-ratio", str(long_ratio)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    report = json.loads(out.stdout)
    if report.get("requests_failed"):
        raise RuntimeError(f"loadgen: {report['requests_failed']} failed: {report.get('first_error')}")
    return report


def load_average():
    return open("/proc/loadavg").read().split()[0]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin/ggserve")
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=32768)
    ap.add_argument("--parallel", type=int, default=16)
    ap.add_argument("--streams", default="1,4,16")
    ap.add_argument("--requests-per-stream", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--long-prompt", type=int, default=1000)
    ap.add_argument("--long-ratio", type=float, default=0.125)
    ap.add_argument("--cap", type=int, default=16, help="ggserve's --max-prefill-tokens in the long-prompt run")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-llama-server", action="store_true")
    a = ap.parse_args()

    flags = ["-m", a.model, "-t", str(a.threads), "-c", str(a.ctx), "-np", str(a.parallel),
             "-b", "2048", "-ub", "512"]
    servers = {"ggserve": [a.bin, "serve"] + flags + ["--port", "0"]}
    if not a.no_llama_server:
        servers["llama-server"] = [os.path.join(here, "llamacpp.sh"), "llama-server"] + flags + ["--port", "18439"]
    streams = [int(s) for s in a.streams.split(",")]
    top = max(streams)
    scenarios = [(f"{s} streams", s, 0.0, []) for s in streams]
    scenarios.append((f"{top} streams, long prompts", top, a.long_ratio, []))
    scenarios.append((f"{top} streams, long prompts", top, a.long_ratio, ["--max-prefill-tokens", str(a.cap)]))

    print(f"CPU: {cpu_model()}; model {os.path.basename(a.model)}; flags {' '.join(flags[2:])}; "
          f"{a.max_tokens} tokens per request; load average {load_average()}", flush=True)
    best = {}
    for _ in range(a.repeat):
        for name, cmd in servers.items():
            for label, s, ratio, extra in scenarios:
                if extra and name != "ggserve":
                    continue
                srv = Server(cmd + extra)
                try:
                    loadgen(a.bin, srv.port, s, s, 8, ratio, a.long_prompt)  # warm-up
                    r = loadgen(a.bin, srv.port, s, s * a.requests_per_stream, a.max_tokens, ratio, a.long_prompt)
                finally:
                    srv.stop()
                key = (label, name + (" " + " ".join(extra) if extra else ""))
                r["load"] = load_average()
                print(json.dumps({"scenario": key[0], "server": key[1], **{
                    k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()}}), flush=True)
                if key not in best or r["generated_tokens_per_second"] > best[key]["generated_tokens_per_second"]:
                    best[key] = r

    print("\n| scenario | server | gen t/s | vs llama-server | TTFT p50 / p99 ms | ITL p50 / p99 / max ms |")
    print("|---|---|---:|---:|---:|---:|")
    for (label, name), r in best.items():
        ref = best.get((label, "llama-server"))
        ratio = f"{r['generated_tokens_per_second'] / ref['generated_tokens_per_second']:.2f}x" if ref else "-"
        print(f"| {label} | {name} | {r['generated_tokens_per_second']:.1f} | {ratio} | "
              f"{r['ttft_ms_p50']:.0f} / {r['ttft_ms_p99']:.0f} | "
              f"{r['itl_ms_p50']:.1f} / {r['itl_ms_p99']:.1f} / {r['itl_ms_max']:.0f} |")
    calm = best.get((f"{top} streams", "ggserve"))
    capped = best.get((f"{top} streams, long prompts", f"ggserve --max-prefill-tokens {a.cap}"))
    if calm and capped:
        print(f"\nggserve, {top} streams: largest inter-token gap with long prompts arriving (cap {a.cap}) "
              f"{capped['itl_ms_max']:.0f} ms vs {calm['itl_ms_max']:.0f} ms without them "
              f"({capped['itl_ms_max'] / calm['itl_ms_max']:.2f}x); p99 {capped['itl_ms_p99']:.1f} vs "
              f"{calm['itl_ms_p99']:.1f} ms ({capped['itl_ms_p99'] / calm['itl_ms_p99']:.2f}x)")
    print(f"\nload average at the end {load_average()}")


if __name__ == "__main__":
    main()
