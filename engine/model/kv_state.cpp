#include "engine/model/kv_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace engine {

namespace {

constexpr char kMagic[8] = {'G', 'G', 'K', 'V', 'S', 'E', 'Q', '\0'};

#pragma pack(push, 1)
struct Header {
    char magic[8];
    uint32_t version;
    uint64_t fingerprint;
    int32_t type_k, type_v;
    uint32_t n_layer, n_embd_k, n_embd_v;
    uint32_t n_tokens;
};
#pragma pack(pop)
static_assert(sizeof(Header) == 44);

struct Fnv {
    uint64_t h = 1469598103934665603ull;
    void bytes(const void* p, size_t n) {
        for (size_t i = 0; i < n; ++i) h = (h ^ ((const uint8_t*)p)[i]) * 1099511628211ull;
    }
    template <typename T>
    void value(const T& v) {
        bytes(&v, sizeof v);
    }
    void str(const std::string& s) {
        value(s.size());
        bytes(s.data(), s.size());
    }
};

std::string errno_text() {
    return std::strerror(errno);
}

// A file descriptor closed on scope exit.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

void write_all(int fd, const void* p, size_t n, const std::string& path) {
    const char* c = (const char*)p;
    while (n > 0) {
        const ssize_t w = ::write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw StateFileError("cannot write state file '" + path + "': " + errno_text());
        c += w;
        n -= (size_t)w;
    }
}

bool read_all(int fd, void* p, size_t n) {
    char* c = (char*)p;
    while (n > 0) {
        const ssize_t r = ::read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        c += r;
        n -= (size_t)r;
    }
    return true;
}

size_t row_bytes_k(const KvCache& kv) {
    return kv.k(0)->nb[1];
}
size_t row_bytes_v(const KvCache& kv) {
    return kv.v(0)->nb[1];
}

Header header_for(const Context& ctx, uint32_t n_tokens) {
    const HParams& hp = ctx.model().hparams();
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kStateVersion;
    h.fingerprint = model_fingerprint(ctx.model());
    h.type_k = (int32_t)ctx.kv().type_k();
    h.type_v = (int32_t)ctx.kv().type_v();
    h.n_layer = hp.n_layer;
    h.n_embd_k = hp.n_embd_k_gqa();
    h.n_embd_v = hp.n_embd_v_gqa();
    h.n_tokens = n_tokens;
    return h;
}

const char* type_label(int32_t id) {
    return ggml::type_is_known(id) ? ggml::type_name((ggml::Type)id) : "unknown";
}

}  // namespace

uint64_t model_fingerprint(const Model& model) {
    // Models live as long as the process in practice, but key by address and path to be safe.
    static std::mutex mu;
    static std::vector<std::pair<std::pair<const Model*, std::string>, uint64_t>> cache;
    std::lock_guard<std::mutex> lk(mu);
    for (const auto& [key, fp] : cache)
        if (key.first == &model && key.second == model.path()) return fp;

    Fnv f;
    const HParams& hp = model.hparams();
    f.str(hp.arch);
    for (uint32_t v : {hp.n_ctx_train, hp.n_embd, hp.n_layer, hp.n_ff, hp.n_head, hp.n_head_kv,
                       hp.n_embd_head_k, hp.n_embd_head_v, hp.n_rot, hp.n_vocab})
        f.value(v);
    for (float v : {hp.rms_eps, hp.norm_eps, hp.rope_freq_base, hp.rope_freq_scale, hp.yarn_ext_factor,
                    hp.yarn_attn_factor, hp.yarn_beta_fast, hp.yarn_beta_slow, hp.rope_freq_base_swa,
                    hp.rope_freq_scale_swa, hp.attn_softcap, hp.final_softcap})
        f.value(v);
    for (uint32_t v : {hp.n_ctx_orig, hp.n_swa, hp.n_expert, hp.n_expert_used, hp.n_ff_exp, hp.n_ff_shexp}) f.value(v);
    f.value(hp.rope_mode);
    f.value((int32_t)hp.rope_scaling);
    f.value(hp.causal);
    for (uint8_t v : hp.swa_layers) f.value(v);
    for (const auto& t : model.gguf().tensors()) {
        f.str(t.name);
        f.value((int32_t)t.type);
        for (int64_t n : t.ne) f.value(n);
        // Sampled weight bytes: the start, middle and end of every tensor.
        const size_t n = std::min<size_t>(64, t.size);
        const auto* d = (const uint8_t*)t.data;
        if (!d) continue;
        f.bytes(d, n);
        f.bytes(d + (t.size - n) / 2, n);
        f.bytes(d + t.size - n, n);
    }
    cache.push_back({{&model, model.path()}, f.h});
    return f.h;
}

