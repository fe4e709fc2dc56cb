// Micro-benchmark of the CPU kernels on one thread, per weight type and instruction-set level (K = 4096
// unless --k; a model's own row length shows the cost of a row's last, partial chunk):
//   vec_dot  GB/s of weight rows streamed through one vec_dot per row (decode), 64 MiB of rows;
//   tile1    GB/s of the same rows through gemm_tile with 64 rows and one column per call (decode);
//   tile2 .. tile16  the same with 2, 4, 8 and 16 columns per call (a step of a few streams or a short
//            draft: ideally as fast as tile1, the weights being read once for all columns);
//   gemm     GFLOP/s of gemm_tile on a 128 x 64 product whose weights stay in L2 (prefill);
//   loop     GFLOP/s of the same product by one vec_dot per output, and gemm's speed-up over it.
// Times are thread CPU time, best of several runs, so other processes on a shared machine disturb less.
// Usage: bench_kernels [type ...] [--level scalar|avx2|avx512|amx] [--seconds S]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "cpu/kernels.h"
#include "ggml/quants.h"

using namespace ggml;

namespace {

int64_t kK = 4096;  // values per row (--k)
double g_seconds = 0.2;  // measuring time per number

double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// `rows` rows of type t: 64 distinct quantized rows, repeated.
std::vector<uint8_t> make_rows(Type t, int64_t rows, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(kK));
    const size_t rs = row_size(t, kK);
    std::vector<uint8_t> out(rs * size_t(rows));
    for (int64_t r = 0; r < std::min<int64_t>(rows, 64); ++r) {
        if (!type_traits(t).from_float_ref) {  // IQ2/IQ1 need an importance matrix: random blocks instead
            for (size_t b = 0; b < rs; ++b) out[size_t(r) * rs + b] = uint8_t(rng());
            continue;
        }
        for (float& v : x) v = dist(rng);
        type_traits(t).from_float_ref(x.data(), out.data() + size_t(r) * rs, kK);
    }
    for (int64_t r = 64; r < rows; ++r)
        std::memcpy(out.data() + size_t(r) * rs, out.data() + size_t(r % 64) * rs, rs);
    return out;
}

// Seconds per call of f: the best of 5 runs of about g_seconds / 5 each.
template <class F>
double time_per_call(F&& f) {
    f();  // warm up
    double best = 1e30;
    for (int run = 0; run < 5; ++run) {
        int calls = 0;
        const double start = cpu_seconds();
        double elapsed = 0;
        do {
            f();
            ++calls;
            elapsed = cpu_seconds() - start;
        } while (elapsed < g_seconds / 5);
        best = std::min(best, elapsed / calls);
    }
    return best;
}

// The CPU model and the instruction-set level detected, as every benchmark prints them.
void print_cpu() {
    std::string model = "unknown";
    if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
        char line[512];
        while (std::fgets(line, sizeof line, f)) {
            if (std::strncmp(line, "model name", 10) != 0) continue;
            const char* colon = std::strchr(line, ':');
            if (colon) model = std::string(colon + 2, std::strcspn(colon + 2, "\n"));
            break;
        }
        std::fclose(f);
    }
    std::printf("CPU: %s; detected level %s\n", model.c_str(), cpu::isa_level_name(cpu::detected_isa_level()));
}

