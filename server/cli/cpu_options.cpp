#include "server/cli/cpu_options.h"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

namespace cli {

namespace {

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> out;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
}

// The CPUs of NUMA node n (sysfs cpulist), empty when the node does not exist.
std::vector<int> node_cpus(int n) {
    std::ifstream f("/sys/devices/system/node/node" + std::to_string(n) + "/cpulist");
    std::string list;
    if (!f || !std::getline(f, list)) return {};
    std::vector<int> out;
    size_t i = 0;
    while (i < list.size()) {
        size_t j = list.find(',', i);
        if (j == std::string::npos) j = list.size();
        const std::string part = list.substr(i, j - i);
        const size_t dash = part.find('-');
        try {
            const int lo = std::stoi(part.substr(0, dash));
            const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
            for (int c = lo; c <= hi; ++c) out.push_back(c);
        } catch (const std::exception&) {
        }
        i = j + 1;
    }
    return out;
}

std::vector<std::vector<int>> numa_nodes() {
    std::vector<std::vector<int>> nodes;
    for (int n = 0; n < 1024; ++n) {
        std::vector<int> cpus = node_cpus(n);
        if (cpus.empty()) {
            if (n > 0) break;
            continue;
        }
        nodes.push_back(std::move(cpus));
    }
    return nodes;
}

int check_range(const std::string& opt, int v, int lo, int hi) {
    if (v < lo || v > hi)
        throw ArgError(opt + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not " +
                       std::to_string(v));
    return v;
}

}  // namespace

