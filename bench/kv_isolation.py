#!/usr/bin/env python3
"""Single-stream decode speed with the other slots empty vs holding cached prompts (docs/performance.md,
"Attention per sequence"; issue 20).

Starts the server with -np 4 and a large context, then per round:
  fresh:  restarts nothing; slots 1..3 are empty (first round) -> one greedy stream in slot 0;
  loaded: requests in slots 1..3 with long prompts leave them cached -> the same stream in slot 0.
The speed is the server's own timings.predicted_per_second (median of rounds). With --llama-server the
same is measured on llama.cpp's llama-server (run through bench/llamacpp.sh) with the same flags.
Only the Python standard library; talks HTTP to 127.0.0.1 only.
"""
import argparse, json, os, statistics, sys, threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speculative import PASSAGE, Server, cpu_model, post  # noqa: E402


def stream(port, prompt, n):
    r = post(port, "/completion", {"prompt": prompt, "n_predict": n, "temperature": 0, "seed": 1,
                                   "ignore_eos": True, "cache_prompt": False, "id_slot": 0})
    return r["timings"]["predicted_per_second"]


def fill_other_slots(port, prompt_words, n):
    """Slots 1..3 each end up holding a different long prompt plus n generated tokens (kept cached)."""
    errors = []

    def worker(slot):
        try:
            prompt = " ".join([PASSAGE] * (prompt_words // len(PASSAGE.split()) + 1)) + f" Story {slot}."
            post(port, "/completion", {"prompt": prompt, "n_predict": n, "temperature": 0, "ignore_eos": True,
                                       "cache_prompt": True, "id_slot": slot})
        except Exception as e:  # reported by the caller
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(s,)) for s in (1, 2, 3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def measure(cmd, a):
    srv = Server(cmd)
    try:
        fresh = [stream(srv.port, "Once upon a time", a.n_predict) for _ in range(a.rounds)]
        fill_other_slots(srv.port, a.prompt_words, a.fill_predict)
        loaded = [stream(srv.port, "Once upon a time", a.n_predict) for _ in range(a.rounds)]
    finally:
        srv.stop()
    return statistics.median(fresh), statistics.median(loaded)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin/ggserve")
    ap.add_argument("--model", default="../shared/models/stories260K.gguf")
    ap.add_argument("--ctx", type=int, default=8192)
    ap.add_argument("--n-predict", type=int, default=256)
    ap.add_argument("--prompt-words", type=int, default=400)
    ap.add_argument("--fill-predict", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--llama-server", action="store_true", help="also run bench/llamacpp.sh llama-server")
    a = ap.parse_args()
    print(f"CPU: {cpu_model()}; model {a.model}; -np 4 -c {a.ctx} -t {a.threads}; stream: {a.n_predict} "
          f"greedy tokens in slot 0; other slots: ~{a.prompt_words}-word prompts + {a.fill_predict} tokens")
    flags = ["-m", a.model, "-c", str(a.ctx), "-np", "4", "-t", str(a.threads), "--host", "127.0.0.1"]
    servers = [("ggserve", [a.bin, "serve"] + flags + ["--port", "0"])]
    if a.llama_server:
        here = os.path.dirname(os.path.abspath(__file__))
        servers.append(("llama-server", [os.path.join(here, "llamacpp.sh"), "llama-server"] + flags +
                        ["--port", "18437"]))
    print("| server | fresh t/s | other slots cached t/s | loaded / fresh |")
    print("|---|---:|---:|---:|")
    for name, cmd in servers:
        fresh, loaded = measure(cmd, a)
        print(f"| {name} | {fresh:.0f} | {loaded:.0f} | {loaded / fresh:.3f} |", flush=True)


if __name__ == "__main__":
    main()
