/* run_model.h - `burncc run MODEL.onnx --input NAME=FILE ...`: a model run
 * on data files (.npy or ONNX TensorProto .pb), outputs written as .npy. */
#ifndef BURN_RUN_MODEL_H
#define BURN_RUN_MODEL_H

/* Whether `burncc run` args name an ONNX model (else it runs a script). */
int run_model_wanted(int argc, char **argv);
int run_model_main(int argc, char **argv);

#endif
