// ggserve as a drop-in for llama-server: a long llama-server command line (and the same settings as
// LLAMA_ARG_* variables) takes effect setting by setting, the options it cannot honour stop with their
// reason, and the behaviour llama-server's clients rely on (limits, public model list, native
// /completions, HTTPS, logging, slot choice, KV-shift cache reuse).
#include <sched.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <unistd.h>

#include <poll.h>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "context_util.h"
#include "ggml/gguf.h"
#include "server/http/client.h"
#include "server_process.h"

namespace {

using json = nlohmann::json;
using server::http::Client;

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// A CPU this process may run on (the first one), for -C.
int first_allowed_cpu() {
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) return c;
    FAIL("no CPU");
    return 0;
}

std::string hex_mask(int cpu) {
    std::string hex;
    for (int nibble = 0; nibble <= cpu / 4; ++nibble) {
        const int v = nibble == cpu / 4 ? 1 << (cpu % 4) : 0;
        hex.insert(hex.begin(), "0123456789abcdef"[v]);
    }
    return "0x" + hex;
}

// The words of a prompt long enough for chunked cache reuse (each word is its own tokens).
std::string words(int from, int to) {
    static const char* kWords[] = {"alpha", "bird", "cat", "dog", "egg", "fish", "goat", "hat", "ink", "jam"};
    std::string out;
    for (int i = from; i < to; ++i)
        out += std::string(out.empty() ? "" : " ") + kWords[i % 10] + " " + kWords[(i / 10) % 10];
    return out;
}

// The settings of the long command line, as command-line words and as LLAMA_ARG_* variables.
struct Setting {
    std::vector<std::string> args;
    std::string env;  // NAME=VALUE
};

