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
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
du -sh .gpu build-cuda/bin
