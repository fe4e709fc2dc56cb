#include "server/api/stream_sessions.h"

#include <algorithm>

namespace api {

namespace {
int64_t epoch_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}
}  // namespace

StreamSession::StreamSession(std::string id) : id_(std::move(id)), started_ms_(epoch_ms()) {}

void StreamSession::append(std::string_view bytes) {
    std::lock_guard lk(mu_);
    if (done_) return;
    total_ += bytes.size();
    if (!too_long_ && bytes_.size() + bytes.size() > kMaxBytes) {
        too_long_ = true;  // a replay could not start at 0 any more: no more replays
        bytes_.clear();
        bytes_.shrink_to_fit();
    }
    if (!too_long_) bytes_.append(bytes);
    std::erase_if(followers_, [&](const auto& w) { return !w->write(std::string(bytes)); });
}

void StreamSession::finish() {
    std::vector<std::shared_ptr<server::http::StreamWriter>> followers;
    {
        std::lock_guard lk(mu_);
        if (done_) return;
        done_ = true;
        completed_ms_ = epoch_ms();
        finished_at_ = std::chrono::steady_clock::now();
        followers.swap(followers_);
        cancel_ = nullptr;  // nothing left to stop (and no cycle through the generation's callbacks)
    }
    for (auto& w : followers) w->close();
}

void StreamSession::set_cancel(std::function<void()> cancel) {
    std::lock_guard lk(mu_);
    if (!done_) cancel_ = std::move(cancel);
}

void StreamSession::cancel() {
    std::function<void()> c;
    {
        std::lock_guard lk(mu_);
        c.swap(cancel_);
    }
    if (c) c();
}

StreamSession::Follow StreamSession::follow(const std::shared_ptr<server::http::StreamWriter>& out, size_t from) {
    std::lock_guard lk(mu_);
    if (too_long_) return Follow::too_long;
    if (from > bytes_.size()) return Follow::beyond_end;
    if (from < bytes_.size() && !out->write(bytes_.substr(from))) return Follow::ok;  // already gone
    if (done_)
        out->close();
    else
        followers_.push_back(out);
    return Follow::ok;
}

bool StreamSession::done() const {
    std::lock_guard lk(mu_);
    return done_;
}

nlohmann::json StreamSession::info() const {
    std::lock_guard lk(mu_);
    return {{"conversation_id", id_},
            {"is_done", done_},
            {"total_bytes", total_},
            {"started_at", started_ms_},
            {"completed_at", completed_ms_}};
}

std::chrono::steady_clock::time_point StreamSession::finished_at() const {
    std::lock_guard lk(mu_);
    return finished_at_;
}

std::string StreamSessions::valid_id(std::string_view h) {
    if (h.empty() || h.size() > 256) return "";
    for (char c : h)
        if (c < 0x21 || c > 0x7e) return "";
    return std::string(h);
}

std::shared_ptr<StreamSession> StreamSessions::start(const std::string& id) {
    auto s = std::make_shared<StreamSession>(id);
    std::shared_ptr<StreamSession> old;
    {
        std::lock_guard lk(mu_);
        prune_locked();
        auto& slot = sessions_[id];
        old = std::move(slot);
        slot = s;
    }
    if (old) old->cancel();  // its generation stops; its followers end with it
    return s;
}

std::shared_ptr<StreamSession> StreamSessions::find(const std::string& id) {
    std::lock_guard lk(mu_);
    prune_locked();
    auto it = sessions_.find(id);
    return it == sessions_.end() ? nullptr : it->second;
}

bool StreamSessions::remove(const std::string& id) {
    std::shared_ptr<StreamSession> s;
    {
        std::lock_guard lk(mu_);
        auto it = sessions_.find(id);
        if (it == sessions_.end()) return false;
        s = std::move(it->second);
        sessions_.erase(it);
    }
    s->cancel();
    return true;
}

size_t StreamSessions::size() const {
    std::lock_guard lk(mu_);
    return sessions_.size();
}

void StreamSessions::prune_locked() {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>> finished;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (it->second->done() && now - it->second->finished_at() > keep_for) {
            it = sessions_.erase(it);
            continue;
        }
        if (it->second->done()) finished.emplace_back(it->second->finished_at(), it->first);
        ++it;
    }
    if (finished.size() <= max_finished) return;
    std::sort(finished.begin(), finished.end());  // oldest first
    for (size_t i = 0; i + max_finished < finished.size(); ++i) sessions_.erase(finished[i].second);
}

}  // namespace api
