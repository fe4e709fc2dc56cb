#include "server/tools/isolate_io.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace tools {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Bound of every helper command (a test, a read, a write, a listing); commands a tool runs for the model
// (exec_shell_command) have their own.
constexpr auto kHelperTimeout = seconds(15);
constexpr size_t kBatchOutputCap = 32u << 20;  // bytes one batched read may bring back

bool valid_word(const std::string& s, bool allow_at) {
    if (s.empty() || !std::isalnum((unsigned char)s[0])) return false;
    return std::all_of(s.begin(), s.end(), [&](unsigned char c) {
        return std::isalnum(c) || c == '.' || c == '_' || c == '-' || (allow_at && c == '@');
    });
}

class IsolateIo : public ToolIo {
  public:
    std::string resolve(const std::string& path, const std::string& cwd) const override {
        std::filesystem::path p(path);
        if (p.is_relative() && !cwd.empty()) p = std::filesystem::path(cwd) / p;
        p = p.lexically_normal();
        if (!p.has_filename() && p != p.root_path()) p = p.parent_path();
        return p.empty() ? "." : p.string();
    }

    std::optional<uintmax_t> regular_file_size(const std::string& path) const override {
        const ProcessResult r = helper({"sh", "-c", "[ -f \"$1\" ] && exec wc -c < \"$1\"", "_", path}, 64);
        if (!ok(r)) return std::nullopt;
        try {
            size_t used = 0;
            const std::string n = trimmed_output(r.output);
            const unsigned long long v = std::stoull(n, &used);
            if (used != n.size()) return std::nullopt;
            return (uintmax_t)v;
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }

    bool is_directory(const std::string& path) const override {
        return ok(helper({"sh", "-c", "[ -d \"$1\" ]", "_", path}, 256));
    }

    std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes) const override {
        ProcessOptions po;
        po.max_output = max_bytes;
        po.timeout = kHelperTimeout;
        po.merge_stderr = false;  // the bytes are the file's
        const ProcessResult r = run_there(
            {"sh", "-c", "[ -f \"$1\" ] && exec head -c \"$2\" -- \"$1\"", "_", path, std::to_string(max_bytes)}, po,
            false);
        if (!ok(r)) return std::nullopt;
        return r.output;
    }

    // Batches of files, each framed: "X\n" (not a readable regular file), "L\n" (over the limit) or
    // "<size>\n<bytes>\n@@\n". What a batch's output cap or a file that changed under it cuts short is read
    // by the next command (a frame that does not check out: the rest one by one).
    std::vector<FileRead> read_regular_files(const std::vector<std::string>& paths, size_t max_bytes,
                                             std::chrono::steady_clock::time_point deadline) const override {
        static const char* const kScript =
            "max=$1; shift; for f in \"$@\"; do "
            "if [ -f \"$f\" ] && [ -r \"$f\" ] && s=$(wc -c < \"$f\") && [ -n \"$s\" ]; then "
            "n=$(( $s )); if [ \"$n\" -gt \"$max\" ]; then echo L; "
            "else echo \"$n\"; head -c \"$n\" -- \"$f\"; printf '\\n@@\\n'; fi; "
            "else echo X; fi; done";
        std::vector<FileRead> out;
        while (out.size() < paths.size()) {
            const auto left = deadline - std::chrono::steady_clock::now();
            if (left <= std::chrono::steady_clock::duration::zero()) break;
            std::vector<std::string> inner = {"sh", "-c", kScript, "_", std::to_string(max_bytes)};
            inner.insert(inner.end(), paths.begin() + (std::ptrdiff_t)out.size(), paths.end());
            ProcessOptions po;
            po.max_output = std::max<size_t>(kBatchOutputCap, max_bytes + 64);
            po.timeout = std::clamp(std::chrono::ceil<milliseconds>(left), milliseconds(1000),
                                    std::chrono::duration_cast<milliseconds>(kHelperTimeout));
            po.merge_stderr = false;
            const ProcessResult r = run_there(inner, po, false);
            const size_t before = out.size();
            bool frame_error = false;
            size_t pos = 0;
            while (out.size() < paths.size()) {
                const size_t nl = r.output.find('\n', pos);
                if (nl == std::string::npos) break;  // cut short
                const std::string head = r.output.substr(pos, nl - pos);
                FileRead fr;
                if (head == "X") {
                    pos = nl + 1;
                } else if (head == "L") {
                    fr.too_large = true;
                    pos = nl + 1;
                } else {
                    size_t n = 0;
                    try {
                        size_t used = 0;
                        n = std::stoull(head, &used);
                        if (used != head.size()) throw std::invalid_argument(head);
                    } catch (const std::exception&) {
                        frame_error = true;
                        break;
                    }
                    if (r.output.size() < nl + 1 + n + 4) break;  // cut short
                    if (r.output.compare(nl + 1 + n, 4, "\n@@\n") != 0) {
                        frame_error = true;  // the file changed between its size and its bytes
                        break;
                    }
                    fr.content = r.output.substr(nl + 1, n);
                    pos = nl + 1 + n + 4;
                }
                out.push_back(std::move(fr));
            }
            if (frame_error || out.size() == before) {
                // One by one from here (the base's way), still bounded by the deadline.
                const std::vector<std::string> rest(paths.begin() + (std::ptrdiff_t)out.size(), paths.end());
                for (FileRead& fr : ToolIo::read_regular_files(rest, max_bytes, deadline)) out.push_back(std::move(fr));
                break;
            }
        }
        return out;
    }