std::vector<Setting> dropin_settings(const std::string& log_file, int cpu) {
    const std::string mask = hex_mask(cpu);
    return {
        {{"-m", stories_model()}, "LLAMA_ARG_MODEL=" + stories_model()},
        {{"-c", "512"}, "LLAMA_ARG_CTX_SIZE=512"},
        {{"-np", "2"}, "LLAMA_ARG_N_PARALLEL=2"},
        {{"--predict", "40"}, "LLAMA_ARG_N_PREDICT=40"},
        {{"-fa"}, "LLAMA_ARG_FLASH_ATTN=on"},  // bare, before another option
        {{"-t", "2"}, "LLAMA_ARG_THREADS=2"},
        {{"-tb", "2"}, "LLAMA_ARG_THREADS_BATCH=2"},
        {{"-b", "256"}, "LLAMA_ARG_BATCH=256"},
        {{"-ub", "64"}, "LLAMA_ARG_UBATCH=64"},
        {{"--temp", "0.7"}, "LLAMA_ARG_TEMPERATURE=0.7"},
        {{"--top-k", "30"}, "LLAMA_ARG_TOP_K=30"},
        {{"--top-p", "0.9"}, "LLAMA_ARG_TOP_P=0.9"},
        {{"--min-p", "0.02"}, "LLAMA_ARG_MIN_P=0.02"},
        {{"--typical", "0.95"}, "LLAMA_ARG_TYPICAL=0.95"},
        {{"--repeat-penalty", "1.05"}, "LLAMA_ARG_REPEAT_PENALTY=1.05"},
        {{"--repeat-last-n", "32"}, "LLAMA_ARG_REPEAT_LAST_N=32"},
        {{"--presence-penalty", "0.1"}, "LLAMA_ARG_PRESENCE_PENALTY=0.1"},
        {{"--frequency-penalty", "0.15"}, "LLAMA_ARG_FREQUENCY_PENALTY=0.15"},
        {{"--dynatemp-range", "0.2"}, "LLAMA_ARG_DYNATEMP_RANGE=0.2"},
        {{"--dynatemp-exp", "1.5"}, "LLAMA_ARG_DYNATEMP_EXP=1.5"},
        {{"--dry-multiplier", "0.5"}, "LLAMA_ARG_DRY_MULTIPLIER=0.5"},
        {{"--dry-sequence-breaker", "##"}, "LLAMA_ARG_DRY_SEQUENCE_BREAKER=##"},
        {{"--ignore-eos"}, "LLAMA_ARG_IGNORE_EOS=1"},
        {{"-l", "13+1"}, "LLAMA_ARG_LOGIT_BIAS=13+1"},
        {{"--grammar", "root ::= [a-z ]+"}, "LLAMA_ARG_GRAMMAR=root ::= [a-z ]+"},
        {{"--keep", "4"}, "LLAMA_ARG_KEEP=4"},
        {{"--rope-scaling", "linear"}, "LLAMA_ARG_ROPE_SCALING_TYPE=linear"},
        {{"--rope-scale", "2"}, "LLAMA_ARG_ROPE_SCALE=2"},
        {{"--rope-freq-base", "20000"}, "LLAMA_ARG_ROPE_FREQ_BASE=20000"},
        {{"--yarn-orig-ctx", "200"}, "LLAMA_ARG_YARN_ORIG_CTX=200"},
        {{"--yarn-ext-factor", "0"}, "LLAMA_ARG_YARN_EXT_FACTOR=0"},
        {{"--yarn-attn-factor", "1"}, "LLAMA_ARG_YARN_ATTN_FACTOR=1"},
        {{"--yarn-beta-slow", "2"}, "LLAMA_ARG_YARN_BETA_SLOW=2"},
        {{"--yarn-beta-fast", "16"}, "LLAMA_ARG_YARN_BETA_FAST=16"},
        {{"--no-mmap"}, "LLAMA_ARG_NO_MMAP=1"},
        {{"--mlock"}, "LLAMA_ARG_MLOCK=1"},
        {{"--check-tensors"}, "LLAMA_ARG_CHECK_TENSORS=1"},
        {{"--override-kv", "tokenizer.ggml.add_bos_token=bool:false"},
         "LLAMA_ARG_OVERRIDE_KV=tokenizer.ggml.add_bos_token=bool:false"},
        {{"-nkvo"}, "LLAMA_ARG_NO_KV_OFFLOAD=1"},
        {{"--no-warmup"}, "LLAMA_ARG_NO_WARMUP=1"},
        {{"-sp"}, "LLAMA_ARG_SPECIAL=1"},
        {{"--cache-reuse", "16"}, "LLAMA_ARG_CACHE_REUSE=16"},
        {{"-sps", "0.5"}, "LLAMA_ARG_SLOT_PROMPT_SIMILARITY=0.5"},
        {{"-dt", "0.1"}, "LLAMA_ARG_DEFRAG_THOLD=0.1"},
        {{"--slots"}, "LLAMA_ARG_ENDPOINT_SLOTS=1"},
        {{"--metrics"}, "LLAMA_ARG_ENDPOINT_METRICS=1"},
        {{"--props"}, "LLAMA_ARG_ENDPOINT_PROPS=1"},
        {{"-a", "dropin"}, "LLAMA_ARG_ALIAS=dropin"},
        {{"-C", mask}, "LLAMA_ARG_CPU_MASK=" + mask},
        {{"--cpu-strict", "1"}, "LLAMA_ARG_CPU_STRICT=1"},
        {{"--prio", "-1"}, "LLAMA_ARG_PRIO=-1"},
        {{"--poll", "0"}, "LLAMA_ARG_POLL=0"},
        {{"-Cb", mask}, "LLAMA_ARG_CPU_MASK_BATCH=" + mask},
        {{"--numa", "numactl"}, "LLAMA_ARG_NUMA=numactl"},
        {{"--log-file", log_file}, "LLAMA_ARG_LOG_FILE=" + log_file},
        {{"--log-colors", "off"}, "LLAMA_LOG_COLORS=off"},
        {{"--no-log-prefix"}, "LLAMA_LOG_PREFIX=0"},
        {{"-v"}, "LLAMA_ARG_VERBOSE=1"},
        {{"--threads-http", "2"}, "LLAMA_ARG_THREADS_HTTP=2"},
        {{"-to", "120"}, "LLAMA_ARG_TIMEOUT=120"},
        {{"--offline"}, "LLAMA_OFFLINE=1"},
        {{"--swa-full"}, "LLAMA_ARG_SWA_FULL=1"},
        {{"-cram", "64"}, "LLAMA_ARG_CACHE_RAM=64"},
        {{"--cache-idle-slots"}, "LLAMA_ARG_CACHE_IDLE_SLOTS=1"},
        {{"-ctxcp", "8"}, "LLAMA_ARG_CTX_CHECKPOINTS=8"},
    };
}

