#include "server/router/model_manager.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "server/http/client.h"
#include "server/http/errors.h"
#include "server/router/child_state.h"

namespace router {

using server::http::HttpError;
using steady = std::chrono::steady_clock;

const char* status_name(ModelStatus s) {
    switch (s) {
        case ModelStatus::unloaded:
            return "unloaded";
        case ModelStatus::loading:
            return "loading";
        case ModelStatus::loaded:
            return "loaded";
        case ModelStatus::sleeping:
            return "sleeping";
        case ModelStatus::unloading:
            return "unloading";
    }
    return "unloaded";
}

int pick_lru(const std::vector<LruCandidate>& models) {
    int best = -1;
    for (int i = 0; i < (int)models.size(); ++i) {
        const auto& m = models[(size_t)i];
        if (!m.loaded || m.in_flight > 0) continue;
        if (best < 0 || m.last_used < models[(size_t)best].last_used) best = i;
    }
    return best;
}

namespace {

// A port on 127.0.0.1 that nothing listens on now (the child binds it moments later).
int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = -1;
    if (bind(fd, (sockaddr*)&addr, sizeof addr) == 0 && getsockname(fd, (sockaddr*)&addr, &len) == 0)
        port = ntohs(addr.sin_port);
    close(fd);
    if (port <= 0) throw std::runtime_error("no free port on 127.0.0.1");
    return port;
}

std::string seconds(std::chrono::milliseconds ms) { return std::to_string(ms.count() / 1000) + " s"; }

}  // namespace

ModelManager::Lease::~Lease() {
    std::lock_guard lk(m_->mu_);
    Instance& inst = m_->at(name_);
    --inst.in_flight;
    inst.last_used = steady::now();
    m_->cv_.notify_all();
}

ModelManager::ModelManager(std::vector<ModelSpec> catalog, ManagerOptions options) : options_(std::move(options)) {
    for (auto& spec : catalog) {
        for (const auto& a : spec.aliases) aliases_[a] = spec.name;
        auto inst = std::make_unique<Instance>();
        inst->spec = std::move(spec);
        models_[inst->spec.name] = std::move(inst);
    }
}

ModelManager::~ModelManager() { stop_all(); }

ModelManager::Instance& ModelManager::at(const std::string& name) { return *models_.at(name); }

nlohmann::json ModelManager::status_event(const Instance& inst) const {
    nlohmann::json data{{"status", status_name(inst.status)}};
    if (inst.status == ModelStatus::unloaded) {
        data["exit_code"] = inst.exit_code;
        if (inst.failed) data["failed"] = true;
    }
    if (inst.status == ModelStatus::loaded && inst.info.is_object()) data["info"] = inst.info;
    return {{"model", inst.spec.name}, {"event", "status_change"}, {"data", std::move(data)}};
}

void ModelManager::set_status_locked(Instance& inst, ModelStatus status) {
    inst.status = status;
    cv_.notify_all();
    if (sinks_.empty()) return;
    const nlohmann::json event = status_event(inst);
    std::erase_if(sinks_, [&](const EventSink& s) { return !s.send(event); });
}

void ModelManager::subscribe(EventSink sink) {
    std::lock_guard lk(mu_);
    if (stopping_) {
        sink.close();
        return;
    }
    std::erase_if(sinks_, [](const EventSink& s) { return !s.alive(); });
    for (const auto& [name, inst] : models_)
        if (!inst->removed && !sink.send(status_event(*inst))) return;
    sinks_.push_back(std::move(sink));
}

void ModelManager::on_child_line(Instance& inst, const std::string& line) {
    const bool asleep = line == kChildSleeping, awake = line == kChildAwake;
    if (!asleep && !awake) return;
    std::lock_guard lk(mu_);
    inst.asleep = asleep;
    if (asleep && inst.status == ModelStatus::loaded) set_status_locked(inst, ModelStatus::sleeping);
    if (awake && inst.status == ModelStatus::sleeping) set_status_locked(inst, ModelStatus::loaded);
}
const ModelManager::Instance& ModelManager::at(const std::string& name) const { return *models_.at(name); }

std::optional<std::string> ModelManager::resolve(const std::string& name) const {
    std::lock_guard lk(mu_);
    if (auto it = models_.find(name); it != models_.end() && !it->second->removed) return name;
    if (auto it = aliases_.find(name); it != aliases_.end()) return it->second;
    return std::nullopt;
}

std::size_t ModelManager::size() const {
    std::lock_guard lk(mu_);
    return (std::size_t)std::count_if(models_.begin(), models_.end(), [](const auto& kv) { return !kv.second->removed; });
}

