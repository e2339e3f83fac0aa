/*
 * fuzz_onnx.c - libFuzzer target for the whole compiler: bytes -> ONNX
 * loader -> passes -> C emission.  Any input must come back as a status;
 * a crash, a sanitizer report, a leak or a hang is a finding.
 *
 * Built with -fsanitize=fuzzer,address,undefined by `make fuzz`; the same
 * file linked with replay.c replays tests/fuzz/regressions/onnx under ctest.
 */
#include <stdint.h>
#include <stdio.h>
#include "frontend/onnx.h"
#include "passes/passes.h"
#include "codegen/c/emit_c.h"

/* Small limits, so that a legitimate but huge tensor is refused instead of
 * taking the fuzzer past its RSS limit. */
static void fuzz_limits(Ctx *c)
{
	c->limits.max_file_bytes = (int64_t)16 << 20;
	c->limits.max_tensor_bytes = (int64_t)64 << 20;
	c->limits.max_depth = 8;
	c->limits.max_nodes = 10000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	CompileOpts o = { .verify = 1 };
	Compiled *m;
	Graph *g;
	Ctx c;
	EmitC e = { "fuzz", "fuzz.h", "fuzz.onnx" };

	if (!null && !(null = fopen("/dev/null", "w")))
		return 0;
	burn_ctx_init(&c, "fuzz.onnx");
	fuzz_limits(&c);
	if (onnx_load_bytes(&c, data, size, NULL, &g))
		return 0;
	if (burn_compile_graph(&c, g, &o, &m))
		return 0;
	emit_c_module(&c, m->g, &m->prog, &m->plan, &e, null, null);
	burn_compiled_destroy(m);
	return 0;
}
