// Helpers for the HTTP tests: an in-process server on 127.0.0.1 with an ephemeral port, and bounded
// waits on futures (a broken test fails instead of hanging; nothing is synchronized by sleeping).
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <future>

#include "server/http/client.h"
#include "server/http/server.h"

namespace http_test {

using namespace server::http;
using namespace std::chrono_literals;

inline ServerConfig test_config() {
    ServerConfig c;
    c.host = "127.0.0.1";
    c.port = 0;
    c.n_threads = 2;
    return c;
}

inline ClientOptions client_options() {
    ClientOptions o;
    o.timeout = 10s;
    return o;
}

inline Client make_client(const Server& server) {
    return Client("127.0.0.1", server.port(), client_options());
}

template <class T>
T await(std::future<T>& f, std::chrono::seconds limit = 10s) {
    REQUIRE(f.wait_for(limit) == std::future_status::ready);
    return f.get();
}

}  // namespace http_test
