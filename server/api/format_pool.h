// Threads that turn the engine's plain token outputs into response bytes (JSON chunks, SSE events,
// final bodies), so that the engine thread never formats: sinks only queue. Each response gets a
// Serial: what is posted to one Serial runs in order and never concurrently, on any pool thread.
#pragma once

#include <functional>
#include <memory>

namespace api {

class FormatPool {
  public:
    explicit FormatPool(int n_threads);
    ~FormatPool();  // runs what is queued, then joins
    FormatPool(const FormatPool&) = delete;
    FormatPool& operator=(const FormatPool&) = delete;

    class Serial {
      public:
        virtual ~Serial() = default;
        // Never blocks; fn runs later on a pool thread, after everything posted here before it.
        virtual void post(std::function<void()> fn) = 0;
    };
    std::shared_ptr<Serial> serial();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace api