std::string ModelManager::only_model() const {
    std::lock_guard lk(mu_);
    std::string only;
    for (const auto& [name, inst] : models_) {
        if (inst->removed) continue;
        if (!only.empty()) return "";
        only = name;
    }
    return only;
}

namespace {
bool same_entry(const ModelSpec& a, const ModelSpec& b) {
    return a.path == b.path && a.source == b.source && a.aliases == b.aliases && a.tags == b.tags &&
           a.options == b.options && a.stop_timeout_s == b.stop_timeout_s;
}
}  // namespace

void ModelManager::reload(std::vector<ModelSpec> catalog) {
    std::lock_guard lk(mu_);
    std::map<std::string, ModelSpec> fresh;
    for (auto& spec : catalog) fresh.emplace(spec.name, std::move(spec));
    for (auto& [name, inst] : models_) {
        const bool running = inst->status == ModelStatus::loading || inst->status == ModelStatus::loaded ||
                             inst->status == ModelStatus::sleeping;
        auto it = fresh.find(name);
        if (it == fresh.end()) {
            if (inst->removed) continue;
            inst->removed = true;
            spdlog::info("router: model '{}' is no longer in the catalog{}", name, running ? ": unloading it" : "");
            if (running) begin_unload_locked(*inst);
            continue;
        }
        const bool changed = inst->removed || !same_entry(inst->spec, it->second);
        inst->removed = false;
        if (changed) {
            spdlog::info("router: model '{}' {}", name, running ? "changed: unloading it" : "updated");
            inst->spec = std::move(it->second);
            if (running) begin_unload_locked(*inst);
        }
        fresh.erase(it);
    }
    for (auto& [name, spec] : fresh) {
        spdlog::info("router: model '{}' added ({})", name, spec.path);
        auto inst = std::make_unique<Instance>();
        inst->spec = std::move(spec);
        Instance& added = *inst;
        models_[name] = std::move(inst);
        set_status_locked(added, ModelStatus::unloaded);  // subscribers learn of it
    }
    aliases_.clear();
    for (const auto& [name, inst] : models_)
        if (!inst->removed)
            for (const auto& a : inst->spec.aliases) aliases_[a] = name;
}

std::vector<ModelView> ModelManager::list() const {
    std::lock_guard lk(mu_);
    std::vector<ModelView> out;
    for (const auto& [name, inst] : models_) {
        if (inst->removed) continue;
        ModelView v;
        v.spec = inst->spec;
        v.status = inst->status;
        v.args = inst->args;
        v.failed = inst->failed;
        v.exit_code = inst->exit_code;
        v.info = inst->info;
        out.push_back(std::move(v));
    }
    return out;
}

bool ModelManager::try_start_load_locked(Instance& inst) {
    std::string victim;
    if (options_.models_max > 0) {
        int active = 0;
        std::vector<LruCandidate> cands;
        std::vector<Instance*> ptrs;
        for (auto& [name, other] : models_) {
            const bool running = other->status == ModelStatus::loaded || other->status == ModelStatus::sleeping;
            if (running || other->status == ModelStatus::loading) ++active;
            cands.push_back({running, other->in_flight, other->last_used});
            ptrs.push_back(other.get());
        }
        if (active >= options_.models_max) {
            const int i = pick_lru(cands);
            if (i < 0) return false;  // every loaded model is busy (or still loading): wait
            Instance& v = *ptrs[(size_t)i];
            spdlog::info("router: --models-max {} reached: unloading '{}', the least recently used model",
                         options_.models_max, v.spec.name);
            begin_unload_locked(v);
            victim = v.spec.name;
        }
    }
    std::thread previous = std::move(inst.thread);
    inst.failed = false;
    inst.stop_requested = false;
    inst.exit_code = 0;
    inst.exit_what.clear();
    inst.info = nullptr;
    inst.asleep = false;
    inst.port = 0;
    inst.last_used = steady::now();
    set_status_locked(inst, ModelStatus::loading);
    inst.thread = std::thread(&ModelManager::lifecycle, this, std::ref(inst), std::move(previous), victim);
    return true;
}

void ModelManager::begin_unload_locked(Instance& inst) {
    inst.stop_requested = true;
    inst.kill_at = steady::now() + std::chrono::seconds(inst.spec.stop_timeout_s);
    if (inst.child) inst.child->terminate();
    set_status_locked(inst, ModelStatus::unloading);
}

