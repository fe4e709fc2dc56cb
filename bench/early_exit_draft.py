#!/usr/bin/env python3
"""Writes an early-exit draft model: a copy of a GGUF model that keeps its first LAYERS blocks (with the
same embeddings, final norm and output head) and drops the rest.

This is the draft of layer-skipping self-speculation: it costs about LAYERS/n_layer of the target per
token (plus the output head) and, where the later blocks change the residual stream little, predicts the
target's next token most of the time. The speculative benchmark uses it to make a draft/target pair of
a TinyLlama-shaped synthetic model (docs/performance.md, "A draft model that pays"): random-weight
models made separately never agree, and quantized copies of one cost almost as much as the target.

  bench/early_exit_draft.py IN.gguf OUT.gguf LAYERS [--target TARGET.gguf --damp S]

Tensor data are copied byte for byte, so any weight type works. Only the architecture's block_count
changes (and general.name gains a suffix); blocks are found by their `blk.N.` prefix.

Random weights give no such pair by themselves: every block of a random model moves the argmax, and the
first blocks alone agree with the whole model on no token. `--target` also writes a copy of IN whose
blocks from LAYERS on add S times their usual update to the residual stream (their attention output and
FFN down projections scaled by S; q8_0, q4_0, f16 and f32 weights), so that the draft agrees with it as
often as S makes it (S = 1: the model unchanged). The target still reads and multiplies every weight: its
cost per token is the original model's.
"""
import argparse
import struct
import sys

SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
# ggml type id: (block size, bytes per block), for the types a llama model's tensors use.
TYPE_SIZE = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
             10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 20: (32, 18),
             23: (256, 136), 30: (1, 2)}


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return v[0]

    def string(self):
        n = self.take("Q")
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(s)

    def value(self, t):
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.take("I"), self.take("Q")
            return (et, [self.value(et) for _ in range(n)])
        return self.take(SCALAR[t])


def put_string(out, s):
    out += struct.pack("<Q", len(s)) + s


def put_value(out, t, v):
    if t == 8:
        put_string(out, v)
    elif t == 9:
        et, items = v
        out += struct.pack("<IQ", et, len(items))
        for it in items:
            put_value(out, et, it)
    else:
        out += struct.pack("<" + SCALAR[t], v)


def damped(raw, ttype, scale):
    """The bytes of a tensor with its values multiplied by scale (block scales for q8_0 and q4_0)."""
    import numpy as np
    if ttype == 0:
        return (np.frombuffer(raw, np.float32) * np.float32(scale)).astype(np.float32).tobytes()
    if ttype == 1:
        return (np.frombuffer(raw, np.float16).astype(np.float32) * scale).astype(np.float16).tobytes()
    if ttype not in (2, 8):
        sys.exit(f"--damp: tensor type {ttype} is not supported (q8_0, q4_0, f16, f32)")
    blocks = np.frombuffer(raw, np.uint8).reshape(-1, 34 if ttype == 8 else 18).copy()
    d = blocks[:, :2].copy().view(np.float16).astype(np.float32) * scale
    blocks[:, :2] = d.astype(np.float16).view(np.uint8).reshape(-1, 2)
    return blocks.tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("layers", type=int)
    ap.add_argument("--target", help="also write the target with damped later blocks here")
    ap.add_argument("--damp", type=float, default=1.0, help="scale of the later blocks' updates in --target")
    a = ap.parse_args()
    src, dst, keep = a.src, a.dst, a.layers
    with open(src, "rb") as f:
        data = memoryview(f.read())
    r = Reader(data)
    if bytes(data[:4]) != b"GGUF":
        sys.exit(f"{src}: not a GGUF file")
    r.pos = 4
    version, n_tensors, n_kv = r.take("I"), r.take("Q"), r.take("Q")
    kv = []
    for _ in range(n_kv):
        k = r.string()
        t = r.take("I")
        kv.append((k, t, r.value(t)))
    keys = {k: v for k, _, v in kv}
    arch = keys.get(b"general.architecture")
    if arch is None:
        sys.exit(f"{src}: no general.architecture")
    n_layer = keys.get(arch + b".block_count")
    if n_layer is None or not 0 < keep < n_layer:
        sys.exit(f"{src}: LAYERS must be in [1, {n_layer}) (the model has {n_layer} blocks)")
    align = keys.get(b"general.alignment", 32)
    tensors = []
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.take("Q") for _ in range(r.take("I"))]
        ttype, off = r.take("I"), r.take("Q")
        tensors.append((name, dims, ttype, off))
    data_start = (r.pos + align - 1) // align * align

    def size(dims, ttype):
        if ttype not in TYPE_SIZE:
            sys.exit(f"{src}: tensor type {ttype} is not in this tool's size table")
        bs, bb = TYPE_SIZE[ttype]
        n = 1
        for d in dims:
            n *= d
        return n // bs * bb

    def kept(name):
        if not name.startswith(b"blk."):
            return True
        return int(name.split(b".")[1]) < keep

    out_kv = []
    for k, t, v in kv:
        if k == arch + b".block_count":
            v = keep
        elif k == b"general.name":
            v = v + f" (first {keep} of {n_layer} blocks)".encode()
        out_kv.append((k, t, v))
    head = bytearray(b"GGUF") + struct.pack("<IQQ", version, sum(kept(t[0]) for t in tensors), len(out_kv))
    for k, t, v in out_kv:
        put_string(head, k)
        head += struct.pack("<I", t)
        put_value(head, t, v)
    chunks, off = [], 0
    for name, dims, ttype, src_off in tensors:
        if not kept(name):
            continue
        n = size(dims, ttype)
        put_string(head, name)
        head += struct.pack("<I", len(dims))
        for d in dims:
            head += struct.pack("<Q", d)
        head += struct.pack("<IQ", ttype, off)
        chunks.append((data_start + src_off, n))
        off += (n + align - 1) // align * align
    head += b"\0" * ((-len(head)) % align)
    with open(dst, "wb") as f:
        f.write(head)
        for start, n in chunks:
            f.write(data[start:start + n])
            f.write(b"\0" * ((-n) % align))
    print(f"wrote {dst}: the first {keep} of {n_layer} blocks of {src}")
    if a.target:
        # The same file with the later blocks' output projections scaled in place: sizes and offsets stay.
        out = bytearray(data)
        for name, dims, ttype, src_off in tensors:
            if kept(name) or not (name.endswith(b".attn_output.weight") or name.endswith(b".ffn_down.weight")):
                continue
            start = data_start + src_off
            n = size(dims, ttype)
            out[start:start + n] = damped(bytes(data[start:start + n]), ttype, a.damp)
        with open(a.target, "wb") as f:
            f.write(out)
        print(f"wrote {a.target}: {src} with blocks {keep}..{n_layer - 1} adding {a.damp} times their update")

if __name__ == "__main__":
    main()
