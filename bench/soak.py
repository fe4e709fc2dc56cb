#!/usr/bin/env python3
"""Soak driver for bench/soak.sh (issue 13): N streaming clients against a running ggserve for a while,
with a mix of normal streams, streams the client abandons mid-way, grammar-constrained (JSON Schema)
streams and oversized prompts (longer than a slot's context: must be 400). Every INTERVAL seconds it samples
the server's RSS, open descriptors and threads (from /proc) and the latencies of the normal streams that
finished in the interval (TTFT, inter-token p50/p99), and prints a Markdown table row; at the end, a summary
(slopes after warm-up, statuses, idle vs loaded ITL) as Markdown and JSON.

Python standard library only.
  soak.py --port P --pid PID --ctx-per-slot N [--clients 16] [--minutes 60] [--interval 30]
"""
import argparse
import http.client
import json
import os
import random
import socket
import statistics
import sys
import threading
import time
import urllib.request

PROMPTS = [
    "Once upon a time",
    "Once upon a time, there was a little girl named Lily.",
    "The cat sat on the mat and",
    "Tom and his dog went to the park.",
    "One day, a big bird",
]
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "pets": {"type": "array", "items": {"enum": ["cat", "dog", "bird"]}, "maxItems": 3},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
# The mix, by weight: most requests are normal streams.
KINDS = [("normal", 6), ("cancelled", 2), ("grammar", 2), ("oversized", 1)]


def percentile(values, q):
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset_window()
        self.totals = {}
        self.unexpected = []  # (kind, status, detail)
        self.server_errors = 0

    def reset_window(self):
        self.ttft = []
        self.itl = []
        self.count = {}

    def record(self, kind, outcome, ttft=None, itl=None):
        with self.lock:
            key = kind + ":" + outcome
            self.count[key] = self.count.get(key, 0) + 1
            self.totals[key] = self.totals.get(key, 0) + 1
            if ttft is not None:
                self.ttft.append(ttft)
            if itl:
                self.itl.extend(itl)

    def bad(self, kind, status, detail):
        with self.lock:
            if status >= 500 or status == 0:
                self.server_errors += 1
            if len(self.unexpected) < 50:
                self.unexpected.append((kind, status, detail[:200]))

    def take_window(self):
        with self.lock:
            w = (self.ttft, self.itl, self.count)
            self.reset_window()
            return w


def sse_events(resp):
    """Yields (time, parsed JSON or None for [DONE]) for each data line of an SSE response."""
    while True:
        line = resp.readline()
        if not line:
            return
        line = line.strip()
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        now = time.monotonic()
        if data == b"[DONE]":
            yield now, None
            return
        yield now, json.loads(data)


def token_text(kind_path, ev):
    if kind_path == "/completion":
        return ev.get("content", "")
    choices = ev.get("choices") or []
    if not choices:
        return ""
    delta = choices[0].get("delta") or {}
    return delta.get("content") or ""


