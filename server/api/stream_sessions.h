// Resumable streams (llama-server's X-Conversation-Id, b10621): a streamed generation request that names a
// conversation keeps its event stream here while it runs and for a while after, so that a client that
// lost the connection (a reloaded page) can find it (POST /v1/streams/lookup), replay it from any byte
// offset and follow it live (GET /v1/stream), or stop it (DELETE /v1/stream). Such a request is not
// cancelled when its client goes away; it ends by itself, by DELETE, or by a newer request of the same
// conversation.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/stream_writer.h"

namespace api {

class StreamSession {
  public:
    static constexpr size_t kMaxBytes = 32u << 20;  // replayable bytes per stream; past this, no replay

    explicit StreamSession(std::string id);
    const std::string& id() const { return id_; }

    // The generation's side (its formatting thread): event bytes as written to its client, then the end.
    void append(std::string_view bytes);
    void finish();
    // How to stop the generation (DELETE, a newer request of the conversation); runs at most once.
    void set_cancel(std::function<void()> cancel);
    void cancel();

    enum class Follow { ok, beyond_end, too_long };
    // Writes bytes [from, end) to `out` now, then every later byte as it comes, and closes it at the end.
    Follow follow(const std::shared_ptr<server::http::StreamWriter>& out, size_t from);

    bool done() const;
    // {conversation_id, is_done, total_bytes, started_at, completed_at} (epoch milliseconds; 0 while running).
    nlohmann::json info() const;
    std::chrono::steady_clock::time_point finished_at() const;

  private:
    const std::string id_;
    mutable std::mutex mu_;
    std::string bytes_;
    size_t total_ = 0;  // bytes written, recorded or not
    bool too_long_ = false;
    bool done_ = false;
    int64_t started_ms_, completed_ms_ = 0;
    std::chrono::steady_clock::time_point finished_at_{};
    std::vector<std::shared_ptr<server::http::StreamWriter>> followers_;
    std::function<void()> cancel_;
};

class StreamSessions {
  public:
    // A conversation id from a request header: 1-256 printable ASCII characters, else "".
    static std::string valid_id(std::string_view header);

    // A new session for `id`; one still running under the same id is stopped (a conversation has one
    // live stream). Finished sessions are kept for `keep_for` and at most `max_finished` of them.
    std::shared_ptr<StreamSession> start(const std::string& id);
    std::shared_ptr<StreamSession> find(const std::string& id);
    // Stops and forgets the session; false when there is none.
    bool remove(const std::string& id);
    size_t size() const;

    std::chrono::seconds keep_for{600};
    size_t max_finished = 64;

  private:
    void prune_locked();
    mutable std::mutex mu_;
    std::map<std::string, std::shared_ptr<StreamSession>> sessions_;
};

}  // namespace api
