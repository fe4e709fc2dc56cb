// While the model loads, the HTTP port is already open and every endpoint that needs the model answers
// 503 "Loading model" (what load balancers and clients poll /health for). The load is held open
// deterministically by giving the server a named pipe as its model: open() blocks until a writer comes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "server/http/client.h"
#include "server_process.h"

namespace {

struct Fifo {
    std::string path;
    Fifo() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ggserve-load-XXXXXX").string();
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        path = tmpl + "/model.gguf";
        REQUIRE(mkfifo(path.c_str(), 0600) == 0);
    }
    ~Fifo() { std::filesystem::remove_all(std::filesystem::path(path).parent_path()); }
};

void check_loading(const server::http::ClientResponse& r) {
    CHECK(r.status == 503);
    const auto j = nlohmann::json::parse(r.body);
    CHECK(j["error"]["message"] == "Loading model");
    CHECK(j["error"]["type"] == "unavailable_error");
    CHECK(j["error"]["code"] == 503);
}

}  // namespace

TEST_CASE("while the model loads, /health and the model endpoints answer 503 Loading model",
          "[integration][api][loading]") {
    Fifo fifo;
    ServerProcess s({"-m", fifo.path, "-t", "1"}, std::chrono::seconds(60),
                    ServerProcess::WaitFor::Listening);
    server::http::Client c("127.0.0.1", s.port());
    check_loading(c.get("/health"));
    check_loading(c.get("/v1/models"));
    check_loading(c.post("/completion", R"({"prompt": "Once", "n_predict": 4})"));
    check_loading(c.post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}]})"));
    CHECK(s.alive());

    // Let the load go on: the pipe is no model file, so the server stops with a clear error. A blocking
    // open returns once the server has the pipe open for reading (it may not have got that far yet).
    const int fd = open(fifo.path.c_str(), O_WRONLY);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK(s.wait_exit() != 0);
    CHECK(s.log().find(fifo.path) != std::string::npos);
}
