#include "server/cli/serve_router.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "server/api/build_info.h"
#include "server/api/vertex_predict.h"
#include "server/cli/file_lists.h"
#include "server/cli/tool_options.h"
#include "server/http/server.h"
#include "server/router/child_state.h"
#include "server/router/model_catalog.h"
#include "server/router/model_manager.h"
#include "server/router/router_api.h"
#include "server/webui/cors_proxy.h"
#include "server/webui/webui.h"

extern char** environ;

namespace cli {

namespace {

// The router's own options, by canonical name: they are not passed on to the models' servers, which the
// router starts on 127.0.0.1 with their model, name and port (and whose log it writes itself).
const std::set<std::string>& router_only() {
    static const std::set<std::string> s = {
        "models-dir", "models-preset", "models-max", "models-autoload", "no-models-autoload", "tags",
        "model",      "alias",         "host",       "port",            "reuse-port",         "api-key",
        "api-key-file", "ssl-key-file", "ssl-cert-file", "api-prefix",  "path",               "webui",
        "no-webui",   "log-file",      "log-disable", "log-colors",  "tools",              "agent",
        "no-agent",   "mcp-servers-config", "mcp-servers-json", "tools-runtime",
        // The chat UI talks to the router: its settings and its CORS proxy are the router's.
        "ui-config", "ui-config-file", "ui-mcp-proxy", "no-ui-mcp-proxy",
        // The browser talks to the router, which answers CORS (the servers' CORS fields are not passed back).
        "cors-origins", "cors-methods", "cors-headers", "cors-credentials", "no-cors-credentials"};
    return s;
}

std::string self_exe() {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find the ggserve binary (/proc/self/exe): " + ec.message());
    return p.string();
}

}  // namespace

void add_router_options(ArgParser& ap, RouterCliOptions& ro) {
    ap.option("--models-dir", "DIR",
              "router mode (without -m): serve the GGUF models of DIR (NAME.gguf, or a directory NAME holding one), "
              "one server process per loaded model, chosen by each request's \"model\"",
              &ro.models_dir);
    ap.option("--models-preset", "FILE",
              "router mode: an INI file of models, one [NAME] section each (model = PATH and serve options; [*] for "
              "every model)",
              &ro.models_preset);
    ap.option("--models-max", "N", "router mode: most models loaded at once; the least recently used one is unloaded "
              "for another (default 4, 0 = no limit)",
              &ro.models_max);
    ap.flag("--models-autoload", "router mode: load a model when a request names it (default)", &ro.autoload);
    ap.flag("--no-models-autoload", "router mode: only POST /models/load loads models", &ro.autoload, false);
    ap.option("--tags", "LIST", "router mode: tags of every model in GET /models (comma-separated)", &ro.tags);
}

bool router_mode_requested(const RouterCliOptions& ro) { return !ro.models_dir.empty() || !ro.models_preset.empty(); }

namespace {

// The catalog as the router serves it: --models-dir and --models-preset read, every model's tags set,
// its preset options checked (a typo stops the start, or fails a reload) and the router's own dropped.
std::vector<router::ModelSpec> read_catalog(const ArgParser& ap, const RouterCliOptions& ro) {
    std::vector<router::ModelSpec> catalog = router::build_catalog(ro.models_dir, ro.models_preset);
    if (catalog.empty())
        throw ArgError("no models to serve: " +
                       (ro.models_dir.empty() ? std::string("") : "--models-dir '" + ro.models_dir + "' holds no .gguf file") +
                       (ro.models_dir.empty() || ro.models_preset.empty() ? "" : " and ") +
                       (ro.models_preset.empty() ? std::string("") : "--models-preset '" + ro.models_preset + "' names no model"));
    const auto tags = split_list(ro.tags);
    for (auto& m : catalog) {
        for (const auto& w : m.warnings) spdlog::warn("router: {}", w);
        if (m.tags.empty()) m.tags = tags;
        router::KeyValues kept;
        for (const auto& [k, v] : m.options) {
            const std::string name = ap.canonical_name(k);
            if (name.empty()) throw ArgError("--models-preset: option '" + k + "' not recognized in [" + m.name + "]");
            if (router_only().count(name)) {
                spdlog::warn("router: [{}] {} is the router's to set: ignored", m.name, k);
                continue;
            }
            try {
                ap.words_for(k, v);
            } catch (const ArgError& e) {
                throw ArgError("--models-preset [" + m.name + "]: " + e.what());
            }
            kept.emplace_back(k, v);
        }
        m.options = std::move(kept);
    }
    return catalog;
}

}  // namespace

int run_router(const ArgParser& ap, const RouterCliOptions& ro, const server::http::ServerConfig& hc,
               std::unique_ptr<tools::Toolbox> toolbox) {
    std::vector<router::ModelSpec> catalog;
    std::vector<std::string> base_words;
    try {
        if (ro.models_max < 0) throw ArgError("--models-max must be >= 0 (0 = no limit)");
        catalog = read_catalog(ap, ro);
        int n_startup = 0;
        for (const auto& m : catalog) n_startup += m.load_on_startup;
        if (ro.models_max > 0 && n_startup > ro.models_max)
            throw ArgError(std::to_string(n_startup) + " models have load-on-startup, more than --models-max " +
                           std::to_string(ro.models_max));
        for (const auto& g : ap.command_line())
            if (!router_only().count(g.name)) base_words.insert(base_words.end(), g.words.begin(), g.words.end());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ggserve serve: %s\n", e.what());
        return 2;
    }

    // The children's environment: the router's, without the variables of the router's own options.
    std::set<std::string> drop;
    for (const auto& name : router_only())
        if (auto env = ap.env_of(name); !env.empty()) drop.insert(env);
    drop.insert(router::kChildEnv);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string kv = *e;
        if (!drop.count(kv.substr(0, kv.find('=')))) env.push_back(kv);
    }
    env.push_back(std::string(router::kChildEnv) + "=1");  // the children report their sleep (child_state.h)

