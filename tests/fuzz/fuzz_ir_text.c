/*
 * fuzz_ir_text.c - libFuzzer target for the IR text parser: bytes ->
 * ir_parse -> graph_verify -> ir_print.  A parsed graph must print without
 * a crash; the verifier's verdict does not matter, only that it returns.
 *
 * Built with -fsanitize=fuzzer,address,undefined by `make fuzz`; the same
 * file linked with replay.c replays tests/fuzz/regressions/ir_text.
 */
#include <stdint.h>
#include <stdio.h>
#include "ir/graph.h"

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
	graph_verify(&c, g);
	ir_print(null, g, -1);
	graph_destroy(g);
	return 0;
}
