#include "server/router/router_proxy.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "server/http/client.h"
#include "server/http/errors.h"

namespace router {

using server::http::Headers;
using server::http::iequals;

namespace {

bool hop_by_hop(std::string_view name) {
    for (const char* h : {"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "TE", "Trailer",
                          "Upgrade", "Content-Length", "Host", "Expect"})
        if (iequals(name, h)) return true;
    return false;
}

std::string error_event(const std::string& message) {
    return "data: " + server::http::error_body(503, message, "unavailable_error").dump() + "\n\n";
}

}  // namespace

Headers forward_headers(const Headers& in) {
    Headers out;
    for (const auto& [name, value] : in)
        if (!hop_by_hop(name)) out.add(name, value);
    return out;
}

Headers backward_headers(const Headers& in) {
    Headers out;
    for (const auto& [name, value] : in) {
        if (hop_by_hop(name) || iequals(name, "Server") || iequals(name, "Content-Type") ||
            iequals(name, "Cache-Control") || iequals(name, "X-Accel-Buffering"))
            continue;
        if (name.size() >= 15 && iequals(std::string_view(name).substr(0, 15), "Access-Control-")) continue;
        if (iequals(name, "Vary")) continue;  // the router's CORS sets its own
        out.add(name, value);
    }
    return out;
}

std::string encode_path(const std::string& path) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~' || c == ':' || c == '@' ||
            c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' || c == ')' || c == '*' || c == '+' ||
            c == ',' || c == ';' || c == '=') {
            out += (char)c;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

void relay_to_child(const UpstreamRequest& req, int port, std::chrono::milliseconds timeout,
                    const std::shared_ptr<server::http::DeferredResponse>& out, const std::string& model,
                    const std::function<void()>& upstream_done) {
    auto done = [&] {
        if (upstream_done) upstream_done();
    };
    server::http::ClientOptions co;
    co.timeout = timeout;
    auto client = std::make_shared<server::http::Client>("127.0.0.1", (std::uint16_t)port, co);
    // The client went away: closing the child's connection cancels its generation.
    out->on_cancel([client] { client->abort(); });
    std::shared_ptr<server::http::StreamWriter> writer;
    server::http::Response whole;
    const std::string broke_off = "the server of model '" + model + "' broke off its answer";
    try {
        const auto result = client->relay(
            req.method, req.target, req.body, req.headers,
            [&](int status, const Headers& headers) {
                const std::string type = headers.value_or("Content-Type");
                if (type.rfind("text/event-stream", 0) == 0) {
                    server::http::StreamOptions so;
                    so.status = status;
                    so.content_type = type;
                    so.headers = backward_headers(headers);
                    writer = out->stream(so);
                    return writer != nullptr;
                }
                whole.status = status;
                whole.headers = backward_headers(headers);
                if (!type.empty()) whole.headers.set("Content-Type", type);
                return !out->cancelled();
            },
            [&](std::string_view bytes) {
                if (writer) return writer->write(std::string(bytes));
                whole.body.append(bytes);
                return true;
            });
        done();
        if (writer) {
            if (!result.complete && !result.aborted) {
                spdlog::warn("router: {} mid-stream: {}", broke_off, result.error);
                writer->write(error_event(broke_off + " (" + result.error + ")"));
            }
            writer->close();
            return;
        }
        if (result.complete) {
            out->respond(std::move(whole));
        } else if (!result.aborted) {
            spdlog::warn("router: {}: {}", broke_off, result.error);
            out->respond(server::http::error_response(503, broke_off + " (" + result.error + ")", "unavailable_error"));
        }
    } catch (const server::http::ClientError& e) {
        done();
        if (writer) {
            writer->close();
            return;
        }
        spdlog::warn("router: model '{}' (port {}): {}", model, port, e.what());
        out->respond(server::http::error_response(
            503, "the server of model '" + model + "' cannot be reached (" + e.what() + ")", "unavailable_error"));
    }
}

}  // namespace router