// /proc/<pid>/task/*/status lines of every thread.
std::vector<std::string> thread_status(pid_t pid) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task"))
        out.push_back(read_text((e.path() / "status").string()));
    return out;
}

std::string status_field(const std::string& status, const std::string& name) {
    const std::regex re(name + ":\\s*([^\\n]*)");
    std::smatch m;
    return std::regex_search(status, m, re) ? m[1].str() : std::string();
}

// The nice value of a thread (field 19 of /proc/<pid>/stat, after the parenthesized name).
int nice_of(pid_t pid) {
    const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 19; ++i) rest >> field;
    return std::stoi(field);
}

void check_dropin_settings(ServerProcess& s, const std::string& log_file, int cpu) {
    Client c("127.0.0.1", s.port());
    const json props = c.get("/props").json();
    INFO(props.dump(1));
    const json& dgs = props["default_generation_settings"];
    const json& p = dgs["params"];
    CHECK(props["total_slots"] == 2);                      // -np
    CHECK(dgs["n_ctx"] == 256);                            // -c / -np
    CHECK(props["model_alias"] == "dropin");               // -a
    CHECK(p["n_predict"] == 40);                           // --predict
    CHECK(p["temperature"].get<double>() == Approx(0.7));  // --temp
    CHECK(p["top_k"] == 30);
    CHECK(p["top_p"].get<double>() == Approx(0.9));
    CHECK(p["min_p"].get<double>() == Approx(0.02));
    CHECK(p["typical_p"].get<double>() == Approx(0.95));
    CHECK(p["repeat_penalty"].get<double>() == Approx(1.05));
    CHECK(p["repeat_last_n"] == 32);
    CHECK(p["presence_penalty"].get<double>() == Approx(0.1));
    CHECK(p["frequency_penalty"].get<double>() == Approx(0.15));
    CHECK(p["dynatemp_range"].get<double>() == Approx(0.2));
    CHECK(p["dynatemp_exponent"].get<double>() == Approx(1.5));
    CHECK(p["dry_multiplier"].get<double>() == Approx(0.5));
    CHECK(p["dry_sequence_breakers"] == json::array({"##"}));
    CHECK(p["ignore_eos"] == true);
    CHECK(p["logit_bias"] == json::parse(R"([{"bias": 1.0, "token": 13}])"));
    CHECK(p["grammar"] == "root ::= [a-z ]+");
    CHECK(p["n_keep"] == 4);
    CHECK(p["n_cache_reuse"] == 16);
    const json& srv = props["server"];
    CHECK(srv["flash_attn"] == "on");   // bare -fa
    CHECK(srv["kv_offload"] == false);  // -nkvo
    CHECK(srv["warmup"] == false);
    CHECK(srv["special"] == true);
    CHECK(srv["cache_reuse"] == 16);
    CHECK(srv["slot_prompt_similarity"].get<double>() == Approx(0.5));
    CHECK(srv["cache_ram_mib"] == 64);
    CHECK(srv["cache_idle_slots"] == true);
    CHECK(srv["mmap"] == false);
    CHECK(srv["verbose"] == true);
    CHECK(srv["rope"]["scaling"] == "linear");
    CHECK(srv["rope"]["freq_scale"].get<double>() == Approx(0.5));  // --rope-scale 2
    CHECK(srv["rope"]["freq_base"].get<double>() == Approx(20000));
    CHECK(srv["rope"]["n_ctx_orig"] == 200);
    CHECK(srv["rope"]["yarn_beta_slow"].get<double>() == Approx(2));
    CHECK(srv["rope"]["yarn_beta_fast"].get<double>() == Approx(16));
    CHECK(srv["cpu_threads"]["cpus"] == json::array({cpu}));
    CHECK(srv["cpu_threads"]["strict"] == true);
    CHECK(srv["cpu_threads"]["poll"] == 0);
    CHECK(srv["cpu_threads"]["prio"] == -1);
    CHECK(srv["cpu_threads"]["numa"] == "numactl");

    // --grammar, --ignore-eos and the server's -n as a cap: 100 asked, 40 generated, all grammar text.
    const json r = c.post("/completion", R"({"prompt": "Once upon a time", "n_predict": 100})").json();
    CHECK(r["tokens_predicted"] == 40);
    CHECK(r["stop_type"] == "limit");
    CHECK(std::regex_match(r["content"].get<std::string>(), std::regex("[a-z ]*")));
    CHECK(r["generation_settings"]["n_predict"] == 40);
    // -sp: a special token (BOS, pushed up by the request's bias) shows as its text.
    const json sp = c.post("/completion",
                           R"({"prompt": "Hello", "n_predict": 3, "grammar": "", "logit_bias": [[1, 100]]})")
                        .json();
    CHECK(sp["content"].get<std::string>().find("<s>") != std::string::npos);
    // --override-kv tokenizer.ggml.add_bos_token=bool:false: no BOS even when special tokens are added.
    const json tk = c.post("/tokenize", R"({"content": "Hello", "add_special": true})").json();
    REQUIRE(!tk["tokens"].empty());
    CHECK(tk["tokens"][0] != 1);
    // --cache-reuse 16: a prompt that drops a middle part reuses the chunk after it by shifting.
    const std::string a = words(0, 6), b = words(6, 12), tail = words(12, 30);
    const json first =
        c.post("/completion",
               json{{"prompt", a + " " + b + " " + tail}, {"n_predict", 1}, {"id_slot", 0}, {"grammar", ""}}
                   .dump())
            .json();
    const json second =
        c.post("/completion",
               json{{"prompt", a + " " + tail}, {"n_predict", 1}, {"id_slot", 0}, {"grammar", ""}}.dump())
            .json();
    const int prefix = (int)c.post("/tokenize", json{{"content", a}}.dump()).json()["tokens"].size();
    INFO("first " << first.dump() << "\nsecond " << second.dump());
    CHECK(second["tokens_cached"].get<int>() >= prefix + 16);
    CHECK(second["tokens_cached"].get<int>() == second["tokens_evaluated"].get<int>() - 1);
    // -v: OpenAI responses carry the native result.
    const json v = c.post("/v1/completions", R"({"prompt": "a", "max_tokens": 2, "grammar": ""})").json();
    CHECK(v.contains("__verbose"));
    CHECK(v["__verbose"]["tokens_predicted"] == 2);
    // --slots, --metrics, --props.
    CHECK(c.get("/slots").json().size() == 2);
    CHECK(c.get("/slots").json()[0]["params"]["top_k"] == 30);
    CHECK(c.get("/metrics").status == 200);
    CHECK(c.post("/props", R"({"top_k": 31})").status == 200);

    // The process: --no-mmap (no mapping of the file), --mlock, --prio -1 (nice 5), -C/--cpu-strict.
    const pid_t pid = s.pid();
    const std::string maps = read_text("/proc/" + std::to_string(pid) + "/maps");
    CHECK(maps.find("stories260K.gguf") == std::string::npos);
    const std::string log = read_text(log_file);
    const auto statuses = thread_status(pid);
    const std::string vm_lck = status_field(read_text("/proc/" + std::to_string(pid) + "/status"), "VmLck");
    INFO("VmLck " << vm_lck);
    CHECK((std::stol(vm_lck) >= 1000 ||
           log.find("--mlock: cannot lock the model in RAM") != std::string::npos));
    CHECK(nice_of(pid) == 5);
    int pinned = 0;
    for (const auto& st : statuses) pinned += status_field(st, "Cpus_allowed_list") == std::to_string(cpu);
    CHECK(pinned >= 2);  // the compute threads (engine thread and pool worker); not the HTTP threads

    // The log: --log-file has it, without level prefixes (--no-log-prefix), with -v's debug lines; no
    // warmup (--no-warmup); -dt says why it changes nothing; --check-tensors ran.
    CHECK(log.find("ready:") != std::string::npos);
    CHECK(log.find("[info]") == std::string::npos);
    CHECK(log.find("[ggserve]") == std::string::npos);
    CHECK(log.find("POST /completion") != std::string::npos);  // debug level
    CHECK(log.find("warmup:") == std::string::npos);
    CHECK(log.find("needs no defragmentation") != std::string::npos);
    CHECK(log.find("--check-tensors: the") != std::string::npos);
    CHECK(s.log().find("\x1b[") == std::string::npos);  // --log-colors off
}

}  // namespace

