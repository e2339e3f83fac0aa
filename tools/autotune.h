/*
 * autotune.h - schedules chosen by timing them on the device (issue 9's
 * autotuning; Burn's autotune): for each kernel with a tunable step (the
 * GPU MatMul template's mma(...) today), a few candidate steps are timed,
 * each kernel alone on the target's device (Backend.profile), the first
 * time its kernel is seen, and the fastest is kept in the disk cache
 * (runtime/cache.h) under the device and the kernel (its kernel-IR text
 * with the default schedule: ops, shapes, dtypes), so a later compile
 * reads it instead of timing.  The result is a KWant list (--schedule's
 * form) that the final compile takes.  Off unless asked for (--autotune):
 * builds stay reproducible.
 */
#ifndef BURN_AUTOTUNE_H
#define BURN_AUTOTUNE_H

#include "../codegen/target_iface.h"

/* One tuned kernel, for the report. */
typedef struct TuneResult {
	char kernel[96];
	char steps[256];         /* the chosen steps (--emit=schedule form) */
	double ms;               /* its time, median (0 when from the cache) */
	double default_ms;       /* the default schedule's (0: from the cache) */
	int candidates;          /* timed (0: from the cache) */
} TuneResult;

/*
 * Tune `model` compiled with o for be (which must have profile).  On
 * success *want / *nwant hold o's schedules plus the chosen ones
 * (allocated in a), res[0..*nres-1] (at most maxres) what was chosen.
 * runs: timed runs per candidate.  No device (BURN_ERR_UNSUPPORTED from
 * the target) is returned as such: the caller decides whether to go on
 * with the defaults.
 */
int burn_autotune(Ctx *c, const char *model, const CompileOpts *o, const Backend *be,
                  int runs, Arena *a, KWant **want, int *nwant, TuneResult *res,
                  int maxres, int *nres);

/* Seeded pseudo-random inputs (floats uniform in [-3, 3], others 0) for
 * m's graph inputs; NULL when out of memory or an input has no static
 * size.  free_inputs frees them. */
void **bench_inputs(const Compiled *m);
void free_inputs(const Compiled *m, void **in);

#endif