def stream_request(port, path, body, stop_after=None):
    """Returns (status, ttft, itls, text, error, aborted)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    start = time.monotonic()
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        if resp.status != 200 or not resp.getheader("Content-Type", "").startswith("text/event-stream"):
            return resp.status, None, [], resp.read().decode(errors="replace"), None, False
        times, text, error, n = [], [], None, 0
        for t, ev in sse_events(resp):
            if ev is None:
                break
            if "error" in ev:
                error = json.dumps(ev["error"])
                break
            piece = token_text(path, ev)
            if piece:
                times.append(t)
                text.append(piece)
                n += 1
                if stop_after is not None and n >= stop_after:
                    # Leave mid-stream: close the socket without reading the rest.
                    conn.sock.shutdown(socket.SHUT_RDWR)
                    conn.close()
                    return 200, times[0] - start, [], "".join(text), None, True
        ttft = times[0] - start if times else None
        itl = [b - a for a, b in zip(times, times[1:])]
        return 200, ttft, itl, "".join(text), error, False
    except (OSError, http.client.HTTPException, ValueError) as e:
        return 0, None, [], "", repr(e), False
    finally:
        conn.close()


def plain_request(port, path, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read().decode(errors="replace")
    except (OSError, http.client.HTTPException) as e:
        return 0, repr(e)
    finally:
        conn.close()


def normal_body(rng, path):
    n = rng.randint(32, 128)
    if path == "/completion":
        return {"prompt": rng.choice(PROMPTS), "n_predict": n, "stream": True, "temperature": 0.8,
                "seed": rng.randint(0, 1 << 30)}
    return {"messages": [{"role": "user", "content": rng.choice(PROMPTS)}], "max_tokens": n, "stream": True,
            "temperature": 0.8, "seed": rng.randint(0, 1 << 30)}


def client_loop(i, args, stats, stop, oversized_prompt):
    rng = random.Random(1000 + i)
    kinds = [k for k, w in KINDS for _ in range(w)]
    while not stop.is_set():
        kind = rng.choice(kinds)
        path = rng.choice(["/completion", "/v1/chat/completions"])
        if kind == "normal":
            status, ttft, itl, _, err, _ = stream_request(args.port, path, normal_body(rng, path))
            if status == 200 and err is None:
                stats.record(kind, "ok", ttft, itl)
            else:
                stats.bad(kind, status if err is None or status != 200 else 500, str(err))
                stats.record(kind, "bad")
        elif kind == "cancelled":
            body = normal_body(rng, path)
            body["n_predict" if path == "/completion" else "max_tokens"] = 100000
            body["ignore_eos"] = True
            status, _, _, _, err, aborted = stream_request(args.port, path, body, stop_after=rng.randint(1, 8))
            if status == 200 and aborted:
                stats.record(kind, "ok")
            else:
                stats.bad(kind, status, str(err))
                stats.record(kind, "bad")
        elif kind == "grammar":
            body = normal_body(rng, path)
            body["json_schema" if path == "/completion" else "response_format"] = (
                SCHEMA if path == "/completion" else {"type": "json_schema", "json_schema": {"schema": SCHEMA}})
            body["n_predict" if path == "/completion" else "max_tokens"] = 96
            status, _, _, text, err, _ = stream_request(args.port, path, body)
            if status == 200 and err is None:
                try:
                    json.loads(text)
                    stats.record(kind, "ok")
                except ValueError:
                    stats.record(kind, "truncated")  # hit max tokens inside the object: still a 200
            else:
                stats.bad(kind, status if err is None or status != 200 else 500, str(err))
                stats.record(kind, "bad")
        else:  # oversized: must be refused with 400, streamed or not
            body = {"prompt": oversized_prompt, "n_predict": 8, "stream": rng.random() < 0.5}
            status, text = plain_request(args.port, "/completion", body)
            if status == 400 and "context" in text:
                stats.record(kind, "ok")
            else:
                stats.bad(kind, status, text)
                stats.record(kind, "bad")
        if args.think > 0:
            stop.wait(rng.uniform(0, 2 * args.think))


def proc_sample(pid):
    rss = threads = None
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024.0
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss, fds, threads


def prompt_cache_mib(port):
    """The host-memory prompt cache's bytes (--cache-ram), from /metrics: memory the server keeps on purpose,
    up to its limit, so the RSS slope is also given net of it."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("ggserve:prompt_cache_ram_bytes "):
                    return float(line.split()[1]) / (1 << 20)
    except OSError:
        pass
    return 0.0


def slope(xs, ys):
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else None


def fmt(v, scale=1000.0, digits=1):
    return "-" if v is None else f"{v * scale:.{digits}f}"