TEST_CASE("a long llama-server command line: every setting takes effect", "[integration][dropin]") {
    ctxtest::TempDir dir;
    const int cpu = first_allowed_cpu();
    std::vector<std::string> args;
    for (const auto& st : dropin_settings(dir.file("server.log"), cpu))
        args.insert(args.end(), st.args.begin(), st.args.end());
    ServerProcess s(args);
    check_dropin_settings(s, dir.file("server.log"), cpu);
}

TEST_CASE("the same settings given only as LLAMA_ARG_* variables take effect", "[integration][dropin]") {
    ctxtest::TempDir dir;
    const int cpu = first_allowed_cpu();
    std::vector<std::string> env;
    for (const auto& st : dropin_settings(dir.file("server.log"), cpu)) env.push_back(st.env);
    ServerProcess s({}, std::chrono::seconds(60), ServerProcess::WaitFor::Ready, env);
    check_dropin_settings(s, dir.file("server.log"), cpu);
}

TEST_CASE("options that cannot apply stop with their reason, never as unknown", "[integration][dropin]") {
    const std::string m = "-m " + stories_model() + " ";
    struct Case {
        std::string args, says;
    };
    const Case cases[] = {
        {"-hf ggml-org/gemma-3-1b-it-GGUF", "cannot download"},
        {"-hfr org/model -hff model.gguf", "cannot download"},
        {"--model-url https://example.com/m.gguf", "cannot download"},
        {"-hft hf_token", "cannot download"},
        {m + "--grp-attn-n 4 --grp-attn-w 512", "self-extend is not supported"},
        {m + "-ts 3,1", "one GPU"},
        {m + "--mmproj mmproj.gguf", "multimodal projectors are not supported"},
        {m + "--rpc 127.0.0.1:50052", "no RPC backend"},
        {m + "-fa maybe", "expected on, off or auto"},
        {m + "--numa everywhere", "distribute, isolate or numactl"},
        {m + "--cpu-mask 0x1 --cpu-mask-batch 0x2", "one thread pool"},
        {m + "--prio-batch 2", "--prio-batch differs from --prio"},
        {m + "--override-kv general.name=text:x", "not int, float, bool or str"},
        {m + "--rope-scaling ntk", "none, linear or yarn"},
        {m + "--grammar root --json-schema '{}'", "only one of --grammar"},
        {m + "--ssl-key-file k.pem", "both --ssl-key-file and --ssl-cert-file"},
        {m + "--json-schema '{\"type\": \"frobnicate\"}'", "--json-schema"},
        {m + "-sps 2", "--slot-prompt-similarity must be in [0, 1]"},
        {m + "--cache-ram abc", "invalid value 'abc' for --cache-ram: expected an integer"},
        {m + "-ctxcp -1", "--ctx-checkpoints must be at least 0"},
    };
    for (const auto& k : cases) {
        INFO(k.args);
        const CliResult r = run_ggserve("serve " + k.args);
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK(r.output.find(k.says) != std::string::npos);
        CHECK(r.output.find("unknown option") == std::string::npos);
    }
    // A bad default grammar is found once the model is loaded: exit 1, naming the option.
    const CliResult g = run_ggserve("serve " + m + "--port 0 --grammar 'root ::= ['");
    CHECK(g.code == 1);
    CHECK(g.output.find("--grammar") != std::string::npos);
}