std::unique_ptr<ModelManager::Lease> ModelManager::acquire(const std::string& name, bool autoload,
                                                           steady::time_point deadline) {
    std::unique_lock lk(mu_);
    Instance& inst = at(name);
    ++inst.in_flight;  // a waiting request keeps its model from being chosen for unloading too
    struct Undo {
        ModelManager* m;
        Instance& inst;
        bool keep = false;
        ~Undo() {
            if (keep) return;
            --inst.in_flight;
            m->cv_.notify_all();
        }
    } undo{this, inst};
    bool started = false;
    for (;;) {
        if (stopping_) throw HttpError(503, "the server is shutting down", "unavailable_error");
        if (inst.removed) throw HttpError(400, "model '" + name + "' not found (it left the catalog)");
        if (inst.status == ModelStatus::loaded || inst.status == ModelStatus::sleeping) {
            inst.last_used = steady::now();
            undo.keep = true;
            return std::make_unique<Lease>(this, name, inst.port);
        }
        if (inst.status == ModelStatus::unloaded) {
            if (started && inst.failed)
                throw HttpError(500, "model '" + name + "' failed to load: " + inst.exit_what +
                                         " (its server's log is in the router's log, prefixed [" + name + "])");
            if (!autoload)
                throw HttpError(400, "model '" + name + "' is not loaded (autoload is off: load it with POST "
                                     "/models/load, or ask with ?autoload=true)");
            if (try_start_load_locked(inst)) started = true;
        } else if (inst.status == ModelStatus::unloading && !autoload) {
            throw HttpError(400, "model '" + name + "' is not loaded (it is being unloaded)");
        }
        if (cv_.wait_until(lk, deadline) == std::cv_status::timeout && steady::now() >= deadline) {
            if (inst.status == ModelStatus::loaded || inst.status == ModelStatus::sleeping) continue;
            if (inst.status == ModelStatus::unloaded)
                throw HttpError(503, "model '" + name + "' cannot be loaded now: --models-max " +
                                         std::to_string(options_.models_max) +
                                         " models are loaded and every one is answering requests",
                                "unavailable_error");
            throw HttpError(503, "model '" + name + "' is not ready after " + seconds(options_.load_timeout),
                            "unavailable_error");
        }
    }
}

void ModelManager::load(const std::string& name) {
    std::lock_guard lk(mu_);
    if (stopping_) throw HttpError(503, "the server is shutting down", "unavailable_error");
    Instance& inst = at(name);
    if (inst.removed) throw HttpError(404, "model is not found");
    if (inst.status != ModelStatus::unloaded) throw HttpError(400, "model is already running");
    if (!try_start_load_locked(inst))
        throw HttpError(503, "cannot load '" + name + "' now: --models-max " + std::to_string(options_.models_max) +
                                 " models are loaded and every one is answering requests; try again later",
                        "unavailable_error");
}

void ModelManager::unload(const std::string& name) {
    std::lock_guard lk(mu_);
    Instance& inst = at(name);
    if (inst.status != ModelStatus::loaded && inst.status != ModelStatus::sleeping && inst.status != ModelStatus::loading)
        throw HttpError(400, "model is not running");
    spdlog::info("router: unloading model '{}'", name);
    begin_unload_locked(inst);
}

void ModelManager::begin_shutdown() {
    std::lock_guard lk(mu_);
    stopping_ = true;
    for (auto& s : sinks_) s.close();
    sinks_.clear();
    cv_.notify_all();
}

void ModelManager::stop_all() {
    std::vector<std::thread> threads;
    {
        std::unique_lock lk(mu_);
        stopping_ = true;
        for (auto& s : sinks_) s.close();
        sinks_.clear();
        for (auto& [name, inst] : models_)
            if (inst->status == ModelStatus::loaded || inst->status == ModelStatus::sleeping ||
                inst->status == ModelStatus::loading)
                begin_unload_locked(*inst);
        cv_.notify_all();
        cv_.wait(lk, [&] {
            return std::all_of(models_.begin(), models_.end(),
                               [](const auto& kv) { return kv.second->status == ModelStatus::unloaded; });
        });
        for (auto& [name, inst] : models_)
            if (inst->thread.joinable()) threads.push_back(std::move(inst->thread));
    }
    for (auto& t : threads) t.join();
}

bool ModelManager::wait_ready(Instance& inst, ChildProcess& child, std::string& why) {
    const auto until = steady::now() + options_.load_timeout;
    server::http::ClientOptions co;
    co.timeout = std::chrono::seconds(2);
    for (;;) {
        {
            std::lock_guard lk(mu_);
            if (inst.stop_requested) {
                why = "unloaded while loading";
                return false;
            }
        }
        if (child.exited()) {
            why = "its server ended while loading (" + child.exit_description() + ")";
            return false;
        }
        if (steady::now() >= until) {
            why = "its server was not ready after " + seconds(options_.load_timeout);
            return false;
        }
        try {
            server::http::Client c("127.0.0.1", (std::uint16_t)inst.port, co);
            if (c.get("/health").status == 200) return true;
        } catch (const server::http::ClientError&) {
            // not listening yet
        }
        // Woken early by the child's log lines (its "ready" line among them) and by its end.
        std::unique_lock lk(mu_);
        cv_.wait_for(lk, std::chrono::milliseconds(100));
    }
}

