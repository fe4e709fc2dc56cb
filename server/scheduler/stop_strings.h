// Stop strings over streamed text: text that could still turn into a stop string is held back, so a
// stop string is never split across stream chunks and never emitted.
#pragma once

#include <string>
#include <vector>

namespace sched {

class StopMatcher {
public:
    explicit StopMatcher(std::vector<std::string> stops);

    struct Result {
        std::string emit;      // text that can be sent now
        bool stopped = false;  // a stop string was found; nothing after it is emitted
        std::string word;      // the stop string found
    };
    // Appends generated text and returns what may be emitted.
    Result push(const std::string& text);
    // At the end of generation: the held-back text (no stop string completed).
    std::string flush();

private:
    std::vector<std::string> stops_;
    std::string pending_;
};

}  // namespace sched