TEST_CASE("version and device listing (--version, --list-devices) --list-devices print and exit 0",
          "[integration][dropin]") {
    const CliResult v = run_ggserve("serve --version");
    CHECK(v.code == 0);
    CHECK(std::regex_search(v.output, std::regex("^ggserve \\d+\\.\\d+\\.\\d+ \\(")));
    const CliResult d = run_ggserve("serve --list-devices");
    CHECK(d.code == 0);
    CHECK(d.output.find("Available devices:") != std::string::npos);
    const CliResult u = run_ggserve("serve --usage");
    CHECK(u.code == 0);
    CHECK(u.output.find("--flash-attn") != std::string::npos);
}

TEST_CASE("check-tensors stops a model with a NaN, naming the tensor", "[integration][dropin]") {
    ctxtest::TempDir dir;
    // stories260K with a NaN in one f32 value of blk.0.ffn_norm.weight.
    auto bytes = [] {
        std::ifstream f(stories_model(), std::ios::binary);
        return std::vector<char>(std::istreambuf_iterator<char>(f), {});
    }();
    const auto file = ggml::gguf::File::open(stories_model());
    const ggml::gguf::TensorInfo* t = file->find_tensor("blk.0.ffn_norm.weight");
    REQUIRE(t);
    const size_t at = file->data_offset() + t->offset;
    const uint32_t nan_bits = 0x7fc00000;
    std::memcpy(bytes.data() + at, &nan_bits, 4);
    std::ofstream(dir.file("bad.gguf"), std::ios::binary).write(bytes.data(), (std::streamsize)bytes.size());
    const CliResult r = run_ggserve("serve --port 0 -m " + dir.file("bad.gguf") + " --check-tensors");
    INFO(r.output);
    CHECK(r.code == 1);
    CHECK(r.output.find("blk.0.ffn_norm.weight") != std::string::npos);
    CHECK(r.output.find("NaN") != std::string::npos);
}

