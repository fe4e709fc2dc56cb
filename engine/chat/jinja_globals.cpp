#include "engine/chat/jinja_globals.h"

#include <ctime>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_ops.h"

namespace engine::jinja {

namespace {

constexpr int64_t kMaxRange = 1 << 20;  // a runaway range() should fail, not eat the memory

Value range(const CallArgs& a) {
    if (!a.named.empty()) fail("range() takes no keyword arguments");
    for (const Value& v : a.positional) {
        if (!v.is_int() && !v.is_bool())
            fail("'" + v.type_name() + "' object cannot be interpreted as an integer");
    }
    int64_t start = 0, stop = 0, step = 1;
    switch (a.positional.size()) {
        case 1:
            stop = a.positional[0].as_int();
            break;
        case 2:
            start = a.positional[0].as_int();
            stop = a.positional[1].as_int();
            break;
        case 3:
            start = a.positional[0].as_int();
            stop = a.positional[1].as_int();
            step = a.positional[2].as_int();
            break;
        default:
            fail("range expected 1 to 3 arguments, got " + std::to_string(a.positional.size()));
    }
    if (step == 0) fail("range() arg 3 must not be zero");
    std::vector<Value> out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        if (static_cast<int64_t>(out.size()) >= kMaxRange) fail("range too big");
        out.emplace_back(i);
    }
    return Value::array(std::move(out));
}

// dict(mapping or pairs, **kwargs) and namespace(mapping, **kwargs) build their contents alike.
void fill_mapping(Value& target, const CallArgs& a, const char* fn) {
    if (a.positional.size() > 1) fail(std::string(fn) + " expected at most 1 positional argument");
    if (!a.positional.empty()) {
        const Value& src = a.positional[0];
        if (src.is_object()) {
            for (const auto& [k, v] : src.as_object().items) target.as_object().set(k, v);
        } else {
            for (const Value& pair : iterate(src)) {
                auto kv = iterate(pair);
                if (kv.size() != 2) fail(std::string(fn) + ": sequence element has wrong length");
                target.as_object().set(kv[0], kv[1]);
            }
        }
    }
    for (const auto& [k, v] : a.named) target.as_object().set(Value(k), v);
}

}  // namespace

std::shared_ptr<Frame> make_global_frame(RenderState& state) {
    auto g = state.make_frame(nullptr);
    g->set("range", Value::function("range", range));
    g->set("dict", Value::function("dict", [](const CallArgs& a) {
               Value d = Value::object();
               fill_mapping(d, a, "dict");
               return d;
           }));
    g->set("namespace", Value::function("namespace", [](const CallArgs& a) {
               Value ns = Value::make_namespace();
               fill_mapping(ns, a, "namespace");
               return ns;
           }));
    g->set("raise_exception", Value::function("raise_exception", [](const CallArgs& a) -> Value {
               throw TemplateError(TemplateError::Kind::Raised, a.get(0, "message", Value("")).str());
           }));
    g->set("strftime_now", Value::function("strftime_now", [&state](const CallArgs& a) {
               const Value fmt = a.get(0, "format");
               if (!fmt.is_string()) fail("strftime_now expects a format string");
               const auto now = state.options && state.options->now ? *state.options->now
                                                                    : std::chrono::system_clock::now();
               const std::time_t t = std::chrono::system_clock::to_time_t(now);
               std::tm tm{};
               localtime_r(&t, &tm);
               char buf[256];
               const size_t n = std::strftime(buf, sizeof buf, fmt.as_string().c_str(), &tm);
               return Value(std::string(buf, n));
           }));
    // joiner(sep): returns "" on its first call and sep afterwards.
    g->set("joiner", Value::function("joiner", [](const CallArgs& a) {
               auto used = std::make_shared<bool>(false);
               const std::string sep = a.get(0, "sep", Value(", ")).str();
               return Value::function("joiner", [used, sep](const CallArgs&) {
                   if (!*used) {
                       *used = true;
                       return Value("");
                   }
                   return Value(sep);
               });
           }));
    return g;
}

}  // namespace engine::jinja