std::vector<int> parse_cpu_mask(const std::string& opt, const std::string& hex) {
    std::string h = hex;
    if (h.size() > 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) h = h.substr(2);
    if (h.empty()) throw ArgError("invalid value '" + hex + "' for " + opt + ": expected a hexadecimal mask");
    std::vector<int> out;
    const int n = (int)h.size();
    for (int i = 0; i < n; ++i) {
        const char c = (char)std::tolower((unsigned char)h[(size_t)(n - 1 - i)]);
        int v;
        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else
            throw ArgError("invalid value '" + hex + "' for " + opt + ": expected a hexadecimal mask");
        for (int b = 0; b < 4; ++b)
            if (v & (1 << b)) out.push_back(4 * i + b);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<int> parse_cpu_range(const std::string& opt, const std::string& range) {
    const size_t dash = range.find('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 >= range.size())
        throw ArgError("invalid value '" + range + "' for " + opt + ": expected lo-hi");
    const int lo = ArgParser::to_int(opt, range.substr(0, dash));
    const int hi = ArgParser::to_int(opt, range.substr(dash + 1));
    if (lo < 0 || hi < lo || hi >= CPU_SETSIZE)
        throw ArgError("invalid value '" + range + "' for " + opt + ": expected 0 <= lo <= hi < " +
                       std::to_string(CPU_SETSIZE));
    std::vector<int> out;
    for (int c = lo; c <= hi; ++c) out.push_back(c);
    return out;
}

std::string cpu_list_string(std::vector<int> cpus) {
    std::sort(cpus.begin(), cpus.end());
    std::string out;
    for (size_t i = 0; i < cpus.size();) {
        size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ",";
        out += std::to_string(cpus[i]);
        if (j > i) out += "-" + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

void add_cpu_options(ArgParser& ap, CpuOptions& c) {
    ap.option("-C,--cpu-mask", "M", "CPU affinity mask in hex (any length); with --cpu-range, their union",
              &c.mask);
    ap.option("-Cr,--cpu-range", "LO-HI", "CPUs LO to HI for the threads (with --cpu-mask, their union)",
              &c.range);
    ap.option("--cpu-strict", "0|1", "1: pin thread i to the i-th CPU of the set (default 0: any of them)",
              &c.strict);
    ap.option(
        "--prio", "N",
        "process priority: -1 low, 0 normal (default), 1 medium, 2 high, 3 realtime (nice 5, 0, -5, -10, "
        "-20)",
        &c.prio);
    ap.option("--poll", "0..100",
              "how long idle threads poll for work before sleeping (default 50; 0: sleep)", &c.poll);
    ap.option("-Cb,--cpu-mask-batch", "M",
              "as --cpu-mask for prompt batches; ggserve runs batches on the same threads, so it must agree",
              &c.mask_batch);
    ap.option("-Crb,--cpu-range-batch", "LO-HI", "as --cpu-range for prompt batches (must agree)",
              &c.range_batch);
    ap.option("--cpu-strict-batch", "0|1", "as --cpu-strict for prompt batches (must agree)",
              &c.strict_batch);
    ap.option("--prio-batch", "N", "as --prio for prompt batches (must agree)", &c.prio_batch);
    ap.option("--poll-batch", "0..100", "as --poll for prompt batches (must agree)", &c.poll_batch);
    ap.add("--numa", "TYPE",
           "NUMA placement: distribute (threads spread over the nodes), isolate (the CPUs of the node the "
           "process started on), numactl (the CPU set numactl gave the process)",
           [&c](const std::string& v) {
               if (v != "distribute" && v != "isolate" && v != "numactl")
                   throw ArgError("invalid value '" + v +
                                  "' for --numa: expected distribute, isolate or numactl");
               c.numa = v;
           });
}

void CpuOptions::finish() {
    check_range("--cpu-strict", strict, 0, 1);
    check_range("--prio", prio, -1, 3);
    check_range("--poll", poll, 0, 100);
    std::vector<int> set;
    if (!mask.empty()) set = parse_cpu_mask("--cpu-mask", mask);
    if (!range.empty()) {
        const std::vector<int> r = parse_cpu_range("--cpu-range", range);
        set.insert(set.end(), r.begin(), r.end());
    }
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());

    // The -batch twins: unset means "as the plain one"; a different value cannot be honoured.
    const auto agree = [](const char* name, const char* twin) {
        throw ArgError(std::string(name) + " differs from " + twin +
                       ": ggserve computes prompt batches and single-token steps on one thread pool, so "
                       "both must name the same setting");
    };
    if (!mask_batch.empty() || !range_batch.empty()) {
        std::vector<int> b;
        if (!mask_batch.empty()) b = parse_cpu_mask("--cpu-mask-batch", mask_batch);
        if (!range_batch.empty()) {
            const std::vector<int> r = parse_cpu_range("--cpu-range-batch", range_batch);
            b.insert(b.end(), r.begin(), r.end());
        }
        std::sort(b.begin(), b.end());
        b.erase(std::unique(b.begin(), b.end()), b.end());
        if (b != set) agree("--cpu-mask-batch/--cpu-range-batch", "--cpu-mask/--cpu-range");
    }
    if (strict_batch != -1 && check_range("--cpu-strict-batch", strict_batch, 0, 1) != strict)
        agree("--cpu-strict-batch", "--cpu-strict");
    if (prio_batch != -100 && check_range("--prio-batch", prio_batch, -1, 3) != prio)
        agree("--prio-batch", "--prio");
    if (poll_batch != -1 && check_range("--poll-batch", poll_batch, 0, 100) != poll)
        agree("--poll-batch", "--poll");

    const std::vector<int> allowed = allowed_cpus();
    std::vector<int> order;  // placement order
    if (numa == "distribute") {
        // Round-robin over the nodes: thread i on node i % nodes, so the threads spread evenly.
        const auto nodes = numa_nodes();
        if (nodes.empty())
            throw ArgError("--numa distribute: this system reports no NUMA nodes (/sys/devices/system/node)");
        for (size_t k = 0;; ++k) {
            bool any = false;
            for (const auto& n : nodes)
                if (k < n.size()) {
                    order.push_back(n[k]);
                    any = true;
                }
            if (!any) break;
        }
        strict = 1;  // distribute places each thread on its CPU
    } else if (numa == "isolate") {
        const int here = sched_getcpu();
        for (const auto& n : numa_nodes())
            if (std::find(n.begin(), n.end(), here) != n.end()) order = n;
        if (order.empty())
            throw ArgError("--numa isolate: cannot find the NUMA node of CPU " + std::to_string(here));
    } else if (numa == "numactl") {
        order = allowed;  // numactl (or taskset) restricted the process already
    }
    if (!numa.empty()) {
        std::vector<int> usable;
        for (int c : order)
            if (std::find(allowed.begin(), allowed.end(), c) != allowed.end() &&
                (set.empty() || std::binary_search(set.begin(), set.end(), c)))
                usable.push_back(c);
        if (usable.empty())
            throw ArgError("--numa " + numa + " leaves no CPU this process may run on (allowed: " +
                           cpu_list_string(allowed) + ")");
        set = usable;
    } else {
        for (int c : set)
            if (std::find(allowed.begin(), allowed.end(), c) == allowed.end())
                throw ArgError("CPU " + std::to_string(c) +
                               " of --cpu-mask/--cpu-range is not available to this process (allowed: " +
                               cpu_list_string(allowed) + ")");
    }
    threads.cpus = set;
    threads.strict = strict == 1;
    threads.poll = poll;
}

std::string CpuOptions::apply_priority() const {
    if (prio == 0) return "";
    static const int kNice[] = {5, 0, -5, -10, -20};  // -1 .. 3
    const int nice = kNice[prio + 1];
    if (setpriority(PRIO_PROCESS, 0, nice) != 0)
        return "cannot set --prio " + std::to_string(prio) + " (nice " + std::to_string(nice) +
               "): " + std::strerror(errno) +
               (errno == EACCES || errno == EPERM ? " (raising priority needs CAP_SYS_NICE)" : "");
    return "";
}

std::string CpuOptions::describe() const {
    std::string out = "CPU threads: ";
    out += threads.cpus.empty() ? std::string("any CPU") : "CPUs " + cpu_list_string(threads.cpus);
    if (threads.strict) out += ", one CPU per thread";
    if (!numa.empty()) out += ", numa " + numa;
    out += ", poll " + std::to_string(threads.poll) + ", prio " + std::to_string(prio);
    return out;
}

}  // namespace cli
