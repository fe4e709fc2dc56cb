// HTTP header fields: an ordered list with case-insensitive names, as HTTP defines them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace server::http {

// Case-insensitive ASCII comparison (header names, tokens such as "chunked" or "Bearer").
bool iequals(std::string_view a, std::string_view b);
// A field value (or list item) without the spaces and tabs around it (HTTP's optional whitespace).
std::string_view trim_ows(std::string_view s);

class Headers {
  public:
    using Field = std::pair<std::string, std::string>;

    Headers() = default;
    Headers(std::initializer_list<Field> fields) : fields_(fields) {}

    // First value of `name`, if present.
    std::optional<std::string_view> get(std::string_view name) const;
    // First value of `name`, or `fallback`.
    std::string value_or(std::string_view name, std::string_view fallback = {}) const;
    bool contains(std::string_view name) const { return get(name).has_value(); }

    // Replaces every field called `name` by one with `value`.
    void set(std::string_view name, std::string_view value);
    // Appends a field even if one with the same name exists (e.g. Set-Cookie).
    void add(std::string_view name, std::string_view value);
    void remove(std::string_view name);

    const std::vector<Field>& fields() const { return fields_; }
    std::size_t size() const { return fields_.size(); }
    bool empty() const { return fields_.empty(); }
    auto begin() const { return fields_.begin(); }
    auto end() const { return fields_.end(); }

  private:
    std::vector<Field> fields_;
};

}  // namespace server::http
