/*
 * train_aot.c - training from C with the AOT train step: no burncc, no
 * framework, only the two C modules burncc writes and zlib (to read the
 * gzip-compressed IDX files).
 *
 *     burncc train examples/mlp_train.burn -o step.c --eval-o step_eval.c
 *     cc -O2 -I. examples/train_aot.c step.c step_eval.c -lz -lm -o train_aot
 *     ./train_aot /usr/share/datasets/fashion-mnist
 *
 * It does what `burncc train MODEL --data DIR` does with the same options
 * (tools/train.c), so the two give the same losses: the images [N, 28, 28]
 * u8 become x / 255 in f32; every epoch visits the training set in an
 * order shuffled by a seeded splitmix64 (Fisher-Yates), in full batches;
 * then the test set in batches, the last padded with zeros and counted
 * only for its real rows.  Each epoch prints burncc train's line (the test
 * loss is the cross-entropy of the logits).  Initial values from a
 * checkpoint (burncc train -o --load) go on where it stopped, as burncc
 * train --load does: --epochs counts the checkpoint's epochs too.
 *
 * Any model of burncc train's kind whose input holds 784 floats per
 * example fits (examples/cnn_train.burn's [64, 1, 28, 28] is the same
 * memory as [64, 784]).  The modules' prefixes are step and step_eval
 * (from the file names): the API is in step.h (the train step:
 * step_train_init, step_train_step) and step_eval.h (step_eval_run_v: x
 * and the parameters in, logits out).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "step.h"
#include "step_eval.h"

#define NP STEP_TRAIN_PARAMS
#define NS STEP_TRAIN_STATES
#define B STEP_TRAIN_BATCH
#define F STEP_TRAIN_FEATURES
#define K STEP_TRAIN_CLASSES

typedef struct Idx {
	int64_t n, feat;        /* examples, bytes per example */
	unsigned char *data;
} Idx;

/* Read DIR/NAME.gz (or DIR/NAME): an IDX file of unsigned bytes. */
static int idx_read(const char *dir, const char *name, Idx *t)
{
	char path[4096];
	unsigned char h[4], d[4];
	gzFile f;
	int64_t n = 1;

	snprintf(path, sizeof path, "%s/%s.gz", dir, name);
	if (!(f = gzopen(path, "rb"))) {
		snprintf(path, sizeof path, "%s/%s", dir, name);
		if (!(f = gzopen(path, "rb"))) {
			fprintf(stderr, "train_aot: cannot open %s\n", path);
			return 1;
		}
	}
	if (gzread(f, h, 4) != 4 || h[0] || h[1] || h[2] != 8 || h[3] < 1 || h[3] > 3) {
		fprintf(stderr, "train_aot: %s: not an IDX file of unsigned bytes\n", path);
		gzclose(f);
		return 1;
	}
	t->feat = 1;
	for (int i = 0; i < h[3]; i++) {
		int64_t v;
		if (gzread(f, d, 4) != 4) {
			fprintf(stderr, "train_aot: %s: truncated\n", path);
			gzclose(f);
			return 1;
		}
		v = (int64_t)d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3];
		if (i)
			t->feat *= v;
		else
			t->n = v;
		n *= v;
	}
	if (!(t->data = malloc((size_t)n)) || gzread(f, t->data, (unsigned)n) != (int)n) {
		fprintf(stderr, "train_aot: %s: truncated or out of memory\n", path);
		gzclose(f);
		return 1;
	}
	gzclose(f);
	return 0;
}

/* splitmix64, burncc train's */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Batch rows idx[0..n-1] into x, y (zeros past n). */
static void fill(const Idx *img, const Idx *lab, const int64_t *idx, int64_t n,
                 float *x, int64_t *y)
{
	for (int64_t r = 0; r < B; r++) {
		float *xr = x + r * F;
		if (r >= n) {
			memset(xr, 0, sizeof *xr * F);
			y[r] = 0;
			continue;
		}
		for (int64_t k = 0; k < F; k++)
			xr[k] = (float)img->data[idx[r] * F + k] / 255.0f;
		y[r] = lab->data[idx[r]];
	}
}

