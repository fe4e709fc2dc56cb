#include "server/webui/cors_proxy.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <memory>
#include <thread>

#include "server/http/client.h"
#include "server/http/errors.h"
#include "server/http/server.h"
#include "server/http/stream_writer.h"

namespace webui {

using server::http::Headers;
using server::http::HttpError;
using server::http::iequals;

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = (char)std::tolower((unsigned char)c);
    return out;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

bool hop_by_hop(std::string_view name) {
    for (const char* h : {"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "TE", "Trailer",
                          "Upgrade", "Content-Length", "Host", "Expect"})
        if (iequals(name, h)) return true;
    return false;
}

std::uint16_t parse_port(std::string_view text) {
    if (text.empty() || text.size() > 5) throw HttpError(400, "invalid port in the target URL: '" + std::string(text) + "'");
    unsigned v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') throw HttpError(400, "invalid port in the target URL: '" + std::string(text) + "'");
        v = v * 10 + unsigned(c - '0');
    }
    if (v == 0 || v > 65535) throw HttpError(400, "the target URL's port must be 1 to 65535, not " + std::string(text));
    return (std::uint16_t)v;
}

bool host_name_char(char c) {
    return std::isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_';
}

// A bracketed IPv6 host without its brackets, for the resolver.
std::string unbracket(const std::string& host) {
    return host.size() >= 2 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
}

}  // namespace

ProxyTarget parse_proxy_target(std::string_view url) {
    if (url.empty()) throw HttpError(400, "the target URL is missing: give it as /cors-proxy?url=...");
    // Nothing that could end the request line or split it: the target goes into an HTTP request as is.
    for (unsigned char c : url)
        if (c <= 0x20 || c == 0x7f) throw HttpError(400, "the target URL holds a space or a control character");
    const auto sep = url.find("://");
    if (sep == std::string_view::npos || sep == 0) throw HttpError(400, "invalid target URL: '" + std::string(url) + "'");
    ProxyTarget t;
    t.scheme = lower(url.substr(0, sep));
    if (t.scheme != "http" && t.scheme != "https")
        throw HttpError(400, "unsupported URL scheme in the target URL: " + t.scheme + " (http or https)");
    std::string_view rest = url.substr(sep + 3);
    const auto end = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, end);
    std::string_view tail = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
    if (authority.find('@') != std::string_view::npos)
        throw HttpError(400, "a user name or password in the target URL is not supported");
    std::string_view port_text;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) throw HttpError(400, "invalid IPv6 host in the target URL");
        const std::string_view inside = authority.substr(1, close - 1);
        for (char c : inside)
            if (!std::isxdigit((unsigned char)c) && c != ':' && c != '.')
                throw HttpError(400, "invalid IPv6 host in the target URL");
        if (inside.empty()) throw HttpError(400, "invalid IPv6 host in the target URL");
        t.host = std::string(authority.substr(0, close + 1));
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') throw HttpError(400, "invalid host in the target URL");
            port_text = after.substr(1);
            if (port_text.empty()) throw HttpError(400, "invalid port in the target URL: ''");
        }
    } else {
        const auto colon = authority.find(':');
        t.host = lower(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            port_text = authority.substr(colon + 1);
            if (port_text.empty()) throw HttpError(400, "invalid port in the target URL: ''");
        }
        for (char c : t.host)
            if (!host_name_char(c)) throw HttpError(400, "invalid host in the target URL: '" + t.host + "'");
    }
    if (t.host.empty()) throw HttpError(400, "the target URL has no host");
    t.port = port_text.empty() ? (t.scheme == "https" ? 443 : 80) : parse_port(port_text);
    const auto hash = tail.find('#');
    if (hash != std::string_view::npos) tail = tail.substr(0, hash);  // a fragment stays in the browser
    t.target = tail.empty() || tail.front() != '/' ? "/" + std::string(tail) : std::string(tail);
    return t;
}

Headers proxy_request_headers(const Headers& in) {
    Headers out;
    for (const auto& [name, value] : in) {
        if (!starts_with_ci(name, kProxyHeaderPrefix)) continue;
        const std::string inner = name.substr(kProxyHeaderPrefix.size());
        if (inner.empty() || hop_by_hop(inner)) continue;
        out.add(inner, value);
    }
    for (const char* own : {"Content-Type", "Accept"})
        if (!out.contains(own))
            if (auto v = in.get(own)) out.set(own, *v);
    return out;
}

Headers proxy_response_headers(const Headers& in) {
    Headers out;
    for (const auto& [name, value] : in) {
        if (hop_by_hop(name) || iequals(name, "Server") || iequals(name, "Vary") ||
            starts_with_ci(name, "Access-Control-"))
            continue;
        out.add(name, value);
    }
    return out;
}

CorsProxy::CorsProxy(CorsProxyOptions options) : options_(options) {}

CorsProxy::~CorsProxy() = default;  // relays_ waits for the relays in flight

