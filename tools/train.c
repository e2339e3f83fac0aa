/*
 * train.c - `burncc train MODEL --data DIR`: trains a classifier on an IDX
 * data set (MNIST's layout: Fashion-MNIST, MNIST) with a train step that
 * burncc compiles, and evaluates it on the test set after every epoch.
 *
 * The model is a .burn script whose `main(x: f32[B, ...])` returns the
 * logits [B, K] (or an ONNX model with that one input and output).  Every
 * float constant of rank >= 1 the model holds (the layers' weights, from
 * the script's seeded initialisation) is a parameter.  Two programs are
 * compiled from it, both through the same passes as any model:
 *
 *   the train step: inputs x, the parameters, the labels [B] (int64), the
 *     optimiser's scalars and states; the loss (build_loss: softmax
 *     cross-entropy, label smoothing, NLL, MSE, BCE with logits, L1) on
 *     the logits; the autodiff pass (passes/autodiff.c) for every parameter;
 *     the optimiser's update (passes/optim.c); outputs the loss and the
 *     new parameters and states.  Forward, backward and update are one
 *     program: its kernels, fused, are all a step runs;
 *   the evaluation: x and the parameters in, the logits out.
 *
 * The parameters and states live in two sets of buffers, the step reading
 * one and writing the other (no output aliases an input), swapped after
 * each step.  The programs run on the llvm target (JIT, one thread) when
 * burncc is built with LLVM, else in the kernel-IR interpreter.
 *
 * Data: the images [N, 28, 28] u8 become x / 255 in f32, the labels [N]
 * u8 int64.  Every epoch visits the training set in an order shuffled by a
 * seeded splitmix64 (Fisher-Yates), in full batches (the last partial
 * batch is dropped); the test set runs in batches of B, the last padded
 * with zeros and counted only for its real rows.  Everything is a
 * function of the seed: two runs give bit-identical losses (--losses).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "passes/passes.h"
#include "passes/autodiff.h"
#include "passes/optim.h"
#include "frontend/onnx.h"
#include "codegen/target_iface.h"
#include "codegen/c/emit_c.h"
#include "tools/dsl_tool.h"
#include "frontend/safetensors.h"
#include "tools/idx.h"
#include "tools/train.h"
#include "tools/compile.h"
#include "tools/dash.h"
#ifdef BURN_HAVE_LLVM
#include "codegen/llvm/jit.h"
#endif

#define MAX_PARAM 64
#define MAX_NOISE 16

static const char train_usage[] =
"usage: burncc train MODEL.burn|MODEL.onnx --data DIR [options]\n"
"       burncc train MODEL.burn|MODEL.onnx -o STEP.c [--eval-o EVAL.c] [options]\n"
"  MODEL: a script whose fn main(x: f32[B, ...]) returns logits [B, K]\n"
"  (every float constant of rank >= 1 in it is a trained parameter), or an\n"
"  ONNX model with that one input and output\n"
"  --data DIR       IDX files: DIR/train-images-idx3-ubyte[.gz],\n"
"                   train-labels-idx1-ubyte, t10k-images-idx3-ubyte,\n"
"                   t10k-labels-idx1-ubyte (gzip or plain)\n"
"  --epochs N       (default 5)\n"
"  --optimizer adam|adamw|sgd|rmsprop   (default adam)\n"
"  --lr X           learning rate (default 1e-3)\n"
"  --momentum X     SGD (default 0.9), RMSProp (default 0) momentum\n"
"  --nesterov       SGD: Nesterov momentum\n"
"  --weight-decay X L2 added to the gradient; AdamW: decoupled (default 0,\n"
"                   AdamW 0.01)\n"
"  --beta1 X, --beta2 X, --eps X   Adam(W) (0.9, 0.999, 1e-8); RMSProp eps\n"
"  --alpha X        RMSProp's smoothing (default 0.99)\n"
"  --clip-norm X    scale the gradients to a global L2 norm of at most X\n"
"  --lr-schedule constant|step|cosine   (default constant)\n"
"  --lr-step N      step: multiply the lr by --lr-gamma (0.1) every N epochs\n"
"  --warmup N       linear warm-up over the first N steps\n"
"  --loss cross_entropy|nll|mse|bce|l1   (default cross_entropy); nll: the\n"
"                   model returns log-probabilities (log_softmax), the loss\n"
"                   is -mean(out[i, label i]); mse, bce (with logits) and l1\n"
"                   against one-hot labels, mean over all\n"
"  --label-smoothing X   cross-entropy's (default 0)\n"
"  --seed N         the shuffling's seed (default 1)\n"
"  --train-limit N  train on the first N training images only\n"
"  --test-limit N   evaluate on the first N test images only\n"
"  --max-steps N    stop after N steps (then evaluate)\n"
"  --losses FILE    write every step's loss, 'STEP HEXFLOAT DECIMAL', to FILE\n"
"  --entry FN       the script's function (default main)\n"
"  --save FILE      after every epoch, write the parameters, the optimiser's\n"
"                   state and the position (safetensors; a temporary file\n"
"                   renamed over FILE, so FILE is always whole)\n"
"  --load FILE      resume from a --save checkpoint of the same model and\n"
"                   optimiser: continues after its step, as if never stopped\n"
"  --save-onnx FILE when --save writes, the trained model as ONNX: the\n"
"                   evaluation (eval mode: Dropout the identity) with the\n"
"                   trained parameters as initializers (a temporary file\n"
"                   renamed over FILE); burncc compiles it like any model\n"
"  --no-dashboard   plain log lines even on a terminal\n"
"  --check-nan      check every step's new parameters and states for NaN and\n"
"                   infinity, not only the loss; either way, a non-finite\n"
"                   value stops the run with the step and the first graph node\n"
"                   and op that produced one (the step rerun unfused)\n"
"  -o STEP.c        do not train: write the train step (forward, loss,\n"
"                   backward, the optimiser's update) as C, STEP.c and STEP.h\n"
"                   (prefix STEP), with the initial parameters (the model's,\n"
"                   or --load's checkpoint's) and STEP_train_init,\n"
"                   STEP_train_scalars, STEP_train_step (STEP.h); --data is\n"
"                   needed only by the step and cosine schedules\n"
"  --eval-o EVAL.c  with -o: the evaluation too (x and the parameters in,\n"
"                   the logits out), prefix EVAL\n"
"  --cpu NAME       size the kernels for a CPU description (native, avx512,\n"
"                   avx2, generic: burncc --help), for the JIT and for -o\n"
"On a terminal (stdin and stdout), a dashboard: progress, ETA, steps/s, plots\n"
"of the losses, accuracy and learning rate (Tab or 1-3 switch them), q quits\n"
"(saving the checkpoint if --save).  Otherwise one line per epoch: mean train\n"
"loss, test loss and accuracy, time.\n";

/* splitmix64 */
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

static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }
/* the process's CPU time: on a shared machine, what the steps cost apart
 * from the time other processes took the core */
static double cpu_s(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

/* ---- the programs ---------------------------------------------------------- */

typedef struct Prog {
	Compiled *m;
	void *arena;
#ifdef BURN_HAVE_LLVM
	LlvmJit *j;
#endif
} Prog;

typedef struct Model {
	int x;                    /* the input value */
	int logits;
	int64_t B, feat, K;       /* batch, features per example, classes */
	int np;
	int param[MAX_PARAM];
	int64_t pbytes[MAX_PARAM];
	/* each parameter's name and shape, kept past the graph (checkpoints) */
	char pname[MAX_PARAM][128];
	int prank[MAX_PARAM];
	int64_t pdim[MAX_PARAM][BURN_MAX_RANK];
	/* training mode's Dropout noise inputs (api/dsl.h): out of the input
	 * list until build_step puts them last, filled every step */
	int nn;
	int noise[MAX_NOISE];
	int64_t noise_n[MAX_NOISE];
	/* next[i]: for a running statistic (a script's BatchNorm in training
	 * mode, api/dsl.h) the value of the training graph that is its new
	 * value: not trained, it takes that value each step; -1 for a
	 * trained parameter.  nbuf: how many are statistics. */
	int next[MAX_PARAM];
	int nbuf;
	/* train() in a script: the tensor each parameter was read from (a
	 * layer's weight ...; borrowed from the vm), or NULL */
	burn_tensor *src[MAX_PARAM];
} Model;

/* A new constant f32 scalar of g holding v; -1 if out of memory. */
static int scalar_f32(Ctx *c, Graph *g, const char *name, float v)
{
	int k = graph_add_value(g, name);

	if (k < 0 || graph_set_const(c, g, k, DT_F32, 0, NULL, &v))
		return -1;
	return k;
}

/*
 * An ONNX model's Dropouts in the train step (training mode, as a script's
 * Dropout layers, api/dsl.h): each f32 Dropout(x, ratio p) of the inferred
 * graph g becomes where(u >= p, x / (1 - p), 0), its mask output u >= p,
 * with u a new f32 value of x's shape named "dropout_noise<k>" (k in node
 * order), left out of the inputs (build_step appends them), each in
 * noise[*nn].  The new nodes get their types here; g is sorted again.
 */
static int onnx_dropouts(Ctx *c, Graph *g, const char *path, int *noise, int *nn)
{
	int n0 = g->nnode;

	for (int i = 0; i < n0; i++) {
		Node *n = &g->node[i];
		const Value *x, *r;
		double p;
		int u, th, keep, zero, ge, xs, in[3], nd, y, mask, xin, k = *nn;
		char nm[4][32];
		if (n->dead || n->op != OP_Dropout)
			continue;
		x = NIN(g, n, 0);
		r = NIN(g, n, 1);
		p = r ? (r->data ? value_get_f(r, 0) : -1) : attr_float(n, "ratio", 0.5);
		if (x->dtype != DT_F32 || !(p >= 0 && p < 1) || *nn == MAX_NOISE)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s: node '%s' (Dropout): the "
			                 "train step takes Dropout on f32 with a constant ratio in "
			                 "[0, 1), %d of them at most", path, n->name, MAX_NOISE);
		y = n->out[0];
		xin = n->in[0];
		mask = n->nout > 1 ? n->out[1] : -1;
		n->dead = 1;
		for (int j = 0; j < 4; j++)
			snprintf(nm[j], sizeof nm[j], "dropout_%s%d",
			         (const char *[]){ "noise", "ratio", "keep", "zero" }[j], k);
		if ((u = graph_add_value(g, nm[0])) < 0 ||
		    (th = scalar_f32(c, g, nm[1], (float)p)) < 0 ||
		    (keep = scalar_f32(c, g, nm[2], (float)(1 - p))) < 0 ||
		    (zero = scalar_f32(c, g, nm[3], 0.0f)) < 0)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		GV(g, u)->kind = VK_INPUT;
		GV(g, u)->dtype = DT_F32;
		value_copy_shape(GV(g, u), GV(g, xin));
		snprintf(nm[0], sizeof nm[0], "dropout_mask%d", k);
		if (mask < 0 && (mask = graph_add_value(g, nm[0])) < 0)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		snprintf(nm[1], sizeof nm[1], "dropout_scaled%d", k);
		if ((xs = graph_add_value(g, nm[1])) < 0)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		GV(g, mask)->dtype = DT_BOOL;
		GV(g, xs)->dtype = DT_F32;
		value_copy_shape(GV(g, mask), GV(g, xin));
		value_copy_shape(GV(g, xs), GV(g, xin));
		in[0] = u, in[1] = th;
		ge = graph_add_node(g, OP_GreaterOrEqual, nm[0], 2, in, 1, &mask);
		in[0] = xin, in[1] = keep;
		nd = graph_add_node(g, OP_Div, nm[1], 2, in, 1, &xs);
		in[0] = mask, in[1] = xs, in[2] = zero;
		snprintf(nm[2], sizeof nm[2], "dropout_where%d", k);
		if (ge < 0 || nd < 0 || graph_add_node(g, OP_Where, nm[2], 3, in, 1, &y) < 0)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		GV(g, mask)->producer = ge;
		GV(g, mask)->producer_out = 0;
		GV(g, xs)->producer = nd;
		GV(g, xs)->producer_out = 0;
		GV(g, y)->producer = g->nnode - 1;
		GV(g, y)->producer_out = 0;
		noise[(*nn)++] = u;
	}
	if (g->nnode == n0)
		return BURN_OK;
	graph_compact(g);
	return graph_toposort(c, g);
}

/*
 * BatchNormalization's running statistics as parameters of their own, in
 * both modes (the train step and the evaluation must have the same
 * parameters): a statistic that is an Identity (or a chain of them) of a
 * float constant becomes a constant of its own, a copy of that data under
 * the Identity's output name.  PyTorch's exporter writes a fresh model so:
 * a running variance of ones and a weight of ones are one initializer,
 * '1.running_var' = Identity('1.weight'); trained, they part.
 */