    std::string write_regular_file(const std::string& path, const std::string& content) const override {
        ProcessOptions po;
        po.max_output = 4096;
        po.timeout = kHelperTimeout + seconds(content.size() >> 20);  // a second more per MiB
        po.stdin_data = content;
        const ProcessResult r = run_there(
            {"sh", "-c",
             "if [ -e \"$1\" ] && [ ! -f \"$1\" ]; then echo 'not a regular file'; exit 1; fi; "
             "mkdir -p -- \"$(dirname -- \"$1\")\" && exec cat > \"$1\"",
             "_", path},
            po, true);
        if (ok(r)) return "";
        if (!r.spawn_error.empty()) return r.spawn_error;
        if (r.timed_out) return "timed out";
        const std::string why = trimmed_output(r.output);
        return why.empty() ? "exit code " + std::to_string(r.exit_code) : why;
    }

    Listing list_entries(const std::string& base, int max_depth, ListKind kind) const override {
        Listing out;
        if (!is_directory(base)) {
            out.error = "path does not exist or is not a directory";
            return out;
        }
        if (kind == ListKind::Files) {
            ProcessOptions po;
            po.max_output = kListOutputCap;
            po.timeout = kListBudget;
            po.merge_stderr = false;
            const ProcessResult r = run_there(
                {"sh", "-c", "cd \"$1\" && exec git ls-files --cached --others --exclude-standard", "_", base}, po,
                false);
            if (ok(r) && !r.truncated) {
                for (std::string& rel : lines_of(r.output))
                    if (max_depth == 0 || path_depth(rel) <= max_depth) out.entries.push_back({std::move(rel), false});
                return out;
            }
        }
        if (kind != ListKind::Files) find_into(base, max_depth, true, out);
        if (kind != ListKind::Dirs) find_into(base, max_depth, false, out);
        std::sort(out.entries.begin(), out.entries.end(),
                  [](const ListEntry& a, const ListEntry& b) { return a.rel < b.rel; });
        return out;
    }

    // The command runs under the isolate's own `timeout` (killing the local client does not stop what it
    // started there); the local deadline is 5 s later, for the far side to report.
    ProcessResult run(const std::vector<std::string>& argv, const ProcessOptions& options) const override {
        const long long secs =
            std::max<long long>(1, std::chrono::ceil<seconds>(options.timeout).count());
        std::vector<std::string> inner = {"timeout", std::to_string(secs)};
        inner.insert(inner.end(), argv.begin(), argv.end());
        if (!options.cwd.empty()) {
            // 127: what a shell answers for a command it could not run.
            std::vector<std::string> in_dir = {"sh", "-c", "cd \"$1\" || exit 127; shift; exec \"$@\"", "_",
                                               options.cwd};
            in_dir.insert(in_dir.end(), inner.begin(), inner.end());
            inner = std::move(in_dir);
        }
        ProcessOptions po = options;
        po.cwd.clear();
        po.timeout = seconds(secs + 5);
        const auto start = std::chrono::steady_clock::now();
        ProcessResult r = run_there(inner, po, options.stdin_data.has_value());
        // `timeout` answers 124 when it had to stop the command.
        if (r.exit_code == 124 && std::chrono::steady_clock::now() - start >= seconds(secs)) r.timed_out = true;
        return r;
    }

    std::string default_cwd() const override {
        const ProcessResult r = helper({"pwd"}, 4096);
        return ok(r) ? trimmed_output(r.output) : "unknown";
    }

  protected:
    // The local command that runs `inner` (a complete argv) there; `with_stdin`: the local stdin reaches it.
    virtual std::vector<std::string> wrap(const std::vector<std::string>& inner, bool with_stdin) const = 0;

  private:
    static bool ok(const ProcessResult& r) { return r.spawn_error.empty() && r.exit_code == 0 && !r.timed_out; }

    ProcessResult run_there(const std::vector<std::string>& inner, const ProcessOptions& po, bool with_stdin) const {
        return run_process(wrap(inner, with_stdin), po);
    }

    ProcessResult helper(const std::vector<std::string>& inner, size_t max_output) const {
        ProcessOptions po;
        po.max_output = max_output;
        po.timeout = kHelperTimeout;
        return run_there(inner, po, false);
    }

