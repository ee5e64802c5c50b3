// dlc: the command line. Subcommands live in their own files (inspect.cc, opt.cc, ...).
#include <cstdio>

int main(int argc, char **argv) {
  std::fprintf(stderr, "dlc: not built yet\n");
  return 1;
}