static int bn_own_stats(Ctx *c, Graph *g)
{
	int changed = 0;

	for (int i = 0; i < g->nnode; i++) {
		const Node *n = &g->node[i];
		if (n->dead || n->op != OP_BatchNormalization || n->nin < 5)
			continue;
		for (int k = 3; k < 5; k++) {
			Value *v = GV(g, n->in[k]);
			const Value *src = v;
			/* through the Identities to what they copy */
			while (src->producer >= 0 && g->node[src->producer].op == OP_Identity &&
			       g->node[src->producer].nin == 1 && g->node[src->producer].in[0] >= 0)
				src = GV(g, g->node[src->producer].in[0]);
			if (src == v || !src->data || src->producer >= 0 ||
			    !dtype_is_float(src->dtype))
				continue;
			g->node[v->producer].dead = 1;
			if (graph_set_const(c, g, n->in[k], src->dtype, src->rank, src->dim,
			                    src->data))
				return c->code;
			changed = 1;
		}
	}
	if (changed)
		graph_compact(g);
	return BURN_OK;
}

/*
 * The train step's BatchNormalizations of an inferred graph g whose
 * parameters are inputs (md): each one in inference form (training_mode
 * 0, an ONNX model's, or an imported model's in a script: a script's
 * BatchNorm layers are in training form already) normalises with the
 * batch's statistics (training_mode 1, as a script's layer in training,
 * api/dsl.h), and its running mean and variance, which must be
 * parameters read by no other BatchNormalization, get new values as
 * PyTorch's do, the layer's "next:" outputs:
 *   mean' = (1 - m) mean + m batch_mean
 *   var'  = (1 - m) var + m batch_var n / (n - 1)   (n = N * spatial)
 * with m = 1 - momentum (ONNX's momentum weighs the old value: PyTorch's
 * exporter writes 0.9 for its 0.1).  Each new value is an output named
 * "next:" and the statistic's name, appended to g's outputs, which
 * load_model maps as it maps a script's.
 */
static int bn_training(Ctx *c, Graph *g, const Model *md, const char *path)
{
	AD a = { c, g, g->nval, NULL, NULL, 0 };
	int n0 = g->nnode;

	for (int i = 0; i < n0; i++) {
		Node *n = &g->node[i];
		const Value *x;
		int64_t cnt = 1;
		unsigned mask = 0;
		int st[2], x_, at = -1, xc, newv[2];
		double m;
		const char *name;
		if (n->dead || n->op != OP_BatchNormalization ||
		    attr_int(n, "training_mode", 0))
			continue;
		x = GV(g, x_ = n->in[0]);
		for (int k = 0; k < 2; k++) {
			int v = n->nin > 3 + k ? n->in[3 + k] : -1, j = 0;
			while (j < md->np && md->param[j] != v)
				j++;
			if (j == md->np)
				return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s: node '%s' "
				                 "(BatchNormalization): in training its running %s "
				                 "must be an initializer (a float constant)", path,
				                 n->name, k ? "variance" : "mean");
			for (int e = 0; e < g->nout; e++)
				if (!strncmp(GV(g, g->out[e])->name, "next:", 5) &&
				    !strcmp(GV(g, g->out[e])->name + 5, md->pname[j]))
					return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s: node '%s' "
					                 "(BatchNormalization): its running statistic "
					                 "'%s' is another BatchNormalization's too: it "
					                 "would be updated twice", path, n->name,
					                 md->pname[j]);
			st[k] = v;
		}
		if (st[0] == st[1])
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s: node '%s' "
			                 "(BatchNormalization): its running mean and variance "
			                 "are one value", path, n->name);
		for (int d = 0; d < x->rank; d++)
			if (d != 1) {
				mask |= 1u << d;
				cnt *= x->dim[d];
			}
		if (!dtype_is_float(x->dtype) || x->rank < 2 || cnt < 2)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s: node '%s' "
			                 "(BatchNormalization): in training it needs a float "
			                 "input with more than one value per channel", path, n->name);
		m = 1 - attr_float(n, "momentum", 0.9);
		name = n->name;   /* n moves as nodes are added */
		/* training_mode 1, on a copy of the node's attributes (they may
		 * be shared, ad_attr_copy) */
		for (int k = 0; k < n->nattr; k++)
			if (!strcmp(n->attr[k].name, "training_mode"))
				at = k;
		if (at < 0) {
			ad_attr_i(&a, i, "training_mode", 1);
		} else {
			Attr *na = arena_alloc(&g->arena, sizeof *na * (size_t)n->nattr);
			if (!na)
				return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			memcpy(na, n->attr, sizeof *na * (size_t)n->nattr);
			na[at].i = 1;
			n->attr = na;
		}
		/* the batch's mean and the centred sum of squares, per channel */
		xc = ad_op2(&a, OP_Sub, x_, ad_op2(&a, OP_Mul, ad_rsum(&a, x_, mask, 1),
		                                   ad_k(&a, x_, 1.0 / (double)cnt)));
		newv[0] = ad_op2(&a, OP_Add, ad_op2(&a, OP_Mul, st[0], ad_k(&a, st[0], 1 - m)),
		                 ad_op2(&a, OP_Mul, ad_rsum(&a, x_, mask, 0),
		                        ad_k(&a, x_, m / (double)cnt)));
		newv[1] = ad_op2(&a, OP_Add, ad_op2(&a, OP_Mul, st[1], ad_k(&a, st[1], 1 - m)),
		                 ad_op2(&a, OP_Mul, ad_rsum(&a, ad_op2(&a, OP_Mul, xc, xc), mask, 0),
		                        ad_k(&a, x_, m / (double)(cnt - 1))));
		for (int k = 0; k < 2; k++) {
			Value *v;
			if (newv[k] < 0)
				return c->code ? c->code : BURN_ERR_INTERNAL;
			v = GV(g, newv[k]);
			if (v->dtype != GV(g, st[k])->dtype || value_numel(v) != value_numel(GV(g, st[k])))
				return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s: node '%s' "
				                 "(BatchNormalization): its statistics' type is not "
				                 "its input's", path, name);
			if (!(v->name = arena_printf(&g->arena, "next:%s", GV(g, st[k])->name)))
				return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			graph_add_output(g, newv[k]);
		}
	}
	return BURN_OK;
}

/* Load the model as a graph whose parameters are inputs, inferred.  init
 * (if not NULL) gets a malloc'd copy of each parameter's initial data. */
static int load_model(Ctx *c, DslVm *vm, const char *path, const char *entry,
                      int training, Graph **out, Model *md, void **init)
{
	Graph *g = NULL;
	Value *x, *y;
	int nn = 0, noise[MAX_NOISE], nnext = 0;
	burn_tensor **src = NULL;

	*out = NULL;
	if (vm) {
		int rc;
		dsl_vm_set_training(vm, training);
		rc = dsl_vm_trace_src(vm, entry, &g, &src);
		dsl_vm_set_training(vm, 0);
		if (rc) {
			const char *ofile = c->file;
			c->file = NULL;   /* the vm's message names the file */
			burn_fail(c, dsl_vm_message(vm)[0] ? BURN_ERR_INVALID : BURN_ERR_INTERNAL,
			          "%s", dsl_vm_message(vm));
			c->file = ofile;
			return c->code;
		}
	} else if (dsl_is_script(path))
		TRY(dsl_trace_file(c, path, entry, training, &g, NULL));
	else
		TRY(onnx_load_file(c, path, &g));
	if (bn_own_stats(c, g))
		goto fail;
	/* the Dropouts' noise inputs of a training-mode trace come after x */
	while (g->nin > 1 + nn && nn < MAX_NOISE &&
	       !strncmp(GV(g, g->in[1 + nn])->name, "dropout_noise", 13)) {
		noise[nn] = g->in[1 + nn];
		nn++;
	}
	/* a training-mode trace's BatchNorms: the running statistics' new
	 * values are outputs after the logits, named "next:CONSTANT" */
	while (g->nout > 1 + nnext &&
	       !strncmp(GV(g, g->out[1 + nnext])->name, "next:", 5))
		nnext++;
	if (g->nin != 1 + nn || g->nout != 1 + nnext) {
		burn_fail(c, BURN_ERR_SHAPE, "%s: the model must have one input and one "
		          "output (has %d and %d)", path, g->nin - nn, g->nout - nnext);
		goto fail;
	}
	memset(md, 0, sizeof *md);
	md->nn = nn;
	for (int k = 0; k < nn; k++) {
		md->noise[k] = noise[k];
		md->noise_n[k] = value_numel(GV(g, noise[k]));
	}
	md->x = g->in[0];
	for (int i = 0; i < g->nval; i++) {
		Value *v = GV(g, i);
		if (v->kind != VK_CONST || v->producer >= 0 || !v->data ||
		    !dtype_is_float(v->dtype) || v->rank < 1 || value_numel(v) < 1)
			continue;
		if (md->np == MAX_PARAM) {
			burn_fail(c, BURN_ERR_LIMIT, "%s: more than %d parameters", path, MAX_PARAM);
			goto fail;
		}
		md->src[md->np] = src ? src[i] : NULL;
		md->pbytes[md->np] = value_nbytes(v);
		snprintf(md->pname[md->np], sizeof md->pname[0], "%s", v->name);
		md->prank[md->np] = v->rank;
		memcpy(md->pdim[md->np], v->dim, sizeof v->dim);
		if (init) {
			if (!(init[md->np] = malloc((size_t)md->pbytes[md->np]))) {
				burn_fail(c, BURN_ERR_NOMEM, "out of memory");
				goto fail;
			}
			memcpy(init[md->np], v->data, (size_t)md->pbytes[md->np]);
		}
		v->data = NULL;
		v->kind = VK_INPUT;
		graph_add_input(g, i);
		md->next[md->np] = -1;
		md->param[md->np++] = i;
	}
	if (graph_check_attrs(c, g) || pass_infer_fold(c, g))
		goto fail;
	/* an ONNX model's BatchNormalizations (or an imported one's): their
	 * statistics' new values become "next:" outputs too */
	if (training) {
		int nout0 = g->nout;
		if (bn_training(c, g, md, path))
			goto fail;
		nnext += g->nout - nout0;
	}
	for (int k = 0; k < nnext; k++) {
		int o = g->out[1 + k], i = 0;
		while (i < md->np && strcmp(md->pname[i], GV(g, o)->name + 5))
			i++;
		if (i == md->np || md->next[i] >= 0) {
			burn_fail(c, BURN_ERR_INTERNAL, "%s: output '%s' names no parameter, or "
			          "one twice", path, GV(g, o)->name);
			goto fail;
		}
		md->next[i] = o;
		md->nbuf++;
	}
	if (nn) {   /* x, the parameters; build_step appends the noise last */
		for (int i = 1 + nn; i < g->nin; i++)
			g->in[i - nn] = g->in[i];
		g->nin -= nn;
	}
	if (training && !vm && !dsl_is_script(path)) {
		if (onnx_dropouts(c, g, path, md->noise, &md->nn))
			goto fail;
		for (int k = 0; k < md->nn; k++)
			md->noise_n[k] = value_numel(GV(g, md->noise[k]));
	}
	x = GV(g, md->x);
	y = GV(g, g->out[0]);
	md->logits = g->out[0];
	if (x->dtype != DT_F32 || x->rank < 2 || !value_shape_known(x)) {
		burn_fail(c, BURN_ERR_SHAPE, "%s: input '%s' must be f32 [batch, ...] with "
		          "known dims", path, x->name);
		goto fail;
	}
	md->B = x->dim[0];
	md->feat = value_numel(x) / md->B;
	if (y->dtype != DT_F32 || y->rank != 2 || y->dim[0] != md->B || y->dim[1] < 2) {
		char buf[128];
		burn_fail(c, BURN_ERR_SHAPE, "%s: output must be f32 logits [%lld, classes], "
		          "is %s", path, (long long)md->B, value_type_str(y, buf, sizeof buf));
		goto fail;
	}
	md->K = y->dim[1];
	if (!md->np) {
		burn_fail(c, BURN_ERR_INVALID, "%s: no parameters (float constants) to train",
		          path);
		goto fail;
	}
	free(src);
	*out = g;
	return BURN_OK;
fail:
	free(src);
	graph_destroy(g);
	return c->code;
}

static void set_outputs(Graph *g, int n, const int *v)
{
	for (int i = 0; i < g->nout; i++)
		GV(g, g->out[i])->is_output = 0;
	g->out = arena_alloc(&g->arena, sizeof *g->out * (size_t)(n ? n : 1));
	for (int i = 0; i < n; i++) {
		g->out[i] = v[i];
		GV(g, v[i])->is_output = 1;
	}
	g->nout = n;
	g->out_decl = NULL;
}

