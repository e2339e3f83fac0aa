/*
 * train.h - `burncc train`: a classifier trained on IDX data through a
 * compiled train step (tools/train.c says how).
 */
#ifndef BURN_TRAIN_TOOL_H
#define BURN_TRAIN_TOOL_H

#include "../api/dsl.h"

/* burncc train ...: argv[0] is "train".  Returns the exit status. */
int train_main(int argc, char **argv);

/* The hook of train() in scripts (dsl_vm_set_train; arg unused): the same
 * run as burncc train, on the model traced from the running vm. */
int train_dsl(void *arg, DslVm *vm, DslTrainCall *tc, Ctx *c);

#endif
