// Slot actions (POST /slots/{id}?action=save|restore|erase): run on the engine thread between
// iterations, once the slot is idle. The API layer confines file names to --slot-save-path and
// passes the full path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace sched {

struct SlotActionResult {
    int status = 200;  // HTTP-like: 200, or 400/500 with error
    std::string error;
    int32_t n_tokens = 0;  // saved, restored or erased
    size_t n_bytes = 0;    // written or read
    double ms = 0.0;
};

struct SlotAction {
    enum class Kind { Save, Restore, Erase };
    Kind kind = Kind::Erase;
    int slot = 0;
    std::string path;  // save/restore: the state file
    // Called once on the engine thread; must not block.
    std::function<void(const SlotActionResult&)> done;
};

}  // namespace sched
