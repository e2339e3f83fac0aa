/*
 * fuzz_ir_text.c - libFuzzer target for the IR text parser: bytes ->
 * ir_parse -> graph_verify -> ir_print, and a graph the verifier accepts
 * goes on through the passes and the C emission.  The text form is easy to
 * mutate meaningfully, so this reaches the passes far more often than
 * mutated protobuf does.  Nothing may crash; statuses do not matter.
 *
 * Built with -fsanitize=fuzzer,address,undefined by `make fuzz`; the same
 * file linked with replay.c replays tests/fuzz/regressions/ir_text.
 */
#include <stdint.h>
#include <stdio.h>
#include "passes/passes.h"
#include "codegen/c/emit_c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	Graph *g;
	Ctx c;

	if (!null && !(null = fopen("/dev/null", "w")))
		return 0;
	burn_ctx_init(&c, "fuzz.ir");
	c.limits.max_tensor_bytes = (int64_t)64 << 20;
	c.limits.max_depth = 8;
	c.limits.max_nodes = 10000;
	if (ir_parse(&c, (const char *)data, size, &g))
		return 0;
	ir_print(null, g, -1);
	if (graph_verify(&c, g) == BURN_OK) {
		CompileOpts o = { .verify = 1 };
		EmitC e = { "fuzz", "fuzz.h", "fuzz.ir" };
		Compiled *m;
		if (burn_compile_graph(&c, g, &o, &m) == BURN_OK) {  /* takes g */
			emit_c_module(&c, m->g, &m->prog, &m->plan, &e, null, null);
			burn_compiled_destroy(m);
		}
		return 0;
	}
	graph_destroy(g);
	return 0;
}
