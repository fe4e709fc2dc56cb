// The router's models and their servers: which model runs where, loading on demand, the --models-max
// cap (least recently used model out first), unloading, and children that die. One `ggserve serve`
// child process per loaded model, on 127.0.0.1 and a free port; each has a lifecycle thread that starts
// it, waits (bounded) until its /health says ready, then watches it until it ends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/router/child_process.h"
#include "server/router/model_catalog.h"

namespace router {

struct ManagerOptions {
    // The program and arguments of a model's server, before `-m PATH --alias NAME --port N`: the
    // ggserve binary, "serve", the model's preset options, then the router's own options.
    std::function<std::vector<std::string>(const ModelSpec&)> child_args;
    std::vector<std::string> child_env;  // the whole environment of the children
    int models_max = 4;                  // loaded (or loading) models at most; 0 = no cap
    std::chrono::milliseconds load_timeout{std::chrono::seconds(600)};  // spawn to ready
};

// sleeping: loaded, its server asleep (--sleep-idle-seconds); requests go to it as to a loaded one and
// wake it.
enum class ModelStatus { unloaded, loading, loaded, sleeping, unloading };
const char* status_name(ModelStatus s);

// A snapshot of one model, for GET /models.
struct ModelView {
    ModelSpec spec;
    ModelStatus status = ModelStatus::unloaded;
    std::vector<std::string> args;  // the child's command line (the last one started)
    bool failed = false;            // its server ended without being asked to, or never became ready
    int exit_code = 0;
    nlohmann::json info;  // the child's own /v1/models entry, while loaded
};

// Picks the model to unload so that another can load: among the loaded ones the least recently used,
// preferring those with no request in flight. Pure, for tests. Returns the index or -1 if none is loaded.
struct LruCandidate {
    bool loaded = false;
    int in_flight = 0;
    std::chrono::steady_clock::time_point last_used;
};
int pick_lru(const std::vector<LruCandidate>& models);

// A GET /models/sse subscriber. `send` gets each event, {"model", "event": "status_change", "data":
// {"status", ...}}, under the manager's lock (so it must not block), and returns false once the
// subscriber is gone; `close` ends the subscription when the router stops.
struct EventSink {
    std::function<bool(const nlohmann::json& event)> send;
    std::function<void()> close;
    std::function<bool()> alive;  // false once the subscriber went away (pruned at the next subscribe)
};

class ModelManager {
  public:
    ModelManager(std::vector<ModelSpec> catalog, ManagerOptions options);
    ~ModelManager();  // stop_all()
    ModelManager(const ModelManager&) = delete;
    ModelManager& operator=(const ModelManager&) = delete;

    // The model's name for a name or alias, or nullopt.
    std::optional<std::string> resolve(const std::string& name_or_alias) const;
    std::size_t size() const;
    // The only model's name when the catalog has exactly one, else "".
    std::string only_model() const;
    std::vector<ModelView> list() const;

    // A request's hold on a loaded model: its server's port while the request runs. Releasing it (the
    // destructor) marks the model used now.
    class Lease {
      public:
        Lease(ModelManager* m, std::string name, int port) : m_(m), name_(std::move(name)), port_(port) {}
        ~Lease();
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        int port() const { return port_; }
        const std::string& name() const { return name_; }

      private:
        ModelManager* m_;
        std::string name_;
        int port_;
    };
    // Waits (until `deadline`) for `name`'s server to be ready, loading it first when it is not and
    // `autoload` allows it. Throws server::http::HttpError: 400 not loaded (autoload off), 500 it failed
    // to load, 503 the cap is reached by models still loading, a timeout, or the router is stopping.
    std::unique_ptr<Lease> acquire(const std::string& name, bool autoload,
                                   std::chrono::steady_clock::time_point deadline);

    // POST /models/load: starts loading and returns (HttpError 400 if it is already running).
    void load(const std::string& name);
    // POST /models/unload: asks its server to stop (SIGTERM; SIGKILL after the model's stop timeout) and
    // returns (HttpError 400 if it is not running).
    void unload(const std::string& name);
    // GET /models?reload=1: the catalog read again. New models are added; a model whose entry changed
    // (file, options, aliases, tags, stop timeout) or that is gone is unloaded if it runs; gone ones leave
    // the list at once (requests they are answering finish).
    void reload(std::vector<ModelSpec> catalog);
    // Adds a /models/sse subscriber; it first gets every model's current status, so that nothing is
    // missed between reading GET /models and subscribing.
    void subscribe(EventSink sink);
    // Wakes every waiting request (they fail with 503), refuses new ones and closes the subscriptions.
    void begin_shutdown();
    // Stops every server (as unload) and waits for them to end.
    void stop_all();

  private:
    struct Instance {
        ModelSpec spec;
        ModelStatus status = ModelStatus::unloaded;
        int port = 0;
        std::vector<std::string> args;
        std::chrono::steady_clock::time_point last_used{};
        int in_flight = 0;
        bool failed = false;
        int exit_code = 0;
        std::string exit_what;  // why it ended, for errors
        bool stop_requested = false;
        std::chrono::steady_clock::time_point kill_at{};
        ChildProcess* child = nullptr;  // owned by the lifecycle thread
        nlohmann::json info;
        bool asleep = false;   // its server said it sleeps (it may say so before it is marked loaded)
        bool removed = false;  // gone from the catalog (kept for its thread and its requests in flight)
        std::thread thread;  // the lifecycle thread (joined by the next one, or by stop_all)
    };

    Instance& at(const std::string& name);
    // Every status change goes through here: it tells the /models/sse subscribers.
    void set_status_locked(Instance& inst, ModelStatus status);
    nlohmann::json status_event(const Instance& inst) const;
    // The child's own state lines (child_state.h): asleep, awake.
    void on_child_line(Instance& inst, const std::string& line);
    const Instance& at(const std::string& name) const;
    // Starts loading `inst` (unloading the least recently used idle model first when the cap is
    // reached); false if the cap is reached and no loaded model is idle.
    bool try_start_load_locked(Instance& inst);
    void begin_unload_locked(Instance& inst);
    void lifecycle(Instance& inst, std::thread previous, std::string victim);
    // The child could not be started (its arguments, or the spawn itself): unloaded, failed, `why` kept.
    void mark_start_failed_locked(Instance& inst, const std::string& why);
    // Polls the child's /health until ready; false if it ended, was stopped, or the timeout passed.
    bool wait_ready(Instance& inst, ChildProcess& child, std::string& why);

    const ManagerOptions options_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::map<std::string, std::unique_ptr<Instance>> models_;
    std::map<std::string, std::string> aliases_;
    bool stopping_ = false;
    std::vector<EventSink> sinks_;
};

}  // namespace router
