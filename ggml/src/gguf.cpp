// GGUF reader (validating, mmap) and writer.
#include "ggml/gguf.h"

#include "memory_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

namespace ggml::gguf {

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr int kMaxArrayDepth = 8;
constexpr size_t kMaxNameLength = 256;

std::string fmt_offset(size_t off) { return " (at byte " + std::to_string(off) + ")"; }

// Bounds-checked little-endian cursor over the file image.
class Cursor {
public:
    Cursor(const uint8_t* p, size_t n) : p_(p), n_(n) {}
    size_t pos() const { return pos_; }
    size_t remaining() const { return n_ - pos_; }

    template <typename T>
    T read(const char* what) {
        if (remaining() < sizeof(T))
            throw FormatError(std::string("truncated file while reading ") + what + fmt_offset(pos_));
        T v;
        std::memcpy(&v, p_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    std::string read_string(const char* what, size_t max_len = std::numeric_limits<size_t>::max()) {
        const size_t at = pos_;
        const uint64_t len = read<uint64_t>(what);
        if (len > remaining())
            throw FormatError(std::string(what) + ": string length " + std::to_string(len) +
                              " exceeds the file" + fmt_offset(at));
        if (len > max_len)
            throw FormatError(std::string(what) + ": string length " + std::to_string(len) + " exceeds " +
                              std::to_string(max_len) + fmt_offset(at));
        std::string s(reinterpret_cast<const char*>(p_ + pos_), (size_t)len);
        pos_ += (size_t)len;
        return s;
    }

private:
    const uint8_t* p_;
    size_t n_;
    size_t pos_ = 0;
};

size_t min_encoded_size(ValueType t) {
    switch (t) {
        case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
        case ValueType::U16: case ValueType::I16: return 2;
        case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
        case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
        case ValueType::String: return 8;
        case ValueType::Array: return 12;
    }
    return 1;
}

bool valid_value_type(uint32_t t) { return t <= 12; }

Value read_value(Cursor& c, ValueType type, const std::string& key, int depth) {
    Value v;
    v.type = type;
    switch (type) {
        case ValueType::U8: v.v = uint64_t(c.read<uint8_t>(key.c_str())); break;
        case ValueType::I8: v.v = int64_t(c.read<int8_t>(key.c_str())); break;
        case ValueType::U16: v.v = uint64_t(c.read<uint16_t>(key.c_str())); break;
        case ValueType::I16: v.v = int64_t(c.read<int16_t>(key.c_str())); break;
        case ValueType::U32: v.v = uint64_t(c.read<uint32_t>(key.c_str())); break;
        case ValueType::I32: v.v = int64_t(c.read<int32_t>(key.c_str())); break;
        case ValueType::U64: v.v = c.read<uint64_t>(key.c_str()); break;
        case ValueType::I64: v.v = c.read<int64_t>(key.c_str()); break;
        case ValueType::F32: v.v = double(c.read<float>(key.c_str())); break;
        case ValueType::F64: v.v = c.read<double>(key.c_str()); break;
        case ValueType::Bool: {
            const size_t at = c.pos();
            const uint8_t b = c.read<uint8_t>(key.c_str());
            if (b > 1) throw FormatError("metadata '" + key + "': invalid bool value " + std::to_string(b) + fmt_offset(at));
            v.v = b != 0;
            break;
        }
        case ValueType::String: v.v = c.read_string(("metadata '" + key + "'").c_str()); break;
        case ValueType::Array: {
            if (depth >= kMaxArrayDepth)
                throw FormatError("metadata '" + key + "': arrays nested deeper than " +
                                  std::to_string(kMaxArrayDepth) + fmt_offset(c.pos()));
            const size_t at = c.pos();
            const uint32_t et = c.read<uint32_t>(key.c_str());
            if (!valid_value_type(et))
                throw FormatError("metadata '" + key + "': invalid array element type " + std::to_string(et) + fmt_offset(at));
            const uint64_t n = c.read<uint64_t>(key.c_str());
            const ValueType elem = ValueType(et);
            if (n > c.remaining() / min_encoded_size(elem))
                throw FormatError("metadata '" + key + "': array of " + std::to_string(n) +
                                  " elements exceeds the file" + fmt_offset(at));
            Value::Array arr;
            arr.elem_type = elem;
            arr.items.reserve((size_t)n);
            for (uint64_t i = 0; i < n; ++i) arr.items.push_back(read_value(c, elem, key, depth + 1));
            v.v = std::move(arr);
            break;
        }
    }
    return v;
}

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

}  // namespace

const char* value_type_name(ValueType t) {
    static const char* names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                  "bool", "string", "array", "u64", "i64", "f64"};
    const auto i = (uint32_t)t;
    return i < 13 ? names[i] : "invalid";
}

bool Value::is_numeric() const {
    return std::holds_alternative<uint64_t>(v) || std::holds_alternative<int64_t>(v) ||
           std::holds_alternative<double>(v) || std::holds_alternative<bool>(v);
}

int64_t Value::as_int() const {
    if (auto* u = std::get_if<uint64_t>(&v)) {
        if (*u > (uint64_t)std::numeric_limits<int64_t>::max()) throw FormatError("integer value out of range");
        return (int64_t)*u;
    }
    if (auto* i = std::get_if<int64_t>(&v)) return *i;
    if (auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
    if (auto* d = std::get_if<double>(&v)) {
        // A float read as an integer: beyond int64_t (or NaN) the conversion would be undefined.
        if (!(*d >= -9223372036854775808.0 && *d < 9223372036854775808.0))
            throw FormatError("number " + std::to_string(*d) + " is out of the integer range");
        return (int64_t)*d;
    }
    throw FormatError(std::string("expected a number, found ") + value_type_name(type));
}

double Value::as_float() const {
    if (auto* d = std::get_if<double>(&v)) return *d;
    if (auto* u = std::get_if<uint64_t>(&v)) return (double)*u;
    if (auto* i = std::get_if<int64_t>(&v)) return (double)*i;
    throw FormatError(std::string("expected a number, found ") + value_type_name(type));
}

bool Value::as_bool() const {
    if (auto* b = std::get_if<bool>(&v)) return *b;
    if (auto* d = std::get_if<double>(&v)) return *d != 0;
    return as_int() != 0;
}

const std::string& Value::as_string() const {
    if (auto* s = std::get_if<std::string>(&v)) return *s;
    throw FormatError(std::string("expected a string, found ") + value_type_name(type));
}

const Value::Array& Value::as_array() const {
    if (auto* a = std::get_if<Array>(&v)) return *a;
    throw FormatError(std::string("expected an array, found ") + value_type_name(type));
}

std::string Value::to_display(size_t max_items) const {
    switch (type) {
        case ValueType::String: {
            std::string s = as_string();
            std::string out = "\"";
            for (char ch : s.substr(0, 120)) {
                if (ch == '\n') out += "\\n";
                else if (ch == '"') out += "\\\"";
                else out += ch;
            }
            if (s.size() > 120) out += "...";
            return out + "\"";
        }
        case ValueType::Array: {
            const auto& a = as_array();
            std::string out = std::string("[") + value_type_name(a.elem_type) + " x " + std::to_string(a.items.size()) + ": ";
            for (size_t i = 0; i < a.items.size() && i < max_items; ++i) {
                if (i) out += ", ";
                out += a.items[i].to_display(max_items);
            }
            if (a.items.size() > max_items) out += ", ...";
            return out + "]";
        }
        case ValueType::Bool: return as_bool() ? "true" : "false";
        case ValueType::F32:
        case ValueType::F64: return std::to_string(as_float());
        default:
            if (auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u);
            return std::to_string(std::get<int64_t>(v));
    }
}

// ---- File ------------------------------------------------------------------------------------------

namespace {
// Reads n bytes at offset into dst (retrying short reads and EINTR); "" or why it failed.
std::string read_range(int fd, uint8_t* dst, size_t n, size_t offset) {
    for (size_t done = 0; done < n;) {
        const ssize_t r = ::pread(fd, dst + done, n - done, (off_t)(offset + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return r < 0 ? std::strerror(errno) : "unexpected end of file";
        done += (size_t)r;
    }
    return "";
}
}  // namespace

std::unique_ptr<File> File::open(const std::string& path, const OpenOptions& options) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw std::runtime_error("'" + path + "' is not a regular file");
    }
    std::unique_ptr<File> f(new File());
    f->size_ = (size_t)st.st_size;
    f->path_ = path;
    if (f->size_ == 0) {
        ::close(fd);
        throw FormatError("'" + path + "' is empty, not a GGUF file");
    }
    if (options.mmap) {
        void* m = mmap(nullptr, f->size_, PROT_READ, MAP_SHARED, fd, 0);
        ::close(fd);
        if (m == MAP_FAILED) throw std::runtime_error("cannot mmap '" + path + "': " + std::strerror(errno));
        f->mapping_ = m;
        f->base_ = static_cast<const uint8_t*>(m);
    } else {
        // Read the whole file into memory of our own: no mapping of the file remains.
        f->owned_.reset(new (std::nothrow) uint8_t[f->size_]);
        if (!f->owned_) {
            ::close(fd);
            throw std::runtime_error("cannot read '" + path + "' into memory: " + std::to_string(f->size_) +
                                     " bytes could not be allocated");
        }
        const std::string why = read_range(fd, f->owned_.get(), f->size_, 0);
        ::close(fd);
        if (!why.empty()) throw std::runtime_error("cannot read '" + path + "': " + why);
        f->base_ = f->owned_.get();
    }
    if (options.mlock) {
        if (::mlock(f->base_, f->size_) == 0) {
            f->locked_ = f->size_;
        } else {
            f->lock_error_ = std::string(std::strerror(errno)) +
                             (errno == ENOMEM || errno == EPERM
                                  ? " (the locked-memory limit, ulimit -l / RLIMIT_MEMLOCK, is too low for " +
                                        std::to_string(f->size_) + " bytes)"
                                  : "");
        }
    }
    try {
        f->parse();
    } catch (const FormatError& e) {
        throw FormatError("'" + path + "': " + e.what());
    }
    return f;
}

std::unique_ptr<File> File::from_memory(const void* data, size_t size) {
    std::unique_ptr<File> f(new File());
    f->base_ = static_cast<const uint8_t*>(data);
    f->size_ = size;
    f->parse();
    return f;
}

File::~File() {
    if (locked_) munlock(base_, locked_);
    if (mapping_) munmap(mapping_, size_);
}

size_t File::release_pages() {
    if (locked_ || released_ || (!mapping_ && !owned_)) return 0;
    size_t first = 0;
    const size_t n = drop_pages(base_ + data_offset_, size_ - data_offset_, &first);
    if (n) released_at_ = data_offset_ + first, released_ = n;
    return n;
}

void File::restore_pages() {
    if (!released_) return;
    if (mapping_) {  // the pages fault back in from the file; ask for them ahead
        madvise((void*)(base_ + released_at_), released_, MADV_WILLNEED);
        released_ = 0;
        return;
    }
    // Memory of our own: read the range from the file again, which must still be the file we read.
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot read '" + path_ + "' again: " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != size_) {
        ::close(fd);
        throw std::runtime_error("'" + path_ + "' changed size since it was loaded");
    }
    const std::string why = read_range(fd, owned_.get() + released_at_, released_, released_at_);
    ::close(fd);
    if (!why.empty()) throw std::runtime_error("cannot read '" + path_ + "' again: " + why);
    released_ = 0;
}

void File::override_value(const std::string& key, Value v) {
    if (auto it = kv_index_.find(key); it != kv_index_.end()) {
        kv_[it->second].second = std::move(v);
        return;
    }
    kv_index_[key] = kv_.size();
    kv_.emplace_back(key, std::move(v));
}

void File::parse() {
    Cursor c(base_, size_);
    const uint32_t magic = c.read<uint32_t>("magic");
    if (magic != kMagic) throw FormatError("not a GGUF file (bad magic)");
    version_ = c.read<uint32_t>("version");
    if (version_ == 1) throw FormatError("GGUF version 1 is not supported (convert the model to v3)");
    if (version_ != 2 && version_ != 3)
        throw FormatError("unsupported GGUF version " + std::to_string(version_));
    const uint64_t n_tensors = c.read<uint64_t>("tensor count");
    const uint64_t n_kv = c.read<uint64_t>("metadata count");
    // Each metadata pair needs >= 8 (key length) + 4 (type) + 1 bytes, each tensor info >= 8+4+8+4+8.
    if (n_kv > c.remaining() / 13) throw FormatError("metadata count " + std::to_string(n_kv) + " exceeds the file");
    if (n_tensors > c.remaining() / 32)
        throw FormatError("tensor count " + std::to_string(n_tensors) + " exceeds the file");

    kv_.reserve((size_t)n_kv);
    for (uint64_t i = 0; i < n_kv; ++i) {
        const size_t at = c.pos();
        std::string key = c.read_string("metadata key", 65535);
        if (key.empty()) throw FormatError("empty metadata key" + fmt_offset(at));
        const size_t tat = c.pos();
        const uint32_t t = c.read<uint32_t>("metadata type");
        if (!valid_value_type(t))
            throw FormatError("metadata '" + key + "': invalid value type " + std::to_string(t) + fmt_offset(tat));
        Value v = read_value(c, ValueType(t), key, 0);
        if (kv_index_.count(key)) throw FormatError("duplicate metadata key '" + key + "'" + fmt_offset(at));
        kv_index_[key] = kv_.size();
        kv_.emplace_back(std::move(key), std::move(v));
    }

    if (const Value* a = find("general.alignment")) {
        if (a->type != ValueType::U32) throw FormatError("general.alignment must be a u32");
        const int64_t al = a->as_int();
        if (al <= 0 || (al & (al - 1)) != 0 || al > (1 << 20))
            throw FormatError("general.alignment " + std::to_string(al) + " is not a power of two");
        alignment_ = (size_t)al;
    }

    tensors_.reserve((size_t)n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
        const size_t at = c.pos();
        TensorInfo ti;
        ti.name = c.read_string("tensor name", kMaxNameLength);
        const std::string where = "tensor '" + ti.name + "'";
        const uint32_t n_dims = c.read<uint32_t>("tensor dimension count");
        if (n_dims < 1 || n_dims > 4)
            throw FormatError(where + ": " + std::to_string(n_dims) + " dimensions (1..4 allowed)" + fmt_offset(at));
        ti.n_dims = (int)n_dims;
        for (uint32_t d = 0; d < n_dims; ++d) {
            const uint64_t ne = c.read<uint64_t>("tensor dimension");
            if (ne > (uint64_t)std::numeric_limits<int64_t>::max() / 2)
                throw FormatError(where + ": dimension " + std::to_string(d) + " is too large" + fmt_offset(at));
            ti.ne[d] = (int64_t)ne;
        }
        // The element count must not overflow (checked pairwise with a generous limit).
        const int64_t limit = int64_t(1) << 50;
        int64_t total = 1;
        for (int d = 0; d < 4; ++d) {
            if (ti.ne[d] != 0 && total > limit / ti.ne[d])
                throw FormatError(where + ": element count overflows" + fmt_offset(at));
            total *= ti.ne[d];
        }
        const uint32_t type = c.read<uint32_t>("tensor type");
        if (!type_is_known((int32_t)type) || !type_traits(Type(type)).name)
            throw FormatError(where + ": unknown tensor type " + std::to_string(type) + fmt_offset(at));
        ti.type = Type(type);
        const int64_t bs = block_size(ti.type);
        if (ti.ne[0] % bs != 0)
            throw FormatError(where + ": row length " + std::to_string(ti.ne[0]) + " is not a multiple of the " +
                              type_name(ti.type) + " block size " + std::to_string(bs) + fmt_offset(at));
        ti.offset = c.read<uint64_t>("tensor offset");
        if (ti.offset % alignment_ != 0)
            throw FormatError(where + ": data offset " + std::to_string(ti.offset) + " is not aligned to " +
                              std::to_string(alignment_) + fmt_offset(at));
        ti.size = type_size(ti.type) * (size_t)(total / bs);
        if (tensor_index_.count(ti.name)) throw FormatError("duplicate " + where + fmt_offset(at));
        tensor_index_[ti.name] = tensors_.size();
        tensors_.push_back(std::move(ti));
    }

    data_offset_ = align_up(c.pos(), alignment_);
    if (data_offset_ > size_ && !tensors_.empty())
        throw FormatError("data section starts beyond the end of the file");
    const size_t data_size = size_ > data_offset_ ? size_ - data_offset_ : 0;
    for (auto& ti : tensors_) {
        if (ti.offset > data_size || ti.size > data_size - ti.offset)
            throw FormatError("tensor '" + ti.name + "': data [" + std::to_string(ti.offset) + ", +" +
                              std::to_string(ti.size) + ") lies beyond the end of the file (data section is " +
                              std::to_string(data_size) + " bytes)");
        ti.data = base_ + data_offset_ + ti.offset;
    }
}

const Value* File::find(const std::string& key) const {
    auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const TensorInfo* File::find_tensor(const std::string& name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

template <typename F>
static auto typed_get(const File& f, const std::string& key, F&& get) -> decltype(get(*f.find(key))) {
    try {
        return get(*f.find(key));
    } catch (const FormatError& e) {
        throw FormatError("metadata '" + key + "': " + e.what());
    }
}

std::string File::get_string(const std::string& key, const std::string& def) const {
    if (!find(key)) return def;
    return typed_get(*this, key, [](const Value& v) { return v.as_string(); });
}

int64_t File::get_int(const std::string& key, int64_t def) const {
    if (!find(key)) return def;
    return typed_get(*this, key, [](const Value& v) {
        if (v.type == ValueType::F32 || v.type == ValueType::F64) throw FormatError("expected an integer");
        return v.as_int();
    });
}

double File::get_float(const std::string& key, double def) const {
    if (!find(key)) return def;
    return typed_get(*this, key, [](const Value& v) { return v.as_float(); });
}

bool File::get_bool(const std::string& key, bool def) const {
    if (!find(key)) return def;
    return typed_get(*this, key, [](const Value& v) { return v.as_bool(); });
}

std::vector<std::string> File::get_string_array(const std::string& key) const {
    if (!find(key)) return {};
    return typed_get(*this, key, [](const Value& v) {
        const auto& a = v.as_array();
        if (a.elem_type != ValueType::String) throw FormatError("expected an array of strings");
        std::vector<std::string> out;
        out.reserve(a.items.size());
        for (const auto& it : a.items) out.push_back(it.as_string());
        return out;
    });
}

std::vector<float> File::get_float_array(const std::string& key) const {
    if (!find(key)) return {};
    return typed_get(*this, key, [](const Value& v) {
        const auto& a = v.as_array();
        std::vector<float> out;
        out.reserve(a.items.size());
        for (const auto& it : a.items) out.push_back((float)it.as_float());
        return out;
    });
}

std::vector<int64_t> File::get_int_array(const std::string& key) const {
    if (!find(key)) return {};
    return typed_get(*this, key, [](const Value& v) {
        const auto& a = v.as_array();
        std::vector<int64_t> out;
        out.reserve(a.items.size());
        for (const auto& it : a.items) out.push_back(it.as_int());
        return out;
    });
}

// ---- Writer ----------------------------------------------------------------------------------------

void Writer::set(const std::string& key, Value v) {
    for (auto& kv : kv_)
        if (kv.first == key) {
            kv.second = std::move(v);
            return;
        }
    kv_.emplace_back(key, std::move(v));
}

void Writer::add_tensor(const std::string& name, Type type, int n_dims, const int64_t* ne, const void* data,
                        size_t size) {
    PendingTensor t{name, type, n_dims, {1, 1, 1, 1}, {}};
    for (int i = 0; i < n_dims; ++i) t.ne[i] = ne[i];
    t.data.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
    tensors_.push_back(std::move(t));
}

namespace {
struct Out {
    std::vector<uint8_t>& b;
    template <typename T>
    void put(T v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        b.insert(b.end(), p, p + sizeof(T));
    }
    void str(const std::string& s) {
        put<uint64_t>(s.size());
        b.insert(b.end(), s.begin(), s.end());
    }
    void value(const Value& v) {
        switch (v.type) {
            case ValueType::U8: put<uint8_t>((uint8_t)v.as_int()); break;
            case ValueType::I8: put<int8_t>((int8_t)v.as_int()); break;
            case ValueType::U16: put<uint16_t>((uint16_t)v.as_int()); break;
            case ValueType::I16: put<int16_t>((int16_t)v.as_int()); break;
            case ValueType::U32: put<uint32_t>((uint32_t)v.as_int()); break;
            case ValueType::I32: put<int32_t>((int32_t)v.as_int()); break;
            case ValueType::U64: put<uint64_t>(std::get<uint64_t>(v.v)); break;
            case ValueType::I64: put<int64_t>(v.as_int()); break;
            case ValueType::F32: put<float>((float)v.as_float()); break;
            case ValueType::F64: put<double>(v.as_float()); break;
            case ValueType::Bool: put<uint8_t>(v.as_bool() ? 1 : 0); break;
            case ValueType::String: str(v.as_string()); break;
            case ValueType::Array: {
                const auto& a = v.as_array();
                put<uint32_t>((uint32_t)a.elem_type);
                put<uint64_t>(a.items.size());
                for (const auto& it : a.items) value(it);
                break;
            }
        }
    }
};
}  // namespace

std::vector<uint8_t> Writer::to_bytes() const {
    std::vector<uint8_t> b;
    Out o{b};
    o.put<uint32_t>(kMagic);
    o.put<uint32_t>(3);
    o.put<uint64_t>(tensors_.size());
    const bool has_align = alignment_ != 32;
    o.put<uint64_t>(kv_.size() + (has_align ? 1 : 0));
    if (has_align) {
        o.str("general.alignment");
        o.put<uint32_t>((uint32_t)ValueType::U32);
        o.put<uint32_t>((uint32_t)alignment_);
    }
    for (const auto& [k, v] : kv_) {
        o.str(k);
        o.put<uint32_t>((uint32_t)v.type);
        o.value(v);
    }
    size_t offset = 0;
    for (const auto& t : tensors_) {
        o.str(t.name);
        o.put<uint32_t>((uint32_t)t.n_dims);
        for (int i = 0; i < t.n_dims; ++i) o.put<uint64_t>((uint64_t)t.ne[i]);
        o.put<uint32_t>((uint32_t)t.type);
        o.put<uint64_t>(offset);
        offset = align_up(offset + t.data.size(), alignment_);
    }
    b.resize(align_up(b.size(), alignment_), 0);
    for (const auto& t : tensors_) {
        b.insert(b.end(), t.data.begin(), t.data.end());
        b.resize(align_up(b.size(), alignment_), 0);
    }
    return b;
}

void Writer::write(const std::string& path) const {
    const auto bytes = to_bytes();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot create '" + path + "'");
    f.write(reinterpret_cast<const char*>(bytes.data()), (std::streamsize)bytes.size());
    if (!f) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace ggml::gguf

namespace ggml::gguf {

size_t StreamWriter::TensorDecl::nbytes() const {
    return row_size(type, ne[0]) * size_t(ne[1]) * size_t(ne[2]) * size_t(ne[3]);
}

StreamWriter::StreamWriter(std::string path, const std::vector<std::pair<std::string, Value>>& kv,
                           std::vector<TensorDecl> tensors)
    : path_(std::move(path)), part_path_(path_ + ".part"), tensors_(std::move(tensors)) {
    for (const auto& [k, v] : kv)
        if (k == "general.alignment") {
            const int64_t a = v.as_int();
            if (v.type != ValueType::U32 || a <= 0 || (a & (a - 1)) != 0)
                throw std::invalid_argument("general.alignment must be a power of two stored as u32");
            alignment_ = size_t(a);
        }
    std::vector<uint8_t> b;
    Out o{b};
    o.put<uint32_t>(kMagic);
    o.put<uint32_t>(3);
    o.put<uint64_t>(tensors_.size());
    o.put<uint64_t>(kv.size());
    for (const auto& [k, v] : kv) {
        o.str(k);
        o.put<uint32_t>((uint32_t)v.type);
        o.value(v);
    }
    size_t offset = 0;
    for (const auto& t : tensors_) {
        if (t.n_dims < 1 || t.n_dims > 4) throw std::invalid_argument("tensor '" + t.name + "': bad dimension count");
        if (!type_is_known((int32_t)t.type) || t.ne[0] % block_size(t.type) != 0)
            throw std::invalid_argument("tensor '" + t.name + "': rows of " + std::to_string(t.ne[0]) +
                                        " values do not divide into blocks of its type");
        o.str(t.name);
        o.put<uint32_t>((uint32_t)t.n_dims);
        for (int i = 0; i < t.n_dims; ++i) o.put<uint64_t>((uint64_t)t.ne[i]);
        o.put<uint32_t>((uint32_t)t.type);
        o.put<uint64_t>(offset);
        offset = align_up(offset + t.nbytes(), alignment_);
    }
    b.resize(align_up(b.size(), alignment_), 0);
    header_size_ = b.size();
    f_ = std::fopen(part_path_.c_str(), "wb");
    if (!f_) throw std::runtime_error("cannot create '" + part_path_ + "': " + std::strerror(errno));
    if (std::fwrite(b.data(), 1, b.size(), f_) != b.size()) {
        const std::string why = std::strerror(errno);
        std::fclose(f_);  // the destructor does not run for a constructor that throws
        f_ = nullptr;
        std::remove(part_path_.c_str());
        throw std::runtime_error("cannot write '" + part_path_ + "': " + why);
    }
}

StreamWriter::~StreamWriter() {
    if (f_) {
        std::fclose(f_);
        std::remove(part_path_.c_str());
    }
}

void StreamWriter::write_tensor(const void* data, size_t size) {
    if (!f_ || next_ >= tensors_.size()) throw std::logic_error("StreamWriter: more tensors than declared");
    const TensorDecl& t = tensors_[next_];
    if (size != t.nbytes())
        throw std::logic_error("StreamWriter: tensor '" + t.name + "' has " + std::to_string(size) +
                               " bytes, declared " + std::to_string(t.nbytes()));
    static const uint8_t kZeros[256] = {};
    bool ok = std::fwrite(data, 1, size, f_) == size;
    for (size_t pad = align_up(size, alignment_) - size; ok && pad > 0;) {
        const size_t n = std::min(pad, sizeof kZeros);
        ok = std::fwrite(kZeros, 1, n, f_) == n;
        pad -= n;
    }
    if (!ok) throw std::runtime_error("cannot write '" + part_path_ + "': " + std::strerror(errno));
    ++next_;
}

void StreamWriter::finish() {
    if (!f_) throw std::logic_error("StreamWriter: already finished");
    if (next_ != tensors_.size())
        throw std::logic_error("StreamWriter: " + std::to_string(tensors_.size() - next_) + " tensors not written");
    const bool ok = std::fflush(f_) == 0 && std::ferror(f_) == 0;
    const int err = errno;
    std::fclose(f_);
    f_ = nullptr;
    if (!ok || std::rename(part_path_.c_str(), path_.c_str()) != 0) {
        const std::string why = std::strerror(ok ? errno : err);
        std::remove(part_path_.c_str());
        throw std::runtime_error("cannot write '" + path_ + "': " + why);
    }
}

}  // namespace ggml::gguf