    static std::vector<std::string> lines_of(const std::string& text) {
        std::vector<std::string> out;
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.rfind("./", 0) == 0) line.erase(0, 2);
            if (!line.empty() && line != ".") out.push_back(std::move(line));
        }
        return out;
    }

    // One `find` there: directories (the junk ones listed, never entered) or regular files. -mindepth and
    // -maxdepth work with GNU and busybox find alike.
    void find_into(const std::string& base, int max_depth, bool dirs, Listing& out) const {
        std::string junk;
        for (const char* n : junk_dir_names()) junk += std::string(junk.empty() ? "" : " -o ") + "-name '" + n + "'";
        std::string cmd = "cd \"$1\" && exec find . -mindepth 1";
        if (max_depth > 0) cmd += " -maxdepth " + std::to_string(max_depth);
        cmd += " \\( -type d \\( " + junk + " \\) \\) -prune";
        cmd += dirs ? " -print -o -type d -print" : " -o -type f -print";
        ProcessOptions po;
        po.max_output = kListOutputCap;
        po.timeout = kListBudget;
        po.merge_stderr = false;
        const ProcessResult r = run_there({"sh", "-c", cmd, "_", base}, po, false);
        // find answers 1 for a directory it could not read, and lists the rest.
        if (!r.spawn_error.empty() || r.timed_out || r.truncated || r.exit_code != 0) out.truncated = true;
        std::vector<std::string> lines = lines_of(r.output);
        if (r.truncated && !lines.empty()) lines.pop_back();  // the last line may be cut
        for (std::string& rel : lines) out.entries.push_back({std::move(rel), dirs});
    }
};

class ContainerIo final : public IsolateIo {
  public:
    ContainerIo(std::string engine, std::string id) : engine_(std::move(engine)), id_(std::move(id)) {}

  protected:
    std::vector<std::string> wrap(const std::vector<std::string>& inner, bool with_stdin) const override {
        std::vector<std::string> argv = {engine_, "exec"};
        if (with_stdin) argv.push_back("-i");
        argv.push_back(id_);
        argv.insert(argv.end(), inner.begin(), inner.end());
        return argv;
    }

  private:
    std::string engine_, id_;
};

class SshIo final : public IsolateIo {
  public:
    explicit SshIo(std::string target) : target_(std::move(target)) {}

  protected:
    // No terminal to answer a prompt: key authentication only, and a host key already trusted.
    std::vector<std::string> wrap(const std::vector<std::string>& inner, bool with_stdin) const override {
        std::vector<std::string> argv = {"ssh", "-o", "BatchMode=yes", "-o", "PasswordAuthentication=no",
                                         "-o", "KbdInteractiveAuthentication=no", "-o", "StrictHostKeyChecking=yes"};
        if (!with_stdin) argv.push_back("-n");
        argv.push_back(target_);
        argv.push_back(shell_quote_join(inner));
        return argv;
    }

  private:
    std::string target_;
};

}  // namespace

RuntimeSpec parse_runtime_spec(const std::string& spec) {
    RuntimeSpec r;
    r.text = spec;
    for (const char* engine : {"docker", "podman"}) {
        const std::string attach = std::string(engine) + "-container:";
        const std::string start = std::string(engine) + ":";
        if (spec.rfind(attach, 0) == 0) {
            r.kind = RuntimeSpec::Kind::container;
            r.engine = engine;
            r.arg = spec.substr(attach.size());
            if (!valid_word(r.arg, false))
                throw std::invalid_argument("invalid container id \"" + r.arg +
                                            "\": letters, digits, '.', '_' and '-', starting with a letter or digit");
            return r;
        }
        if (spec.rfind(start, 0) == 0) {
            r.kind = RuntimeSpec::Kind::spawn;
            r.engine = engine;
            r.arg = spec.substr(start.size());
            if (r.arg.empty()) throw std::invalid_argument(start + "IMAGE needs an image name");
            if (r.arg[0] == '-') throw std::invalid_argument("invalid image name \"" + r.arg + "\"");
            return r;
        }
    }
    if (spec.rfind("ssh:", 0) == 0) {
        r.kind = RuntimeSpec::Kind::ssh;
        r.arg = spec.substr(4);
        if (!valid_word(r.arg, true))
            throw std::invalid_argument("invalid ssh target \"" + r.arg +
                                        "\": [user@]host of letters, digits, '.', '_' and '-'");
        return r;
    }
    throw std::invalid_argument("unknown tool runtime \"" + spec +
                                "\" (expected docker:IMAGE, podman:IMAGE, docker-container:ID, "
                                "podman-container:ID or ssh:[USER@]HOST)");
}

std::string shell_quote_join(const std::vector<std::string>& argv) {
    std::string out;
    for (const std::string& a : argv) {
        if (!out.empty()) out += ' ';
        out += '\'';
        for (const char c : a) {
            if (c == '\'') out += "'\\''";  // close the quote, an escaped quote, open again
            else out += c;
        }
        out += '\'';
    }
    return out;
}

std::unique_ptr<ToolIo> make_isolate_io(const RuntimeSpec& spec) {
    switch (spec.kind) {
        case RuntimeSpec::Kind::container: return std::make_unique<ContainerIo>(spec.engine, spec.arg);
        case RuntimeSpec::Kind::ssh: return std::make_unique<SshIo>(spec.arg);
        case RuntimeSpec::Kind::spawn: break;
    }
    throw std::invalid_argument("tool runtime \"" + spec.text +
                                "\" starts a container: a call can only name a running one (" + spec.engine +
                                "-container:ID) or an ssh host");
}

}  // namespace tools
