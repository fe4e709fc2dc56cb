// What a model server started by the router tells it besides its log: state changes the router cannot
// see over HTTP without polling (asleep, awake). The router marks its children with an environment
// variable; a marked server writes these lines on its standard output, which the router reads. They
// are not log lines, so the children's log level, format or --log-disable cannot hide them.
#pragma once

#include <string_view>

namespace router {

inline constexpr const char* kChildEnv = "GGSERVE_ROUTER_CHILD";
inline constexpr std::string_view kChildSleeping = "ggserve-router-child: sleeping";
inline constexpr std::string_view kChildAwake = "ggserve-router-child: awake";

}  // namespace router
