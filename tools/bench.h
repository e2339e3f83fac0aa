/* bench.h - burncc bench: a compiled model timed on its target's device. */
#ifndef BURN_BENCH_TOOL_H
#define BURN_BENCH_TOOL_H

int bench_main(int argc, char **argv);

#endif
