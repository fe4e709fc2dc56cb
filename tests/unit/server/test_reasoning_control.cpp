// ReasoningControls: the registry behind POST /v1/chat/completions/control. A control reaches the signal
// of a running request only; a finished request's entry expires with it and is pruned, so the registry
// stays bounded by the requests running.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "server/api/reasoning_control.h"

TEST_CASE("reasoning controls reach running requests only, and finished ones are pruned", "[server][reasoning]") {
    api::ReasoningControls controls;
    auto a = controls.arm("chatcmpl-a");
    auto b = controls.arm("chatcmpl-b");
    CHECK(controls.end("chatcmpl-a"));
    CHECK(a->load());
    CHECK_FALSE(b->load());
    CHECK_FALSE(controls.end("chatcmpl-unknown"));

    b.reset();  // the request finished: its samplers (the owners) are gone
    CHECK_FALSE(controls.end("chatcmpl-b"));

    // Ten thousand requests come and go beside one that keeps running.
    for (int i = 0; i < 10000; ++i) controls.arm("chatcmpl-" + std::to_string(i));
    CHECK(controls.size() <= 130);
    CHECK(controls.end("chatcmpl-a"));
}