def idle_baseline(port, n=10):
    """ITL and TTFT of normal streams with nothing else running."""
    rng = random.Random(7)
    ttft, itl = [], []
    for k in range(n):
        path = "/completion" if k % 2 == 0 else "/v1/chat/completions"
        body = normal_body(rng, path)
        status, t, i, _, err, _ = stream_request(port, path, body)
        if status == 200 and err is None:
            ttft.append(t)
            itl.extend(i)
    return ttft, itl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--ctx-per-slot", type=int, required=True)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--interval", type=float, default=30)
    ap.add_argument("--warmup-minutes", type=float, default=5)
    ap.add_argument("--think", type=float, default=0.1, help="mean pause between a client's requests (s)")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args()
    # 16 client threads share one interpreter lock, which a waiting thread gets only after the holder's
    # switch interval (5 ms by default): that wait would show up as inter-token latency of the server.
    sys.setswitchinterval(0.0002)

    idle_ttft, idle_itl = idle_baseline(args.port)
    idle = {"ttft_p50": percentile(idle_ttft, 0.5), "itl_p50": percentile(idle_itl, 0.5),
            "itl_p99": percentile(idle_itl, 0.99)}
    print(f"idle: TTFT p50 {fmt(idle['ttft_p50'])} ms, ITL p50 {fmt(idle['itl_p50'], digits=2)} ms, "
          f"p99 {fmt(idle['itl_p99'], digits=2)} ms", flush=True)

    # Words that are a token or two each: several times the slot's context.
    oversized_prompt = " ".join(["once upon a time the little girl"] * (args.ctx_per_slot))
    stats = Stats()
    stop = threading.Event()
    workers = [threading.Thread(target=client_loop, args=(i, args, stats, stop, oversized_prompt), daemon=True)
               for i in range(args.clients)]
    start = time.monotonic()
    for w in workers:
        w.start()

    print("| min | RSS MiB | prompt cache MiB | fds | threads | requests (ok / bad) | TTFT p50 / p99 ms | "
          "ITL p50 / p99 ms | load 1m |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    rows = []
    end = start + args.minutes * 60
    next_sample = start + args.interval
    while next_sample <= end + 1e-6:
        wait = next_sample - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        next_sample += args.interval
        rss, fds, threads = proc_sample(args.pid)
        cache = prompt_cache_mib(args.port)
        ttft, itl, count = stats.take_window()
        ok = sum(v for k, v in count.items() if not k.endswith(":bad"))
        bad = sum(v for k, v in count.items() if k.endswith(":bad"))
        row = {"minute": (time.monotonic() - start) / 60, "rss_mib": rss, "cache_mib": cache, "fds": fds,
               "threads": threads,
               "ok": ok, "bad": bad, "ttft_p50": percentile(ttft, 0.5), "ttft_p99": percentile(ttft, 0.99),
               "itl_p50": percentile(itl, 0.5), "itl_p99": percentile(itl, 0.99), "load1": os.getloadavg()[0]}
        rows.append(row)
        print(f"| {row['minute']:.1f} | {rss:.1f} | {cache:.1f} | {fds} | {threads} | {ok} / {bad} | "
              f"{fmt(row['ttft_p50'])} / {fmt(row['ttft_p99'])} | {fmt(row['itl_p50'], digits=2)} / "
              f"{fmt(row['itl_p99'], digits=2)} | {row['load1']:.2f} |", flush=True)
    stop.set()
    for w in workers:
        w.join(timeout=150)

    after = [r for r in rows if r["minute"] >= args.warmup_minutes] or rows
    xs = [r["minute"] for r in after]
    rss_slope = slope(xs, [r["rss_mib"] for r in after])
    net_slope = slope(xs, [r["rss_mib"] - r["cache_mib"] for r in after])
    fd_slope = slope(xs, [r["fds"] for r in after])
    thread_slope = slope(xs, [r["threads"] for r in after])
    itl_p99s = [r["itl_p99"] for r in after if r["itl_p99"] is not None]
    summary = {
        "idle": idle,
        "clients": args.clients,
        "minutes": args.minutes,
        "warmup_minutes": args.warmup_minutes,
        "rss_mib_per_hour_after_warmup": None if rss_slope is None else rss_slope * 60,
        "rss_net_of_prompt_cache_mib_per_hour_after_warmup": None if net_slope is None else net_slope * 60,
        "fds_per_hour_after_warmup": None if fd_slope is None else fd_slope * 60,
        "threads_per_hour_after_warmup": None if thread_slope is None else thread_slope * 60,
        "rss_mib_range_after_warmup": [min(r["rss_mib"] for r in after), max(r["rss_mib"] for r in after)],
        "fds_range_after_warmup": [min(r["fds"] for r in after), max(r["fds"] for r in after)],
        "itl_p99_median_of_windows": statistics.median(itl_p99s) if itl_p99s else None,
        "itl_p99_worst_window": max(itl_p99s) if itl_p99s else None,
        "totals": stats.totals,
        "server_errors_5xx_or_dropped": stats.server_errors,
        "unexpected": stats.unexpected,
        "rows": rows,
    }
    print()
    print(f"after warm-up ({args.warmup_minutes:g} min): RSS slope {summary['rss_mib_per_hour_after_warmup']:.2f} MiB/h "
          f"(range {summary['rss_mib_range_after_warmup'][0]:.1f}-{summary['rss_mib_range_after_warmup'][1]:.1f}; "
          f"net of the prompt cache {summary['rss_net_of_prompt_cache_mib_per_hour_after_warmup']:.2f} MiB/h), "
          f"fd slope {summary['fds_per_hour_after_warmup']:.2f}/h "
          f"(range {summary['fds_range_after_warmup'][0]}-{summary['fds_range_after_warmup'][1]}), "
          f"thread slope {summary['threads_per_hour_after_warmup']:.2f}/h")
    if itl_p99s:
        print(f"ITL p99: idle {fmt(idle['itl_p99'], digits=2)} ms, loaded median of windows "
              f"{fmt(summary['itl_p99_median_of_windows'], digits=2)} ms, worst window "
              f"{fmt(summary['itl_p99_worst_window'], digits=2)} ms")
    print("totals:", json.dumps(stats.totals, sort_keys=True))
    print(f"5xx (or dropped connections): {stats.server_errors}")
    for u in stats.unexpected:
        print("unexpected:", u)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0 if stats.server_errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
