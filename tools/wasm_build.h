/*
 * wasm_build.h - `burncc MODEL.onnx --target wasm -o NAME.wasm`: the wasm
 * target's C (codegen/wasm/target_wasm.c) built into a WebAssembly module
 * by clang --target=wasm32 and wasm-ld.
 */
#ifndef BURN_WASM_BUILD_H
#define BURN_WASM_BUILD_H

#include "../codegen/target_iface.h"

/* Whether path names a .wasm file (then -o builds, not only writes C). */
int wasm_out_wanted(const char *path);

/*
 * Write m's module (backend be, prefix "model") into a temporary folder
 * beside out, build it with the compiler $BURNCC_WASM_CC, else clang-19,
 * else clang (flags: wasm_build.c), and rename the result over out; the
 * folder is removed.  Nothing is left at out on failure; the message names
 * the compiler's first error line.  model: the model file, for comments.
 */
int wasm_build(Ctx *c, const Compiled *m, const Backend *be, const char *out,
               const char *model);

#endif
