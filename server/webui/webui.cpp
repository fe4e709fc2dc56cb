#include "server/webui/webui.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "server/http/errors.h"
#include "server/webui/embedded_assets.h"
#include "server/webui/static_files.h"

namespace webui {

namespace fs = std::filesystem;
using server::http::Reply;
using server::http::Request;
using server::http::Response;

static std::string hex64(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

// FNV-1a: a content tag, not a security measure.
static std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

WebUi::WebUi(WebUiOptions options) {
    if (!options.path.empty()) {
        std::error_code ec;
        root_ = fs::canonical(options.path, ec);
        if (ec || !fs::is_directory(root_, ec))
            throw std::runtime_error("--path '" + options.path + "' is not a readable directory");
        return;
    }
    for (const EmbeddedAsset& a : embedded_assets()) {
        File f;
        f.gzip.assign(reinterpret_cast<const char*>(a.gzip.data()), a.gzip.size());
        f.plain = gunzip(a.gzip);  // once, for the rare client without gzip; also checks the bundle
        f.content_type = content_type_for(a.path);
        f.etag = "\"" + hex64(fnv1a(f.plain)) + "\"";
        f.immutable = a.path.starts_with("/assets/");
        gzip_bytes_ += a.gzip.size();
        files_.emplace(std::string(a.path), std::move(f));
    }
}

Reply WebUi::handle(const Request& req) const {
    if (req.method != "GET" && req.method != "HEAD")
        return server::http::error_response(404, "File Not Found");
    return root_.empty() ? serve_embedded(req) : serve_directory(req);
}

Response WebUi::serve_embedded(const Request& req) const {
    if (files_.empty()) {
        return Response::text(
            "This ggserve was built without its web UI (-DGGSERVE_WEBUI=OFF). The API is served as usual; "
            "`--path DIR` serves a directory of static files at /.\n",
            404);
    }
    const std::string_view path = req.path == "/" ? std::string_view("/index.html") : std::string_view(req.path);
    auto it = files_.find(path);
    if (it == files_.end()) return server::http::error_response(404, "File Not Found");
    const File& f = it->second;

    Response r;
    r.headers.set("ETag", f.etag);
    r.headers.set("Cache-Control", f.immutable ? "public, max-age=31536000, immutable" : "no-cache");
    r.headers.set("Vary", "Accept-Encoding");
    r.headers.set("Content-Security-Policy", kContentSecurityPolicy);
    r.headers.set("X-Content-Type-Options", "nosniff");
    r.headers.set("Referrer-Policy", "no-referrer");
    if (etag_matches(req.headers, f.etag)) {
        r.status = 304;
        return r;
    }
    r.headers.set("Content-Type", f.content_type);
    if (accepts_gzip(req.headers)) {
        r.headers.set("Content-Encoding", "gzip");
        r.body = f.gzip;
    } else {
        r.body = f.plain;
    }
    return r;
}

Response WebUi::serve_directory(const Request& req) const {
    auto file = resolve_under(root_, req.path);
    if (!file) return server::http::error_response(404, "File Not Found");
    std::error_code ec;
    const auto size = fs::file_size(*file, ec);
    const auto mtime = fs::last_write_time(*file, ec);
    if (ec) return server::http::error_response(404, "File Not Found");
    const std::string etag =
        "\"" + hex64(size) + "-" + hex64(static_cast<std::uint64_t>(mtime.time_since_epoch().count())) + "\"";

    Response r;
    r.headers.set("ETag", etag);
    r.headers.set("Cache-Control", "no-cache");
    r.headers.set("X-Content-Type-Options", "nosniff");
    if (etag_matches(req.headers, etag)) {
        r.status = 304;
        return r;
    }
    std::ifstream in(*file, std::ios::binary);
    std::ostringstream body;
    if (!in || (size > 0 && !(body << in.rdbuf())))
        return server::http::error_response(500, "cannot read the file");
    r.headers.set("Content-Type", content_type_for(file->filename().string()));
    r.body = std::move(body).str();
    return r;
}

}  // namespace webui
