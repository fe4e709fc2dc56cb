// What `--version`, /props build_info and the startup log report about this build.
#pragma once

namespace api {

const char* build_version();   // the project version, e.g. "0.1.0"
const char* build_commit();    // the git commit the build was configured from ("unknown" outside git)
const char* build_compiler();  // e.g. "GNU 12.2.0"
const char* build_target();    // e.g. "x86_64 Linux"
// "b<version>-<commit>", the shape of llama-server's build_info.
const char* build_info();

}  // namespace api