/* Compile g (consumed) and, on the llvm target, JIT it. */
static int prog_make(Ctx *c, const Backend *be, const Target *tg, Graph *g, Prog *p)
{
	CompileOpts co = { 0 };
	size_t nb;

	memset(p, 0, sizeof *p);
	co.target = tg ? tg : be ? be->target : NULL;
	TRY(burn_compile_graph(c, g, &co, &p->m));
#ifdef BURN_HAVE_LLVM
	if (be && !strcmp(be->name, "llvm"))
		TRY(llvm_jit_compile(c, &p->m->prog, &p->j));
#endif
	nb = ((size_t)p->m->plan.arena_bytes + BURN_ARENA_ALIGN) / BURN_ARENA_ALIGN *
	     BURN_ARENA_ALIGN;
	if (!(p->arena = aligned_alloc(BURN_ARENA_ALIGN, nb)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	memset(p->arena, 0, nb);
	return BURN_OK;
}

static void prog_free(Prog *p)
{
#ifdef BURN_HAVE_LLVM
	llvm_jit_free(p->j);
#endif
	burn_compiled_destroy(p->m);
	free(p->arena);
}

static int prog_run(Ctx *c, const Prog *p, const void *const *in, void *const *out)
{
#ifdef BURN_HAVE_LLVM
	if (p->j)
		return llvm_jit_run(c, p->j, p->m, in, out, p->arena);
#endif
	return plan_run_interp(c, p->m->g, &p->m->prog, &p->m->plan, NULL, in, out,
	                       p->arena);
}

/* ---- the run --------------------------------------------------------------- */

typedef struct Opts {
	const char *model, *data, *entry, *losses, *save, *load;
	const char *save_onnx;    /* --save-onnx: the trained model as ONNX */
	const char *out, *eval_out; /* -o, --eval-o: write the AOT step, the
	                             * evaluation, as C instead of training */
	int epochs, dashboard;
	int check_nan;            /* --check-nan: the new parameters and
	                           * states of every step too */
	uint64_t seed;
	int64_t train_limit, test_limit, max_steps;
	Optim opt;
	int loss;                 /* LOSS_* */
	double smoothing;         /* cross-entropy's label smoothing */
	const char *opt_name;
	int64_t lr_step_epochs;
	DslVm *vm;                /* train() in a script: trace the model from
	                           * this running vm (else from the file) */
	double **hist;            /* train(): (*hist)[3 e ..] gets epoch e's mean
	                           * train loss, test loss, accuracy (realloc'd) */
	int *nhist;
	const TargetCpu *cpu;     /* --cpu NAME, or NULL: the target's own */
} Opts;

/* be's target, or with --cpu's description in *buf */
static const Target *
opts_target(const Opts *o, const Backend *be, Target *buf)
{
	if (o->cpu && be && !target_with_cpu(be->target, o->cpu, buf))
		return buf;
	return be ? be->target : NULL;
}

/* The losses, each the mean over the batch (and the classes, but for
 * cross-entropy and NLL); NLL takes the model's output as log-probabilities
 * (PyTorch's NLLLoss: a model ending in log_softmax); mse, bce and l1
 * compare the logits with one-hot targets. */
enum { LOSS_CE, LOSS_MSE, LOSS_BCE, LOSS_L1, LOSS_NLL, LOSS_COUNT };
static const char *const loss_names[LOSS_COUNT] = { "cross_entropy", "mse", "bce", "l1",
                                                    "nll" };

typedef struct Data {
	Idx xtr, ytr, xte, yte;
} Data;

static int load_pair(Ctx *c, const char *dir, const char *img, const char *lab,
                     Idx *x, Idx *y)
{
	char p[4096];

	for (int k = 0; k < 2; k++) {
		const char *name = k ? lab : img;
		Idx *t = k ? y : x;
		FILE *f;
		snprintf(p, sizeof p, "%s/%s.gz", dir, name);
		if (!(f = fopen(p, "rb")))
			snprintf(p, sizeof p, "%s/%s", dir, name);
		else
			fclose(f);
		TRY(idx_load(c, p, t));
	}
	if (x->rank != 3 || y->rank != 1 || x->dim[0] != y->dim[0])
		return burn_fail(c, BURN_ERR_SHAPE, "%s/%s: want images [N, H, W] and labels "
		                 "[N] of the same N (have rank %d with %lld, rank %d with %lld)",
		                 dir, img, x->rank, (long long)x->dim[0], y->rank,
		                 (long long)y->dim[0]);
	return BURN_OK;
}

static int check_data(Ctx *c, const Data *d, const Model *md, const char *model)
{
	const Idx *sets[2] = { &d->ytr, &d->yte };
	int64_t feat = d->xtr.dim[1] * d->xtr.dim[2];

	if (d->xte.dim[1] * d->xte.dim[2] != feat || feat != md->feat)
		return burn_fail(c, BURN_ERR_SHAPE, "%s takes %lld features per example; "
		                 "the images have %lld (train) and %lld (test)", model,
		                 (long long)md->feat, (long long)feat,
		                 (long long)(d->xte.dim[1] * d->xte.dim[2]));
	for (int s = 0; s < 2; s++)
		for (int64_t i = 0; i < sets[s]->n; i++)
			if (sets[s]->data[i] >= md->K)
				return burn_fail(c, BURN_ERR_SHAPE, "%s label %lld is %d: out of "
				                 "range for the model's %lld classes",
				                 s ? "test" : "train", (long long)i,
				                 sets[s]->data[i], (long long)md->K);
	return BURN_OK;
}

/* Batch rows idx[0..n-1] of images/labels into x, y (zeros past n). */
static void fill(const Idx *img, const Idx *lab, const int64_t *idx, int64_t n,
                 int64_t B, int64_t feat, float *x, int64_t *y)
{
	for (int64_t r = 0; r < B; r++) {
		float *xr = x + r * feat;
		if (r >= n) {
			memset(xr, 0, sizeof *xr * (size_t)feat);
			y[r] = 0;
			continue;
		}
		const uint8_t *src = img->data + idx[r] * feat;
		for (int64_t k = 0; k < feat; k++)
			xr[k] = (float)src[k] / 255.0f;
		y[r] = lab->data[idx[r]];
	}
}

/* The loss of one example of logits l[K], label y; lse = log sum exp l. */
static double row_loss(const Opts *o, const float *l, int64_t K, int64_t y, double lse)
{
	double s = 0;

	if (o->loss == LOSS_NLL)   /* l holds log-probabilities */
		return -(double)l[y];
	if (o->loss == LOSS_CE) {
		for (int64_t k = 0; k < K; k++)
			s += lse - (double)l[k];
		return (1 - o->smoothing) * (lse - (double)l[y]) + o->smoothing * s / (double)K;
	}
	for (int64_t k = 0; k < K; k++) {
		double z = l[k], t = k == y, e = z - t;
		s += o->loss == LOSS_MSE ? e * e : o->loss == LOSS_L1 ? fabs(e) :
		     fmax(z, 0) - z * t + log1p(exp(-fabs(z)));
	}
	return s / (double)K;
}

/* The train step's loss of the logits z [B, K] and labels [B], the mean
 * over the batch: cross-entropy (label smoothing eps: (1 - eps) CE + eps
 * times the mean over the classes of -log softmax, PyTorch's), NLL of
 * log-probabilities z (-z[i, label i]), or MSE, L1,
 * BCE with logits (max(z, 0) - z t + log(1 + exp(-|z|))) against the
 * one-hot labels, averaged over the classes too. */
static int build_loss(AD *a, const Opts *o, int z, int labels, int64_t B, int64_t K)
{
	int nd, l, t, e;
	int64_t *ks;
	double inv = 1.0 / (double)(B * K);

	if (o->loss == LOSS_NLL) {
		nd = ad_node(a, OP_NegativeLogLikelihoodLoss, 2, (int[]){ z, labels });
		ad_attr_s(a, nd, "reduction", "mean");
		return ad_done(a, nd);
	}
	if (o->loss == LOSS_CE) {
		nd = ad_node(a, OP_SoftmaxCrossEntropyLoss, 2, (int[]){ z, labels });
		ad_attr_s(a, nd, "reduction", "mean");
		l = ad_done(a, nd);
		if (o->smoothing > 0) {
			int ls;
			nd = ad_node(a, OP_LogSoftmax, 1, &z);
			ad_attr_i(a, nd, "axis", 1);
			ls = ad_rsum(a, ad_done(a, nd), 3, 0);
			l = ad_op2(a, OP_Add, ad_op2(a, OP_Mul, l, ad_scalar(a, DT_F32, 1 - o->smoothing)),
			           ad_op2(a, OP_Mul, ls, ad_scalar(a, DT_F32, -o->smoothing * inv)));
		}
		return l;
	}
	/* the one-hot targets: labels [B, 1] == [0, 1, ... K-1] */
	if (!(ks = malloc(sizeof *ks * (size_t)K)))
		return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory"), -1;
	for (int64_t k = 0; k < K; k++)
		ks[k] = k;
	t = ad_cast(a, ad_op2(a, OP_Equal, ad_reshape(a, labels, 2, (int64_t[]){ B, 1 }),
	                      ad_ints(a, (int)K, ks)), DT_F32);
	free(ks);
	if (o->loss == LOSS_MSE) {
		e = ad_op2(a, OP_Sub, z, t);
		e = ad_op2(a, OP_Mul, e, e);
	} else if (o->loss == LOSS_L1) {
		e = ad_op1(a, OP_Abs, ad_op2(a, OP_Sub, z, t));
	} else {
		e = ad_op2(a, OP_Add, ad_op2(a, OP_Sub, ad_op1(a, OP_Relu, z), ad_op2(a, OP_Mul, z, t)),
		           ad_op1(a, OP_Softplus, ad_op1(a, OP_Neg, ad_op1(a, OP_Abs, z))));
	}
	return ad_op2(a, OP_Mul, ad_rsum(a, e, 3, 0), ad_scalar(a, DT_F32, inv));
}

/* The schedule in steps (--lr-step counts epochs; cosine ends at the run's
 * last step), for ntrain examples in batches of B. */
static void schedule(const Opts *o, Optim *op, int64_t ntrain, int64_t B)
{
	op->total = ntrain / B * o->epochs;
	if (o->max_steps && o->max_steps < op->total)
		op->total = o->max_steps;
	op->step_size = o->lr_step_epochs * (ntrain / B);
}

/* Make g (load_model's: the parameters are inputs) the train step: a new
 * input, the labels [B] (int64); the loss of the logits; the gradients of
 * every parameter (the autodiff pass); the optimiser's update.  Inputs in
 * order: x, the parameters, the labels, the optimiser's scalars, the
 * states (per parameter); outputs: the loss, then per parameter its new
 * value and new states.  A running statistic (md->next) is no trained
 * parameter: its new value is the graph's, and its states, kept for the
 * one layout, are inputs copied to the outputs (zeros, never saved). */
static int build_step(Ctx *c, const Opts *o, const Optim *op, Graph *g, const Model *md)
{
	int grad[MAX_PARAM], nw[3 * MAX_PARAM], sin_[2 * MAX_PARAM], kin[3], outs[1 + 3 * MAX_PARAM];
	int tr[MAX_PARAM], sall[2 * MAX_PARAM], nt = 0;
	int ns = optim_nstate(op), nk = optim_nscalar(op), loss, labels;
	AD a = { c, g, g->nval, NULL, NULL, 0 };

	for (int i = 0; i < md->np; i++)
		if (md->next[i] < 0)
			tr[nt++] = md->param[i];

	labels = graph_add_value(g, "labels");
	if (labels < 0)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	GV(g, labels)->kind = VK_INPUT;
	GV(g, labels)->dtype = DT_I64;
	GV(g, labels)->rank = 1;
	GV(g, labels)->dim[0] = md->B;
	graph_add_input(g, labels);
	loss = build_loss(&a, o, md->logits, labels, md->B, md->K);
	if (loss < 0 || pass_autodiff(c, g, loss, nt, tr, grad) ||
	    pass_optim(c, g, op, nt, tr, grad, nw, sin_, kin))
		return c->code ? c->code : BURN_ERR_INTERNAL;
	outs[0] = loss;
	for (int i = 0, j = 0; i < md->np; i++) {
		int *po = &outs[1 + i * (1 + ns)];
		if (md->next[i] < 0) {
			for (int k = 0; k <= ns; k++)
				po[k] = nw[j * (1 + ns) + k];
			for (int k = 0; k < ns; k++)
				sall[i * ns + k] = sin_[j * ns + k];
			j++;
			continue;
		}
		po[0] = md->next[i];
		for (int k = 0; k < ns; k++) {
			int s = graph_add_value(g, arena_printf(&g->arena, "%s/%c", md->pname[i],
			                                        optim_state_names(op)[k]));
			if (s < 0)
				return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			GV(g, s)->kind = VK_INPUT;
			GV(g, s)->dtype = DT_F32;
			value_copy_shape(GV(g, s), GV(g, md->param[i]));
			graph_add_input(g, s);
			sall[i * ns + k] = s;
			if ((po[1 + k] = ad_op1(&a, OP_Identity, s)) < 0)
				return c->code ? c->code : BURN_ERR_INTERNAL;
		}
	}
	/* the states in the parameters' order */
	for (int i = 0; i < md->np * ns && g->nin == 2 + md->np + nk + md->np * ns; i++)
		g->in[2 + md->np + nk + i] = sall[i];
	set_outputs(g, 1 + md->np * (1 + ns), outs);
	/* the inputs' order, before the passes own the graph */
	if (g->nin != 2 + md->np + nk + md->np * ns || g->in[0] != md->x ||
	    g->in[1 + md->np] != labels)
		return burn_fail(c, BURN_ERR_INTERNAL, "train step: inputs out of order");
	for (int k = 0; k < md->nn; k++)   /* Dropout's noise: last */
		graph_add_input(g, md->noise[k]);
	return BURN_OK;
}

/* Test loss (mean over examples, from the logits) and accuracy. */
static int evaluate(Ctx *c, const Opts *o, const Prog *ev, const Model *md,
                    const Data *d, int64_t ntest, void *const *param, float *x, int64_t *y,
                    float *logits, int64_t *idx, double *loss, double *acc)
{
	const void *in[1 + MAX_PARAM];
	void *out[1] = { logits };
	int64_t right = 0;
	double ls = 0;

	for (int i = 0; i < md->np; i++)
		in[1 + i] = param[i];
	in[0] = x;
	for (int64_t s = 0; s < ntest; s += md->B) {
		int64_t n = ntest - s < md->B ? ntest - s : md->B;
		for (int64_t r = 0; r < n; r++)
			idx[r] = s + r;
		fill(&d->xte, &d->yte, idx, n, md->B, md->feat, x, y);
		TRY(prog_run(c, ev, in, out));
		for (int64_t r = 0; r < n; r++) {
			const float *l = logits + r * md->K;
			int64_t best = 0;
			double mx = l[0], se = 0;
			for (int64_t k = 1; k < md->K; k++)
				if (l[k] > l[best])
					best = k;
			mx = l[best];
			for (int64_t k = 0; k < md->K; k++)
				se += exp((double)l[k] - mx);
			ls += row_loss(o, l, md->K, y[r], mx + log(se));
			right += best == y[r];
		}
	}
	*loss = ls / (double)ntest;
	*acc = (double)right / (double)ntest;
	return BURN_OK;
}

/* ---- checkpoints ------------------------------------------------------------ */

/*
 * A checkpoint is a safetensors file: each parameter under its graph
 * value's name (f32), each optimiser state under "NAME/m", "NAME/v" (Adam)
 * or "NAME/b" (momentum; the letters of optim_state_names; a running
 * statistic, Model.next, has none), the position as i64 [2] "train/pos":
 * the epochs done and the steps done.  Written to FILE.tmp, then renamed
 * over FILE: a crash or a full disk leaves the last good FILE intact.
 */
typedef struct Ck {
	const Model *md;
	int ns;
	const char *sname;       /* optim_state_names: "mv" (Adam), "b" ... */
} Ck;

static const char *st_name(Arena *a, const Ck *k, int i, int s)
{
	const char *n = k->md->pname[i];
	return s < 0 ? n : arena_printf(a, "%s/%c", n, k->sname[s]);
}

static int ck_save(Ctx *c, const Ck *k, const char *path, void *const *param,
                   void *const *state, int64_t epoch, int64_t step)
{
	Arena a;
	char *hdr = NULL, tmp[4096];
	size_t cap = 4096, n = 0;
	uint64_t off = 0, hl;
	int64_t pos[2] = { epoch, step };
	FILE *f = NULL;
	int rc = BURN_OK;

	arena_init(&a);
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
		return burn_fail(c, BURN_ERR_IO, "%s: path too long", path);
	if (!(hdr = malloc(cap))) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	/* the header: every tensor in the order its data follows */
	n = (size_t)snprintf(hdr, cap, "{\"train/pos\":{\"dtype\":\"I64\",\"shape\":[2],"
	                     "\"data_offsets\":[0,16]}");
	off = 16;
	for (int i = 0; i < k->md->np; i++)
		for (int s = -1; s < (k->md->next[i] < 0 ? k->ns : 0); s++) {
			char line[512];
			int m = snprintf(line, sizeof line, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[",
			                 st_name(&a, k, i, s));
			for (int d = 0; d < k->md->prank[i]; d++)
				m += snprintf(line + m, sizeof line - (size_t)m, "%s%lld", d ? "," : "",
				              (long long)k->md->pdim[i][d]);
			m += snprintf(line + m, sizeof line - (size_t)m,
			              "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
			              (unsigned long long)(off + (uint64_t)k->md->pbytes[i]));
			off += (uint64_t)k->md->pbytes[i];
			if (n + (size_t)m + 16 > cap) {
				char *h2 = realloc(hdr, cap = 2 * cap + (size_t)m);
				if (!h2) {
					rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
					goto done;
				}
				hdr = h2;
			}
			memcpy(hdr + n, line, (size_t)m);
			n += (size_t)m;
		}
	hdr[n++] = '}';
	while (n % 8)           /* the data 8-aligned, as the format advises */
		hdr[n++] = ' ';
	hl = n;
	if (!(f = fopen(tmp, "wb"))) {
		rc = burn_fail(c, BURN_ERR_IO, "%s: cannot write", tmp);
		goto done;
	}
	{
		uint8_t le[8];
		for (int b = 0; b < 8; b++)
			le[b] = (uint8_t)(hl >> (8 * b));
		fwrite(le, 1, 8, f);
	}
	fwrite(hdr, 1, n, f);
	fwrite(pos, sizeof pos, 1, f);
	for (int i = 0; i < k->md->np; i++)
		for (int s = -1; s < (k->md->next[i] < 0 ? k->ns : 0); s++)
			fwrite(s < 0 ? param[i] : state[i * k->ns + s], 1,
			       (size_t)k->md->pbytes[i], f);
	if (ferror(f) | fclose(f)) {
		f = NULL;
		remove(tmp);
		rc = burn_fail(c, BURN_ERR_IO, "%s: write failed", tmp);
		goto done;
	}
	f = NULL;
	if (rename(tmp, path)) {
		remove(tmp);
		rc = burn_fail(c, BURN_ERR_IO, "%s: cannot rename to %s", tmp, path);
	}
done:
	free(hdr);
	arena_free(&a);
	return rc;
}

static const StTensor *st_find(const StFile *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->t[i].name, name))
			return &f->t[i];
	return NULL;
}

/* Load a checkpoint into param and state; *epoch, *step its position. */
static int ck_load(Ctx *c, const Ck *k, const char *path, void *const *param,
                   void *const *state, int64_t *epoch, int64_t *step)
{
	Arena a;
	StFile f = { 0 };
	const StTensor *t;
	int rc;

	arena_init(&a);
	{
		const char *of = c->file;   /* the reader's messages name the file */
		c->file = path;
		rc = st_read(c, &a, path, &f);
		c->file = of;
	}
	if (rc)
		goto done;
	t = st_find(&f, "train/pos");
	if (!t || t->dtype != DT_I64 || t->numel != 2) {
		rc = burn_fail(c, BURN_ERR_PARSE, "%s: not a burncc train checkpoint (no "
		               "train/pos)", path);
		goto done;
	}
	memcpy(epoch, t->data, 8);
	memcpy(step, t->data + 8, 8);
	if (*epoch < 0 || *step < 0) {
		rc = burn_fail(c, BURN_ERR_PARSE, "%s: bad train/pos", path);
		goto done;
	}
	for (int i = 0; i < k->md->np && !rc; i++)
		for (int s = -1; s < (k->md->next[i] < 0 ? k->ns : 0) && !rc; s++) {
			int r = k->md->prank[i];
			const char *nm = st_name(&a, k, i, s);
			t = st_find(&f, nm);
			if (!t) {
				rc = burn_fail(c, BURN_ERR_SHAPE, "%s: no tensor '%s' (%s)", path, nm,
				               s < 0 ? "another model?" : "saved with another optimiser?");
				break;
			}
			if (t->dtype != DT_F32 || t->rank != r ||
			    memcmp(t->dim, k->md->pdim[i], sizeof *t->dim * (size_t)r)) {
				rc = burn_fail(c, BURN_ERR_SHAPE, "%s: '%s' is %s of rank %d and %lld "
				               "elements; the model's is f32 of rank %d and %lld", path,
				               nm, dtype_name(t->dtype), t->rank, (long long)t->numel,
				               r, (long long)(k->md->pbytes[i] / 4));
				break;
			}
			memcpy(s < 0 ? param[i] : state[i * k->ns + s], t->data, t->bytes);
		}
done:
	st_free(&f);
	arena_free(&a);
	return rc;
}

/* ---- the first non-finite value ----------------------------------------------- */

/*
 * When a step's loss is NaN or infinite (or, with --check-nan, a new
 * parameter or state is), find_nan says where it came from.  A parameter
 * or state the step read that was not finite already is named.  Else the
 * step is compiled again unfused (CompileOpts.no_fuse: one kernel per
 * graph node) and run in the kernel-IR interpreter on the same inputs,
 * each kernel's written buffers checked as it finishes
 * (plan_run_interp_each): the first that holds a non-finite value names
 * the node and op that produced it.  Costs a compilation, only on the
 * failure.
 */
typedef struct NanHunt {
	const KProgram *p;
	int kernel, buf;          /* the first non-finite value: where; -1 none */
	int64_t at;
	double val;
} NanHunt;

/* train() in a script: the trained parameters into the script's tensors
 * they came from (me: the evaluation's load, whose src are the vm's). */
static int params_back(Ctx *c, const Opts *o, const Model *me, void *const *param)
{
	int kept = 0;

	for (int i = 0; i < me->np; i++) {
		int n = 0;
		if (me->src[i] && dsl_vm_set_tensor(o->vm, me->src[i], param[i], &n))
			return burn_fail(c, BURN_ERR_INTERNAL, "%s", dsl_vm_message(o->vm));
		kept += !n;
	}
	if (kept)
		fprintf(stderr, "train: %d of %d parameters are not the script's own (an "
		        "imported model's weights): they keep their values there\n", kept,
		        me->np);
	return BURN_OK;
}

/* ---- the trained model as ONNX ----------------------------------------------- */

/*
 * --save-onnx: the evaluation graph (eval mode, inferred) whose parameters,
 * inputs in load_model's graph, are constants again, their data replaced by
 * the trained values at each export.  load_model puts the parameters right
 * after x among the inputs; eval mode has no Dropout noise inputs.
 */
static int export_load(Ctx *c, const Opts *o, const Model *md, Graph **out, Model *mx)
{
	Graph *g = NULL;

	*out = NULL;
	TRY(load_model(c, o->vm, o->model, o->entry, 0, &g, mx, NULL));
	if (mx->np != md->np || g->nin != 1 + mx->np) {
		graph_destroy(g);
		return burn_fail(c, BURN_ERR_INTERNAL, "the model changed between loads");
	}
	for (int i = 0; i < mx->np; i++) {
		Value *v = GV(g, mx->param[i]);
		if (mx->pbytes[i] != md->pbytes[i] || g->in[1 + i] != mx->param[i]) {
			graph_destroy(g);
			return burn_fail(c, BURN_ERR_INTERNAL, "the model changed between loads");
		}
		if (!(v->data = arena_alloc(&g->arena, (size_t)mx->pbytes[i]))) {
			graph_destroy(g);
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		}
		memset(v->data, 0, (size_t)mx->pbytes[i]);
		v->kind = VK_CONST;
	}
	g->nin = 1;
	*out = g;
	return BURN_OK;
}

/* Whether paths a and b name one file (the same name, or both exist and
 * are the same inode). */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !strcmp(a, b) || (!stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	                         sa.st_ino == sb.st_ino);
}

