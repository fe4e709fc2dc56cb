// ArgParser's sources: command line > environment (LLAMA_ARG_*) > config file > defaults.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/cli/args.h"
#include "server/cli/env_names.h"

namespace {

struct Opts {
    int ctx = 4096, parallel = 1, port = 8080;
    std::string alias;
    bool metrics = false, no_slots = false, mmap = true;
    cli::ArgParser ap{"serve"};
    Opts() {
        ap.option("-c,--ctx-size", "N", "context", &ctx);
        ap.option("-np,--parallel", "N", "slots", &parallel);
        ap.option("--port", "PORT", "port", &port);
        ap.option("-a,--alias", "NAME", "alias", &alias);
        ap.flag("--metrics", "metrics", &metrics);
        ap.flag("--no-slots", "no slots", &no_slots);
        ap.flag("--slots", "slots", &no_slots, false);
        ap.flag("--no-mmap", "no mmap", &mmap, false);
    }
    void parse(std::vector<std::string> args) {
        std::vector<char*> argv = {nullptr, nullptr};
        for (auto& a : args) argv.push_back(a.data());
        ap.parse((int)argv.size(), argv.data());
    }
};

cli::ArgParser::EnvLookup env(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const std::string& n) -> const char* {
        auto it = vars.find(n);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

}  // namespace

TEST_CASE("env names follow llama-server", "[cli][env]") {
    CHECK(cli::env_name("ctx-size") == "LLAMA_ARG_CTX_SIZE");
    CHECK(cli::env_name("parallel") == "LLAMA_ARG_N_PARALLEL");
    CHECK(cli::env_name("metrics") == "LLAMA_ARG_ENDPOINT_METRICS");
    CHECK(cli::env_name("slots") == "LLAMA_ARG_ENDPOINT_SLOTS");
    CHECK(cli::env_name("props") == "LLAMA_ARG_ENDPOINT_PROPS");
    CHECK(cli::env_name("batch-size") == "LLAMA_ARG_BATCH");
    CHECK(cli::env_name("ubatch-size") == "LLAMA_ARG_UBATCH");
    CHECK(cli::env_name("n-gpu-layers") == "LLAMA_ARG_N_GPU_LAYERS");
    CHECK(cli::env_name("api-key") == "LLAMA_API_KEY");
    CHECK(cli::env_name("n-predict") == "LLAMA_ARG_N_PREDICT");
    CHECK(cli::env_name("no-mmap") == "LLAMA_ARG_NO_MMAP");
    CHECK(cli::env_name("threads-http") == "LLAMA_ARG_THREADS_HTTP");
}

TEST_CASE("an option answers to every name llama-server has given its variable, the 2026 one first",
          "[cli][env]") {
    using V = std::vector<std::string>;
    CHECK(cli::option_env_names({"model-draft", "spec-draft-model"}) ==
          V{"LLAMA_ARG_MODEL_DRAFT", "LLAMA_ARG_SPEC_DRAFT_MODEL"});
    CHECK(cli::option_env_names({"gpu-layers-draft", "n-gpu-layers-draft", "spec-draft-ngl"}) ==
          V{"LLAMA_ARG_N_GPU_LAYERS_DRAFT", "LLAMA_ARG_GPU_LAYERS_DRAFT"});
    CHECK(cli::option_env_names({"cache-type-k-draft", "spec-draft-type-k"}) ==
          V{"LLAMA_ARG_CACHE_TYPE_K_DRAFT", "LLAMA_ARG_SPEC_DRAFT_CACHE_TYPE_K"});
    CHECK(cli::option_env_names({"verbosity", "log-verbosity"}) == V{"LLAMA_ARG_LOG_VERBOSITY", "LLAMA_LOG_VERBOSITY"});
    CHECK(cli::option_env_names({"offline"}) == V{"LLAMA_ARG_OFFLINE", "LLAMA_OFFLINE"});
    // A later spelling without a table entry claims no variable of its own.
    CHECK(cli::option_env_names({"ctx-size", "context-size"}) == V{"LLAMA_ARG_CTX_SIZE"});

    int draft_max = 16;
    std::string draft;
    cli::ArgParser ap("serve");
    ap.option("-md,--model-draft,--spec-draft-model", "FILE", "draft", &draft);
    ap.option("--draft-max,--draft,--spec-draft-n-max", "N", "max", &draft_max);
    char* argv[] = {nullptr, nullptr};
    ap.parse(2, argv);
    ap.apply_env(env({{"LLAMA_ARG_SPEC_DRAFT_MODEL", "d.gguf"}, {"LLAMA_ARG_SPEC_DRAFT_N_MAX", "8"}}));
    CHECK(draft == "d.gguf");
    CHECK(draft_max == 8);
    CHECK(ap.usage().find("(env: LLAMA_ARG_MODEL_DRAFT, LLAMA_ARG_SPEC_DRAFT_MODEL)") != std::string::npos);
}

TEST_CASE("command line > environment > config file > defaults", "[cli][env]") {
    Opts o;
    o.parse({"-c", "512"});
    o.ap.apply_env(env({{"LLAMA_ARG_CTX_SIZE", "1024"}, {"LLAMA_ARG_N_PARALLEL", "3"}}));
    o.ap.apply_config(nlohmann::json{{"ctx-size", 2048}, {"parallel", 4}, {"alias", "from-file"}});
    CHECK(o.ctx == 512);           // command line
    CHECK(o.parallel == 3);        // environment over the file
    CHECK(o.alias == "from-file");  // file over the default
    CHECK(o.port == 8080);         // default
    CHECK(o.ap.given("parallel"));
    CHECK(o.ap.given("alias"));
    CHECK_FALSE(o.ap.given("port"));
}

TEST_CASE("boolean environment values", "[cli][env]") {
    for (const char* v : {"1", "true", "enabled", "on", "TRUE", "On"}) {
        Opts o;
        o.parse({});
        o.ap.apply_env(env({{"LLAMA_ARG_ENDPOINT_METRICS", v}, {"LLAMA_ARG_NO_MMAP", v}}));
        INFO(v);
        CHECK(o.metrics);
        CHECK_FALSE(o.mmap);
    }
    for (const char* v : {"0", "false", "disabled", "off"}) {
        Opts o;
        o.metrics = true;
        o.parse({});
        o.ap.apply_env(env({{"LLAMA_ARG_ENDPOINT_METRICS", v}, {"LLAMA_ARG_ENDPOINT_SLOTS", v}}));
        INFO(v);
        CHECK_FALSE(o.metrics);
        CHECK(o.no_slots);  // LLAMA_ARG_ENDPOINT_SLOTS=0 disables the endpoint, as --no-slots does
    }
}

TEST_CASE("a flag on the command line wins over its opposite in the environment", "[cli][env]") {
    Opts o;
    o.parse({"--no-slots"});
    o.ap.apply_env(env({{"LLAMA_ARG_ENDPOINT_SLOTS", "1"}}));
    CHECK(o.no_slots);
    // and over the config file too
    o.ap.apply_config(nlohmann::json{{"slots", true}});
    CHECK(o.no_slots);
}

TEST_CASE("empty environment values count as unset", "[cli][env]") {
    Opts o;
    o.parse({});
    o.ap.apply_env(env({{"LLAMA_ARG_ALIAS", ""}, {"LLAMA_ARG_ENDPOINT_METRICS", ""}}));
    CHECK(o.alias.empty());
    CHECK_FALSE(o.ap.given("alias"));
    CHECK_FALSE(o.metrics);
}

TEST_CASE("bad environment values are an ArgError naming the variable", "[cli][env]") {
    const std::map<std::string, std::string> bad[] = {
        {{"LLAMA_ARG_CTX_SIZE", "lots"}},
        {{"LLAMA_ARG_ENDPOINT_METRICS", "yes please"}},
    };
    for (const auto& vars : bad) {
        Opts o;
        o.parse({});
        const std::string name = vars.begin()->first;
        INFO(name);
        try {
            o.ap.apply_env(env(vars));
            FAIL("no error");
        } catch (const cli::ArgError& e) {
            CHECK(std::string(e.what()).find(name) != std::string::npos);
            CHECK(std::string(e.what()).find(vars.begin()->second) != std::string::npos);
        }
    }
}

TEST_CASE("help shows each option's environment variable", "[cli][env]") {
    Opts o;
    const std::string u = o.ap.usage();
    CHECK(u.find("(env: LLAMA_ARG_CTX_SIZE)") != std::string::npos);
    CHECK(u.find("(env: LLAMA_ARG_N_PARALLEL)") != std::string::npos);
    CHECK(u.find("(env: LLAMA_ARG_ENDPOINT_METRICS)") != std::string::npos);
}

TEST_CASE("the command line's words per option, and preset keys as command-line words", "[cli][router]") {
    Opts o;
    o.ap.refuse("--mmproj", true, "text models only");
    o.parse({"-c", "512", "--metrics", "--port=9", "--no-mmap"});
    const auto& given = o.ap.command_line();
    REQUIRE(given.size() == 4);
    CHECK(given[0].name == "ctx-size");
    CHECK(given[0].words == std::vector<std::string>{"-c", "512"});
    CHECK(given[1].words == std::vector<std::string>{"--metrics"});
    CHECK(given[2].name == "port");
    CHECK(given[2].words == std::vector<std::string>{"--port=9"});
    CHECK(given[3].name == "no-mmap");
    // Keys: long or short names without dashes, or the environment variable.
    CHECK(o.ap.canonical_name("c") == "ctx-size");
    CHECK(o.ap.canonical_name("LLAMA_ARG_N_PARALLEL") == "parallel");
    CHECK(o.ap.canonical_name("nope").empty());
    CHECK(o.ap.words_for("c", "64") == std::vector<std::string>{"--ctx-size", "64"});
    CHECK(o.ap.words_for("LLAMA_ARG_CTX_SIZE", "64") == std::vector<std::string>{"--ctx-size", "64"});
    CHECK(o.ap.words_for("metrics", "true") == std::vector<std::string>{"--metrics"});
    CHECK(o.ap.words_for("metrics", "off").empty());  // no opposite flag: nothing
    CHECK(o.ap.words_for("slots", "false") == std::vector<std::string>{"--no-slots"});
    CHECK(o.ap.words_for("no-mmap", "1") == std::vector<std::string>{"--no-mmap"});
    CHECK_THROWS_WITH(o.ap.words_for("metrics", "maybe"), Catch::Contains("true or false"));
    CHECK_THROWS_WITH(o.ap.words_for("ctx-sise", "1"), Catch::Contains("unknown option 'ctx-sise'"));
    CHECK_THROWS_WITH(o.ap.words_for("mmproj", "x.gguf"), Catch::Contains("text models only"));
    CHECK(o.ap.env_of("ctx-size") == "LLAMA_ARG_CTX_SIZE");
}