void bench_type(Type t) {
    const Type vt = type_traits(t).vec_dot_type;
    const size_t bx = row_size(t, kK), by = row_size(vt, kK);
    const int64_t rows = int64_t((64u << 20) / bx) / 64 * 64;
    const std::vector<uint8_t> w = make_rows(t, rows, 1);
    const std::vector<uint8_t> a = make_rows(vt, 64, 2);
    const VecDotFn dot = cpu::vec_dot(t);
    std::vector<float> out(size_t(rows) * 16 + 128 * 64);

    const double t_dot = time_per_call([&] {
        for (int64_t r = 0; r < rows; ++r) dot(kK, &out[size_t(r)], w.data() + size_t(r) * bx, a.data());
    });
    const double t_tile1 = time_per_call([&] {
        for (int64_t r = 0; r < rows; r += 64)
            cpu::gemm_tile(t, kK, &out[size_t(r)], 64, w.data() + size_t(r) * bx, bx, a.data(), by, 64, 1);
    });
    auto t_cols = [&](int nc) {
        return time_per_call([&] {
            for (int64_t r = 0; r < rows; r += 64)
                cpu::gemm_tile(t, kK, &out[size_t(r)], size_t(rows), w.data() + size_t(r) * bx, bx, a.data(), by,
                               64, nc);
        });
    };
    const double t_tile2 = t_cols(2), t_tile4 = t_cols(4), t_tile8 = t_cols(8), t_tile16 = t_cols(16);
    const int M = 128, N = 64;
    const double flops = 2.0 * M * N * double(kK);
    const double t_gemm =
        time_per_call([&] { cpu::gemm_tile(t, kK, out.data(), M, w.data(), bx, a.data(), by, M, N); });
    const double t_loop = time_per_call([&] {
        for (int c = 0; c < N; ++c)
            for (int r = 0; r < M; ++r)
                dot(kK, &out[size_t(c) * M + size_t(r)], w.data() + size_t(r) * bx,
                    a.data() + size_t(c) * by);
    });
    const double bytes = double(rows) * double(bx);
    std::printf("%-7s %-7s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %7.1fx\n", type_name(t),
                cpu::isa_level_name(cpu::isa_level()), bytes / t_dot / 1e9, bytes / t_tile1 / 1e9,
                bytes / t_tile2 / 1e9, bytes / t_tile4 / 1e9, bytes / t_tile8 / 1e9, bytes / t_tile16 / 1e9,
                flops / t_gemm / 1e9,
                flops / t_loop / 1e9, t_loop / t_gemm);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<Type> types;
    std::vector<cpu::IsaLevel> levels;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--level" && i + 1 < argc) {
            const std::string name = argv[++i];
            for (auto l : {cpu::IsaLevel::Scalar, cpu::IsaLevel::Avx2, cpu::IsaLevel::Avx512, cpu::IsaLevel::Amx})
                if (name == cpu::isa_level_name(l)) levels.push_back(l);
        } else if (arg == "--k" && i + 1 < argc) {
            kK = std::atoll(argv[++i]);
            if (kK <= 0 || kK % 32 != 0) {
                std::fprintf(stderr, "--k: a positive multiple of 32\n");
                return 2;
            }
        } else if (arg == "--seconds" && i + 1 < argc) {
            g_seconds = std::atof(argv[++i]);
        } else {
            Type t;
            if (!type_from_name(arg.c_str(), &t) || !cpu::vec_dot(t)) {
                std::fprintf(stderr,
                             "usage: bench_kernels [type ...] [--level scalar|avx2|avx512|amx] [--k K] "
                             "[--seconds S]\n");
                return 2;
            }
            types.push_back(t);
        }
    }
    if (types.empty())
        types = {Type::F32,  Type::F16,  Type::BF16, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1,
                 Type::Q8_0, Type::Q2_K, Type::Q3_K, Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::IQ4_NL};
    if (levels.empty())
        for (auto l : {cpu::IsaLevel::Scalar, cpu::IsaLevel::Avx2, cpu::IsaLevel::Avx512, cpu::IsaLevel::Amx})
            if (int(l) <= int(cpu::detected_isa_level())) levels.push_back(l);
    print_cpu();
    std::printf("K = %lld, one thread; vec_dot and tileN in GB/s of weights, gemm and loop in GFLOP/s\n",
                static_cast<long long>(kK));
    std::printf("%-7s %-7s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "type", "level", "vec_dot", "tile1", "tile2",
                "tile4", "tile8", "tile16", "gemm", "loop", "speedup");
    for (Type t : types) {
        if (kK % type_traits(t).block_size != 0) {
            std::printf("%-7s (K is not a multiple of its block size %d)\n", type_name(t), int(type_traits(t).block_size));
            continue;
        }
        for (auto l : levels) {
            cpu::set_isa_level_for_testing(l);
            bench_type(t);
        }
    }
    return 0;
}