/* Write g (export_load's) with the parameters param to path. */
static int export_save(Ctx *c, Graph *g, const Model *mx, void *const *param,
                       const char *path)
{
	for (int i = 0; i < mx->np; i++)
		memcpy(GV(g, mx->param[i])->data, param[i], (size_t)mx->pbytes[i]);
	return onnx_save_file(c, g, path);
}

/* The index of the first non-finite of n values of dtype dt at d, or -1. */
static int64_t first_nonfinite(int dt, const void *d, int64_t n, double *val)
{
	for (int64_t i = 0; i < n; i++) {
		double v = dt == DT_F32 ? ((const float *)d)[i] : dt == DT_F64 ?
		           ((const double *)d)[i] : 0;
		if (!isfinite(v)) {
			*val = v;
			return i;
		}
	}
	return -1;
}

static int nan_after(void *arg, int k, void *const *bufs, const int64_t *kd)
{
	NanHunt *h = arg;
	const KKernel *kk = h->p->kernel[k];

	(void)kd;
	for (int b = 0; b < kk->nbuf; b++) {
		const KBuf *kb = &kk->buf[b];
		int64_t i;
		if (kb->space != KS_GLOBAL || !(kb->access & KA_WRITE) || kb->ext || !bufs[b])
			continue;
		if ((i = first_nonfinite(kb->dtype, bufs[b], kb->count, &h->val)) >= 0) {
			h->kernel = k;
			h->buf = b;
			h->at = i;
			return 1;
		}
	}
	return 0;
}

