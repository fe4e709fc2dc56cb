// Which streams of a step will finish before another one anyway. When several requests decode side by side
// and none waits for a slot, the group's wall time is that of its last stream. A stream's drafts lengthen
// the steps every stream waits for; they pay for the group while the stream may still be the last to
// finish, not once it will surely finish first: then the steps they save are steps the others take
// without it, which cost nearly as much. Four streams of 256-token replies with ngram-map-k took 20,988
// steps at four streams and 4,318 with fewer, against 25,167 and 573 decoding plainly: some streams'
// drafts made them finish early and the rest went on alone. Such a stream asks its drafts for more
// (DraftController::kMinGainAhead); the others draft as before.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace engine::spec {

struct StreamProgress {
    // The most tokens it may still generate (max_tokens less what it has); < 0: no bound.
    int32_t remaining = -1;
    // Tokens per step while it drafts as usual (1: decoding plainly).
    double pace = 1.0;
};

// A stream is ahead when, at the paces given, another stream needs more steps to finish than it does, by
// more than the square root of those steps (what drafts bring varies from step to step: a lead of a few
// steps says little of who finishes last). Never alone; never without a bound of its own (it may be the
// longest); always beside a stream without a bound.
std::vector<bool> streams_ahead(std::span<const StreamProgress> streams);

}  // namespace engine::spec
