// Runtime state of one render: the chain of variable scopes and the output being written.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/chat/jinja_template.h"
#include "engine/chat/jinja_value.h"

namespace engine::jinja {

// One scope: the globals, the render context, a loop iteration, a macro call. Frames are shared
// because macros keep the scope they were defined in (closures).
struct Frame {
    std::vector<std::pair<std::string, Value>> vars;
    std::shared_ptr<Frame> parent;

    const Value* find(std::string_view name) const;  // this frame, then its parents
    void set(std::string_view name, Value value);    // in this frame
};

// Shared by every Env of one render.
class RenderState {
  public:
    explicit RenderState(const RenderOptions& options) : options(&options) {}
    ~RenderState();  // releases the variables of every frame still alive
    RenderState(const RenderState&) = delete;
    RenderState& operator=(const RenderState&) = delete;

    // Every frame of a render comes from here. Macros hold the frame they were defined in and live
    // in it, a reference cycle; the state breaks such cycles when the render ends.
    std::shared_ptr<Frame> make_frame(std::shared_ptr<Frame> parent);

    const RenderOptions* options;
    int call_depth = 0;

  private:
    std::vector<std::weak_ptr<Frame>> frames_;
    size_t prune_at_ = 64;
};

class Env {
  public:
    std::shared_ptr<Frame> frame;
    std::string* out = nullptr;
    RenderState* state = nullptr;

    Value lookup(const std::string& name) const;  // undefined when no scope has it

    // Render into a string instead of the current output.
    template <typename F>
    std::string capture(F&& render) {
        std::string buf;
        std::string* saved = out;
        out = &buf;
        struct Restore {
            Env& env;
            std::string* saved;
            ~Restore() { env.out = saved; }
        } restore{*this, saved};
        render();
        return buf;
    }
};

// Counts nested macro calls / recursive loops, failing past RenderOptions::max_call_depth.
class CallDepthGuard {
  public:
    explicit CallDepthGuard(RenderState& state);
    ~CallDepthGuard() { --state_.call_depth; }
    CallDepthGuard(const CallDepthGuard&) = delete;
    CallDepthGuard& operator=(const CallDepthGuard&) = delete;

  private:
    RenderState& state_;
};

}  // namespace engine::jinja