TEST_CASE("HTTPS with --ssl-key-file and --ssl-cert-file", "[integration][dropin][tls]") {
    ctxtest::TempDir dir;
    const std::string gen = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout " +
                            dir.file("key.pem") + " -out " + dir.file("cert.pem") + " >/dev/null 2>&1";
    REQUIRE(std::system(gen.c_str()) == 0);
    ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1", "--ssl-key-file", dir.file("key.pem"),
                     "--ssl-cert-file", dir.file("cert.pem")});
    CHECK(s.log().find("listening on https://") != std::string::npos);
    const std::string base = "https://127.0.0.1:" + std::to_string(s.port());
    const auto curl = [&](const std::string& args) {
        FILE* p = popen(("curl -s --max-time 30 " + args + " 2>&1").c_str(), "r");
        REQUIRE(p);
        std::string out;
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        const int st = pclose(p);
        return std::make_pair(WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
    };
    // Verified against the certificate, as a client pinning it would.
    const auto health = curl("--cacert " + dir.file("cert.pem") + " " + base + "/health");
    INFO(health.second);
    CHECK(health.first == 0);
    CHECK(json::parse(health.second)["status"] == "ok");
    const auto gen_r =
        curl("-k " + base +
             "/completion -H 'Content-Type: application/json' -d '{\"prompt\": \"Once\", \"n_predict\": 4}'");
    INFO(gen_r.second);
    CHECK(json::parse(gen_r.second)["tokens_predicted"] == 4);
    // Plain HTTP on the TLS port gets no answer.
    const auto plain = curl("http://127.0.0.1:" + std::to_string(s.port()) + "/health");
    CHECK(plain.second.find("\"ok\"") == std::string::npos);
    // A bad certificate is a startup error naming the file.
    std::ofstream(dir.file("bad.pem")) << "not a certificate";
    const CliResult bad = run_ggserve("serve --port 0 -m " + stories_model() + " --ssl-key-file " +
                                      dir.file("key.pem") + " --ssl-cert-file " + dir.file("bad.pem"));
    CHECK(bad.code == 1);
    CHECK(bad.output.find("bad.pem") != std::string::npos);
}

TEST_CASE("log-disable keeps the console silent, --log-file still has the log", "[integration][dropin]") {
    ctxtest::TempDir dir;
    const std::string log = dir.file("server.log");
    std::ofstream(log).close();  // exists, so that it can be watched before the server writes it
    const int in = inotify_init1(IN_CLOEXEC);
    REQUIRE(in >= 0);
    REQUIRE(inotify_add_watch(in, log.c_str(), IN_MODIFY) >= 0);
    ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1", "--log-disable", "--log-file", log},
                    std::chrono::seconds(60), ServerProcess::WaitFor::Nothing);
    // Wait (event driven) until the log file says the server is ready.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (read_text(log).find("ready:") == std::string::npos) {
        REQUIRE(std::chrono::steady_clock::now() < deadline);
        pollfd pfd{in, POLLIN, 0};
        REQUIRE(poll(&pfd, 1, 60000) > 0);
        char buf[4096];
        REQUIRE(read(in, buf, sizeof buf) > 0);
    }
    close(in);
    std::smatch m;
    const std::string text = read_text(log);
    REQUIRE(std::regex_search(text, m, std::regex("listening on http://[^:]+:(\\d+)")));
    Client c("127.0.0.1", (uint16_t)std::stoi(m[1]));
    CHECK(c.post("/completion", R"({"prompt": "Once", "n_predict": 2})").status == 200);
    CHECK(s.stop() == 0);
    CHECK(s.log().empty());  // nothing on stderr
}

