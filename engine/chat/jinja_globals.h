// Global functions of a render: range, dict, namespace, joiner, raise_exception, strftime_now.
#pragma once

#include <memory>

#include "engine/chat/jinja_env.h"

namespace engine::jinja {

std::shared_ptr<Frame> make_global_frame(RenderState& state);

}  // namespace engine::jinja
