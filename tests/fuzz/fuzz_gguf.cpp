// libFuzzer target: bytes as a GGUF file -> the validating reader, from memory and through a file (a
// memfd opened by path, as a model is: open, fstat, mmap), then every metadata getter, and the tokenizer
// vocabulary the metadata describes, which then tokenizes fixed texts and the input's own tail.
// A descriptor left open by File::open aborts the run (libFuzzer does not see descriptor leaks).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/vocab.h"
#include "ggml/gguf.h"

namespace {

using ggml::gguf::File;

// The lowest free descriptor number: unchanged across a call unless the call leaked a descriptor.
int lowest_free_fd() {
    const int fd = dup(STDERR_FILENO);
    if (fd < 0) std::abort();
    close(fd);
    return fd;
}

void exercise_metadata(const File& f) {
    for (const auto& [key, value] : f.metadata()) {
        (void)value.to_display();
        (void)value.is_numeric();
        try {
            (void)f.get_int(key, 0);
        } catch (const std::exception&) {
        }
        try {
            (void)f.get_float(key, 0);
        } catch (const std::exception&) {
        }
        try {
            (void)f.get_bool(key, false);
        } catch (const std::exception&) {
        }
        try {
            (void)f.get_string(key);
        } catch (const std::exception&) {
        }
        try {
            (void)f.get_string_array(key);
        } catch (const std::exception&) {
        }
        try {
            (void)f.get_float_array(key);
        } catch (const std::exception&) {
        }
        try {
            (void)f.get_int_array(key);
        } catch (const std::exception&) {
        }
    }
    size_t sum = 0;
    for (const auto& t : f.tensors()) {
        if (f.find_tensor(t.name) != &t) std::abort();
        // Every byte of the tensor lies inside the file (the reader checked it): touch the first and last.
        if (t.size > 0) {
            const auto* p = static_cast<const uint8_t*>(t.data);
            sum += p[0] + p[t.size - 1];
        }
    }
    (void)sum;
}

void exercise_vocab(const File& f, std::string_view tail) {
    try {
        const engine::Vocab v = engine::Vocab::from_gguf(f);
        for (std::string_view text :
             {std::string_view("Once upon a time, the cat said \"hi\"."),
              std::string_view("<s> <|im_start|>user\n123 4567\t\xE2\x96\x81x \xF0\x9F\x98\x80"), tail}) {
            for (bool special : {false, true}) {
                const std::vector<engine::Token> ids = v.tokenize(text, special, special);
                for (engine::Token id : ids)
                    if (!v.valid(id)) std::abort();
                (void)v.detokenize(ids, special, special);
            }
        }
        const int n = std::min(v.n_tokens(), 2048);
        for (int i = 0; i < n; ++i) (void)v.token_to_piece(i, i % 2 == 0, i % 3);
        engine::StreamDecoder decoder(v);
        for (int i = 0; i < n; i += 7) (void)decoder.feed(i);
        (void)decoder.flush();
    } catch (const engine::VocabError&) {
    } catch (const ggml::gguf::FormatError&) {  // a tokenizer key of the wrong type
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view tail(reinterpret_cast<const char*>(data) + (size > 64 ? size - 64 : 0),
                                size > 64 ? 64 : size);
    bool parsed = false;
    try {
        auto f = File::from_memory(data, size);
        parsed = true;
        exercise_metadata(*f);
        exercise_vocab(*f, tail);
    } catch (const ggml::gguf::FormatError&) {
    }

    // The same bytes through a file: open() must agree with from_memory() and close what it opened.
    const int fd = memfd_create("fuzz_gguf", MFD_CLOEXEC);
    if (fd < 0) std::abort();
    if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
    const int free_before = lowest_free_fd();
    bool opened = false;
    try {
        auto f = File::open("/proc/self/fd/" + std::to_string(fd));
        opened = true;
        if (f->metadata().size() > 0) (void)f->metadata().front().second.to_display();
    } catch (const ggml::gguf::FormatError&) {
    } catch (const std::runtime_error&) {
        if (size > 0) std::abort();  // only an empty file may fail as I/O rather than as a format error
    }
    if (lowest_free_fd() != free_before) {
        std::fprintf(stderr, "File::open leaked a file descriptor\n");
        std::abort();
    }
    close(fd);
    if (opened != parsed) {
        std::fprintf(stderr, "File::open and File::from_memory disagree (%d, %d)\n", opened, parsed);
        std::abort();
    }
    return 0;
}
