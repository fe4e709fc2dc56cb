// Where a CPU graph's time goes, per kind of op: GGML_CPU_PROFILE=1 makes the CPU backend time every
// step of every graph (from the end of the previous step to the end of its own last share, so waiting
// for the slowest thread counts towards the op that made it wait) and print a table to stderr when the
// process exits. Matrix products are split by weight type and by one column (decode) or more (prefill).
// Without the variable the backend does one predictable branch per step.
#pragma once

#include <cstdint>
#include <string>

#include "ggml/ggml.h"

namespace ggml::cpu {

// True when GGML_CPU_PROFILE is set to a non-empty value other than "0" (read once).
bool op_profile_enabled();

// The row of the table a step of this node belongs to, e.g. "mul_mat q4_0 x f32 n>1" or "soft_max".
std::string op_profile_key(const Tensor* node);

// Adds one step's time (nanoseconds) to its row; safe from any thread.
void op_profile_add(const std::string& key, int64_t ns);

// Nanoseconds of a monotonic clock.
int64_t op_profile_now();

}  // namespace ggml::cpu
