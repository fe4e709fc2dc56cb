// --log-jsonl: every log line one JSON object, for programs that read the server's log (llama-server's
// format: "type" is "log" for log lines; level, time and message beside it).
#pragma once

#include <spdlog/formatter.h>

#include <memory>

namespace cli {

class JsonlLogFormatter final : public spdlog::formatter {
  public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
    std::unique_ptr<spdlog::formatter> clone() const override;
};

}  // namespace cli
