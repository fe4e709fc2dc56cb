// Where the CPU threads run and at what priority (llama-server's -C/--cpu-mask, -Cr/--cpu-range,
// --cpu-strict, --prio, --poll, their -batch twins, and --numa). ggserve computes prompt batches and
// single-token steps on one thread pool, so a -batch setting must agree with its plain twin.
#pragma once

#include <string>
#include <vector>

#include "ggml/backend.h"
#include "server/cli/args.h"

namespace cli {

struct CpuOptions {
    std::string mask, range;  // -C, -Cr
    int strict = 0;           // --cpu-strict 0|1
    int prio = 0;             // --prio -1..3
    int poll = 50;            // --poll 0..100
    std::string mask_batch, range_batch;
    int strict_batch = -1, prio_batch = -100, poll_batch = -1;  // unset: as the plain settings
    std::string numa;                                           // distribute, isolate, numactl ("": none)

    // Resolved by finish().
    ggml::CpuThreadOptions threads;

    // Validates and resolves the CPU set: every CPU must be one this process may run on. Throws ArgError.
    void finish();
    // Sets the process priority (nice value) before any thread starts, so that every thread inherits
    // it. Returns an empty string, or why it could not (llama-server warns and goes on; so do we).
    std::string apply_priority() const;
    // One line for the startup log.
    std::string describe() const;
};

void add_cpu_options(ArgParser& ap, CpuOptions& c);

// Parses a hexadecimal CPU mask of any length ("0x3", "ff00") into CPU indices. Throws ArgError.
std::vector<int> parse_cpu_mask(const std::string& opt, const std::string& hex);
// Parses "lo-hi" (inclusive) into CPU indices. Throws ArgError.
std::vector<int> parse_cpu_range(const std::string& opt, const std::string& range);
// "0-3,6" for a sorted list of CPUs.
std::string cpu_list_string(std::vector<int> cpus);

}  // namespace cli