/* Where step t's non-finite value came from, as text in msg (n bytes); in
 * holds the step's inputs in build_step's order. */
static void find_nan(const Opts *o, const Optim *op, const Model *md0,
                     const void *const *in, char *msg, size_t n)
{
	int ns = optim_nstate(op), nk = optim_nscalar(op);
	CompileOpts co = { 0 };
	Compiled *m = NULL;
	Graph *g = NULL;
	Model md;
	NanHunt h = { NULL, -1, -1, 0, 0 };
	void **out = NULL, *arena = NULL;
	Ctx c;
	double v;
	int64_t i;

	snprintf(msg, n, "no origin found");
	for (int p = 0; p < md0->np; p++)
		for (int k = -1; k < ns; k++) {
			const void *d = k < 0 ? in[1 + p] : in[2 + md0->np + nk + p * ns + k];
			if ((i = first_nonfinite(DT_F32, d, md0->pbytes[p] / 4, &v)) >= 0) {
				char sfx[3] = { '/', k < 0 ? 0 : optim_state_names(op)[k], 0 };
				snprintf(msg, n, "the step read %s '%s%s' holding %g (element %lld): "
				         "the update of the step before made it (--check-nan stops there)",
				         k < 0 ? "parameter" : "optimiser state", md0->pname[p],
				         k < 0 ? "" : sfx, v, (long long)i);
				return;
			}
		}
	burn_ctx_init(&c, o->model);
	co.no_fuse = 1;
	co.target = backend_find("c")->target;
	if (load_model(&c, o->vm, o->model, o->entry, 1, &g, &md, NULL) || build_step(&c, o, op, g, &md)) {
		graph_destroy(g);
		g = NULL;
	} else if (burn_compile_graph(&c, g, &co, &m))
		m = NULL;   /* g consumed */
	if (!m) {
		snprintf(msg, n, "recompiling the step to find the first non-finite value "
		         "failed: %s", c.msg);
		return;
	}
	h.p = &m->prog;
	out = calloc((size_t)m->g->nout + 1, sizeof *out);
	arena = aligned_alloc(BURN_ARENA_ALIGN, ((size_t)m->plan.arena_bytes + BURN_ARENA_ALIGN) /
	                      BURN_ARENA_ALIGN * BURN_ARENA_ALIGN);
	for (int k = 0; out && k < m->g->nout; k++)
		if (!(out[k] = malloc((size_t)value_nbytes(GV(m->g, m->g->out[k])) + 1)))
			break;
	if (!out || !arena || (m->g->nout && !out[m->g->nout - 1]))
		snprintf(msg, n, "out of memory looking for the first non-finite value");
	else if (plan_run_interp_each(&c, m->g, &m->prog, &m->plan, NULL, in,
	                              (void *const *)out, arena, nan_after, &h))
		snprintf(msg, n, "the unfused step failed: %s", c.msg);
	else if (h.kernel >= 0) {
		const KKernel *kk = m->prog.kernel[h.kernel];
		const Value *val = GV(m->g, kk->buf[h.buf].value);
		const Node *nd = val->producer >= 0 ? &m->g->node[val->producer] : NULL;
		char ty[128];
		snprintf(msg, n, "the first non-finite value is %g, element %lld of '%s' (%s), "
		         "made by node '%s' (op %s), kernel %d of %d of the unfused step (%s)",
		         h.val, (long long)h.at, val->name, value_type_str(val, ty, sizeof ty),
		         nd ? nd->name : "?", nd ? op_table[nd->op].name : "?", h.kernel + 1,
		         m->prog.nkernel, kk->ops ? kk->ops : kk->name);
	} else
		snprintf(msg, n, "the unfused step, run in the interpreter, has no non-finite "
		         "value: the fused one differs");
	for (int k = 0; out && k < m->g->nout; k++)
		free(out[k]);
	free(out);
	free(arena);
	burn_compiled_destroy(m);
}

/* ---- the AOT train step (-o) ------------------------------------------------ */

/*
 * burncc train MODEL -o STEP.c writes the train step that a run compiles,
 * for the c target, as a C module (codegen/c/emit_c.c: STEP.c and STEP.h,
 * PREFIX_run with the step's inputs and outputs as build_step orders
 * them) plus the train step's API (train_api): the initial parameters
 * (the model's seeded ones, or a --load checkpoint's, with its optimiser
 * states) as const data, PREFIX_train_init to copy them into the caller's
 * buffers, PREFIX_train_scalars (optim_scalars_c: the optimiser's
 * scalars of step t) and PREFIX_train_step, which binds one step's
 * buffers and calls PREFIX_run_v.  --eval-o EVAL.c writes the evaluation
 * (x and the parameters in, the logits out).  No malloc, no file, no
 * framework: examples/train_aot.c trains with the two from C.
 */

/* s as a C string literal: letters, digits and ._/- as they are, the rest
 * octal escapes. */
static void put_cstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (isalnum((unsigned char)*s) || strchr("._/-", *s))
			fputc(*s, f);
		else
			fprintf(f, "\\%03o", (unsigned char)*s);
	fputc('"', f);
}

/* The header's and the source's train-step parts (malloc'd text in *h,
 * *src), for prefix P: param[i] and state[i * ns + k] the initial data. */
static int train_api(Ctx *c, const Opts *o, const Optim *op, const Model *md,
                     const char *P, int64_t epoch, int64_t start, void *const *param,
                     void *const *state, char **h, char **src)
{
	int ns = optim_nstate(op), nk = optim_nscalar(op), np = md->np;
	size_t nh = 0, nc = 0;
	FILE *fh = open_memstream(h, &nh), *fc = open_memstream(src, &nc);
	char up[128], fn[160];
	int rc = BURN_OK;

	if (!fh || !fc) {
		if (fh)
			fclose(fh);
		if (fc)
			fclose(fc);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; P[i] && i < 127; i++)
		up[i] = (char)toupper((unsigned char)P[i]), up[i + 1] = 0;
	fprintf(fh,
	"/*\n"
	" * The train step (burncc train -o).  %s_run above is one step of\n"
	" * training: loss %s, optimiser %s (lr %g), batch %lld.\n"
	" * Its inputs: x, the %d parameters, the labels (int64, 0..%lld), the\n"
	" * optimiser's %d scalars, the %d states of each parameter in turn; its\n"
	" * outputs: the loss (mean over the batch), then each parameter's new\n"
	" * value and new states.  No output may share memory with an input: keep\n"
	" * two sets of parameters and states and swap them after each step.\n"
	" *\n"
	" *     float *p[2][%s_TRAIN_PARAMS], *s[2][%s_TRAIN_PARAMS * %s_TRAIN_STATES + 1];\n"
	" *     (each %s_train_numel[i] floats, allocated by the caller)\n"
	" *     %s_train_init(p[0], s[0]);\n"
	" *     for (t = %s_TRAIN_START_STEP + 1; ...; t++, cur ^= 1)\n"
	" *         rc = %s_train_step(t, x, labels, p[cur], s[cur], p[!cur],\n"
	" *                            s[!cur], &loss, arena);\n"
	" */\n", P, loss_names[o->loss], o->opt_name, op->lr, (long long)md->B, np,
	        (long long)md->K - 1, nk, ns, up, up, up, P, P, up, P);
	fprintf(fh, "#define %s_TRAIN_PARAMS %d\n#define %s_TRAIN_STATES %d\n"
	        "#define %s_TRAIN_SCALARS %d\n#define %s_TRAIN_BATCH %lld\n"
	        "#define %s_TRAIN_FEATURES %lld\n#define %s_TRAIN_CLASSES %lld\n"
	        "/* the epochs and steps done before the initial values (a checkpoint's:\n"
	        " * burncc train --load goes on with the shuffle of epoch START_EPOCH + 1\n"
	        " * after its first START_STEP - START_EPOCH * (steps per epoch) steps) */\n"
	        "#define %s_TRAIN_START_EPOCH %lld\n#define %s_TRAIN_START_STEP %lld\n\n", up, np,
	        up, ns, up, nk, up, (long long)md->B, up, (long long)md->feat, up,
	        (long long)md->K, up, (long long)epoch, up, (long long)start);
	{
		/* Dropout's noise: in the arena after the program's scratch */
		int64_t nf = 0;
		for (int k = 0; k < md->nn; k++)
			nf += md->noise_n[k];
		fprintf(fh, "/* Dropout in training mode: %d layers, whose masks come from %lld\n"
		        " * uniform numbers per step, drawn by %s_train_step from the seed\n"
		        " * (burncc train -o's --seed) and t as burncc train draws them, into\n"
		        " * its arena after %s_run's scratch: give %s_train_step an arena of\n"
		        " * %s_TRAIN_ARENA_BYTES. */\n"
		        "#define %s_TRAIN_NOISE %d\n#define %s_TRAIN_SEED %lluull\n"
		        "#define %s_TRAIN_NOISE_OFFSET ((%s_ARENA_BYTES + 63) / 64 * 64)\n"
		        "#define %s_TRAIN_ARENA_BYTES (%s_TRAIN_NOISE_OFFSET + %lld)\n\n",
		        md->nn, (long long)nf, P, P, P, up, up, md->nn, up,
		        (unsigned long long)o->seed, up, up, up, up, (long long)(4 * nf));
	}
	fprintf(fh, "/* Floats in each parameter (and in each of its states), and its name. */\n"
	        "extern const int64_t %s_train_numel[%s_TRAIN_PARAMS];\n"
	        "extern const char *const %s_train_names[%s_TRAIN_PARAMS];\n", P, up, P, up);
	fprintf(fh, "/* Copy the initial parameters into param[i] and the initial states\n"
	        " * (zeros, or a checkpoint's) into state[i * %s_TRAIN_STATES + k]. */\n"
	        "void %s_train_init(float *const *param, float *const *state);\n", up, P);
	fprintf(fh, "/* The optimiser's scalar inputs of step t (1, 2, ...): the scheduled\n"
	        " * learning rate (Adam: with the bias corrections). */\n"
	        "void %s_train_scalars(int64_t t, float *ks);\n", P);
	fprintf(fh, "/* Step t (1, 2, ...): x [%lld, %lld] and labels [%lld]; param and state\n"
	        " * are read, new_param and new_state written (other buffers), *loss\n"
	        " * set; arena: %s_TRAIN_ARENA_BYTES aligned to %s_ARENA_ALIGN.  Returns\n"
	        " * %s_run's status (%s_OK = 0). */\n"
	        "int %s_train_step(int64_t t, const float *x, const int64_t *labels,\n"
	        "\tfloat *const *param, float *const *state, float *const *new_param,\n"
	        "\tfloat *const *new_state, float *loss, void *arena);\n\n",
	        (long long)md->B, (long long)md->feat, (long long)md->B, up, up, P, up, P);

	fprintf(fc, "\n/* ---- the train step's API (%s.h) ---- */\n\n", P);
	for (int i = 0; i < np; i++)
		for (int k = -1; k < ns; k++) {
			char id[160];
			if (k >= 0 && !state[i * ns + k])
				continue;   /* zeros */
			if (k < 0)
				snprintf(id, sizeof id, "%s_init_%d", P, i);
			else
				snprintf(id, sizeof id, "%s_init_%d_%d", P, i, k);
			emit_c_data(fc, id, "", DT_F32, k < 0 ? param[i] : state[i * ns + k],
			            md->pbytes[i]);
		}
	fprintf(fc, "const int64_t %s_train_numel[%s_TRAIN_PARAMS] = {", P, up);
	for (int i = 0; i < np; i++)
		fprintf(fc, "%s%lld", i ? ", " : "", (long long)(md->pbytes[i] / 4));
	fprintf(fc, "};\nconst char *const %s_train_names[%s_TRAIN_PARAMS] = {", P, up);
	for (int i = 0; i < np; i++) {
		fputs(i ? ",\n\t" : "\n\t", fc);
		put_cstr(fc, md->pname[i]);
	}
	fprintf(fc, "\n};\n\nvoid %s_train_init(float *const *param, float *const *state)\n{\n", P);
	if (!ns)
		fprintf(fc, "\t(void)state;\n");
	for (int i = 0; i < np; i++) {
		fprintf(fc, "\tmemcpy(param[%d], %s_init_%d.v, %lld);\n", i, P, i,
		        (long long)md->pbytes[i]);
		for (int k = 0; k < ns; k++)
			if (state[i * ns + k])
				fprintf(fc, "\tmemcpy(state[%d], %s_init_%d_%d.v, %lld);\n", i * ns + k,
				        P, i, k, (long long)md->pbytes[i]);
			else
				fprintf(fc, "\tmemset(state[%d], 0, %lld);\n", i * ns + k,
				        (long long)md->pbytes[i]);
	}
	fprintf(fc, "}\n\n");
	snprintf(fn, sizeof fn, "%s_train_scalars", P);
	optim_scalars_c(fc, op, fn);
	if (md->nn) {
		/* burncc train's noise (train: splitmix64 from seed * golden ^
		 * t << 8 ^ k, the top 24 bits over 2^24) */
		fprintf(fc, "\nstatic uint64_t %s_train_rng(uint64_t *s)\n{\n"
		        "\tuint64_t z = (*s += 0x9e3779b97f4a7c15ull);\n"
		        "\tz = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;\n"
		        "\tz = (z ^ (z >> 27)) * 0x94d049bb133111ebull;\n"
		        "\treturn z ^ (z >> 31);\n}\n"
		        "\nstatic const int64_t %s_train_noise_n[%s_TRAIN_NOISE] = {", P, P, up);
		for (int k = 0; k < md->nn; k++)
			fprintf(fc, "%s%lld", k ? ", " : "", (long long)md->noise_n[k]);
		fprintf(fc, "};\n");
	}
	fprintf(fc, "\nint %s_train_step(int64_t t, const float *x, const int64_t *labels,\n"
	        "\tfloat *const *param, float *const *state, float *const *new_param,\n"
	        "\tfloat *const *new_state, float *loss, void *arena)\n{\n"
	        "\tconst void *in[%s_NUM_INPUTS];\n\tvoid *out[%s_NUM_OUTPUTS];\n"
	        "\tfloat ks[%s_TRAIN_SCALARS];\n\tint i;\n\n"
	        "\tif (!param || !new_param || (%s_TRAIN_STATES && (!state || !new_state)))\n"
	        "\t\treturn %s_ERR_ARG;\n"
	        "\t%s_train_scalars(t, ks);\n\tin[0] = x;\n\tin[%d] = labels;\n"
	        "\tfor (i = 0; i < %s_TRAIN_SCALARS; i++)\n\t\tin[%d + i] = &ks[i];\n"
	        "\tout[0] = loss;\n\tfor (i = 0; i < %s_TRAIN_PARAMS; i++) {\n"
	        "\t\tin[1 + i] = param[i];\n\t\tout[1 + i * %d] = new_param[i];\n",
	        P, up, up, up, up, up, P, 1 + np, up, 2 + np, up, 1 + ns);
	if (ns)
		fprintf(fc, "\t\tfor (int k = 0; k < %d; k++) {\n"
		        "\t\t\tin[%d + i * %d + k] = state[i * %d + k];\n"
		        "\t\t\tout[1 + i * %d + 1 + k] = new_state[i * %d + k];\n\t\t}\n",
		        ns, 2 + np + nk, ns, ns, 1 + ns, ns);
	else
		fprintf(fc, "\t\t(void)state;\n\t\t(void)new_state;\n");
	fprintf(fc, "\t}\n");
	if (md->nn)
		fprintf(fc, "\t{\n\t\tfloat *nz = (float *)((unsigned char *)arena + "
		        "%s_TRAIN_NOISE_OFFSET);\n"
		        "\t\tfor (i = 0; i < %s_TRAIN_NOISE; i++) {\n"
		        "\t\t\tuint64_t s = %s_TRAIN_SEED * 0x9E3779B97F4A7C15ull ^ "
		        "(uint64_t)t << 8 ^ (uint64_t)i;\n"
		        "\t\t\tfor (int64_t e = 0; e < %s_train_noise_n[i]; e++)\n"
		        "\t\t\t\tnz[e] = (float)(%s_train_rng(&s) >> 40) * 0x1p-24f;\n"
		        "\t\t\tin[%d + i] = nz;\n\t\t\tnz += %s_train_noise_n[i];\n\t\t}\n\t}\n",
		        up, up, up, P, P, 2 + np + nk + np * ns, P);
	fprintf(fc, "\treturn %s_run_v(in, out, arena);\n}\n", P);
	if (ferror(fh) || ferror(fc))
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	fclose(fh);
	fclose(fc);
	return rc;
}

