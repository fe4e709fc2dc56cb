// Entry points of the ggserve subcommands. Each returns the process exit code.
#pragma once

namespace cli {

int main_dispatch(int argc, char** argv);

int cmd_info(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_loadgen(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_quantize(int argc, char** argv);

}  // namespace cli
