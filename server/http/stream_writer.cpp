#include "server/http/stream_writer.h"

#include <utility>

#include "server/http/exchange_state.h"
#include "server/http/sse.h"

namespace server::http {

StreamWriter::StreamWriter(std::shared_ptr<detail::ExchangeState> state) : state_(std::move(state)) {}

StreamWriter::~StreamWriter() {
    state_->abandon();
}

bool StreamWriter::send(std::string_view data) {
    return state_->push(format_sse_event(data));
}

bool StreamWriter::send_event(std::string_view event, std::string_view data) {
    return state_->push(format_sse_event(data, event));
}

bool StreamWriter::write(std::string bytes) {
    return state_->push(std::move(bytes));
}

void StreamWriter::close() {
    state_->finish();
}

void StreamWriter::on_cancel(std::function<void()> callback) {
    state_->set_cancel(std::move(callback));
}

bool StreamWriter::cancelled() const {
    return state_->failed();
}

DeferredResponse::DeferredResponse(std::shared_ptr<detail::ExchangeState> state) : state_(std::move(state)) {}

DeferredResponse::~DeferredResponse() {
    state_->abandon();
}

bool DeferredResponse::respond(Response response) {
    return state_->respond(std::move(response));
}

std::shared_ptr<StreamWriter> DeferredResponse::stream(StreamOptions options) {
    if (!state_->start_stream(options)) return nullptr;
    return std::make_shared<StreamWriter>(state_);
}

void DeferredResponse::on_cancel(std::function<void()> callback) {
    state_->set_cancel(std::move(callback));
}

bool DeferredResponse::cancelled() const {
    return state_->failed();
}

}  // namespace server::http