/* The prefix of the module PATH (NAME.c): NAME made an identifier. */
static void module_prefix(const char *path, char *prefix, size_t n)
{
	const char *base = strrchr(path, '/');
	char stem[128];

	base = base ? base + 1 : path;
	snprintf(stem, sizeof stem, "%.*s", (int)(strlen(base) > 2 ? strlen(base) - 2 : 0), base);
	c_ident(stem, prefix, n);
}

/* Write m as the C module PATH (.c) and its header (.c -> .h), each to a
 * temporary file renamed over it once whole; the prefix is PATH's file
 * name made an identifier (module_prefix).  extra_h, extra_c: EmitC's. */
static int write_module(Ctx *c, const Compiled *m, const char *path, const char *model,
                        const char *extra_h, const char *extra_c)
{
	char hpath[4096], tmp[2][4112], prefix[128];
	const char *hbase;
	size_t len = strlen(path);
	FILE *f[2] = { NULL, NULL };
	EmitC e;
	int rc = BURN_OK;

	if (len < 3 || strcmp(path + len - 2, ".c") || len >= sizeof hpath)
		return burn_fail(c, BURN_ERR_IO, "%s: the C file's name must end in .c", path);
	snprintf(hpath, sizeof hpath, "%.*s.h", (int)(len - 2), path);
	hbase = strrchr(hpath, '/');
	hbase = hbase ? hbase + 1 : hpath;
	module_prefix(path, prefix, sizeof prefix);
	snprintf(tmp[0], sizeof tmp[0], "%s.tmp", path);
	snprintf(tmp[1], sizeof tmp[1], "%s.tmp", hpath);
	e = (EmitC){ prefix, hbase, model, 0, extra_h, extra_c };
	for (int i = 0; i < 2 && !rc; i++)
		if (!(f[i] = fopen(tmp[i], "w")))
			rc = burn_fail(c, BURN_ERR_IO, "%s: cannot write", tmp[i]);
	if (!rc)
		rc = emit_c_module(c, m->g, &m->prog, &m->plan, &e, f[0], f[1]);
	for (int i = 0; i < 2; i++)
		if (f[i] && fclose(f[i]) && !rc)
			rc = burn_fail(c, BURN_ERR_IO, "%s: write failed", tmp[i]);
	if (!rc && (rename(tmp[1], hpath) || rename(tmp[0], path)))
		rc = burn_fail(c, BURN_ERR_IO, "%s: cannot rename into place", path);
	if (rc)
		for (int i = 0; i < 2; i++)
			remove(tmp[i]);
	return rc;
}

static int emit_step(Ctx *c, const Opts *o)
{
	const Backend *be = backend_find("c");
	Target cpu_target;
	CompileOpts co = { 0 };
	Graph *g = NULL, *ge = NULL;
	Compiled *m = NULL;
	Model md, me;
	Optim op = o->opt;
	Data d;
	void *init[MAX_PARAM] = { 0 }, *st[2 * MAX_PARAM] = { 0 };
	int ns = optim_nstate(&op), nk = optim_nscalar(&op), rc;
	int64_t ep0 = 0, t0 = 0;
	char *xh = NULL, *xc = NULL, prefix[128];

	memset(&d, 0, sizeof d);
	co.target = opts_target(o, be, &cpu_target);
	if ((rc = load_model(c, o->vm, o->model, o->entry, 1, &g, &md, init)))
		goto done;
	/* the schedule's length needs the steps per epoch: the data's */
	if (o->data) {
		int64_t ntrain;
		if ((rc = load_pair(c, o->data, "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
		                    &d.xtr, &d.ytr)))
			goto done;
		ntrain = o->train_limit > 0 && o->train_limit < d.xtr.dim[0] ? o->train_limit
		                                                             : d.xtr.dim[0];
		schedule(o, &op, ntrain, md.B);
	} else if (op.sched != SCHED_CONST) {
		rc = burn_fail(c, BURN_ERR_INVALID, "--lr-schedule %s counts the steps of the "
		               "run: give --data (and --train-limit, --epochs) with -o",
		               op.sched == SCHED_STEP ? "step" : "cosine");
		goto done;
	}
	if (o->load) {
		Ck ck = { &md, ns, optim_state_names(&op) };
		for (int i = 0; i < md.np * ns; i++)
			if (!(st[i] = calloc(1, (size_t)md.pbytes[i / ns]))) {
				rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
				goto done;
			}
		if ((rc = ck_load(c, &ck, o->load, init, st, &ep0, &t0)))
			goto done;
	}
	if ((rc = build_step(c, o, &op, g, &md)))
		goto done;
	rc = burn_compile_graph(c, g, &co, &m);
	g = NULL;
	if (rc)
		goto done;
	if (m->g->nin != 2 + md.np + nk + md.np * ns + md.nn ||
	    m->g->nout != 1 + md.np * (1 + ns)) {
		rc = burn_fail(c, BURN_ERR_INTERNAL, "train step: %d inputs and %d outputs "
		               "after the passes", m->g->nin, m->g->nout);
		goto done;
	}
	module_prefix(o->out, prefix, sizeof prefix);
	if ((rc = train_api(c, o, &op, &md, prefix, ep0, t0, init, st, &xh, &xc)) ||
	    (rc = write_module(c, m, o->out, o->model, xh, xc)))
		goto done;
	fprintf(stderr, "train: %s: the train step (%d kernels, arena %lld bytes) written "
	        "to %s\n", o->model, m->prog.nkernel, (long long)m->plan.arena_bytes, o->out);
	if (o->eval_out) {
		burn_compiled_destroy(m);
		m = NULL;
		if ((rc = load_model(c, o->vm, o->model, o->entry, 0, &ge, &me, NULL)))
			goto done;
		rc = burn_compile_graph(c, ge, &co, &m);
		ge = NULL;
		if (rc || (rc = write_module(c, m, o->eval_out, o->model, NULL, NULL)))
			goto done;
		fprintf(stderr, "train: the evaluation (%d kernels) written to %s\n",
		        m->prog.nkernel, o->eval_out);
	}
done:
	graph_destroy(g);
	graph_destroy(ge);
	burn_compiled_destroy(m);
	for (int i = 0; i < MAX_PARAM; i++)
		free(init[i]);
	for (int i = 0; i < 2 * MAX_PARAM; i++)
		free(st[i]);
	free(xh);
	free(xc);
	idx_free(&d.xtr);
	idx_free(&d.ytr);
	return rc;
}