namespace {

// Calls f(first, cell, n) for each run of consecutive cell indices cells[first..first+n): the rows of a
// run are adjacent in every K/V tensor, so each run is one copy.
template <typename F>
void for_each_run(const std::vector<int32_t>& cells, F&& f) {
    size_t i = 0;
    while (i < cells.size()) {
        size_t n = 1;
        while (i + n < cells.size() && cells[i + n] == cells[i] + (int32_t)n) ++n;
        f(i, cells[i], n);
        i += n;
    }
}

size_t state_size(const KvCache& kv, size_t n_layer, size_t n_tokens) {
    return sizeof(Header) + n_tokens * 2 * sizeof(int32_t) + n_layer * n_tokens * (row_bytes_k(kv) + row_bytes_v(kv));
}

// Checks a state's header against the running context and its total size; returns the header.
Header check_header(const Context& ctx, const uint8_t* data, size_t size, size_t max_tokens,
                    const std::string& source) {
    Header h{};
    if (size < sizeof h)
        throw StateFileError(source + " is truncated (" + std::to_string(size) +
                             " bytes, shorter than the header)");
    std::memcpy(&h, data, sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
        throw StateFileError(source + " is not a ggserve state file (bad magic)");
    if (h.version != kStateVersion)
        throw StateFileError(source + " has version " + std::to_string(h.version) + "; this build reads version " +
                             std::to_string(kStateVersion));
    const Header want = header_for(ctx, h.n_tokens);
    if (h.fingerprint != want.fingerprint) throw StateFileError(source + " was saved with a different model");
    if (h.n_layer != want.n_layer || h.n_embd_k != want.n_embd_k || h.n_embd_v != want.n_embd_v)
        throw StateFileError(source + " has a different cache shape (layers " + std::to_string(h.n_layer) +
                             ", K width " + std::to_string(h.n_embd_k) + ", V width " + std::to_string(h.n_embd_v) +
                             ")");
    if (h.type_k != want.type_k || h.type_v != want.type_v)
        throw StateFileError(source + " holds a " + type_label(h.type_k) + "/" + type_label(h.type_v) +
                             " cache but this context uses " + type_label(want.type_k) + "/" +
                             type_label(want.type_v) + " (-ctk/-ctv)");
    if (h.n_tokens > max_tokens)
        throw StateFileError(source + " holds " + std::to_string(h.n_tokens) + " tokens, more than the " +
                             std::to_string(max_tokens) + " that fit");
    const size_t expected = state_size(ctx.kv(), h.n_layer, h.n_tokens);
    if (size != expected)
        throw StateFileError(source + " has " + std::to_string(size) + " bytes; its header implies " +
                             std::to_string(expected) + (size < expected ? " (truncated)" : ""));
    return h;
}

}  // namespace

size_t seq_state_size(const Context& ctx, size_t n_tokens) {
    return state_size(ctx.kv(), (size_t)ctx.kv().n_layer(), n_tokens);
}

std::vector<uint8_t> seq_state_bytes(Context& ctx, SeqId seq, const std::vector<Token>& tokens) {
    ctx.apply_kv_shift();  // stored keys must match the stored positions
    KvCache& kv = ctx.kv();
    const std::vector<int32_t> cells = kv.seq_cells(seq);
    if (cells.size() != tokens.size())
        throw StateFileError("sequence " + std::to_string(seq) + " holds " + std::to_string(cells.size()) +
                             " cells but " + std::to_string(tokens.size()) + " tokens were given");
    std::vector<int32_t> pos(cells.size());
    for (size_t i = 0; i < cells.size(); ++i) {
        pos[i] = kv.cell(cells[i]).pos;
        if (pos[i] != (int32_t)i)
            throw StateFileError("sequence " + std::to_string(seq) + " does not hold positions 0.." +
                                 std::to_string(cells.size()) + " contiguously");
    }
    std::vector<uint8_t> out(state_size(kv, (size_t)kv.n_layer(), tokens.size()));
    const Header h = header_for(ctx, (uint32_t)tokens.size());
    uint8_t* p = out.data();
    std::memcpy(p, &h, sizeof h);
    p += sizeof h;
    std::memcpy(p, tokens.data(), tokens.size() * sizeof(Token));
    p += tokens.size() * sizeof(Token);
    std::memcpy(p, pos.data(), pos.size() * sizeof(int32_t));
    p += pos.size() * sizeof(int32_t);
    for (int il = 0; il < kv.n_layer(); ++il)
        for (ggml::Tensor* t : {kv.k(il), kv.v(il)}) {
            const size_t row = t->nb[1];
            for_each_run(cells, [&](size_t first, int32_t c, size_t n) {
                ggml::tensor_get(t, p + first * row, (size_t)c * row, n * row);
            });
            p += cells.size() * row;
        }
    return out;
}

size_t save_seq_state(Context& ctx, SeqId seq, const std::vector<Token>& tokens, const std::string& path) {
    const std::vector<uint8_t> bytes = seq_state_bytes(ctx, seq, tokens);
    const std::string tmp = path + ".tmp";
    {
        Fd out;
        // O_NONBLOCK: a FIFO planted at the temporary name must fail here, not block the engine thread.
        out.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
        if (out.fd < 0) throw StateFileError("cannot create state file '" + path + "': " + errno_text());
        struct stat st {};
        if (::fstat(out.fd, &st) != 0 || !S_ISREG(st.st_mode))
            throw StateFileError("cannot create state file '" + path + "': '" + tmp + "' is not a regular file");
        ::fcntl(out.fd, F_SETFL, ::fcntl(out.fd, F_GETFL) & ~O_NONBLOCK);
        try {
            write_all(out.fd, bytes.data(), bytes.size(), path);
        } catch (...) {
            ::unlink(tmp.c_str());
            throw;
        }
    }
    // Readers never see a half-written file under the final name.
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = errno_text();
        ::unlink(tmp.c_str());
        throw StateFileError("cannot write state file '" + path + "': " + why);
    }
    return bytes.size();
}

