/*
 * npy.h - NumPy's .npy files (format versions 1.0, 2.0 and 3.0): one
 * array per file, a magic string, a little header dict in Python literal
 * syntax ({'descr': '<f4', 'fortran_order': False, 'shape': (1, 10), }),
 * then the elements.  `burncc run` reads its inputs and writes its outputs
 * with these.
 *
 * Only what burncc computes with is accepted: little-endian (or
 * one-byte) elements of the dtypes in ir/base.h that NumPy has (no bf16,
 * no float8), C order.  A big-endian or Fortran-order array is refused
 * with a message that says so (re-save it with np.ascontiguousarray /
 * .astype('<f4')); a file whose data is shorter or longer than its
 * shape says is refused too.
 */
#ifndef BURN_NPY_H
#define BURN_NPY_H

#include "../ir/graph.h"

/* Read the .npy file at path into t; the elements are allocated from a.
 * Sizes are checked against c->limits (max_file_bytes, max_tensor_bytes).
 * BURN_ERR_IO when the file cannot be read, BURN_ERR_PARSE when it is not
 * a valid .npy, BURN_ERR_UNSUPPORTED for a dtype, byte order or layout
 * burncc does not take; c->file is set to path, so every message names it. */
int npy_load_file(Ctx *c, const char *path, Arena *a, Tensor *t);

/* Write dtype, shape and the nbytes of data (C order, little-endian) as a
 * version 1.0 .npy file at path (replaced if it exists).  BURN_ERR_IO on a
 * write error, BURN_ERR_UNSUPPORTED for a dtype NumPy has no code for. */
int npy_save_file(Ctx *c, const char *path, int dtype, int rank,
                  const int64_t *dim, const void *data);

#endif
