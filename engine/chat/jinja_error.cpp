#include "engine/chat/jinja_error.h"

namespace engine::jinja {

TemplateError::TemplateError(Kind kind, std::string message, int line, int column)
    : kind_(kind), message_(std::move(message)), line_(line), column_(column) {
    format();
}

void TemplateError::set_location(int line, int column) {
    line_ = line;
    column_ = column;
    format();
}

void TemplateError::format() {
    what_ = line_ > 0
                ? "line " + std::to_string(line_) + ", column " + std::to_string(column_) + ": " + message_
                : message_;
}

void fail(std::string message) {
    throw TemplateError(TemplateError::Kind::Runtime, std::move(message));
}

}  // namespace engine::jinja
