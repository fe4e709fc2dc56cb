// StreamSessions: the registry behind resumable streams (X-Conversation-Id). A newer stream of a
// conversation stops the older one, DELETE stops and forgets, finished sessions are kept for a while and
// in bounded number, and the ids a header may carry are checked.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "server/api/stream_sessions.h"

using api::StreamSession;
using api::StreamSessions;

TEST_CASE("stream sessions: a newer stream of a conversation stops the older, remove stops and forgets",
          "[server][streams]") {
    StreamSessions reg;
    int stopped_a = 0, stopped_b = 0;
    auto a = reg.start("conv");
    a->set_cancel([&] { ++stopped_a; });
    a->append("data: 1\n\n");
    auto b = reg.start("conv");
    b->set_cancel([&] { ++stopped_b; });
    CHECK(stopped_a == 1);
    CHECK(reg.find("conv") == b);
    CHECK(reg.remove("conv"));
    CHECK(stopped_b == 1);
    CHECK_FALSE(reg.remove("conv"));
    CHECK(reg.find("conv") == nullptr);
    b->cancel();  // at most once
    CHECK(stopped_b == 1);
}

TEST_CASE("stream sessions: info counts the bytes, a finished one has nothing left to stop", "[server][streams]") {
    StreamSessions reg;
    auto s = reg.start("c1");
    int stopped = 0;
    s->set_cancel([&] { ++stopped; });
    s->append("data: {}\n\n");
    s->append("data: [DONE]\n\n");
    auto info = s->info();
    CHECK(info["conversation_id"] == "c1");
    CHECK(info["is_done"] == false);
    CHECK(info["total_bytes"] == 24);
    CHECK(info["completed_at"] == 0);
    CHECK(info["started_at"].get<int64_t>() > 0);
    s->finish();
    s->append("late");  // after the end: not recorded
    info = s->info();
    CHECK(info["is_done"] == true);
    CHECK(info["total_bytes"] == 24);
    CHECK(info["completed_at"].get<int64_t>() >= info["started_at"].get<int64_t>());
    CHECK(reg.remove("c1"));
    CHECK(stopped == 0);
}

TEST_CASE("stream sessions: finished ones are kept for a while and in bounded number", "[server][streams]") {
    StreamSessions reg;
    reg.max_finished = 3;
    for (int i = 0; i < 10; ++i) reg.start("done-" + std::to_string(i))->finish();
    auto running = reg.start("running");
    CHECK(reg.find("running") == running);
    CHECK(reg.size() <= 4 + 1);
    CHECK(reg.find("done-9") != nullptr);  // the newest finished ones stay
    CHECK(reg.find("done-0") == nullptr);

    reg.keep_for = std::chrono::seconds(0);
    reg.start("another");  // prunes: every finished session is past its time now
    CHECK(reg.find("done-9") == nullptr);
    CHECK(reg.find("running") == running);  // a running one is never pruned
}

TEST_CASE("stream sessions: conversation ids are 1 to 256 printable ASCII characters", "[server][streams]") {
    CHECK(StreamSessions::valid_id("conv-1::model") == "conv-1::model");
    CHECK(StreamSessions::valid_id(std::string(256, 'a')).size() == 256);
    CHECK(StreamSessions::valid_id(std::string(257, 'a')).empty());
    CHECK(StreamSessions::valid_id("").empty());
    CHECK(StreamSessions::valid_id("a b").empty());
    CHECK(StreamSessions::valid_id("caf\xc3\xa9").empty());
    CHECK(StreamSessions::valid_id("a\nb").empty());
}
