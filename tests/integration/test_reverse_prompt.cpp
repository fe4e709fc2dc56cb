// -r/--reverse-prompt in server mode, as llama-server: the stop strings of every request that gives
// none; a request's own stop strings replace them.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_process.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

}  // namespace

TEST_CASE("reverse prompt (-r): requests that give no stop strings stop at it",
          "[integration][reverse-prompt]") {
    const json body{{"prompt", "Once upon a time"}, {"n_predict", 40}, {"temperature", 0}};
    std::string full, word;
    {
        ServerProcess s(small_stories_args({}));
        Client c("127.0.0.1", s.port());
        full = c.post("/completion", body.dump()).json()["content"];
        // The fourth word of the greedy continuation is the reverse prompt.
        size_t pos = 0;
        for (int i = 0; i < 4; ++i) pos = full.find(' ', pos + 1);
        REQUIRE(pos != std::string::npos);
        const size_t end = full.find(' ', pos + 1);
        REQUIRE(end != std::string::npos);
        word = full.substr(pos, end - pos);
    }
    INFO("continuation '" << full << "', reverse prompt '" << word << "'");
    ServerProcess s(small_stories_args({"-r", word, "--reverse-prompt", "never-generated-text"}));
    Client c("127.0.0.1", s.port());
    const json stopped = c.post("/completion", body.dump()).json();
    CHECK(stopped["content"] == full.substr(0, full.find(word)));
    CHECK(stopped["stop_type"] == "word");
    CHECK(stopped["stopping_word"] == word);
    // A request's own stop strings replace them.
    json own = body;
    own["stop"] = json::array({"zzzz"});
    CHECK(c.post("/completion", own.dump()).json()["content"] == full);
    // OpenAI's completions and chat take them too; /props shows them as the default.
    const json oai = c.post("/v1/completions", body.dump()).json();
    CHECK(oai["choices"][0]["text"] == full.substr(0, full.find(word)));
    CHECK(oai["choices"][0]["finish_reason"] == "stop");
    CHECK(c.get("/props").json()["default_generation_settings"]["params"]["stop"] ==
          json::array({word, "never-generated-text"}));
    CHECK(run_ggserve("serve --port 0 -m " + stories_model() + " -r ''").code == 2);
}
