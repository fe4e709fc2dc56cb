// Errors of the Jinja interpreter. Every error carries the template line and column it was raised
// at (1-based; 0 while it is still propagating out of a helper that does not know its position).
#pragma once

#include <stdexcept>
#include <string>

namespace engine::jinja {

class TemplateError : public std::exception {
  public:
    enum class Kind {
        Syntax,   // the template does not parse
        Runtime,  // an operation failed while rendering (type error, undefined value, ...)
        Raised,   // the template called raise_exception(message)
    };

    TemplateError(Kind kind, std::string message, int line = 0, int column = 0);

    Kind kind() const { return kind_; }
    const std::string& message() const { return message_; }  // without the position
    int line() const { return line_; }
    int column() const { return column_; }
    bool has_location() const { return line_ > 0; }
    void set_location(int line, int column);

    const char* what() const noexcept override { return what_.c_str(); }

  private:
    void format();

    Kind kind_;
    std::string message_;
    int line_;
    int column_;
    std::string what_;
};

// Raise a runtime error at the position of the node being evaluated (filled in on the way out).
[[noreturn]] void fail(std::string message);

}  // namespace engine::jinja
