// ggserve: one binary, several subcommands (run, serve, tokenize, info, bench, loadgen).
#include "server/cli/commands.h"

int main(int argc, char** argv) { return cli::main_dispatch(argc, argv); }
