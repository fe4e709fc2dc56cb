// GGUF v2/v3 files: a validating, mmap-based reader and a writer.
//
// The reader checks every count, string length, dimension, type and offset against the file size
// before using it; a truncated or hostile file raises gguf::FormatError with a message naming the
// offending field and its byte offset. Tensor data is never copied: TensorInfo::data points into the
// mapping, which lives as long as the File.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "ggml/types.h"

namespace ggml::gguf {

struct FormatError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class ValueType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
    String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
const char* value_type_name(ValueType t);

// A metadata value. Scalars are widened (unsigned -> uint64_t, signed -> int64_t, floats -> double);
// `type` keeps the on-disk type so a writer can reproduce it.
struct Value {
    struct Array {
        ValueType elem_type = ValueType::U8;
        std::vector<Value> items;
    };
    ValueType type = ValueType::U8;
    std::variant<uint64_t, int64_t, double, bool, std::string, Array> v;

    static Value u32(uint32_t x) { return {ValueType::U32, uint64_t(x)}; }
    static Value u64(uint64_t x) { return {ValueType::U64, x}; }
    static Value i32(int32_t x) { return {ValueType::I32, int64_t(x)}; }
    static Value f32(float x) { return {ValueType::F32, double(x)}; }
    static Value boolean(bool x) { return {ValueType::Bool, x}; }
    static Value string(std::string s) { return {ValueType::String, std::move(s)}; }
    static Value array(ValueType elem, std::vector<Value> items) {
        return {ValueType::Array, Array{elem, std::move(items)}};
    }

    bool is_numeric() const;
    // Numeric conversions; throw FormatError if the value is not numeric (or not a string/array).
    int64_t as_int() const;
    double as_float() const;
    bool as_bool() const;
    const std::string& as_string() const;
    const Array& as_array() const;
    std::string to_display(size_t max_items = 8) const;  // for `ggserve info`
};

struct TensorInfo {
    std::string name;
    Type type = Type::F32;
    int n_dims = 0;
    int64_t ne[4] = {1, 1, 1, 1};
    uint64_t offset = 0;     // relative to the data section
    size_t size = 0;         // bytes
    const void* data = nullptr;  // into the mapping
    int64_t nelements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

// How a file's bytes are held: mapped (the default; pages come from the page cache on demand) or read
// into memory owned by the File (llama-server's --no-mmap), and optionally locked in RAM with mlock
// (--mlock) so that the kernel cannot page them out.
struct OpenOptions {
    bool mmap = true;
    bool mlock = false;
};

class File {
public:
    // Opens and validates a file. Throws FormatError (bad content) or std::runtime_error (I/O).
    static std::unique_ptr<File> open(const std::string& path, const OpenOptions& options = {});
    // Parses an in-memory image (used by tests; the buffer must outlive the File).
    static std::unique_ptr<File> from_memory(const void* data, size_t size);
    ~File();

    uint32_t version() const { return version_; }
    size_t alignment() const { return alignment_; }
    size_t file_size() const { return size_; }
    size_t data_offset() const { return data_offset_; }
    const void* data_base() const { return base_ + data_offset_; }

    const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
    const Value* find(const std::string& key) const;
    bool has(const std::string& key) const { return find(key) != nullptr; }
    // Typed getters: return def when absent; throw FormatError when present with an incompatible type.
    std::string get_string(const std::string& key, const std::string& def = "") const;
    int64_t get_int(const std::string& key, int64_t def) const;
    double get_float(const std::string& key, double def) const;
    bool get_bool(const std::string& key, bool def) const;
    // Arrays: throw FormatError if present and not an array of the expected kind; empty when absent.
    std::vector<std::string> get_string_array(const std::string& key) const;
    std::vector<float> get_float_array(const std::string& key) const;
    std::vector<int64_t> get_int_array(const std::string& key) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* find_tensor(const std::string& name) const;