    router::ManagerOptions mo;
    const std::string exe = self_exe();
    mo.child_args = [&ap, exe, base_words](const router::ModelSpec& m) {
        std::vector<std::string> args = {exe, "serve"};
        // Preset options first, so that the router's command line wins (the last value of an option does).
        for (const auto& [k, v] : m.options)
            for (auto& w : ap.words_for(k, v)) args.push_back(std::move(w));
        args.insert(args.end(), base_words.begin(), base_words.end());
        args.push_back("--no-webui");
        return args;
    };
    mo.child_env = std::move(env);
    mo.models_max = ro.models_max;
    mo.load_timeout = ro.timeout;

    router::RouterConfig rc;
    rc.autoload = ro.autoload;
    rc.models_max = ro.models_max;
    rc.request_timeout = ro.timeout;
    rc.load_timeout = ro.timeout;
    rc.build_info = api::build_info();
    rc.read_catalog = [&ap, &ro] { return read_catalog(ap, ro); };
    if (toolbox) rc.tools = toolbox->names();
    rc.ui_settings = ro.ui_settings;
    rc.cors_proxy = ro.ui_mcp_proxy;

    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    try {
        std::vector<std::string> startup;
        for (const auto& m : catalog)
            if (m.load_on_startup) startup.push_back(m.name);
        spdlog::info("router: {} models (--models-max {}, autoload {})", catalog.size(), ro.models_max,
                     ro.autoload ? "on" : "off");
        for (const auto& m : catalog)
            spdlog::info("router:   {}{} ({}){}", m.name,
                         m.aliases.empty() ? "" : " [aliases: " + [&] {
                             std::string s;
                             for (const auto& a : m.aliases) s += (s.empty() ? "" : ", ") + a;
                             return s;
                         }() + "]",
                         m.path, m.source == "preset" ? " *preset" : "");
        router::ModelManager models(std::move(catalog), mo);
        webui::CorsProxy cors_proxy({ro.ui_mcp_proxy, ro.timeout});  // outlives the server, as in cmd_serve
        server::http::Server http(hc);
        router::RouterApi api(models, rc, http);
        api.register_routes();
        const auto tools_api = serve_tools(std::move(toolbox), http);  // the router's own, as llama-server
        cors_proxy.register_routes(http);
        if (ro.vertex.enabled) api::register_vertex_routes(http, ro.vertex, [&http] { return http.port(); }, hc.api_prefix);
        if (ro.webui || !ro.webui_path.empty()) {
            webui::WebUiOptions wo;
            wo.path = ro.webui_path;
            auto ui = std::make_shared<const webui::WebUi>(wo);
            http.fallback([ui](server::http::Request& req) { return ui->handle(req); });
        }
        http.start();
        spdlog::info("listening on {}", server::http::listen_url(hc, http.port()));
        for (const auto& name : startup) models.load(name);
        spdlog::info("ready: router, {} models, no model loaded in this process", models.size());

        int sig = 0;
        sigwait(&sigs, &sig);
        spdlog::info("signal {}: shutting down the router and its models", sig);
        models.begin_shutdown();    // requests waiting for a model fail now
        http.stop(std::chrono::seconds(2));  // streams in flight end, which closes their child connections
        api.wait_idle(std::chrono::seconds(5));
        models.stop_all();
        return 0;
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
}

}  // namespace cli
