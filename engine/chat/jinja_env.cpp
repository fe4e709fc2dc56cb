#include "engine/chat/jinja_env.h"

#include <algorithm>

#include "engine/chat/jinja_error.h"

namespace engine::jinja {

const Value* Frame::find(std::string_view name) const {
    for (const Frame* f = this; f; f = f->parent.get()) {
        for (const auto& [n, v] : f->vars) {
            if (n == name) return &v;
        }
    }
    return nullptr;
}

void Frame::set(std::string_view name, Value value) {
    for (auto& [n, v] : vars) {
        if (n == name) {
            v = std::move(value);
            return;
        }
    }
    vars.emplace_back(std::string(name), std::move(value));
}

Value Env::lookup(const std::string& name) const {
    if (const Value* v = frame->find(name)) return *v;
    return Value::undefined("'" + name + "' is undefined");
}

std::shared_ptr<Frame> RenderState::make_frame(std::shared_ptr<Frame> parent) {
    if (frames_.size() >= prune_at_) {
        std::erase_if(frames_, [](const std::weak_ptr<Frame>& f) { return f.expired(); });
        prune_at_ = std::max<size_t>(64, 2 * frames_.size());
    }
    auto frame = std::make_shared<Frame>();
    frame->parent = std::move(parent);
    frames_.push_back(frame);
    return frame;
}

RenderState::~RenderState() {
    // Clearing a frame can destroy others; weak pointers skip the ones already gone.
    for (const auto& weak : frames_) {
        if (auto frame = weak.lock()) {
            auto vars = std::move(frame->vars);
            frame->vars.clear();
        }
    }
}

CallDepthGuard::CallDepthGuard(RenderState& state) : state_(state) {
    if (++state_.call_depth > state_.options->max_call_depth) {
        --state_.call_depth;
        fail("maximum recursion depth exceeded (the limit is " + std::to_string(state_.options->max_call_depth) +
             " nested macro calls or recursive loops)");
    }
}

}  // namespace engine::jinja