static void *arena_new(int64_t bytes, int64_t align)
{
	size_t n = (size_t)((bytes + align) / align * align);
	void *p = aligned_alloc((size_t)align, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static int64_t arg(int argc, char **argv, const char *name, int64_t def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtoll(argv[i + 1], NULL, 10);
	return def;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
	const char *lpath = NULL;
	int64_t epochs = arg(argc, argv, "--epochs", 5), seed = arg(argc, argv, "--seed", 1);
	int64_t train_limit = arg(argc, argv, "--train-limit", 0);
	int64_t test_limit = arg(argc, argv, "--test-limit", 0);
	int64_t max_steps = arg(argc, argv, "--max-steps", 0), t = STEP_TRAIN_START_STEP;
	int64_t ep0 = STEP_TRAIN_START_EPOCH, skip;
	Idx xtr, ytr, xte, yte;
	float *p[2][NP], *s[2][NP * NS + 1], *x, *logits, loss;
	int64_t *perm, y[B], idx[B], ntrain, ntest, nb;
	void *arena, *earena;
	uint64_t rs;
	int cur = 0;
	FILE *lf = NULL;

	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--losses"))
			lpath = argv[i + 1];
	if (idx_read(dir, "train-images-idx3-ubyte", &xtr) ||
	    idx_read(dir, "train-labels-idx1-ubyte", &ytr) ||
	    idx_read(dir, "t10k-images-idx3-ubyte", &xte) ||
	    idx_read(dir, "t10k-labels-idx1-ubyte", &yte))
		return 1;
	if (xtr.feat != F || xte.feat != F || xtr.n != ytr.n || xte.n != yte.n) {
		fprintf(stderr, "train_aot: the model takes %d features; the images have %lld\n",
		        F, (long long)xtr.feat);
		return 1;
	}
	ntrain = train_limit > 0 && train_limit < xtr.n ? train_limit : xtr.n;
	ntest = test_limit > 0 && test_limit < xte.n ? test_limit : xte.n;
	nb = ntrain / B;
	/* initial values from a checkpoint saved in the middle of an epoch:
	 * that epoch goes on after its steps done */
	skip = t > ep0 * nb ? t - ep0 * nb : 0;
	/* the caller's buffers: two sets of parameters and states */
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < NP; i++) {
			p[k][i] = malloc(sizeof(float) * (size_t)step_train_numel[i]);
			for (int j = 0; j < NS; j++)
				s[k][i * NS + j] = malloc(sizeof(float) * (size_t)step_train_numel[i]);
		}
		s[k][NP * NS] = NULL;
	}
#if STEP_TRAIN_NOISE
	if ((uint64_t)seed != STEP_TRAIN_SEED)
		fprintf(stderr, "train_aot: the Dropout masks come from seed %llu (burncc train "
		        "-o --seed), the shuffle from --seed %lld\n",
		        (unsigned long long)STEP_TRAIN_SEED, (long long)seed);
#endif
	arena = arena_new(STEP_TRAIN_ARENA_BYTES, STEP_ARENA_ALIGN);
	earena = arena_new(STEP_EVAL_ARENA_BYTES, STEP_EVAL_ARENA_ALIGN);
	perm = malloc(sizeof *perm * (size_t)ntrain);
	x = malloc(sizeof *x * B * F);
	logits = malloc(sizeof *logits * B * K);
	if (!arena || !earena || !perm || !x || !logits) {
		fprintf(stderr, "train_aot: out of memory\n");
		return 1;
	}
	if (lpath && !(lf = fopen(lpath, "w"))) {
		fprintf(stderr, "train_aot: cannot write %s\n", lpath);
		return 1;
	}
	step_train_init(p[0], s[0]);
	for (int64_t i = 0; i < ntrain; i++)
		perm[i] = i;
	rs = (uint64_t)seed;
	for (int64_t ep = 1; ep <= epochs; ep++) {
		double ls = 0, tl = 0, t1 = clock_s(CLOCK_MONOTONIC);
		double c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID), tt, tc;
		int64_t steps = 0, right = 0;
		const void *ein[1 + NP];
		void *eout[1] = { logits };
		for (int64_t i = ntrain - 1; i > 0; i--) {
			int64_t j = (int64_t)(rng_next(&rs) % (uint64_t)(i + 1)), tmp = perm[i];
			perm[i] = perm[j];
			perm[j] = tmp;
		}
		if (ep <= ep0)   /* done before the initial values: only its shuffle */
			continue;
		for (int64_t b = ep == ep0 + 1 ? skip : 0; b < nb && (!max_steps || t < max_steps);
		     b++) {
			int rc;
			fill(&xtr, &ytr, perm + b * B, B, x, y);
			t++;
			rc = step_train_step(t, x, y, p[cur], s[cur], p[cur ^ 1], s[cur ^ 1], &loss,
			                     arena);
			if (rc || !isfinite(loss)) {
				fprintf(stderr, "train_aot: step %lld: status %d, loss %g\n",
				        (long long)t, rc, (double)loss);
				return 1;
			}
			if (lf)
				fprintf(lf, "%lld %a %.9g\n", (long long)t, (double)loss, (double)loss);
			ls += loss;
			steps++;
			cur ^= 1;
		}
		tt = clock_s(CLOCK_MONOTONIC) - t1;
		tc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c1;
		/* the test set */
		ein[0] = x;
		for (int i = 0; i < NP; i++)
			ein[1 + i] = p[cur][i];
		for (int64_t s0 = 0; s0 < ntest; s0 += B) {
			int64_t n = ntest - s0 < B ? ntest - s0 : B;
			for (int64_t r = 0; r < n; r++)
				idx[r] = s0 + r;
			fill(&xte, &yte, idx, n, x, y);
			if (step_eval_run_v(ein, eout, earena)) {
				fprintf(stderr, "train_aot: the evaluation failed\n");
				return 1;
			}
			for (int64_t r = 0; r < n; r++) {
				const float *l = logits + r * K;
				int64_t best = 0;
				double se = 0;
				for (int64_t k = 1; k < K; k++)
					if (l[k] > l[best])
						best = k;
				for (int64_t k = 0; k < K; k++)
					se += exp((double)l[k] - l[best]);
				tl += l[best] + log(se) - l[y[r]];
				right += best == y[r];
			}
		}
		printf("epoch %lld/%lld  steps %lld  train loss %.4f  test loss %.4f  test "
		       "accuracy %.2f%%  train %.2f s (cpu %.2f s)\n", (long long)ep,
		       (long long)epochs, (long long)steps, steps ? ls / (double)steps : 0.0,
		       tl / (double)ntest, 100.0 * (double)right / (double)ntest, tt, tc);
		fflush(stdout);
		if (max_steps && t >= max_steps)
			break;
	}
	if (lf && fclose(lf)) {
		fprintf(stderr, "train_aot: %s: write failed\n", lpath);
		return 1;
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < NP; i++) {
			free(p[k][i]);
			for (int j = 0; j < NS; j++)
				free(s[k][i * NS + j]);
		}
	free(arena);
	free(earena);
	free(perm);
	free(x);
	free(logits);
	free(xtr.data);
	free(ytr.data);
	free(xte.data);
	free(yte.data);
	return 0;
}
