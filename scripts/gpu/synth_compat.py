#!/usr/bin/env python3
"""Runs ../shared/tools/synth_gguf.py so that numpy 2 writes the bytes numpy 1 wrote (the published sha256).

synth_gguf.py scales float32 samples by `0.02 / np.sqrt(2 * n_layer)` for ffn_down and attn_output: a
numpy float64 scalar. numpy 1 multiplied in float32 (value-based casting); numpy 2 (NEP 50) promotes the
product to float64, whose rounding to f16/q8_0/q4_0 differs in places. Passing the scale as a Python float
gives float32 arithmetic under both.
  synth_compat.py TOOLS_DIR [synth_gguf.py arguments...]"""
import sys

sys.path.insert(0, sys.argv[1])
import synth_gguf  # noqa: E402

_encode = synth_gguf.encode
synth_gguf.encode = lambda rng, shape, typ, std: _encode(rng, shape, typ, float(std))
sys.argv = ["synth_gguf.py"] + sys.argv[2:]
synth_gguf.main()
