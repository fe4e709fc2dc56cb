#include "server/api/format_pool.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

namespace api {

struct FormatPool::Impl {
    explicit Impl(int n) : pool((size_t)std::max(n, 1)) {}
    boost::asio::thread_pool pool;
};

namespace {
class StrandSerial : public FormatPool::Serial {
  public:
    explicit StrandSerial(boost::asio::thread_pool& pool) : strand_(boost::asio::make_strand(pool)) {}
    void post(std::function<void()> fn) override { boost::asio::post(strand_, std::move(fn)); }

  private:
    boost::asio::strand<boost::asio::thread_pool::executor_type> strand_;
};
}  // namespace

FormatPool::FormatPool(int n_threads) : impl_(std::make_unique<Impl>(n_threads)) {}

FormatPool::~FormatPool() {
    impl_->pool.join();
}

std::shared_ptr<FormatPool::Serial> FormatPool::serial() {
    return std::make_shared<StrandSerial>(impl_->pool);
}

}  // namespace api
