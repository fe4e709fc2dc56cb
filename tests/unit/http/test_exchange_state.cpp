// The state shared by a StreamWriter/DeferredResponse and its connection: queueing, backpressure
// accounting and the exactly-once cancel callback.
#include <catch2/catch.hpp>

#include "server/http/exchange_state.h"
#include "server/http/stream_writer.h"

using namespace server::http;
using server::http::detail::ExchangeKind;
using server::http::detail::ExchangeState;

namespace {
struct Fixture {
    int notified = 0;
    std::shared_ptr<ExchangeState> make(ExchangeKind kind, std::size_t limit = 100) {
        return std::make_shared<ExchangeState>(kind, limit, [this] { ++notified; });
    }
};
}  // namespace

TEST_CASE("stream chunks are taken in order and notifications coalesce", "[http][exchange]") {
    Fixture f;
    auto s = f.make(ExchangeKind::stream);
    CHECK(s->push("a"));
    CHECK(s->push("bb"));
    CHECK(f.notified == 1);  // one wake-up until the connection takes the queue
    auto batch = s->take();
    CHECK(batch.chunks == std::vector<std::string>{"a", "bb"});
    CHECK(batch.bytes == 3);
    CHECK_FALSE(batch.finished);
    CHECK(s->push("c"));
    CHECK(f.notified == 2);
    s->finish();
    auto last = s->take();
    CHECK(last.chunks == std::vector<std::string>{"c"});
    CHECK(last.finished);
    CHECK_FALSE(s->push("late"));
    CHECK(s->push("") == false);  // closed: even an empty push is refused
}

TEST_CASE("a full queue fails the stream, written bytes free room", "[http][exchange]") {
    Fixture f;
    auto s = f.make(ExchangeKind::stream, 10);
    CHECK(s->push("12345"));
    CHECK(s->push("12345"));
    auto batch = s->take();  // taken but not yet written: still counts
    CHECK(batch.bytes == 10);
    s->written(5);
    CHECK(s->push("abcde"));
    CHECK_FALSE(s->push("x"));  // 5 in flight + 5 queued + 1 > 10
    CHECK(s->failed());
    CHECK(s->take().overflow);
}

TEST_CASE("the cancel callback runs exactly once, and not after the producer finished", "[http][exchange]") {
    Fixture f;
    int cancels = 0;
    auto s = f.make(ExchangeKind::stream);
    s->set_cancel([&] { ++cancels; });
    s->fail();
    s->fail();
    CHECK(cancels == 1);
    CHECK_FALSE(s->push("x"));

    // Registered after the failure: runs at once, still only once.
    auto late = f.make(ExchangeKind::stream);
    late->fail();
    int late_cancels = 0;
    late->set_cancel([&] { ++late_cancels; });
    late->set_cancel([&] { ++late_cancels; });
    CHECK(late_cancels == 1);

    // A producer that finished is not cancelled when the connection later fails.
    auto done = f.make(ExchangeKind::stream);
    int done_cancels = 0;
    done->set_cancel([&] { ++done_cancels; });
    done->finish();
    done->fail();
    CHECK(done_cancels == 0);

    // Overflow: the cancel runs at once (the connection may be stuck in a write that never ends), and
    // not again when the connection then fails the exchange.
    auto over = f.make(ExchangeKind::stream, 1);
    int over_cancels = 0;
    over->set_cancel([&] { ++over_cancels; });
    CHECK_FALSE(over->push("xx"));
    CHECK(over_cancels == 1);
    CHECK(over->overflowed());
    over->fail();
    CHECK(over_cancels == 1);
}

TEST_CASE("an overflow wakes the connection even while a notification is pending", "[http][exchange]") {
    Fixture f;
    auto s = f.make(ExchangeKind::stream, 10);
    CHECK(s->push("12345"));
    CHECK(f.notified == 1);  // the connection is busy writing and has not taken the queue
    CHECK(s->push("123"));
    CHECK(f.notified == 1);  // coalesced
    CHECK_FALSE(s->push("abcde"));
    CHECK(f.notified == 2);  // the overflow is told regardless
    CHECK(s->overflowed());
    CHECK_FALSE(s->push("x"));
    CHECK(f.notified == 2);
}

TEST_CASE("a deferred exchange answers once, a dropped handle is reported", "[http][exchange]") {
    Fixture f;
    auto d = f.make(ExchangeKind::deferred);
    CHECK_FALSE(d->push("not a stream"));
    CHECK(d->respond(Response::text("one")));
    CHECK_FALSE(d->respond(Response::text("two")));
    auto batch = d->take();
    REQUIRE(batch.response);
    CHECK(batch.response->body == "one");

    auto dropped = f.make(ExchangeKind::deferred);
    { DeferredResponse handle(dropped); }
    CHECK(dropped->take().abandoned);

    auto gone = f.make(ExchangeKind::deferred);
    gone->fail();
    CHECK_FALSE(gone->respond(Response::text("late")));
}

TEST_CASE("the writer formats SSE events and refuses to send once cancelled", "[http][exchange]") {
    Fixture f;
    auto state = f.make(ExchangeKind::stream, 1000);
    StreamWriter w(state);
    CHECK(w.send("{\"x\":1}"));
    CHECK(w.send_event("error", "oops"));
    CHECK(w.write(": ping\n\n"));
    auto batch = state->take();
    CHECK(batch.chunks ==
          std::vector<std::string>{"data: {\"x\":1}\n\n", "event: error\ndata: oops\n\n", ": ping\n\n"});
    state->fail();
    CHECK(w.cancelled());
    CHECK_FALSE(w.send("x"));
}
