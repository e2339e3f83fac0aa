/*
 * dump.c - see dump.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tools/dump.h"

/* Open dir/NNN_name.ext for writing, or fail with the path in the message. */
static int
open_file(Ctx *c, const char *dir, int k, const char *name, const char *ext,
          FILE **out)
{
	char path[4096];

	snprintf(path, sizeof path, "%s/%03d_%s.%s", dir, k, name, ext);
	*out = fopen(path, "w");
	if (!*out)
		return burn_fail(c, BURN_ERR_IO, "BURNCC_DUMP: cannot write %s: %s", path,
		                 strerror(errno));
	return BURN_OK;
}

static int
close_file(Ctx *c, FILE *f, int rc)
{
	if (fclose(f) && !rc)
		rc = burn_fail(c, BURN_ERR_IO, "BURNCC_DUMP: write error: %s", strerror(errno));
	return rc;
}

int
burn_dump(Ctx *c, const char *dir, const Compiled *m, const Backend *be)
{
	if (mkdir(dir, 0777) && errno != EEXIST)
		return burn_fail(c, BURN_ERR_IO, "BURNCC_DUMP: cannot create %s: %s", dir,
		                 strerror(errno));
	for (int k = 0; k < m->prog.nkernel; k++) {
		const KKernel *kk = m->prog.kernel[k];
		FILE *f;
		int rc;

		TRY(open_file(c, dir, k, kk->name, "kir", &f));
		fprintf(f, "# %s\n", kk->ops ? kk->ops : "");
		kir_print(f, kk);
		TRY(close_file(c, f, BURN_OK));
		if (kk->sched) {
			TRY(open_file(c, dir, k, kk->name, "sched", &f));
			sched_print(f, kk);
			TRY(close_file(c, f, BURN_OK));
		}
		if (be && be->render_kernel) {
			TRY(open_file(c, dir, k, kk->name, be->ext ? be->ext : "txt", &f));
			rc = be->render_kernel(c, kk, f);
			TRY(close_file(c, f, rc));
		}
	}
	return BURN_OK;
}