static int train(Ctx *c, const Opts *o)
{
	const Backend *be = backend_find("llvm");
	Target cpu_target;
	Graph *g = NULL, *ge = NULL, *gx = NULL;
	Model md, me, mx;
	Data d;
	Prog step = { 0 }, ev = { 0 };
	void *init[MAX_PARAM] = { 0 }, *pb[2][MAX_PARAM] = { { 0 } };
	void *sb[2][2 * MAX_PARAM] = { { 0 } };
	Optim op = o->opt;
	int ns = optim_nstate(&op), nk = optim_nscalar(&op), rc;
	int64_t ntrain, ntest, *perm = NULL, *idx = NULL, *y = NULL, t = 0, ep0 = 0;
	Ck ck;
	float *x = NULL, *logits = NULL, ks[3], lossv, *noise[MAX_NOISE] = { 0 };
	const void **in = NULL;
	void **out = NULL;
	FILE *lf = NULL;
	double t0;

	memset(&d, 0, sizeof d);
	if (!be)
		be = backend_find("c");   /* no LLVM: the interpreter runs it */
	if (o->save_onnx && (same_file(o->save_onnx, o->model) ||
	                     (o->save && same_file(o->save_onnx, o->save))))
		return burn_fail(c, BURN_ERR_INVALID, "--save-onnx %s is the %s", o->save_onnx,
		                 same_file(o->save_onnx, o->model) ? "model" : "--save checkpoint");
	/* data first: a bad file fails before anything is compiled */
	if ((rc = load_pair(c, o->data, "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
	                    &d.xtr, &d.ytr)) ||
	    (rc = load_pair(c, o->data, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
	                    &d.xte, &d.yte)))
		goto done;
	t0 = now_s();
	if ((rc = load_model(c, o->vm, o->model, o->entry, 1, &g, &md, init)))
		goto done;
	if ((rc = check_data(c, &d, &md, o->model)))
		goto done;
	ntrain = o->train_limit > 0 && o->train_limit < d.xtr.dim[0] ? o->train_limit : d.xtr.dim[0];
	ntest = o->test_limit > 0 && o->test_limit < d.xte.dim[0] ? o->test_limit : d.xte.dim[0];
	if (ntrain < md.B) {
		rc = burn_fail(c, BURN_ERR_INVALID, "%lld training examples: fewer than one "
		               "batch of %lld", (long long)ntrain, (long long)md.B);
		goto done;
	}
	schedule(o, &op, ntrain, md.B);
	/* the buffers, and a checkpoint read before anything is compiled */
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < md.np; i++) {
			if (!(pb[s][i] = calloc(1, (size_t)md.pbytes[i]))) {
				rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
				goto done;
			}
			for (int k = 0; k < ns; k++)
				if (!(sb[s][i * ns + k] = calloc(1, (size_t)md.pbytes[i]))) {
					rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
					goto done;
				}
		}
	for (int i = 0; i < md.np; i++)
		memcpy(pb[0][i], init[i], (size_t)md.pbytes[i]);
	ck = (Ck){ &md, ns, optim_state_names(&op) };
	if (o->load && (rc = ck_load(c, &ck, o->load, pb[0], sb[0], &ep0, &t)))
		goto done;
	/* the train step */
	if ((rc = build_step(c, o, &op, g, &md)))
		goto done;
	rc = prog_make(c, be, opts_target(o, be, &cpu_target), g, &step);
	g = NULL;
	if (rc)
		goto done;
	if ((rc = load_model(c, o->vm, o->model, o->entry, 0, &ge, &me, NULL)))
		goto done;
	if (me.np != md.np) {
		rc = burn_fail(c, BURN_ERR_INTERNAL, "the model changed between loads");
		goto done;
	}
	rc = prog_make(c, be, opts_target(o, be, &cpu_target), ge, &ev);
	ge = NULL;
	if (rc)
		goto done;
	if (o->save_onnx) {
		/* the model ONNX is to hold, refused now rather than after the run */
		uint8_t *bytes;
		size_t len;
		if ((rc = export_load(c, o, &md, &gx, &mx)) ||
		    (rc = onnx_save_bytes(c, gx, &bytes, &len)))
			goto done;
		free(bytes);
	}
	fprintf(stderr, "train: %s: %d parameters, batch %lld, %lld classes; train step "
	        "%d kernels, evaluation %d; compiled in %.2f s (%s)\n", o->model, md.np,
	        (long long)md.B, (long long)md.K, step.m->prog.nkernel, ev.m->prog.nkernel,
	        now_s() - t0, be ? be->name : "interpreter");

	perm = malloc(sizeof *perm * (size_t)ntrain);
	idx = malloc(sizeof *idx * (size_t)md.B);
	y = malloc(sizeof *y * (size_t)md.B);
	x = malloc(sizeof *x * (size_t)(md.B * md.feat));
	logits = malloc(sizeof *logits * (size_t)(md.B * md.K));
	in = calloc((size_t)(2 + md.np + nk + md.np * ns + md.nn), sizeof *in);
	for (int k = 0; k < md.nn; k++)
		if (!(noise[k] = malloc(sizeof *noise[k] * (size_t)md.noise_n[k]))) {
			rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			goto done;
		}
	out = calloc((size_t)(1 + md.np * (1 + ns)), sizeof *out);
	if (!perm || !idx || !y || !x || !logits || !in || !out) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	if (o->losses && !(lf = fopen(o->losses, "w"))) {
		rc = burn_fail(c, BURN_ERR_IO, "%s: cannot write", o->losses);
		goto done;
	}
	for (int64_t i = 0; i < ntrain; i++)
		perm[i] = i;

	{
		uint64_t rs = o->seed;
		int cur = 0, quit = 0;
		int64_t nb = ntrain / md.B, total = nb * o->epochs, skip = 0;
		char line[512], oname[128];
		Dash *dash = NULL;
		if (o->max_steps && o->max_steps < total)
			total = o->max_steps;
		/* a checkpoint saved by q in the middle of epoch ep0 + 1 holds
		 * the steps done in it too: that epoch goes on after them */
		if (t > ep0 * nb)
			skip = t - ep0 * nb;
		snprintf(oname, sizeof oname, "%s lr %g%s", o->opt_name, op.lr,
		         op.sched == SCHED_COSINE ? " cosine" : op.sched == SCHED_STEP ? " step" : "");
		if (o->dashboard)
			dash = dash_open(&(DashInfo){ o->model, oname, o->epochs, total, t, nb });
		for (int ep = 1; ep <= o->epochs && !rc && !quit; ep++) {
			double ls = 0, t1 = now_s(), c1 = cpu_s(), tt, tc, tl, ta;
			int64_t steps = 0;
			for (int64_t i = ntrain - 1; i > 0; i--) {
				int64_t j = (int64_t)(rng_next(&rs) % (uint64_t)(i + 1)), tmp = perm[i];
				perm[i] = perm[j];
				perm[j] = tmp;
			}
			if (ep <= ep0)   /* done before the checkpoint: only its shuffle */
				continue;
			for (int64_t b = ep == ep0 + 1 ? skip : 0;
			     b < nb && (!o->max_steps || t < o->max_steps); b++) {
				int nx = cur ^ 1;
				fill(&d.xtr, &d.ytr, perm + b * md.B, md.B, md.B, md.feat, x, y);
				t++;
				optim_scalars(&op, t, ks);
				in[0] = x;
				in[1 + md.np] = y;
				for (int i = 0; i < md.np; i++) {
					in[1 + i] = pb[cur][i];
					out[1 + i * (1 + ns)] = pb[nx][i];
					for (int k = 0; k < ns; k++) {
						in[2 + md.np + nk + i * ns + k] = sb[cur][i * ns + k];
						out[1 + i * (1 + ns) + 1 + k] = sb[nx][i * ns + k];
					}
				}
				for (int k = 0; k < nk; k++)
					in[2 + md.np + k] = &ks[k];
				/* Dropout's noise: uniform [0, 1), a function of the
				 * seed and the step */
				for (int k = 0; k < md.nn; k++) {
					uint64_t ns_ = o->seed * 0x9E3779B97F4A7C15ull ^ (uint64_t)t << 8 ^
					               (uint64_t)k;
					for (int64_t e = 0; e < md.noise_n[k]; e++)
						noise[k][e] = (float)(rng_next(&ns_) >> 40) * 0x1p-24f;
					in[2 + md.np + nk + md.np * ns + k] = noise[k];
				}
				out[0] = &lossv;
				if ((rc = prog_run(c, &step, in, out)))
					break;
				if (!isfinite(lossv)) {
					char why[1024];
					find_nan(o, &op, &md, in, why, sizeof why);
					rc = burn_fail(c, BURN_ERR_INVALID, "the loss is %g at step %lld "
					               "(epoch %d): stopped; %s", (double)lossv, (long long)t,
					               ep, why);
					break;
				}
				if (o->check_nan) {
					/* the new parameters and states: a NaN there shows
					 * in the loss only a step later */
					for (int i = 0; i < md.np * (1 + ns) && !rc; i++) {
						double v;
						int64_t at = first_nonfinite(DT_F32, out[1 + i],
						                             md.pbytes[i / (1 + ns)] / 4, &v);
						if (at >= 0) {
							char why[1024];
							find_nan(o, &op, &md, in, why, sizeof why);
							rc = burn_fail(c, BURN_ERR_INVALID, "step %lld (epoch %d) made "
							               "%s '%s' non-finite (%g at element %lld): "
							               "stopped; %s", (long long)t, ep,
							               i % (1 + ns) ? "an optimiser state of" : "parameter",
							               md.pname[i / (1 + ns)], v, (long long)at, why);
						}
					}
					if (rc)
						break;
				}
				if (lf)
					fprintf(lf, "%lld %a %.9g\n", (long long)t, (double)lossv, (double)lossv);
				ls += lossv;
				steps++;
				cur = nx;
				if (dash && dash_step(dash, ep, t, lossv, optim_lr(&op, t))) {
					quit = ep;
					break;
				}
			}
			if (rc)
				break;
			if (quit) {
				/* the position: epoch ep not done, its steps are (t) */
				dash_close(dash);
				dash = NULL;
				if (o->save && (rc = ck_save(c, &ck, o->save, pb[cur], sb[cur], ep - 1, t)))
					break;
				if (gx && (rc = export_save(c, gx, &mx, pb[cur], o->save_onnx)))
					break;
				printf("train: quit at step %lld (epoch %d)%s%s%s%s\n", (long long)t, ep,
				       o->save ? ": checkpoint saved to " : gx ? "" : "; no --save, nothing saved",
				       o->save ? o->save : "", gx ? o->save ? ", the model to " :
				       ": the model saved to " : "", gx ? o->save_onnx : "");
				break;
			}
			tt = now_s() - t1;
			tc = cpu_s() - c1;
			t1 = now_s();
			if (dash)
				dash_evaluating(dash);
			if ((rc = evaluate(c, o, &ev, &md, &d, ntest, pb[cur], x, y, logits, idx,
			                   &tl, &ta)))
				break;
			snprintf(line, sizeof line, "epoch %d/%d  steps %lld  train loss %.4f  "
			         "test loss %.4f  test accuracy %.2f%%  train %.2f s (cpu %.2f s)  "
			         "eval %.2f s", ep, o->epochs, (long long)steps,
			         steps ? ls / (double)steps : 0.0, tl, 100 * ta, tt, tc, now_s() - t1);
			if (o->hist) {
				double *h = realloc(*o->hist, sizeof *h * 3 * (size_t)(*o->nhist + 1));
				if (!h) {
					rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
					break;
				}
				h[3 * *o->nhist] = steps ? ls / (double)steps : 0.0;
				h[3 * *o->nhist + 1] = tl;
				h[3 * *o->nhist + 2] = ta;
				*o->hist = h;
				++*o->nhist;
			}
			if (dash) {
				dash_epoch(dash, ep, t, tl, ta);
				dash_log(dash, line);
			} else {
				puts(line);
				fflush(stdout);
			}
			if (o->save && (rc = ck_save(c, &ck, o->save, pb[cur], sb[cur], ep, t)))
				break;
			if (gx && (rc = export_save(c, gx, &mx, pb[cur], o->save_onnx)))
				break;
			if (o->max_steps && t >= o->max_steps)
				break;
		}
		dash_close(dash);
		if (!rc && o->vm)
			rc = params_back(c, o, &me, pb[cur]);
	}
done:
	if (lf && fclose(lf) && !rc)
		rc = burn_fail(c, BURN_ERR_IO, "%s: write failed", o->losses);
	graph_destroy(g);
	graph_destroy(ge);
	graph_destroy(gx);
	if (step.m)
		prog_free(&step);
	if (ev.m)
		prog_free(&ev);
	for (int i = 0; i < MAX_PARAM; i++) {
		free(init[i]);
		for (int s = 0; s < 2; s++) {
			free(pb[s][i]);
			free(sb[s][2 * i]);
			free(sb[s][2 * i + 1]);
		}
	}
	for (int k = 0; k < MAX_NOISE; k++)
		free(noise[k]);
	free(perm);
	free(idx);
	free(y);
	free(x);
	free(logits);
	free(in);
	free(out);
	idx_free(&d.xtr);
	idx_free(&d.ytr);
	idx_free(&d.xte);
	idx_free(&d.yte);
	return rc;
}

/* ---- options: the command line's and train()'s in a script ------------------ */

/* The names an option gave that finish_opts resolves. */
typedef struct Names {
	const char *opt, *sched, *loss;
	int have_mom, have_wd;
} Names;

