// Forwarding one request to a model's server and its answer back: a whole response as one, an event
// stream chunk by chunk as it arrives. A client that goes away closes the connection to the child,
// which cancels the child's work as any disconnect does.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "server/http/headers.h"
#include "server/http/stream_writer.h"

namespace router {

struct UpstreamRequest {
    std::string method;
    std::string target;  // path and query, as the child serves them
    std::string body;
    server::http::Headers headers;  // the client's, without hop-by-hop fields
};

// The client's headers worth forwarding (not Host, Connection, framing fields, ...).
server::http::Headers forward_headers(const server::http::Headers& in);
// The child's response headers worth passing back (not framing, Server or CORS fields: the router's
// connection sets its own).
server::http::Headers backward_headers(const server::http::Headers& in);
// "/a b" -> "/a%20b": a decoded path made a request target again.
std::string encode_path(const std::string& path);

// Sends `req` to 127.0.0.1:`port` and answers `out` with the child's answer. `model` names the model in
// errors: a child that cannot be reached or breaks off gets a 503 (or, mid-stream, an error event).
// `upstream_done` runs once the child's part is over, before the client gets the end of the answer: a
// client that sends its next request at once then finds the model no longer busy with this one.
void relay_to_child(const UpstreamRequest& req, int port, std::chrono::milliseconds timeout,
                    const std::shared_ptr<server::http::DeferredResponse>& out, const std::string& model,
                    const std::function<void()>& upstream_done = {});

}  // namespace router
