#!/usr/bin/env bash
# Prepares .gpu/ (ignored by git) for scripts/gpu/check.sh on a GPU machine that has the CUDA runtime but
# not this project's other libraries, models or goldens: the spdlog/fmt shared libraries the binaries link,
# stories260K and its quantized copies, the vocabularies and the generator of the synthetic models (they
# are made there: the same command gives the same bytes, checked by sha256 there), the goldens and tools.
# Build first: cmake -B build-cuda -DGGML_CUDA=ON ...; ninja -C build-cuda ggserve test_cuda test_model
set -euo pipefail
cd "$(dirname "$0")/../.."
SHARED=${SHARED:-../shared}
rm -rf .gpu && mkdir -p .gpu/lib .gpu/shared/models/synth .gpu/shared/models/vocab .gpu/shared/golden .gpu/shared/tools
for lib in $(ldd build-cuda/bin/ggserve | awk '/libspdlog|libfmt/ {print $3}'); do cp -L "$lib" .gpu/lib/; done
cp "$SHARED"/models/stories260K*.gguf .gpu/shared/models/
cp "$SHARED"/models/vocab/ggml-vocab-{llama-spm,gpt-2,phi-3,bert-bge}.gguf .gpu/shared/models/vocab/
cp "$SHARED"/golden/*.json "$SHARED"/golden/*.txt .gpu/shared/golden/
cp "$SHARED"/tools/{synth_gguf.py,compare_golden.py,compare_embeddings.py} .gpu/shared/tools/
# llama.cpp's llama-bench for the CPU side by side (check.sh cpu), when bench/llamacpp.sh fetch has unpacked
# it: the program, the libraries it loads and three CPU backend variants, compressed (the tree travels whole).
LLAMACPP_DIR=${LLAMACPP_DIR:-../llamacpp-debian}
if [ -d "$LLAMACPP_DIR/root" ]; then
    lib=usr/lib/x86_64-linux-gnu
    (cd "$LLAMACPP_DIR" && tar -cJf - root/usr/bin/llama-bench root/$lib/llama/libllama-bench-impl.so \
        root/$lib/{ld-linux-x86-64.so.2,libc.so.6,libm.so.6,libgcc_s.so.1,libgomp.so.1*,libstdc++.so.6*} \
        root/$lib/{libggml-base.so.0*,libggml.so.0*,libllama.so.0*,libllama-common.so.0*,libssl.so.3,libcrypto.so.3,libz.so.1*} \
        root/$lib/ggml/backends0/libggml-cpu-{sapphirerapids,zen4,skylakex}.so) > .gpu/llamacpp.tar.xz
fi
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
du -sh .gpu build-cuda/bin