static void opts_default(Opts *o, Names *nm)
{
	memset(o, 0, sizeof *o);
	o->epochs = 5;
	o->dashboard = 1;
	o->seed = 1;
	o->opt.lr = 1e-3;
	o->opt.alpha = 0.99;
	o->opt.gamma = 0.1;
	o->lr_step_epochs = 1;
	o->opt.beta1 = 0.9;
	o->opt.beta2 = 0.999;
	o->opt.eps = 1e-8;
	*nm = (Names){ "adam", "constant", "cross_entropy", 0, 0 };
}

/* One option a ("--lr") with the value val (NULL for the flags), called
 * what in messages ("--lr", or train()'s "lr").  Returns 0, 1 with a
 * message in err for a bad value, 2 for an unknown option. */
static int parse_opt(Opts *o, Names *nm, const char *a, const char *what,
                     const char *val, char *err, size_t en)
{
	double v;
	char *e;

	if (!strcmp(a, "--no-dashboard") || !strcmp(a, "--nesterov") ||
	    !strcmp(a, "--check-nan")) {
		if (val) {
			snprintf(err, en, "%s takes no value", what);
			return 1;
		}
		if (a[2] == 'n' && a[3] == 'o')
			o->dashboard = 0;
		else if (a[2] == 'n')
			o->opt.nesterov = 1;
		else
			o->check_nan = 1;
		return 0;
	}
	{
		static const char *const known[] = {
			"--data", "--entry", "--losses", "--save", "--load", "--save-onnx", "-o",
			"--eval-o",
			"--optimizer", "--lr-schedule", "--loss", "--lr", "--momentum",
			"--weight-decay", "--beta1", "--beta2", "--eps", "--alpha",
			"--label-smoothing", "--clip-norm", "--lr-gamma", "--lr-step", "--warmup",
			"--epochs", "--seed", "--train-limit", "--test-limit", "--max-steps", "--cpu"
		};
		size_t k;
		for (k = 0; k < sizeof known / sizeof *known; k++)
			if (!strcmp(a, known[k]))
				break;
		if (k == sizeof known / sizeof *known) {
			snprintf(err, en, "unknown option %s", a);
			return 2;
		}
	}
	if (!val) {
		snprintf(err, en, "%s needs a value (burncc train --help)", what);
		return 1;
	}
	if (!strcmp(a, "--cpu")) {
		Ctx sc;
		burn_ctx_init(&sc, NULL);
		if (burn_cpu_arg(&sc, val, &o->cpu)) {
			snprintf(err, en, "%s", sc.msg);
			return 1;
		}
	} else if (!strcmp(a, "--data"))
		o->data = val;
	else if (!strcmp(a, "--entry"))
		o->entry = val;
	else if (!strcmp(a, "--losses"))
		o->losses = val;
	else if (!strcmp(a, "--save"))
		o->save = val;
	else if (!strcmp(a, "--load"))
		o->load = val;
	else if (!strcmp(a, "--save-onnx"))
		o->save_onnx = val;
	else if (!strcmp(a, "-o"))
		o->out = val;
	else if (!strcmp(a, "--eval-o"))
		o->eval_out = val;
	else if (!strcmp(a, "--optimizer"))
		nm->opt = val;
	else if (!strcmp(a, "--lr-schedule"))
		nm->sched = val;
	else if (!strcmp(a, "--loss"))
		nm->loss = val;
	else {
		v = strtod(val, &e);
		if (!*val || *e || !isfinite(v)) {
			snprintf(err, en, "%s wants a number, got '%s'", what, val);
			return 1;
		}
		if (!strcmp(a, "--lr"))
			o->opt.lr = v;
		else if (!strcmp(a, "--momentum"))
			o->opt.momentum = v, nm->have_mom = 1;
		else if (!strcmp(a, "--weight-decay"))
			o->opt.weight_decay = v, nm->have_wd = 1;
		else if (!strcmp(a, "--beta1"))
			o->opt.beta1 = v;
		else if (!strcmp(a, "--beta2"))
			o->opt.beta2 = v;
		else if (!strcmp(a, "--eps"))
			o->opt.eps = v;
		else if (!strcmp(a, "--alpha"))
			o->opt.alpha = v;
		else if (!strcmp(a, "--label-smoothing") && v >= 0 && v < 1)
			o->smoothing = v;
		else if (!strcmp(a, "--clip-norm") && v > 0)
			o->opt.clip = v;
		else if (!strcmp(a, "--lr-gamma") && v > 0)
			o->opt.gamma = v;
		else if (!strcmp(a, "--lr-step") && v >= 1 && v <= 1e9 && v == floor(v))
			o->lr_step_epochs = (int64_t)v;
		else if (!strcmp(a, "--warmup") && v >= 0 && v <= 1e12 && v == floor(v))
			o->opt.warmup = (int64_t)v;
		else if (!strcmp(a, "--epochs") && v >= 1 && v <= 1e6 && v == floor(v))
			o->epochs = (int)v;
		else if (!strcmp(a, "--seed") && v >= 0 && v == floor(v))
			o->seed = (uint64_t)v;
		else if (!strcmp(a, "--train-limit") && v >= 1 && v == floor(v))
			o->train_limit = (int64_t)v;
		else if (!strcmp(a, "--test-limit") && v >= 1 && v == floor(v))
			o->test_limit = (int64_t)v;
		else if (!strcmp(a, "--max-steps") && v >= 1 && v == floor(v))
			o->max_steps = (int64_t)v;
		else {
			snprintf(err, en, "bad value for %s: %s", what, val);
			return 1;
		}
	}
	return 0;
}

/* Resolve the names and PyTorch's defaults that depend on the optimiser.
 * Returns 0, or 1 with a message in err and the option at fault in *bad
 * ("--optimizer"); dash: how messages spell options ("--" or train()'s ""). */
static int finish_opts(Opts *o, const Names *nm, const char *dash, char *err, size_t en,
                       const char **bad)
{
	static const char *const kinds[] = { "sgd", "adam", "adamw", "rmsprop" };
	static const char *const scheds[] = { "constant", "step", "cosine" };

	o->opt.kind = o->opt.sched = -1;
	for (int k = 0; k < 4; k++)
		if (!strcmp(nm->opt, kinds[k]))
			o->opt.kind = k;
	for (int k = 0; k < 3; k++)
		if (!strcmp(nm->sched, scheds[k]))
			o->opt.sched = k;
	if (o->opt.kind < 0) {
		snprintf(err, en, "%soptimizer sgd, adam, adamw or rmsprop, not '%s'", dash,
		         nm->opt);
		*bad = "--optimizer";
		return 1;
	}
	if (o->opt.sched < 0) {
		snprintf(err, en, "%slr%sschedule constant, step or cosine, not '%s'", dash,
		         *dash ? "-" : "_", nm->sched);
		*bad = "--lr-schedule";
		return 1;
	}
	o->opt_name = kinds[o->opt.kind];
	o->loss = -1;
	for (int k = 0; k < LOSS_COUNT; k++)
		if (!strcmp(nm->loss, loss_names[k]))
			o->loss = k;
	if (o->loss < 0) {
		snprintf(err, en, "%sloss cross_entropy, nll, mse, bce or l1, not '%s'", dash,
		         nm->loss);
		*bad = "--loss";
		return 1;
	}
	if (o->smoothing > 0 && o->loss != LOSS_CE) {
		snprintf(err, en, "%slabel%ssmoothing is cross-entropy's", dash,
		         *dash ? "-" : "_");
		*bad = "--label-smoothing";
		return 1;
	}
	/* PyTorch's defaults: SGD's momentum is ours (0.9), AdamW's weight
	 * decay 0.01 */
	if (!nm->have_mom)
		o->opt.momentum = o->opt.kind == OPTIM_SGD ? 0.9 : 0;
	if (!nm->have_wd && o->opt.kind == OPTIM_ADAMW)
		o->opt.weight_decay = 0.01;
	return 0;
}

/*
 * train(model, data, key=value, ...) in a script (api/dsl.h): each keyword
 * is the option of the same name, '_' for '-' (lr=1e-3 is --lr 1e-3,
 * lr_schedule="cosine" --lr-schedule cosine), booleans for the flags
 * (nesterov=true, check_nan=true, dashboard=false), then the same run as
 * `burncc train` on the model traced from the running script.
 */
int train_dsl(void *arg, DslVm *vm, DslTrainCall *tc, Ctx *c)
{
	Opts o;
	Names nm;
	const char *bad = NULL;
	char err[512], opt[64], val[64];
	int rc;

	(void)arg;
	opts_default(&o, &nm);
	for (int i = 0; i < tc->nkey; i++) {
		const char *k = tc->key[i], *v = tc->str[i];
		int flag = !strcmp(k, "nesterov") || !strcmp(k, "check_nan") ||
		           !strcmp(k, "dashboard");
		size_t j;
		if (!strcmp(k, "entry") || !strcmp(k, "o") || !strcmp(k, "eval_o")) {
			tc->bad = i;
			return burn_fail(c, BURN_ERR_INVALID, "'%s' is not an option of train() "
			                 "(burncc train's)", k);
		}
		snprintf(opt, sizeof opt, "--%s", k);
		for (j = 2; opt[j]; j++)
			if (opt[j] == '_')
				opt[j] = '-';
		if (flag) {
			if (v) {
				tc->bad = i;
				return burn_fail(c, BURN_ERR_INVALID, "%s is true or false", k);
			}
			if (!strcmp(k, "dashboard"))
				o.dashboard = tc->num[i] != 0;
			else if (tc->num[i] != 0)
				parse_opt(&o, &nm, opt, k, NULL, err, sizeof err);
			continue;
		}
		if (!v) {
			snprintf(val, sizeof val, "%.17g", tc->num[i]);
			v = val;
		}
		if ((rc = parse_opt(&o, &nm, opt, k, v, err, sizeof err))) {
			tc->bad = i;
			if (rc == 2)
				return burn_fail(c, BURN_ERR_INVALID, "unknown keyword '%s' (train's "
				                 "keywords are burncc train's options: epochs, "
				                 "optimizer, lr, loss, ...; burncc train --help)", k);
			return burn_fail(c, BURN_ERR_INVALID, "%s", err);
		}
	}
	if (finish_opts(&o, &nm, "", err, sizeof err, &bad)) {
		for (int i = 0; i < tc->nkey; i++) {
			size_t j;
			snprintf(opt, sizeof opt, "--%s", tc->key[i]);
			for (j = 2; opt[j]; j++)
				if (opt[j] == '_')
					opt[j] = '-';
			if (!strcmp(opt, bad))
				tc->bad = i;
		}
		return burn_fail(c, BURN_ERR_INVALID, "%s", err);
	}
	o.model = tc->src;
	o.entry = tc->entry;
	o.data = tc->data;
	o.vm = vm;
	o.hist = &tc->hist;
	o.nhist = &tc->nepoch;
	fflush(stdout);
	rc = train(c, &o);
	fflush(stdout);
	return rc;
}

int train_main(int argc, char **argv)
{
	Opts o;
	Names nm;
	Ctx c;
	int rc;
	char err[512];
	const char *bad;

	opts_default(&o, &nm);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		int flag = !strcmp(a, "--no-dashboard") || !strcmp(a, "--nesterov") ||
		           !strcmp(a, "--check-nan");
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(train_usage, stdout);
#ifndef BURN_HAVE_CURSES
			puts("(this build has no dashboard: burncc was built without ncurses)");
#endif
			return 0;
		}
		if (a[0] != '-') {
			if (o.model) {
				fprintf(stderr, "burncc train: one model (have '%s' and '%s')\n", o.model, a);
				return 2;
			}
			o.model = a;
			continue;
		}
		if (parse_opt(&o, &nm, a, a, flag ? NULL : val, err, sizeof err)) {
			fprintf(stderr, "burncc train: %s\n", err);
			return 2;
		}
		if (!flag)
			i++;
	}
	if (finish_opts(&o, &nm, "--", err, sizeof err, &bad)) {
		fprintf(stderr, "burncc train: %s\n", err);
		return 2;
	}
	if (!o.model || (!o.data && !o.out)) {
		fputs(train_usage, stderr);
		return 2;
	}
	if (o.out && o.save_onnx) {
		fprintf(stderr, "burncc train: --save-onnx saves a training run's model, not -o's\n");
		return 2;
	}
	if (o.eval_out && (!o.out || !strcmp(o.eval_out, o.out))) {
		fprintf(stderr, "burncc train: --eval-o goes with -o, to another file\n");
		return 2;
	}
	burn_ctx_init(&c, NULL);
	rc = o.out ? emit_step(&c, &o) : train(&c, &o);
	if (rc) {
		fprintf(stderr, "burncc train: %s\n", c.msg[0] ? c.msg : burn_code_name(c.code));
		return 1;
	}
	return 0;
}
