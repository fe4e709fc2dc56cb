#!/usr/bin/env python3
"""A drafter against plain decoding on text it has never seen, with confidence intervals
(docs/performance.md, "Every drafter at four streams" and "Asking the controllers less").

One `ggserve serve` (-np 4 -c 4096 -t 2 and the extra arguments given, e.g. --spec-type ngram-map-k). Each
round sends one request with the drafter and one plain (`speculative.n_max` 0), then four of each at once
(aggregate tokens / wall time), the order alternating from round to round; every request has its own new
prompt ("NAME and NAME went to the PLACE. They saw a ADJ THING. NAME said"), greedy. Prints the mean of
the per-round ratios (drafter / plain) with its 95 % confidence interval, for one stream and four.

usage: drafter_ab.py [--bin PATH] [--rounds N] [--n-predict N] [--four-only] [--seed S] MODEL [server args...]
Only the Python standard library; talks HTTP to 127.0.0.1 only.
"""
import argparse, os, random, statistics, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speculative import Server, post  # noqa: E402

NAMES = ["Lily", "Tom", "Sue", "Max", "Ben", "Anna", "Sam", "Mia", "Tim", "Zoe", "Jack", "Lucy"]
THINGS = ["ball", "cat", "dog", "tree", "car", "boat", "kite", "cake", "bird", "toy", "hat", "box"]
PLACES = ["park", "garden", "beach", "forest", "house", "school", "farm", "river", "shop", "hill"]
ADJECTIVES = ["big", "small", "red", "blue", "happy", "sad"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "ggserve"))
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--n-predict", type=int, default=128)
    ap.add_argument("--four-only", action="store_true", help="skip the one-stream requests")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("model")
    args, server_args = ap.parse_known_args()
    rng = random.Random(args.seed)
    lock = threading.Lock()

    def prompt():
        with lock:
            return (f"{rng.choice(NAMES)} and {rng.choice(NAMES)} went to the {rng.choice(PLACES)}. "
                    f"They saw a {rng.choice(ADJECTIVES)} {rng.choice(THINGS)}. {rng.choice(NAMES)} said")

    stats = {"drafted": 0, "accepted": 0, "predicted": 0, "passes": 0}

    def request(port, text, spec):
        body = {"prompt": text, "n_predict": args.n_predict, "temperature": 0}
        if not spec:
            body["speculative"] = {"n_max": 0}
        t = post(port, "/completion", body)["timings"]
        if spec:
            with lock:
                stats["drafted"] += t.get("draft_n", 0)
                stats["accepted"] += t.get("draft_n_accepted", 0)
                stats["predicted"] += t["predicted_n"]
                stats["passes"] += t.get("decode_iterations", 0)
        return t

    def four(port, spec):
        total = [0]
        texts = [prompt() for _ in range(4)]

        def one(text):
            n = request(port, text, spec)["predicted_n"]
            with lock:
                total[0] += n

        t0 = time.time()
        threads = [threading.Thread(target=one, args=(x,)) for x in texts]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return total[0] / (time.time() - t0)

    cmd = [args.bin, "serve", "-m", args.model, "--port", "0", "-c", "4096", "-np", "4", "-t", "2"] + server_args
    print("server:", " ".join(cmd), flush=True)
    server = Server(cmd)
    try:
        one_r, four_r = [], []
        for k in range(args.rounds):
            order = [True, False] if k % 2 == 0 else [False, True]
            if not args.four_only:
                rate = {spec: request(server.port, prompt(), spec)["predicted_per_second"] for spec in order}
                one_r.append(rate[True] / rate[False])
            rate = {spec: four(server.port, spec) for spec in order}
            four_r.append(rate[True] / rate[False])
    finally:
        server.stop()

    def ci(v):
        m = statistics.mean(v)
        h = 1.96 * statistics.stdev(v) / len(v) ** 0.5 if len(v) > 1 else float("nan")
        return f"{m:.3f}x [{m - h:.3f}, {m + h:.3f}]"

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"CPU: {cpu}; {args.rounds} rounds, {args.n_predict} tokens per request")
    if one_r:
        print(f"one stream: {ci(one_r)}")
    print(f"four streams: {ci(four_r)}")
    print(f"with the drafter: {stats['drafted']} tokens drafted, {stats['accepted']} accepted, "
          f"{stats['predicted'] / max(stats['passes'], 1):.3f} tokens per target pass")


if __name__ == "__main__":
    main()
