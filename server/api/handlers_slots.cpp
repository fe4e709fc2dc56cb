// POST /slots/{id}?action=save|restore|erase: a slot's cached sequence saved to or restored from a
// file in --slot-save-path, or erased. File names are confined to that directory; the action runs
// on the engine thread once the slot is idle, and the reply follows llama-server's shape.
#include <filesystem>

#include "server/api/api.h"
#include "server/http/errors.h"

namespace api {

using server::http::HttpError;
namespace fs = std::filesystem;

namespace {

int parse_slot_id(const std::string& text, int n_slots) {
    int id = 0;
    bool ok = !text.empty() && text.size() <= 6;
    for (char c : text) {
        ok = ok && c >= '0' && c <= '9';
        if (ok) id = id * 10 + (c - '0');
    }
    if (!ok || id >= n_slots)
        throw HttpError(400, "invalid slot id '" + text + "': this server has " + std::to_string(n_slots) +
                                 " slot(s), 0.." + std::to_string(n_slots - 1));
    return id;
}

// A plain file name: no directory part, nothing that walks out of the save directory, no hidden or
// control characters.
void validate_filename(const std::string& name) {
    auto bad = [&](const std::string& why) {
        // Control bytes are spelled out: a NUL would end the message early, others garble the log.
        std::string shown;
        for (unsigned char c : name.substr(0, 255)) {
            if (c < 0x20 || c == 0x7F) {
                static const char* hex = "0123456789abcdef";
                shown += std::string("\\x") + hex[c >> 4] + hex[c & 15];
            } else {
                shown += char(c);
            }
        }
        throw HttpError(400, "invalid filename '" + shown + "': " + why);
    };
    if (name.empty()) bad("it is empty");
    if (name.size() > 255) bad("longer than 255 bytes");
    if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
        bad("it must be a plain file name inside the slot save directory, without '/' or '\\'");
    if (name[0] == '.') bad("it must not start with '.'");
    for (unsigned char c : name)
        if (c < 0x20 || c == 0x7f) bad("it contains control characters");
}

}  // namespace

Api::Reply Api::slot_action(Request& req) {
    require_ready();
    const int id = parse_slot_id(req.path_param("id"), scheduler_->n_parallel());
    const auto action = req.query_param("action");
    if (!action) throw HttpError(400, "missing query parameter 'action' (save, restore or erase)");
    sched::SlotAction a;
    if (*action == "save")
        a.kind = sched::SlotAction::Kind::Save;
    else if (*action == "restore")
        a.kind = sched::SlotAction::Kind::Restore;
    else if (*action == "erase")
        a.kind = sched::SlotAction::Kind::Erase;
    else
        throw HttpError(400, "unknown action '" + *action + "': expected save, restore or erase");
    a.slot = id;
    const json body = parse_body(req, "slots_action.json");

    std::string filename;
    if (a.kind != sched::SlotAction::Kind::Erase) {
        if (config_.slot_save_path.empty())
            throw HttpError(501,
                            "this server does not save or restore slots; start it with --slot-save-path DIR",
                            "not_supported_error");
        filename = body.value("filename", "");
        if (filename.empty()) throw HttpError(400, "'filename' is required for " + *action);
        validate_filename(filename);
        a.path = (fs::path(config_.slot_save_path) / filename).string();
        std::error_code ec;
        if (a.kind == sched::SlotAction::Kind::Restore && !fs::exists(fs::symlink_status(a.path, ec)))
            throw HttpError(404, "no saved slot file '" + filename + "' in the slot save directory",
                            "not_found_error");
    }

    auto deferred = req.defer();
    const auto kind = a.kind;
    a.done = [deferred, id, filename, kind](const sched::SlotActionResult& r) {
        if (r.status != 200) {
            deferred->respond(server::http::error_response(r.status, r.error));
            return;
        }
        json j{{"id_slot", id}};
        switch (kind) {
            case sched::SlotAction::Kind::Save:
                j.update({{"filename", filename},
                          {"n_saved", r.n_tokens},
                          {"n_written", r.n_bytes},
                          {"timings", {{"save_ms", r.ms}}}});
                break;
            case sched::SlotAction::Kind::Restore:
                j.update({{"filename", filename},
                          {"n_restored", r.n_tokens},
                          {"n_read", r.n_bytes},
                          {"timings", {{"restore_ms", r.ms}}}});
                break;
            case sched::SlotAction::Kind::Erase:
                j["n_erased"] = r.n_tokens;
                break;
        }
        deferred->respond(server::http::Response::json(j));
    };
    scheduler_->submit_action(std::move(a));
    return Reply(deferred);
}

}  // namespace api
