/*
 * targets.c - the registry of built-in backends (target_iface.h).
 *
 * To add one: a Backend in its own folder (codegen/NAME/), listed here.
 */
#include <string.h>
#include "target_iface.h"

extern const Backend backend_c;     /* codegen/c/target_c.c */

/* The GPU description with no renderer yet: lowering and scheduling can
 * be inspected (--emit=kernels, --stats); nothing is rendered. */
static const Backend backend_gpu = {
	.name = "gpu",
	.about = "a generic GPU, description only: lowers and schedules\n"
	         "(--emit=ir|kernels, --stats), no renderer yet\n"
	         "(no -o, --emit=c or check)",
	.target = &target_gpu,
};

const Backend *const backend_list[] = { &backend_c, &backend_gpu, NULL };

const Backend *backend_find(const char *name)
{
	for (int i = 0; name && backend_list[i]; i++)
		if (!strcmp(backend_list[i]->name, name))
			return backend_list[i];
	return NULL;
}
