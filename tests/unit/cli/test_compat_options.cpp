// llama-server's option forms: optional values (bare -fa), refused options with their reason, CPU
// masks and ranges, --override-kv, -l/--logit-bias, the RoPE flags and the -batch twins.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "server/cli/args.h"
#include "server/cli/common_options.h"
#include "server/cli/compat_options.h"
#include "server/cli/cpu_options.h"

namespace {

void parse(cli::ArgParser& ap, std::vector<std::string> args) {
    std::vector<char*> argv = {nullptr, nullptr};
    for (auto& a : args) argv.push_back(a.data());
    ap.parse((int)argv.size(), argv.data());
}

struct Model {
    cli::ModelOptions mo;
    cli::ArgParser ap{"serve"};
    Model() { cli::add_model_options(ap, mo); }
};

}  // namespace

TEST_CASE("a bare -fa means on, before another option or at the end, a value still works", "[cli][compat]") {
    {
        Model m;
        parse(m.ap, {"-fa", "-c", "128"});
        CHECK(m.mo.flash_attn == "on");
        CHECK(m.mo.n_ctx == 128);
    }
    {
        Model m;
        parse(m.ap, {"-c", "128", "-fa"});
        CHECK(m.mo.flash_attn == "on");
    }
    {
        Model m;
        parse(m.ap, {"-fa", "off", "-c", "64"});
        CHECK(m.mo.flash_attn == "off");
        CHECK(m.mo.n_ctx == 64);
    }
    {
        Model m;
        parse(m.ap, {"--flash-attn=auto"});
        CHECK(m.mo.flash_attn == "auto");
    }
    Model m;
    CHECK_THROWS_WITH(parse(m.ap, {"-fa", "sometimes"}), Catch::Contains("expected on, off or auto"));
}

TEST_CASE("download options are refused with the reason, never as unknown", "[cli][compat]") {
    for (const std::string opt : {"-hf", "-hfr", "--hf-repo", "-hff", "--hf-file", "-hft", "--hf-token",
                                  "-mu", "--model-url", "-hfd", "--docker-repo"}) {
        INFO(opt);
        cli::ArgParser ap("serve");
        cli::add_download_options(ap);
        CHECK_THROWS_WITH(parse(ap, {opt, "org/model"}), Catch::Contains("cannot download") &&
                                                             Catch::Contains("pass -m FILE") &&
                                                             !Catch::Contains("unknown option"));
    }
    // From the environment too.
    cli::ArgParser ap("serve");
    cli::add_download_options(ap);
    parse(ap, {});
    CHECK_THROWS_WITH(ap.apply_env([](const std::string& n) -> const char* {
        return n == "LLAMA_ARG_HF_REPO" ? "org/model" : nullptr;
    }),
                      Catch::Contains("LLAMA_ARG_HF_REPO") && Catch::Contains("cannot download"));
}

TEST_CASE("unsupported features are refused with their reason", "[cli][compat]") {
    cli::ArgParser ap("serve");
    cli::add_unsupported_options(ap);
    CHECK_THROWS_WITH(parse(ap, {"--grp-attn-n", "4"}), Catch::Contains("self-extend is not supported"));
    CHECK_THROWS_WITH(parse(ap, {"-ts", "3,1"}), Catch::Contains("one GPU"));
    CHECK_THROWS_WITH(parse(ap, {"-sm", "row"}), Catch::Contains("one GPU"));
    CHECK_NOTHROW(parse(ap, {"-sm", "layer"}));
    CHECK_THROWS_WITH(parse(ap, {"-nocb"}), Catch::Contains("always batches continuously"));
}

TEST_CASE("usage is an alias of help", "[cli][compat]") {
    cli::ArgParser ap("serve");
    std::vector<std::string> args = {"--usage"};
    std::vector<char*> argv = {nullptr, nullptr, args[0].data()};
    CHECK_FALSE(ap.parse(3, argv.data()));
}