TEST_CASE("llama-server defaults: warmup, -n caps requests, native /completions, public model list",
          "[integration][dropin]") {
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "-n", "5", "--api-key", "k"});
    CHECK(s.log().find("warmup:") != std::string::npos);  // on by default
    Client c("127.0.0.1", s.port());
    const server::http::Headers key = {{"Authorization", "Bearer k"}};
    CHECK(c.get("/v1/models").status == 200);
    CHECK(c.get("/models").status == 200);
    CHECK(c.get("/props").status == 401);
    // -n 5: a request without a limit gets 5, one asking for more gets 5, one asking for less its own.
    CHECK(
        c.post("/completion", R"({"prompt": "Once", "ignore_eos": true})", key).json()["tokens_predicted"] ==
        5);
    CHECK(c.post("/completion", R"({"prompt": "Once", "ignore_eos": true, "n_predict": 50})", key)
              .json()["tokens_predicted"] == 5);
    CHECK(c.post("/completion", R"({"prompt": "Once", "ignore_eos": true, "n_predict": 3})", key)
              .json()["tokens_predicted"] == 3);
    const json chat =
        c.post(
             "/v1/chat/completions",
             R"({"model": "my-model", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 50, "ignore_eos": true})",
             key)
            .json();
    CHECK(chat["usage"]["completion_tokens"] == 5);
    CHECK(chat["model"] == "my-model");  // echoed, as llama-server does
    // /completions without /v1 is the native endpoint.
    const json native = c.post("/completions", R"({"prompt": "Once", "n_predict": 2})", key).json();
    CHECK(native.contains("content"));
    CHECK(native.contains("tokens_predicted"));
    CHECK_FALSE(native.contains("choices"));
}

TEST_CASE("content given as a list of text parts is joined with new lines", "[integration][dropin]") {
    ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1", "--chat-template", "chatml"});
    Client c("127.0.0.1", s.port());
    const json r =
        c.post(
             "/apply-template",
             R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]}]})")
            .json();
    CHECK(r["prompt"].get<std::string>().find("first\nsecond") != std::string::npos);
}

TEST_CASE(
    "slot prompt similarity (-sps): a prompt goes to the slot it shares enough with, else to a fresh one",
    "[integration][dropin]") {
    const std::string base = words(0, 10);
    // 0.5: a prompt sharing 80% of its tokens with slot X's cache goes there; one sharing 30% does not.
    ServerProcess s({"-m", stories_model(), "-c", "1024", "-np", "2", "-t", "1", "-sps", "0.5"});
    Client c("127.0.0.1", s.port());
    const auto slot_of = [&](const std::string& prompt) {
        return c.post("/completion", json{{"prompt", prompt}, {"n_predict", 1}}.dump()).json();
    };
    const json first = slot_of(base);
    const json similar = slot_of(words(0, 8) + " " + words(20, 22));
    CHECK(similar["id_slot"] == first["id_slot"]);
    CHECK(similar["tokens_cached"].get<int>() > 0);
    const json different = slot_of(words(0, 3) + " " + words(30, 37));
    CHECK(different["id_slot"] != first["id_slot"]);
    // -sps 0: never by prompt: the least recently used slot.
    ServerProcess lru({"-m", stories_model(), "-c", "1024", "-np", "2", "-t", "1", "-sps", "0"});
    Client c2("127.0.0.1", lru.port());
    const json a = c2.post("/completion", json{{"prompt", base}, {"n_predict", 1}}.dump()).json();
    const json b = c2.post("/completion", json{{"prompt", base}, {"n_predict", 1}}.dump()).json();
    CHECK(a["id_slot"] != b["id_slot"]);
}