    // Replaces (or adds) a metadata value before the model reads it (llama-server's --override-kv).
    void override_value(const std::string& key, Value v);
    bool mapped() const { return mapping_ != nullptr; }
    // A sleeping server (--sleep-idle-seconds): release_pages() gives the tensor data's pages back to the OS
    // (a mapping's fault back in from the file when read; memory of our own is read from the file again by
    // restore_pages(), which throws std::runtime_error when the file is gone or changed size). Locked
    // memory (mlock) is kept. Returns the bytes given back.
    size_t release_pages();
    void restore_pages();
    // Bytes locked in RAM by OpenOptions::mlock (0: none). When mlock fails, lock_error() says why.
    size_t locked_bytes() const { return locked_; }
    const std::string& lock_error() const { return lock_error_; }

private:
    File() = default;
    void parse();

    const uint8_t* base_ = nullptr;
    size_t size_ = 0;
    std::string path_;
    size_t released_at_ = 0, released_ = 0;  // the byte range release_pages() gave back (0: none)
    void* mapping_ = nullptr;  // owned mmap, if any
    std::unique_ptr<uint8_t[]> owned_;  // the file read into memory (OpenOptions::mmap false)
    size_t locked_ = 0;
    std::string lock_error_;
    uint32_t version_ = 0;
    size_t alignment_ = 32;
    size_t data_offset_ = 0;
    std::vector<std::pair<std::string, Value>> kv_;
    std::map<std::string, size_t> kv_index_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, size_t> tensor_index_;
};

// Builds a GGUF v3 file in memory or on disk. Tensor data is copied at add time.
class Writer {
public:
    void set(const std::string& key, Value v);
    void add_tensor(const std::string& name, Type type, int n_dims, const int64_t* ne, const void* data,
                    size_t size);
    void set_alignment(size_t a) { alignment_ = a; }
    std::vector<uint8_t> to_bytes() const;
    void write(const std::string& path) const;  // throws std::runtime_error on I/O failure

private:
    struct PendingTensor {
        std::string name;
        Type type;
        int n_dims;
        int64_t ne[4];
        std::vector<uint8_t> data;
    };
    std::vector<std::pair<std::string, Value>> kv_;
    std::vector<PendingTensor> tensors_;
    size_t alignment_ = 32;
};

// Writes a GGUF v3 file tensor by tensor, for outputs too large to hold in memory (what a quantizer
// writes). The header goes out first: the metadata in the given order (no key is added; a
// "general.alignment" entry sets the alignment, default 32), then the tensor infos with offsets from the
// declared types and shapes. write_tensor() then takes each tensor's bytes in declaration order, padding
// each to the alignment with zeros. The file is written to `path + ".part"` and renamed to `path` by
// finish(); a writer destroyed before finish() removes the partial file.
class StreamWriter {
public:
    struct TensorDecl {
        std::string name;
        Type type = Type::F32;
        int n_dims = 1;
        int64_t ne[4] = {1, 1, 1, 1};
        size_t nbytes() const;  // row_size(type, ne[0]) * ne[1] * ne[2] * ne[3]
    };
    // Throws std::invalid_argument for a bad declaration (rows not a multiple of the type's block size,
    // a non-power-of-two alignment) and std::runtime_error when the file cannot be created.
    StreamWriter(std::string path, const std::vector<std::pair<std::string, Value>>& kv,
                 std::vector<TensorDecl> tensors);
    ~StreamWriter();
    StreamWriter(const StreamWriter&) = delete;
    StreamWriter& operator=(const StreamWriter&) = delete;

    size_t header_size() const { return header_size_; }
    size_t alignment() const { return alignment_; }
    // The next tensor's bytes; size must equal its declared size.
    void write_tensor(const void* data, size_t size);
    void finish();

private:
    std::string path_, part_path_;
    std::vector<TensorDecl> tensors_;
    size_t next_ = 0;
    size_t alignment_ = 32;
    size_t header_size_ = 0;
    std::FILE* f_ = nullptr;
};

}  // namespace ggml::gguf
