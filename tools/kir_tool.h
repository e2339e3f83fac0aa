/* kir_tool.h - `burncc kir`: read, verify, print or run kernel-IR text. */
#ifndef BURN_KIR_TOOL_H
#define BURN_KIR_TOOL_H

/* argv[0] is "kir"; returns the exit status. */
int kir_main(int argc, char **argv);

#endif