LoadedState restore_seq_state(Context& ctx, SeqId seq, const uint8_t* data, size_t size, size_t max_tokens,
                              const std::string& source, size_t n_keep) {
    const Header h = check_header(ctx, data, size, max_tokens, source);
    const size_t n = h.n_tokens, n_new = std::min(n, n_keep);
    const uint8_t* p = data + sizeof h;
    std::vector<Token> tokens(n);
    std::vector<int32_t> pos(n);
    std::memcpy(tokens.data(), p, n * sizeof(Token));
    p += n * sizeof(Token);
    std::memcpy(pos.data(), p, n * sizeof(int32_t));
    p += n * sizeof(int32_t);
    const int n_vocab = ctx.n_vocab();
    for (size_t i = 0; i < n; ++i) {
        if (tokens[i] < 0 || tokens[i] >= n_vocab)
            throw StateFileError(source + " holds token id " + std::to_string(tokens[i]) + " outside the vocabulary");
        if (pos[i] != (int32_t)i) throw StateFileError(source + " has invalid cell positions");
    }

    // Enough cells must be free once the sequence's own cells are released; check before changing anything.
    KvCache& kv = ctx.kv();
    size_t n_free = kv.size() - kv.n_used();
    for (int32_t c : kv.seq_cells(seq))
        if (kv.cell(c).seq.count() == 1) ++n_free;
    if (n_free < n_new)
        throw StateFileError("not enough free KV cells to restore " + std::to_string(n_new) + " tokens (" +
                             std::to_string(n_free) + " free)");

    kv.seq_rm(seq, -1, -1);
    std::vector<int32_t> cells;
    kv.find_free((uint32_t)n_new, cells);
    for (int il = 0; il < kv.n_layer(); ++il)
        for (ggml::Tensor* t : {kv.k(il), kv.v(il)}) {
            const size_t row = t->nb[1];
            for_each_run(cells, [&](size_t first, int32_t c, size_t m) {
                ggml::tensor_set(t, p + first * row, (size_t)c * row, m * row);
            });
            p += n * row;  // the rows of tokens past n_keep are skipped
        }
    for (size_t i = 0; i < n_new; ++i) kv.occupy(cells[i], pos[i], {seq});
    tokens.resize(n_new);
    return {std::move(tokens), size};
}

LoadedState load_seq_state(Context& ctx, SeqId seq, const std::string& path, size_t max_tokens) {
    Fd in;
    // O_NONBLOCK: opening a FIFO (or a device) must not block the engine thread; fstat rejects it next.
    in.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (in.fd < 0) {
        if (errno == ELOOP)
            throw StateFileError("state file '" + path + "' is a symbolic link; it must be a regular file");
        throw StateFileError("cannot open state file '" + path + "': " + errno_text());
    }
    struct stat st {};
    if (::fstat(in.fd, &st) != 0 || !S_ISREG(st.st_mode))
        throw StateFileError("state file '" + path + "' is not a regular file");
    ::fcntl(in.fd, F_SETFL, ::fcntl(in.fd, F_GETFL) & ~O_NONBLOCK);
    const size_t file_size = (size_t)st.st_size;
    const std::string source = "state file '" + path + "'";

    // The header first: a file whose size does not match it is refused before the rest is read.
    std::vector<uint8_t> bytes(std::min(file_size, sizeof(Header)));
    if (!read_all(in.fd, bytes.data(), bytes.size()))
        throw StateFileError("cannot read state file '" + path + "': " + errno_text());
    check_header(ctx, bytes.data(), file_size < sizeof(Header) ? bytes.size() : file_size, max_tokens, source);
    bytes.resize(file_size);
    if (!read_all(in.fd, bytes.data() + sizeof(Header), file_size - sizeof(Header)))
        throw StateFileError("cannot read state file '" + path + "': " + errno_text());
    return restore_seq_state(ctx, seq, bytes.data(), bytes.size(), max_tokens, source);
}

}  // namespace engine
