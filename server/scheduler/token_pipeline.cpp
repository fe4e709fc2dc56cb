#include "server/scheduler/token_pipeline.h"

#include <stdexcept>

namespace sched {

TokenPipeline::TokenPipeline(const engine::Vocab& vocab, std::vector<std::string> stop, int32_t n_predict,
                             bool ignore_eos, bool special, int32_t n_indent, std::vector<engine::Token> shown)
    : vocab_(vocab),
      decoder_(vocab, special, std::move(shown)),
      stop_(std::move(stop)),
      n_predict_(n_predict),
      ignore_eos_(ignore_eos),
      n_indent_(n_indent) {}

bool TokenPipeline::check_indent(Step& step) {
    for (;;) {
        if (line_start_ > 0) {
            size_t p = line_start_;
            while (p < content_.size() && (content_[p] == ' ' || content_[p] == '\t')) ++p;
            if (p >= content_.size()) return false;  // the line's indentation is not known yet
            if ((int32_t)(p - line_start_) < n_indent_) {
                // Checked after every step, so the cut text is always text of this step.
                const size_t cut = content_.size() - p;
                content_.erase(p);
                step.text.erase(step.text.size() - std::min(cut, step.text.size()));
                return true;
            }
        }
        const size_t nl = content_.find('\n', line_start_);
        if (nl == std::string::npos) return false;
        line_start_ = nl + 1;
    }
}

TokenPipeline::Step TokenPipeline::push(std::span<const engine::Token> tokens, bool end_at_new_line) {
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
        const std::string piece = decoder_.feed(tok);
        spans_.emplace_back(decoded_, decoded_ + piece.size());
        decoded_ += piece.size();
        const StopMatcher::Result r = stop_.push(piece);
        step.text += r.emit;
        content_ += r.emit;
        if (r.stopped) {
            step.end = PipelineEnd{FinishReason::Stop, false, r.word};
            break;
        }
        if (n_indent_ > 0 && check_indent(step)) {
            cut_ = true;  // text held back comes after the cut: flush() drops it
            step.end = PipelineEnd{FinishReason::Length, false, ""};
            break;
        }
        if ((n_predict_ >= 0 && n_decoded_ >= n_predict_) || (end_at_new_line && has_new_line())) {
            step.end = PipelineEnd{FinishReason::Length, false, ""};
            break;
        }
    }
    ended_ = step.end.has_value();
    update_released();
    return step;
}

// A token is released once shown text reaches into it; a token without text of its own (a partial
// character, a hidden control token) once the shown text reaches where it stands.
void TokenPipeline::update_released() {
    while (released_ < tokens_.size()) {
        const auto [start, end] = spans_[released_];
        if (start < content_.size() || (start == end && start <= content_.size())) {
            ++released_;
        } else {
            break;
        }
    }
}

std::string TokenPipeline::flush() {
    ended_ = true;
    if (cut_) return "";
    const StopMatcher::Result r = stop_.push(decoder_.flush());
    std::string tail = r.emit + (r.stopped ? "" : stop_.flush());
    content_ += tail;
    if (r.stopped) {
        update_released();  // a stop string completed by the decoder's last bytes: its tokens stay out
    } else {
        released_ = tokens_.size();
    }
    return tail;
}

}  // namespace sched
