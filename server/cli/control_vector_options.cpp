#include "server/cli/control_vector_options.h"

#include <sstream>
#include <stdexcept>

#include "server/cli/file_lists.h"

namespace cli {

namespace {

// "START\nEND" (two arguments), "START END" or "START,END" (environment, --config).
void parse_range(const std::string& v, ControlVectorOptions& o) {
    std::string s = v;
    for (char& c : s)
        if (c == '\n' || c == ',') c = ' ';
    std::istringstream in(s);
    long start = 0, end = 0;
    std::string rest;
    if (!(in >> start >> end) || (in >> rest))
        throw ArgError("--control-vector-layer-range takes START END (two layer numbers), got '" + v + "'");
    if (start > 1000000 || end > 1000000 || start < -1000000 || end < -1000000)
        throw ArgError("--control-vector-layer-range: layer numbers out of range in '" + v + "'");
    if (start > 0 && end > 0 && start > end)
        throw ArgError("--control-vector-layer-range " + std::to_string(start) + " " + std::to_string(end) +
                       ": the start is after the end");
    o.layer_start = (int)start;
    o.layer_end = (int)end;
}

}  // namespace

void add_control_vector_options(ArgParser& ap, ControlVectorOptions& o) {
    ap.add("--control-vector", "FNAME",
           "control vector added to the layers' outputs, scale 1 (repeatable, or a comma-separated list)",
           [&o](const std::string& v) {
               for (const std::string& path : split_file_list(v)) o.files.push_back({path, 1.0f});
           });
    ap.add_with_number(
        "--control-vector-scaled", "FNAME SCALE",
        "control vector with a scale: FNAME SCALE, or FNAME:SCALE[,FNAME:SCALE...] (repeatable; "
        "several vectors add up)",
        [&o](const std::string& v) {
            for (const auto& [path, scale] : parse_scaled_files("--control-vector-scaled", v))
                o.files.push_back({path, scale});
        });
    ap.add_with_number(
        "--control-vector-layer-range", "START END",
        "layers whose outputs the control vectors change, start and end inclusive (default: all; "
        "direction.N steers layer N's output)",
        [&o](const std::string& v) { parse_range(v, o); });
}

void finish_control_vector_options(ControlVectorOptions& o) {
    if (o.files.empty()) {
        if (o.layer_start != -1 || o.layer_end != -1)
            throw ArgError("--control-vector-layer-range needs --control-vector or --control-vector-scaled");
        return;
    }
    try {
        o.sum = engine::sum_control_vectors(o.files);
    } catch (const std::exception& e) {
        throw ArgError(e.what());
    }
}

std::unique_ptr<engine::ControlVector> make_control_vector(const ControlVectorOptions& o,
                                                           const engine::Model& m) {
    if (o.files.empty()) return nullptr;
    return engine::ControlVector::create(o.sum, m, o.layer_start, o.layer_end);
}

nlohmann::json describe_control_vector(const ControlVectorOptions& o, const engine::ControlVector& cv) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : o.files) files.push_back({{"path", f.path}, {"scale", f.scale}});
    nlohmann::json layers = nlohmann::json::array();
    for (uint32_t il = 0; il < cv.n_layers(); ++il)
        if (cv.layer(il)) layers.push_back(il);
    return {{"files", files}, {"layer_range", {cv.layer_start(), cv.layer_end()}}, {"layers", layers}};
}

}  // namespace cli