void CorsProxy::register_routes(server::http::Server& http) {
    if (!options_.enabled) {
        const auto disabled = [](server::http::Request&) -> server::http::Reply {
            return server::http::error_response(403, "this feature is disabled", "feature_disabled");
        };
        http.get("/cors-proxy", disabled);
        http.post("/cors-proxy", disabled);
        return;
    }
    spdlog::warn("-----------------");
    spdlog::warn("CORS proxy is enabled, do not expose server to untrusted environments");
    spdlog::warn("This feature is EXPERIMENTAL and may be removed or changed in future versions");
    spdlog::warn("-----------------");
    const auto handler = [this](server::http::Request& req) -> server::http::Reply {
        try {
            return handle(req);
        } catch (const HttpError& e) {
            return server::http::error_response(e);
        }
    };
    http.get("/cors-proxy", handler);
    http.post("/cors-proxy", handler);
}

server::http::Reply CorsProxy::handle(server::http::Request& req) {
    const auto url = req.query_param("url");
    if (!url) throw HttpError(400, "the target URL is missing: give it as /cors-proxy?url=...");
    ProxyTarget to = parse_proxy_target(*url);
    // The server can speak TLS (--ssl-key-file); the HTTP client behind the proxy cannot.
    if (to.scheme == "https")
        throw HttpError(502, "the proxy cannot reach https targets: this build's HTTP client speaks plain http only",
                        "server_error");
    spdlog::info("cors-proxy: {} {}://{}:{}{}", req.method, to.scheme, to.host, to.port, to.target);
    Headers headers = proxy_request_headers(req.headers);
    const bool default_port = to.port == (to.scheme == "https" ? 443 : 80);
    headers.set("Host", default_port ? to.host : to.host + ":" + std::to_string(to.port));
    auto out = req.defer();
    relays_.run([this, to = std::move(to), method = req.method, body = std::move(req.body),
                  headers = std::move(headers), out]() mutable {
        relay(std::move(to), std::move(method), std::move(body), std::move(headers), out);
    });
    return out;
}

void CorsProxy::relay(ProxyTarget to, std::string method, std::string body, Headers headers,
                      const std::shared_ptr<server::http::DeferredResponse>& out) const {
    server::http::ClientOptions co;
    co.timeout = options_.timeout;
    auto client = std::make_shared<server::http::Client>(unbracket(to.host), to.port, co);
    out->on_cancel([client] { client->abort(); });  // the page went away: so does the upstream request
    const std::string where = to.scheme + "://" + to.host + ":" + std::to_string(to.port);
    std::shared_ptr<server::http::StreamWriter> writer;
    server::http::Response whole;
    std::size_t total = 0;
    bool too_big = false;
    try {
        const auto result = client->relay(
            method, to.target, body, headers,
            [&](int status, const Headers& h) {
                const std::string type = h.value_or("Content-Type");
                if (type.rfind("text/event-stream", 0) == 0) {
                    server::http::StreamOptions so;
                    so.status = status;
                    so.content_type = type;
                    so.headers = proxy_response_headers(h);
                    so.headers.remove("Content-Type");
                    so.headers.remove("Cache-Control");
                    writer = out->stream(so);
                    return writer != nullptr;
                }
                whole.status = status;
                whole.headers = proxy_response_headers(h);
                return !out->cancelled();
            },
            [&](std::string_view bytes) {
                total += bytes.size();
                if (total > options_.max_body_bytes) {
                    too_big = true;
                    return false;
                }
                if (writer) return writer->write(std::string(bytes));
                whole.body.append(bytes);
                return true;
            });
        const std::string limit = "the answer of " + where + " is larger than the proxy's limit of " +
                                  std::to_string(options_.max_body_bytes) + " bytes";
        if (writer) {
            if (too_big) {
                spdlog::warn("cors-proxy: {}: stream cut", limit);
                return;  // dropping the writer unclosed shows the page a truncated stream
            }
            if (!result.complete && !result.aborted)
                spdlog::warn("cors-proxy: {} broke off its stream: {}", where, result.error);
            writer->close();
            return;
        }
        if (too_big) {
            out->respond(server::http::error_response(502, limit, "server_error"));
        } else if (result.complete) {
            out->respond(std::move(whole));
        } else if (!result.aborted) {
            const bool timeout = result.error.find("timed out") != std::string::npos;
            out->respond(server::http::error_response(timeout ? 504 : 502,
                                                      where + " broke off its answer (" + result.error + ")",
                                                      "server_error"));
        }
    } catch (const server::http::ClientError& e) {
        if (writer) {
            writer->close();
            return;
        }
        const std::string what = e.what();
        const bool timeout = what.find("timed out") != std::string::npos;
        spdlog::warn("cors-proxy: {}: {}", where, what);
        out->respond(server::http::error_response(
            timeout ? 504 : 502,
            (timeout ? where + " did not answer in time (" : "cannot reach " + where + " (") + what + ")",
            "server_error"));
    }
}

}  // namespace webui
