/*
 * train.h - `burncc train`: a classifier trained on IDX data through a
 * compiled train step (tools/train.c says how).
 */
#ifndef BURN_TRAIN_TOOL_H
#define BURN_TRAIN_TOOL_H

/* burncc train ...: argv[0] is "train".  Returns the exit status. */
int train_main(int argc, char **argv);

#endif
