#!/usr/bin/env python3
"""Checks of the docker stacks, run by scripts/test_docker.sh against the published ports.

  stack_checks.py health   URL TIMEOUT          polls /health (20 ms), prints the epoch time of the first 200
  stack_checks.py wait-up  STATS_URL N TIMEOUT  waits until HAProxy has N replicas UP
  stack_checks.py stream   URL                  streamed chat from one server, event by event
  stack_checks.py affinity URL STATS_URL        prefix/session affinity and spread over the replicas
  stack_checks.py lbstream URL                  a long stream through the balancer arrives token by token
  stack_checks.py failover URL STATS_URL PROJECT  kill a replica under load, count the errors
  stack_checks.py settings URL ALIAS N_CTX SLOTS  /props shows the alias, total context and slots the
                                                stack was configured with (environment or file)

Standard library only. Each check prints what it measured and exits 1 on the first failed assertion.
GGSERVE_API_KEY, when set, is sent as the bearer token.
"""
import http.client
import os
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.parse


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def auth_headers():
    key = os.environ.get("GGSERVE_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


def split_url(url):
    u = urllib.parse.urlsplit(url)
    return u.hostname, u.port or 80


def request(url, method, path, body=None, headers=None, timeout=60):
    """One HTTP request on a fresh connection: (status, lower-cased headers, parsed JSON or text)."""
    host, port = split_url(url)
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        hdrs = {"Content-Type": "application/json"} if body is not None else {}
        hdrs.update(auth_headers())
        hdrs.update(headers or {})
        conn.request(method, path, json.dumps(body) if body is not None else None, hdrs)
        resp = conn.getresponse()
        data = resp.read()
        hmap = {k.lower(): v for k, v in resp.getheaders()}
        try:
            payload = json.loads(data)
        except ValueError:
            payload = data.decode("utf-8", "replace")
        return resp.status, hmap, payload
    finally:
        conn.close()


def timed_stream(url, path, body, headers=None):
    """POSTs a streaming request on a raw socket and records when each byte arrived.

    Returns (t_sent, reads, status, events): reads is [(t, bytes)], events is [(t_arrival, data)] of the
    SSE `data:` lines of the de-chunked body, each stamped with the time its last byte arrived."""
    host, port = split_url(url)
    payload = json.dumps(body).encode()
    extra = "".join(f"{k}: {v}\r\n" for k, v in {**auth_headers(), **(headers or {})}.items())
    req = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(payload)}\r\nConnection: close\r\n{extra}\r\n").encode() + payload
    sock = socket.create_connection((host, port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t_sent = time.monotonic()
    sock.sendall(req)
    reads = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        reads.append((time.monotonic(), chunk))
    sock.close()

    # Arrival time of every byte, then the HTTP head, then the body (chunked or not).
    raw = bytearray()
    stamp = []
    for t, c in reads:
        raw += c
        stamp += [t] * len(c)
    head_end = raw.find(b"\r\n\r\n")
    check(head_end > 0, "no HTTP response head")
    head = raw[:head_end].decode("latin-1")
    status = int(head.split(" ", 2)[1])
    chunked = "transfer-encoding: chunked" in head.lower()
    body_bytes, body_stamp = bytearray(), []
    i = head_end + 4
    if chunked:
        while i < len(raw):
            eol = raw.find(b"\r\n", i)
            size = int(raw[i:eol].split(b";")[0], 16)
            if size == 0:
                break
            body_bytes += raw[eol + 2:eol + 2 + size]
            body_stamp += stamp[eol + 2:eol + 2 + size]
            i = eol + 2 + size + 2
    else:
        body_bytes, body_stamp = raw[i:], stamp[i:]
    events = []
    pos = 0
    while True:
        end = body_bytes.find(b"\n", pos)
        if end < 0:
            break
        line = body_bytes[pos:end].decode("utf-8").rstrip("\r")
        if line.startswith("data: "):
            events.append((body_stamp[end], line[6:]))
        pos = end + 1
    return t_sent, reads, status, events, head


# ---------------------------------------------------------------------------------------------------
def cmd_stream(url):
    """A streamed chat request to one server: role first, content in many events, [DONE] last, the same
    text as the same request without streaming (greedy)."""
    body = {"messages": [{"role": "system", "content": "You tell stories."},
                         {"role": "user", "content": "Tell me about Lily and her dog."}],
            "max_tokens": 48, "temperature": 0, "stream": True}
    _, reads, status, events, _ = timed_stream(url, "/v1/chat/completions", body)
    check(status == 200, f"stream status {status}")
    check(events and events[-1][1] == "[DONE]", "the stream does not end with [DONE]")
    chunks = [json.loads(d) for _, d in events[:-1]]
    check(chunks[0]["choices"][0]["delta"].get("role") == "assistant", "the first chunk is not the role")
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    n_content = sum(1 for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content"))
    plain = dict(body, stream=False)
    st, _, resp = request(url, "POST", "/v1/chat/completions", plain)
    check(st == 200, f"chat status {st}")
    check(text == resp["choices"][0]["message"]["content"], "streamed text differs from the plain answer")
    check(n_content >= 10, f"only {n_content} content events for 48 tokens")
    print(f"stream: {len(events)} events ({n_content} with content) in {len(reads)} reads, "
          f"{len(text)} characters, same text as without streaming")


# ---------------------------------------------------------------------------------------------------
def served_by(headers):
    v = headers.get("x-served-by")
    check(v, "no X-Served-By header from the balancer")
    return v.split()[0]


STORY_WORDS = ("Lily Tom Max Sue Ben Anna Timmy Sara Jack Mia bird cat dog ball tree park sun rain box toy "
               "cake boat red blue big small happy sad ran jumped played looked found saw wanted said").split()


def prefix_text(seed, n_chars):
    """A deterministic story-like text, different from its first words for different seeds."""
    words, x = [], seed * 7919 + 17
    while sum(len(w) + 1 for w in words) < n_chars:
        x = (x * 1103515245 + 12345) % (1 << 31)
        words.append(STORY_WORDS[x % len(STORY_WORDS)])
    return f"Story {seed}: " + " ".join(words) + "."


def n_tokens(url, text):
    st, _, resp = request(url, "POST", "/tokenize", {"content": text})
    check(st == 200, f"tokenize status {st}")
    return len(resp["tokens"])


def stats(stats_url):
    """HAProxy's CSV statistics: {server name: status} of the ggserve backend."""
    st, _, text = request(stats_url, "GET", "/stats;csv")
    check(st == 200, f"stats status {st}")
    lines = text.splitlines()
    cols = lines[0].lstrip("# ").split(",")
    out = {}
    for line in lines[1:]:
        row = dict(zip(cols, line.split(",")))
        if row.get("pxname") == "ggserve" and row.get("svname") not in ("FRONTEND", "BACKEND"):
            out[row["svname"]] = row["status"]
    return out


def up_servers(stats_url):
    return sorted(n for n, s in stats(stats_url).items() if s.startswith("UP"))


def cmd_affinity(url, stats_url):
    ups = up_servers(stats_url)
    check(len(ups) == 3, f"expected 3 replicas UP, HAProxy has {ups}")

    # 1. Completions sharing a long prefix (suffixes differ) land on one replica, whose cache holds it.
    for seed in (1, 2, 3):
        prefix = prefix_text(seed, 1200)
        n_prefix = n_tokens(url, prefix)
        replicas, cached = set(), []
        for rep in range(4):
            body = {"prompt": f"{prefix} Then {STORY_WORDS[rep]} came.", "n_predict": 4, "temperature": 0,
                    "cache_prompt": True}
            st, hdrs, resp = request(url, "POST", "/completion", body)
            check(st == 200, f"completion status {st}: {resp}")
            replicas.add(served_by(hdrs))
            if rep > 0:
                cached.append(resp["tokens_cached"])
        check(len(replicas) == 1, f"prefix {seed}: repeats went to {sorted(replicas)}")
        worst = min(cached)
        check(worst >= 0.9 * n_prefix, f"prefix {seed}: tokens_cached {cached} < 90% of the {n_prefix}-token prefix")
        print(f"affinity: prefix {seed} ({n_prefix} tokens): 4 requests on {replicas.pop()}, "
              f"tokens_cached on repeats {cached} (>= {0.9 * n_prefix:.0f})")

    # 2. A chat conversation: every turn repeats the first two messages, so every turn lands on the same
    #    replica and reuses the previous turn's prompt.
    messages = [{"role": "system", "content": "You are a storyteller. " + prefix_text(9, 300)},
                {"role": "user", "content": "Tell me a story about a red boat."}]
    replicas = set()
    prev_prompt = 0
    for turn in range(3):
        st, hdrs, resp = request(url, "POST", "/v1/chat/completions",
                                 {"messages": messages, "max_tokens": 8, "temperature": 0})
        check(st == 200, f"chat status {st}: {resp}")
        replicas.add(served_by(hdrs))
        cached_n = resp["usage"]["prompt_tokens_details"]["cached_tokens"]
        if turn > 0:
            check(cached_n >= 0.9 * prev_prompt,
                  f"turn {turn}: cached_tokens {cached_n} < 90% of the previous prompt ({prev_prompt})")
        prev_prompt = resp["usage"]["prompt_tokens"]
        messages += [{"role": "assistant", "content": resp["choices"][0]["message"]["content"]},
                     {"role": "user", "content": f"And then what happened, part {turn + 2}?"}]
    check(len(replicas) == 1, f"one conversation went to {sorted(replicas)}")
    print(f"affinity: a 3-turn chat stayed on {replicas.pop()}, each turn reusing the previous prompt")

    # 3. A session header wins over the prompt: unrelated prompts with one X-Session-Id share a replica.
    replicas = set()
    for i in range(6):
        st, hdrs, _ = request(url, "POST", "/completion", {"prompt": prefix_text(100 + i, 80), "n_predict": 2},
                              {"X-Session-Id": "user-42"})
        check(st == 200, f"session request status {st}")
        replicas.add(served_by(hdrs))
    check(len(replicas) == 1, f"one session went to {sorted(replicas)}")
    print(f"affinity: 6 unrelated prompts with X-Session-Id user-42 all on {replicas.pop()}")

    # 4. Different prefixes spread over every replica.
    counts = {}
    for seed in range(200, 230):
        st, hdrs, _ = request(url, "POST", "/completion", {"prompt": prefix_text(seed, 200), "n_predict": 1})
        check(st == 200, f"spread request status {st}")
        r = served_by(hdrs)
        counts[r] = counts.get(r, 0) + 1
    check(sorted(counts) == ups, f"30 prefixes went to {counts}, not to all of {ups}")
    print(f"spread: 30 different prefixes -> {dict(sorted(counts.items()))}")


# ---------------------------------------------------------------------------------------------------
def cmd_lbstream(url):
    """A 400-token stream through the balancer arrives spread over its generation, not in one burst."""
    n = 400
    body = {"prompt": "Once upon a time", "n_predict": n, "temperature": 0, "stream": True,
            "ignore_eos": True}
    t_sent, reads, status, events, head = timed_stream(url, "/completion", body)
    check(status == 200, f"status {status}")
    check("x-served-by" in head.lower(), "no X-Served-By header on the stream")
    content = [(t, json.loads(d)) for t, d in events if d != "[DONE]"]
    tokens = [(t, e) for t, e in content if e.get("content")]
    check(len(tokens) >= 0.9 * n, f"{len(tokens)} token events for {n} tokens")
    t_first, t_last = tokens[0][0], content[-1][0]
    total = t_last - t_sent
    groups = len({t for t, _ in tokens})
    # Buffered by a proxy, every event would arrive at the end in a few reads.
    check(t_first - t_sent < 0.5 * total, f"first token after {t_first - t_sent:.3f} s of {total:.3f} s")
    check(groups >= 20, f"{len(tokens)} token events arrived in only {groups} reads")
    print(f"lbstream: {len(tokens)} token events in {groups} separate reads over {total * 1000:.0f} ms, "
          f"first after {(t_first - t_sent) * 1000:.1f} ms")


# ---------------------------------------------------------------------------------------------------
def docker(*args):
    return subprocess.run(["docker", *args], check=True, capture_output=True, text=True).stdout.strip()


def replica_containers(project):
    """{container IP: container id} of the project's ggserve replicas."""
    ids = docker("ps", "-q", "--filter", f"label=com.docker.compose.project={project}",
                 "--filter", "label=com.docker.compose.service=ggserve").split()
    out = {}
    for cid in ids:
        ip = docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", cid)
        out[ip] = cid
    return out


def cmd_failover(url, stats_url, project):
    """Load from 8 clients (2 streaming), then one replica with a stream in flight is killed (SIGKILL). Only requests in flight at the kill may
    fail; every request sent after HAProxy marks the replica down succeeds; the killed replica, started
    again, rejoins."""
    stop = threading.Event()
    lock = threading.Lock()
    log = []  # (t_start, t_end, ok, status/error, replica name, replica ip)
    prefixes = [prefix_text(300 + i, 200) for i in range(12)]

    active_streams = {}  # client -> (replica name, ip) of a stream whose head has arrived

    def client(k):
        # Clients 0-5 send plain completions, 6-7 long streamed ones: a stream cut by the kill cannot be
        # retried by the balancer (its head is out), so it fails; a plain one can be sent again.
        streaming = k >= 6
        host, port = split_url(url)
        i = 0
        while not stop.is_set():
            prompt = prefixes[(k * 5 + i) % len(prefixes)] + f" {i}"
            t0 = time.monotonic()
            try:
                if streaming:  # OpenAI completions: a complete stream ends with [DONE]
                    conn = http.client.HTTPConnection(host, port, timeout=30)
                    try:
                        conn.request("POST", "/v1/completions",
                                     json.dumps({"prompt": prompt, "max_tokens": 400, "stream": True}),
                                     {"Content-Type": "application/json", **auth_headers()})
                        resp = conn.getresponse()
                        who = (resp.getheader("x-served-by") or "? ?").split()[:2]
                        with lock:
                            active_streams[k] = tuple(who)
                        data = resp.read().decode()
                        ok = resp.status == 200 and data.rstrip().endswith("data: [DONE]")
                        rec = (t0, time.monotonic(), ok, resp.status, *who)
                    finally:
                        with lock:
                            active_streams.pop(k, None)
                        conn.close()
                else:
                    st, hdrs, _ = request(url, "POST", "/completion",
                                          {"prompt": prompt, "n_predict": 32, "temperature": 0.7}, timeout=30)
                    rec = (t0, time.monotonic(), st == 200, st, *(hdrs.get("x-served-by", "? ?").split()[:2]))
            except Exception as e:  # connection reset, cut stream, timeout: a failed request
                rec = (t0, time.monotonic(), False, repr(e), "?", "?")
            with lock:
                log.append(rec)
            i += 1

    status_log = []  # (t, {server: status})

    def poll_stats():
        while not stop.is_set():
            try:
                status_log.append((time.monotonic(), stats(stats_url)))
            except Exception:
                pass
            time.sleep(0.1)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)] + [threading.Thread(target=poll_stats)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with lock:
                seen = {r[4] for r in log if r[2]}
            if len(seen) >= 3 and len(log) >= 30:
                break
            time.sleep(0.1)
        check(len(seen) >= 3, f"load did not reach 3 replicas: {seen}")

        # The victim: a replica with a stream in flight, so that the kill cuts at least that one.
        victim = None
        deadline = time.monotonic() + 20
        while victim is None and time.monotonic() < deadline:
            with lock:
                if active_streams:
                    victim, victim_ip = next(iter(active_streams.values()))
            time.sleep(0.01)
        check(victim is not None, "no stream in flight to cut")
        cid = replica_containers(project)[victim_ip]
        t_kill = time.monotonic()
        docker("kill", "-s", "KILL", cid)
        # `docker kill` returns once the signal is sent: until then the replica still accepts and answers,
        # and a request it accepted just before dying fails like one in flight.
        t_killed = time.monotonic()

        # HAProxy notices: the victim's server slot leaves UP.
        t_notice = None
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and t_notice is None:
            for t, st in list(status_log):
                if t > t_kill and not st.get(victim, "").startswith("UP"):
                    t_notice = t
                    break
            time.sleep(0.05)
        check(t_notice is not None, f"HAProxy did not mark {victim} down within 15 s")
        time.sleep(5)  # load goes on after the notice
    finally:
        stop.set()
        for t in threads:
            t.join()

    inflight = [r for r in log if r[0] < t_killed and r[1] > t_kill]
    check(all(r[1] - r[0] < 30 for r in log), "a request hung")
    failed = [r for r in log if not r[2]]
    after = [r for r in log if r[0] > t_notice]
    between = [r for r in log if t_kill <= r[0] <= t_notice]
    print(f"failover: {len(log)} requests, killed {victim} ({victim_ip}; docker kill took "
          f"{1000 * (t_killed - t_kill):.0f} ms); HAProxy marked it down "
          f"{t_notice - t_kill:.2f} s later; {len(inflight)} in flight at the kill; {len(between)} sent before "
          f"the notice ({sum(1 for r in between if r[2])} ok); {len(after)} after it; {len(failed)} failed")
    for r in failed:
        print(f"  failed: started {r[0] - t_kill:+.2f} s from the kill, {r[3]}")
    check(len(failed) <= len(inflight), f"{len(failed)} failures > {len(inflight)} requests in flight at the kill")
    check(all(r[0] < t_killed for r in failed), "a request sent after the kill failed")
    check(len(after) >= 10, f"only {len(after)} requests after the notice")
    check(all(r[2] for r in after), "a request after the notice failed")
    check(all(r[4] != victim for r in after), "a request after the notice went to the dead replica")

    # The replica comes back: started again, it passes its health checks and takes traffic again.
    t0 = time.monotonic()
    docker("start", cid)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(up_servers(stats_url)) < 3:
        time.sleep(0.2)
    ups = up_servers(stats_url)
    check(len(ups) == 3, f"after restarting the killed replica HAProxy has {ups} UP")
    print(f"failover: the killed replica was started again and was back UP after {time.monotonic() - t0:.1f} s")


def cmd_health(url, timeout):
    """Started before the container: the first 200 of /health marks the end of the cold start."""
    deadline = time.monotonic() + float(timeout)
    while time.monotonic() < deadline:
        try:
            st, _, _ = request(url, "GET", "/health", timeout=0.2)
            if st == 200:
                print(f"{time.time():.3f}")
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.02)
    fail(f"no /health 200 within {timeout} s")


def cmd_wait_up(stats_url, n, timeout):
    deadline = time.monotonic() + float(timeout)
    ups = []
    while time.monotonic() < deadline:
        try:
            ups = up_servers(stats_url)
            if len(ups) == int(n):
                print(f"HAProxy: {len(ups)} replicas UP ({', '.join(ups)})")
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.1)
    fail(f"HAProxy has {ups} UP after {timeout} s, not {n}")


def cmd_settings(url, alias, n_ctx, slots):
    st, _, props = request(url, "GET", "/props")
    check(st == 200, f"/props: {st} {props}")
    got = (props["model_alias"], props["default_generation_settings"]["n_ctx"] * props["total_slots"],
           props["total_slots"])
    check(got == (alias, int(n_ctx), int(slots)),
          f"/props: alias, context, slots {got}, configured {(alias, int(n_ctx), int(slots))}")
    st, _, models = request(url, "GET", "/v1/models")
    check(st == 200 and models["data"][0]["id"] == alias, f"/v1/models: {st} {models}")
    st, _, _ = request(url, "GET", "/metrics")
    check(st == 200, f"/metrics: {st}")
    print(f"settings in effect: alias {alias}, context {n_ctx} over {slots} slots, /metrics on")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"health": cmd_health, "wait-up": cmd_wait_up, "stream": cmd_stream, "affinity": cmd_affinity, "lbstream": cmd_lbstream, "failover": cmd_failover,
     "settings": cmd_settings}[cmd](*args)


if __name__ == "__main__":
    main()
