#include "server/webui/static_files.h"

#include <algorithm>
#include <array>
#include <boost/beast/zlib/inflate_stream.hpp>
#include <cstdint>
#include <stdexcept>

namespace webui {

namespace fs = std::filesystem;
using server::http::Headers;
using server::http::iequals;

static std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// Calls fn(item) for each comma-separated item of every field called `name`.
template <class Fn>
static void for_each_item(const Headers& headers, std::string_view name, Fn fn) {
    for (const auto& [k, v] : headers) {
        if (!iequals(k, name)) continue;
        std::string_view rest = v;
        while (!rest.empty()) {
            const std::size_t comma = rest.find(',');
            fn(trim(rest.substr(0, comma)));
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
}

bool accepts_gzip(const Headers& request_headers) {
    bool gzip = false, star = false, gzip_refused = false;
    for_each_item(request_headers, "Accept-Encoding", [&](std::string_view item) {
        std::string_view coding = trim(item.substr(0, item.find(';')));
        bool refused = false;
        if (std::size_t semi = item.find(';'); semi != std::string_view::npos) {
            std::string_view param = trim(item.substr(semi + 1));
            if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
                std::string_view q = param.substr(2);
                // q=0, q=0.0, q=0.000: refused; anything else is a preference above zero.
                refused = !q.empty() && q.find_first_not_of("0.") == std::string_view::npos;
            }
        }
        if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) {
            (refused ? gzip_refused : gzip) = true;
        } else if (coding == "*" && !refused) {
            star = true;
        }
    });
    return gzip || (star && !gzip_refused);
}

static std::string_view opaque_tag(std::string_view tag) {
    if (tag.size() >= 2 && (tag[0] == 'W' || tag[0] == 'w') && tag[1] == '/') tag.remove_prefix(2);
    return tag;
}

bool etag_matches(const Headers& request_headers, std::string_view etag) {
    bool match = false;
    for_each_item(request_headers, "If-None-Match", [&](std::string_view item) {
        match |= item == "*" || opaque_tag(item) == opaque_tag(etag);
    });
    return match;
}

static std::uint32_t crc32(const unsigned char* data, std::size_t n) {
    static const std::array<std::uint32_t, 256> table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

std::string gunzip(std::span<const unsigned char> gz) {
    auto fail = [](const char* why) { throw std::runtime_error(std::string("gunzip: ") + why); };
    if (gz.size() < 18 || gz[0] != 0x1f || gz[1] != 0x8b || gz[2] != 8) fail("not a gzip stream");
    const unsigned flags = gz[3];
    std::size_t pos = 10;
    if (flags & 0x04) {  // FEXTRA
        if (pos + 2 > gz.size()) fail("truncated header");
        pos += 2 + (gz[pos] | (std::size_t(gz[pos + 1]) << 8));
    }
    for (unsigned bit : {0x08u, 0x10u}) {  // FNAME, FCOMMENT: zero-terminated
        if (!(flags & bit)) continue;
        while (pos < gz.size() && gz[pos] != 0) ++pos;
        ++pos;
    }
    if (flags & 0x02) pos += 2;  // FHCRC
    if (pos + 8 > gz.size()) fail("truncated stream");
    auto le32 = [&](std::size_t at) {
        return std::uint32_t(gz[at]) | std::uint32_t(gz[at + 1]) << 8 | std::uint32_t(gz[at + 2]) << 16 |
               std::uint32_t(gz[at + 3]) << 24;
    };
    const std::uint32_t crc = le32(gz.size() - 8), size = le32(gz.size() - 4);

    std::string out(size, '\0');
    boost::beast::zlib::z_params zs;
    zs.next_in = gz.data() + pos;
    zs.avail_in = gz.size() - 8 - pos;
    zs.next_out = out.data();
    zs.avail_out = out.size();
    boost::beast::zlib::inflate_stream inflater;
    boost::system::error_code ec;
    inflater.write(zs, boost::beast::zlib::Flush::finish, ec);
    if (ec && ec != boost::beast::zlib::error::end_of_stream) fail("corrupt deflate data");
    if (zs.total_out != size) fail("length mismatch");
    if (crc32(reinterpret_cast<const unsigned char*>(out.data()), out.size()) != crc) fail("CRC mismatch");
    return out;
}

std::string_view content_type_for(std::string_view name) {
    static constexpr std::pair<std::string_view, std::string_view> types[] = {
        {".html", "text/html; charset=utf-8"},
        {".htm", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json; charset=utf-8"},
        {".map", "application/json; charset=utf-8"},
        {".txt", "text/plain; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".jpg", "image/jpeg"},
        {".jpeg", "image/jpeg"},
        {".gif", "image/gif"},
        {".webp", "image/webp"},
        {".ico", "image/x-icon"},
        {".woff", "font/woff"},
        {".woff2", "font/woff2"},
        {".ttf", "font/ttf"},
        {".wasm", "application/wasm"},
    };
    const std::size_t dot = name.rfind('.');
    if (dot != std::string_view::npos && name.find('/', dot) == std::string_view::npos) {
        const std::string_view ext = name.substr(dot);
        for (const auto& [e, type] : types)
            if (iequals(ext, e)) return type;
    }
    return "application/octet-stream";
}

static bool inside(const fs::path& root, const fs::path& p) {
    auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
    return r == root.end();
}

std::optional<fs::path> resolve_under(const fs::path& root, std::string_view path) {
    if (path.empty() || path.front() != '/') return std::nullopt;
    fs::path rel;
    std::string_view rest = path.substr(1);
    while (!rest.empty()) {
        const std::size_t slash = rest.find('/');
        const std::string_view seg = rest.substr(0, slash);
        if (!seg.empty()) {
            if (seg.front() == '.' || seg.find_first_of(std::string_view("\\\0", 2)) != std::string_view::npos)
                return std::nullopt;
            rel /= seg;
        }
        if (slash == std::string_view::npos) break;
        rest.remove_prefix(slash + 1);
    }
    std::error_code ec;
    fs::path real = fs::canonical(root / rel, ec);
    if (ec || !inside(root, real)) return std::nullopt;
    if (fs::is_directory(real, ec)) {
        real = fs::canonical(real / "index.html", ec);
        if (ec || !inside(root, real)) return std::nullopt;
    }
    if (!fs::is_regular_file(real, ec)) return std::nullopt;
    return real;
}

}  // namespace webui