TEST_CASE("CPU masks and ranges", "[cli][compat][cpu]") {
    CHECK(cli::parse_cpu_mask("-C", "0x5") == std::vector<int>{0, 2});
    CHECK(cli::parse_cpu_mask("-C", "F0") == std::vector<int>{4, 5, 6, 7});
    CHECK(cli::parse_cpu_mask("-C", "100000000000000000") == std::vector<int>{68});  // longer than 64 bits
    CHECK_THROWS_WITH(cli::parse_cpu_mask("-C", "0xg"), Catch::Contains("hexadecimal"));
    CHECK(cli::parse_cpu_range("-Cr", "2-4") == std::vector<int>{2, 3, 4});
    CHECK_THROWS(cli::parse_cpu_range("-Cr", "4-2"));
    CHECK_THROWS(cli::parse_cpu_range("-Cr", "3"));
    CHECK(cli::cpu_list_string({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
}

TEST_CASE("CPU options resolve to the thread placement, the -batch twins must agree", "[cli][compat][cpu]") {
    {
        Model m;
        parse(m.ap, {"-C", "0x1", "--cpu-strict", "1", "--poll", "0"});
        m.mo.cpu.finish();
        CHECK(m.mo.cpu.threads.cpus == std::vector<int>{0});
        CHECK(m.mo.cpu.threads.strict);
        CHECK(m.mo.cpu.threads.poll == 0);
    }
    {
        Model m;
        parse(m.ap, {"-C", "0x1", "-Cb", "0x1", "--prio-batch", "0", "--poll-batch", "50"});
        CHECK_NOTHROW(m.mo.cpu.finish());
    }
    {
        Model m;
        parse(m.ap, {"-C", "0x1", "-Cb", "0x3"});
        CHECK_THROWS_WITH(m.mo.cpu.finish(), Catch::Contains("one thread pool"));
    }
    {
        Model m;
        parse(m.ap, {"--poll-batch", "10"});
        CHECK_THROWS_WITH(m.mo.cpu.finish(), Catch::Contains("--poll-batch differs from --poll"));
    }
    {
        Model m;
        parse(m.ap, {"--prio", "7"});
        CHECK_THROWS_WITH(m.mo.cpu.finish(), Catch::Contains("--prio must be in [-1, 3]"));
    }
    {
        Model m;
        parse(m.ap, {"-C", "0x8000000000000000000000"});  // CPU 87: not on this machine
        CHECK_THROWS_WITH(m.mo.cpu.finish(), Catch::Contains("not available to this process"));
    }
    {
        Model m;
        parse(m.ap, {"--numa", "numactl"});
        m.mo.cpu.finish();
        CHECK_FALSE(m.mo.cpu.threads.cpus.empty());  // the CPUs the process may use
    }
    Model m;
    CHECK_THROWS_WITH(parse(m.ap, {"--numa", "everywhere"}),
                      Catch::Contains("distribute, isolate or numactl"));
}

TEST_CASE("override-kv parses KEY=TYPE:VALUE lists", "[cli][compat]") {
    std::vector<std::pair<std::string, ggml::gguf::Value>> out;
    cli::parse_kv_overrides("tokenizer.ggml.add_bos_token=bool:false,a.b=int:-3,c=float:0.5,d=str:x:y", out);
    REQUIRE(out.size() == 4);
    CHECK(out[0].first == "tokenizer.ggml.add_bos_token");
    CHECK(out[0].second.as_bool() == false);
    CHECK(out[1].second.as_int() == -3);
    CHECK(out[2].second.as_float() == 0.5);
    CHECK(out[3].second.as_string() == "x:y");
    CHECK_THROWS_WITH(cli::parse_kv_overrides("a=int:x", out), Catch::Contains("not an integer"));
    CHECK_THROWS_WITH(cli::parse_kv_overrides("a=bool:yes", out), Catch::Contains("true or false"));
    CHECK_THROWS_WITH(cli::parse_kv_overrides("a=list:1", out),
                      Catch::Contains("not int, float, bool or str"));
    CHECK_THROWS_WITH(cli::parse_kv_overrides("novalue", out), Catch::Contains("KEY=TYPE:VALUE"));
}

TEST_CASE("logit bias option (-l) TOKEN_ID(+/-)BIAS", "[cli][compat]") {
    auto b = cli::parse_logit_bias_arg("15043+1");
    CHECK(b.token == 15043);
    CHECK(b.bias == 1.0f);
    b = cli::parse_logit_bias_arg("7-2.5");
    CHECK(b.token == 7);
    CHECK(b.bias == -2.5f);
    b = cli::parse_logit_bias_arg("2-inf");
    CHECK(std::isinf(b.bias));
    CHECK(b.bias < 0);
    CHECK_THROWS_WITH(cli::parse_logit_bias_arg("hello+1"), Catch::Contains("TOKEN_ID(+/-)BIAS"));
    CHECK_THROWS(cli::parse_logit_bias_arg("12"));

    engine::SamplingParams sp;
    cli::ArgParser ap("serve");
    cli::add_sampling_options(ap, sp);
    parse(ap, {"-l", "3+1", "--logit-bias", "4-1", "--dry-sequence-breaker", "\\n", "--dry-sequence-breaker",
               "##", "--dynatemp-range", "0.5", "--dynatemp-exp", "2"});
    REQUIRE(sp.logit_bias.size() == 2);
    CHECK(sp.logit_bias[1].token == 4);
    CHECK(sp.dry_sequence_breakers == std::vector<std::string>{"\n", "##"});  // the defaults are replaced
    CHECK(sp.dynatemp_range == 0.5f);
    CHECK(sp.dynatemp_exponent == 2.0f);
    engine::SamplingParams none;
    cli::ArgParser ap2("serve");
    cli::add_sampling_options(ap2, none);
    parse(ap2, {"--dry-sequence-breaker", "none"});
    CHECK(none.dry_sequence_breakers.empty());
}

TEST_CASE("RoPE, mmap, mlock and KV offload flags reach the model and context parameters", "[cli][compat]") {
    Model m;
    parse(m.ap, {"-m",
                 "x.gguf",
                 "--rope-scaling",
                 "yarn",
                 "--rope-scale",
                 "4",
                 "--rope-freq-base",
                 "20000",
                 "--yarn-orig-ctx",
                 "512",
                 "--yarn-ext-factor",
                 "0.5",
                 "--yarn-attn-factor",
                 "1.5",
                 "--yarn-beta-slow",
                 "2",
                 "--yarn-beta-fast",
                 "16",
                 "--no-mmap",
                 "--mlock",
                 "--check-tensors",
                 "-nkvo",
                 "--override-kv",
                 "general.name=str:renamed"});
    cli::finish_model_options(m.ap, m.mo);
    const engine::ModelParams p = m.mo.model_params();
    CHECK(p.rope.scaling_set);
    CHECK(p.rope.scaling == engine::RopeScaling::Yarn);
    CHECK(p.rope.freq_scale == 0.25f);
    CHECK(p.rope.freq_base == 20000.0f);
    CHECK(p.rope.yarn_orig_ctx == 512);
    CHECK(p.rope.yarn_ext_factor == 0.5f);
    CHECK(p.rope.yarn_attn_factor == 1.5f);
    CHECK(p.rope.yarn_beta_slow == 2.0f);
    CHECK(p.rope.yarn_beta_fast == 16.0f);
    CHECK_FALSE(p.use_mmap);
    CHECK(p.use_mlock);
    CHECK(p.check_tensors);
    REQUIRE(p.kv_overrides.size() == 1);
    CHECK_FALSE(m.mo.context_params().offload_kqv);

    Model both;
    parse(both.ap, {"-m", "x.gguf", "--rope-scale", "2", "--rope-freq-scale", "0.5"});
    CHECK_THROWS_WITH(cli::finish_model_options(both.ap, both.mo), Catch::Contains("only one of"));
    Model lm;
    parse(lm.ap, {"-m", "x.gguf", "-lm", "mlock"});
    cli::finish_model_options(lm.ap, lm.mo);
    CHECK_FALSE(lm.mo.use_mmap);
    CHECK(lm.mo.use_mlock);
}