TEST_CASE("after a slot restore, the next request into that slot reuses the restored prefix",
          "[integration][dropin]") {
    ctxtest::TempDir dir;
    ServerProcess s(
        {"-m", stories_model(), "-c", "1024", "-np", "2", "-t", "1", "--slot-save-path", dir.file("slots")});
    Client c("127.0.0.1", s.port());
    const std::string p = "Once upon a time there was a little girl named Lily who loved to play";
    const auto run = [&](const std::string& prompt, int slot) {
        return c
            .post("/completion",
                  json{{"prompt", prompt}, {"n_predict", 4}, {"temperature", 0}, {"id_slot", slot}}.dump())
            .json();
    };
    const json first = run(p, 0);
    REQUIRE(c.post("/slots/0?action=save", R"({"filename": "p.bin"})").status == 200);
    run("The dog ran home quickly and happily today", 0);  // slot 0 now holds something else
    const json other = run(p, 1);                          // slot 1 holds the same prompt
    REQUIRE(c.post("/slots/0?action=restore", R"({"filename": "p.bin"})").status == 200);
    const json again = run(p, 0);
    CHECK(again["id_slot"] == 0);
    CHECK(again["timings"]["prompt_n"] == 1);  // only the last prompt token is evaluated
    CHECK(again["tokens_cached"] == first["tokens_evaluated"].get<int>() - 1);
    CHECK(again["content"] == first["content"]);
    CHECK(other["content"] == first["content"]);
}

TEST_CASE("embd-normalize option sets the embeddings' default normalization", "[integration][dropin]") {
    const auto norm = [](const json& e) {
        double s = 0;
        for (const auto& x : e) s += x.get<double>() * x.get<double>();
        return std::sqrt(s);
    };
    ServerProcess l2({"-m", stories_model(), "-c", "256", "-t", "1", "--embeddings", "--pooling", "mean"});
    ServerProcess raw({"-m", stories_model(), "-c", "256", "-t", "1", "--embeddings", "--pooling", "mean",
                       "--embd-normalize", "-1"});
    const json a =
        Client("127.0.0.1", l2.port()).post("/v1/embeddings", R"({"input": "hello there"})").json();
    const json b =
        Client("127.0.0.1", raw.port()).post("/v1/embeddings", R"({"input": "hello there"})").json();
    CHECK(norm(a["data"][0]["embedding"]) == Approx(1.0).epsilon(1e-4));
    CHECK(norm(b["data"][0]["embedding"]) != Approx(1.0).epsilon(1e-2));
    // The request's own value still wins.
    const json c = Client("127.0.0.1", raw.port())
                       .post("/v1/embeddings", R"({"input": "hello there", "embd_normalize": 2})")
                       .json();
    CHECK(norm(c["data"][0]["embedding"]) == Approx(1.0).epsilon(1e-4));
}

TEST_CASE("log-jsonl: every log line on the console and in the log file is one JSON object", "[integration][dropin]") {
    ctxtest::TempDir dir;
    const std::string log = dir.file("server.jsonl");
    ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1", "--log-jsonl", "--log-file", log, "-lv", "4"});
    Client c("127.0.0.1", s.port());
    CHECK(c.post("/completion", R"({"prompt": "Once", "n_predict": 2})").status == 200);
    CHECK(c.post("/completion", "{not json").status == 400);
    CHECK(s.stop() == 0);
    for (const std::string& text : {s.log(), read_text(log)}) {
        std::istringstream lines(text);
        std::string line;
        int n = 0;
        bool listening = false;
        std::set<std::string> levels;
        while (std::getline(lines, line)) {
            INFO(line);
            const json j = json::parse(line);  // throws (fails the test) on a line that is not JSON
            CHECK(j.at("type") == "log");
            CHECK(j.at("msg").is_string());
            CHECK(j.at("time").is_number_integer());
            CHECK(j.at("time").get<int64_t>() > 1'700'000'000'000'000LL);  // microseconds since the epoch
            levels.insert(j.at("level").get<std::string>());
            listening = listening || j.at("msg").get<std::string>().find("listening on http://") != std::string::npos;
            ++n;
        }
        CHECK(n > 5);
        CHECK(listening);
        CHECK(levels.count("info") == 1);
        CHECK(levels.count("debug") == 1);  // -lv 4
        for (const std::string& l : levels)
            CHECK(std::set<std::string>{"trace", "debug", "info", "warn", "error", "critical"}.count(l) == 1);
    }
}
