#include "server/scheduler/token_pipeline.h"

#include <stdexcept>

namespace sched {

TokenPipeline::TokenPipeline(const engine::Vocab& vocab, std::vector<std::string> stop, int32_t n_predict,
                             bool ignore_eos)
    : vocab_(vocab), decoder_(vocab), stop_(std::move(stop)), n_predict_(n_predict), ignore_eos_(ignore_eos) {}

TokenPipeline::Step TokenPipeline::push(std::span<const engine::Token> tokens) {
    if (ended_) throw std::logic_error("token pipeline: push after the end of generation");
    Step step;
    for (engine::Token tok : tokens) {
        ++step.n_consumed;
        ++n_decoded_;
        if (vocab_.is_eog(tok) && !ignore_eos_) {
            step.end = PipelineEnd{FinishReason::Stop, true, ""};
            break;
        }
        ++step.n_shown;
        tokens_.push_back(tok);
        const StopMatcher::Result r = stop_.push(decoder_.feed(tok));
        step.text += r.emit;
        content_ += r.emit;
        if (r.stopped) {
            step.end = PipelineEnd{FinishReason::Stop, false, r.word};
            break;
        }
        if (n_predict_ >= 0 && n_decoded_ >= n_predict_) {
            step.end = PipelineEnd{FinishReason::Length, false, ""};
            break;
        }
    }
    ended_ = step.end.has_value();
    return step;
}

std::string TokenPipeline::flush() {
    ended_ = true;
    const StopMatcher::Result r = stop_.push(decoder_.flush());
    std::string tail = r.emit + (r.stopped ? "" : stop_.flush());
    content_ += tail;
    return tail;
}

}  // namespace sched
