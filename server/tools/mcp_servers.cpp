#include "server/tools/mcp_servers.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>

namespace tools {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

McpServers::McpServers(std::vector<McpServerConfig> configs, McpLimits limits)
    : configs_(std::move(configs)), limits_(limits) {
    for (const auto& c : configs_) {
        auto s = std::make_unique<Server>();
        s->config = c;
        servers_.push_back(std::move(s));
    }
}

McpServers::~McpServers() {
    shutdown();
    std::vector<std::shared_ptr<McpClient>> clients;
    {
        std::lock_guard<std::mutex> lk(mu_);
        for (auto& s : servers_) clients.push_back(std::move(s->client));
    }
    clients.clear();  // each kills its group and reaps its child (unless a running call still holds it)
}

void McpServers::shutdown() {
    stopping_.store(true);
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& s : servers_)
        if (s->client) s->client->shutdown();
}

std::shared_ptr<McpClient> McpServers::client(const std::string& server) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& s : servers_)
        if (s->config.name == server) return s->client;
    return nullptr;
}

void McpServers::start() {
    std::vector<std::future<std::vector<McpToolDef>>> found;
    for (auto& sp : servers_) {
        Server* s = sp.get();
        found.push_back(std::async(std::launch::async, [this, s]() -> std::vector<McpToolDef> {
            const auto deadline = Clock::now() + limits_.warmup;
            std::shared_ptr<McpClient> c;
            try {
                c = std::make_shared<McpClient>(s->config, limits_.max_line);
                auto stop = [this] { return stopping_.load(); };
                if (std::string err = c->initialize(deadline, stop); !err.empty()) throw std::runtime_error(err);
                auto tools = c->list_tools(deadline);
                spdlog::info("MCP server '{}': {} tools", s->config.name, tools.size());
                std::lock_guard<std::mutex> lk(mu_);
                s->client = c;  // kept running for the calls
                return tools;
            } catch (const std::exception& e) {
                spdlog::warn("MCP server '{}' did not start, its tools are missing: {}{}", s->config.name, e.what(),
                             c ? " (" + c->last_words() + ")" : "");
                return {};
            }
        }));
    }
    for (auto& f : found)
        for (auto& t : f.get()) tools_.push_back(std::move(t));
}

std::shared_ptr<McpClient> McpServers::connect(Server& s, std::string& error, const std::function<bool()>& cancelled) {
    std::lock_guard<std::mutex> start_lk(s.start_mu);
    std::shared_ptr<McpClient> dead;  // destroyed (killed and reaped) outside mu_
    {
        std::lock_guard<std::mutex> lk(mu_);
        if (stopping_.load()) {
            error = "the server is shutting down";
            return nullptr;
        }
        if (s.client && s.client->alive()) return s.client;
        dead = std::move(s.client);
        if (Clock::now() < s.retry_after) {
            error = "MCP server unavailable: " + s.config.name;
            return nullptr;
        }
    }
    if (dead) spdlog::warn("MCP server '{}' has died ({}), starting it again", s.config.name, dead->last_words());
    dead.reset();
    std::shared_ptr<McpClient> c;
    try {
        c = std::make_shared<McpClient>(s.config, limits_.max_line);
        auto stop = [this, &cancelled] { return stopping_.load() || (cancelled && cancelled()); };
        const auto deadline = Clock::now() + std::chrono::milliseconds(s.config.timeout_ms);
        if (std::string err = c->initialize(deadline, stop); !err.empty()) throw std::runtime_error(err);
    } catch (const std::exception& e) {
        const std::string why = std::string(e.what()) + (c ? " (" + c->last_words() + ")" : "");
        spdlog::warn("MCP server '{}' failed to start: {}", s.config.name, why);
        error = "MCP server unavailable: " + s.config.name + ": " + why;
        std::lock_guard<std::mutex> lk(mu_);
        s.retry_after = Clock::now() + limits_.cooldown;
        return nullptr;
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (stopping_.load()) {
        c->shutdown();
        error = "the server is shutting down";
        return nullptr;
    }
    s.client = c;
    return c;
}

json McpServers::call(const std::string& server, const std::string& tool, const json& arguments,
                      const std::function<bool()>& cancelled) {
    Server* s = nullptr;
    for (auto& sp : servers_)
        if (sp->config.name == server) s = sp.get();
    if (!s) return {{"error", "MCP server unavailable: " + server}};
    std::string error;
    const auto c = connect(*s, error, cancelled);
    if (!c) return {{"error", error}};
    auto stop = [this, &cancelled] { return stopping_.load() || (cancelled && cancelled()); };
    const auto deadline = Clock::now() + std::chrono::milliseconds(s->config.timeout_ms);
    const RpcReply r = c->request("tools/call", {{"name", tool}, {"arguments", arguments}}, deadline, stop);
    switch (r.kind) {
        case RpcReply::Kind::Result:
            return mcp_result_to_response(r.result);
        case RpcReply::Kind::Timeout:
            spdlog::warn("MCP server '{}': tools/call {} timed out after {} ms", server, tool, s->config.timeout_ms);
            return {{"error", "request timed out after " + std::to_string(s->config.timeout_ms) + " ms"}};
        case RpcReply::Kind::Closed:
            return {{"error", r.message + " (MCP server '" + server + "': " + c->last_words() + ")"}};
        default:
            return {{"error", r.message}};
    }
}

json mcp_result_to_response(const json& result) {
    std::string text;
    if (result.is_object() && result.contains("content") && result["content"].is_array())
        for (const auto& part : result["content"])
            if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string()) {
                if (!text.empty()) text += "\n";
                text += part["text"].get<std::string>();
            }
    if (result.is_object() && result.contains("isError") && result["isError"] == true)
        return {{"error", text.empty() ? "MCP tool returned an error" : text}};
    return {{"plain_text_response", text}};
}

std::vector<Tool> mcp_tool_rows(const std::shared_ptr<McpServers>& servers, const std::vector<std::string>& taken) {
    std::vector<Tool> rows;
    std::vector<std::string> names = taken;
    for (const McpToolDef& d : servers->tools()) {
        const std::string name = d.server + "_" + d.name;
        if (std::find(names.begin(), names.end(), name) != names.end()) {
            spdlog::warn("MCP tool \"{}\" from server \"{}\" collides with an existing tool, skipped", name, d.server);
            continue;
        }
        names.push_back(name);
        Tool t;
        t.name = name;
        t.display_name = name;
        t.type = "mcp";
        t.write = false;
        t.uses_cwd = false;
        t.check_schema = false;
        const json params = d.input_schema.is_object() ? d.input_schema : json::object();
        t.definition = {{"type", "function"},
                        {"function", {{"name", name}, {"description", d.description}, {"parameters", params}}}};
        std::weak_ptr<McpServers> weak = servers;
        t.invoke = [weak, server = d.server, tool = d.name](const json& params, const CallContext& ctx) -> json {
            const auto s = weak.lock();
            if (!s) return {{"error", "MCP server unavailable: " + server}};
            return s->call(server, tool, params, ctx.cancelled);
        };
        rows.push_back(std::move(t));
    }
    return rows;
}

}  // namespace tools