void ModelManager::mark_start_failed_locked(Instance& inst, const std::string& why) {
    inst.failed = true;
    inst.exit_code = -1;  // no child ran
    inst.exit_what = why;
    set_status_locked(inst, ModelStatus::unloaded);
}

void ModelManager::lifecycle(Instance& inst, std::thread previous, std::string victim) {
    if (previous.joinable()) previous.join();
    const std::string name = inst.spec.name;
    std::vector<std::string> args;
    {
        std::unique_lock lk(mu_);
        // Memory first: the model this one replaces must be gone before this one loads.
        if (!victim.empty())
            cv_.wait(lk, [&] { return at(victim).status == ModelStatus::unloaded || inst.stop_requested; });
        if (inst.stop_requested) {
            set_status_locked(inst, ModelStatus::unloaded);
            return;
        }
        try {
            inst.port = free_port();
            args = options_.child_args(inst.spec);
            for (const std::string& a : {std::string("-m"), inst.spec.path, std::string("--alias"), name,
                                         std::string("--host"), std::string("127.0.0.1"), std::string("--port"),
                                         std::to_string(inst.port)})
                args.push_back(a);
            inst.args = args;
        } catch (const std::exception& e) {
            mark_start_failed_locked(inst, e.what());
            return;
        }
    }
    spdlog::info("router: loading model '{}' on port {}", name, inst.port);
    std::unique_ptr<ChildProcess> child;
    try {
        ChildProcess::Callbacks cb;
        cb.on_line = [this, name, &inst](const std::string& line) {
            spdlog::info("[{}] {}", name, line);
            on_child_line(inst, line);
            cv_.notify_all();
        };
        cb.on_exit = [this] {
            std::lock_guard lk(mu_);
            cv_.notify_all();
        };
        child = std::make_unique<ChildProcess>(args, options_.child_env, std::move(cb));
    } catch (const std::exception& e) {
        spdlog::error("router: cannot start the server of model '{}': {}", name, e.what());
        std::lock_guard lk(mu_);
        mark_start_failed_locked(inst, e.what());
        return;
    }
    {
        std::lock_guard lk(mu_);
        inst.child = child.get();
        if (inst.stop_requested) child->terminate();  // unloaded while it was being started
    }
    std::string why;
    bool load_failed = false;
    if (wait_ready(inst, *child, why)) {
        nlohmann::json info;
        try {
            server::http::Client c("127.0.0.1", (std::uint16_t)inst.port);
            auto r = c.get("/v1/models");
            if (r.status == 200) info = r.json().at("data").at(0);
        } catch (const std::exception&) {
        }
        std::lock_guard lk(mu_);
        if (!inst.stop_requested) {
            inst.info = std::move(info);
            set_status_locked(inst, ModelStatus::loaded);
            spdlog::info("router: model '{}' loaded", name);
            // It fell asleep while the router was still checking on it (a slow machine).
            if (inst.asleep) set_status_locked(inst, ModelStatus::sleeping);
        }
        cv_.notify_all();
    } else {
        std::lock_guard lk(mu_);
        if (!inst.stop_requested) {
            load_failed = true;
            spdlog::error("router: model '{}' failed to load: {}", name, why);
            inst.exit_what = why;
            inst.kill_at = steady::now() + std::chrono::seconds(5);
            child->terminate();
        }
    }
    // Watch the server until it ends; one asked to stop gets SIGKILL after its stop timeout.
    {
        std::unique_lock lk(mu_);
        while (!child->exited()) {
            if ((inst.stop_requested || load_failed) && steady::now() >= inst.kill_at) {
                spdlog::warn("router: the server of model '{}' did not stop in time: killing it", name);
                child->kill();
                cv_.wait_for(lk, std::chrono::seconds(1));
                continue;
            }
            if (inst.stop_requested || load_failed)
                cv_.wait_until(lk, inst.kill_at);
            else
                cv_.wait_for(lk, std::chrono::seconds(1));
        }
        inst.child = nullptr;
        inst.exit_code = child->exit_code();
        const std::string how = child->exit_description();
        if (!load_failed) inst.exit_what = "its server ended (" + how + ")";
        inst.failed = load_failed || !inst.stop_requested;
        if (inst.failed && !load_failed) spdlog::error("router: the server of model '{}' ended by itself ({})", name, how);
        if (!inst.failed) spdlog::info("router: model '{}' unloaded ({})", name, how);
        inst.info = nullptr;
        set_status_locked(inst, ModelStatus::unloaded);
    }
    child.reset();
}

}  // namespace router
