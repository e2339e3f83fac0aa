/*
 * optim.c - SGD (momentum, Nesterov, weight decay), Adam, AdamW and
 * RMSProp, with gradient clipping by the global norm, as graph IR appended
 * to a train step; the equations and the inputs it adds are in optim.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "autodiff.h"
#include "optim.h"

const char *optim_state_names(const Optim *o)
{
	switch (o->kind) {
	case OPTIM_ADAM:
	case OPTIM_ADAMW: return "mv";
	case OPTIM_RMSPROP: return o->momentum != 0 ? "vb" : "v";
	default: return o->momentum != 0 ? "b" : "";
	}
}

int optim_nstate(const Optim *o) { return (int)strlen(optim_state_names(o)); }

int optim_nscalar(const Optim *o)
{
	return o->kind == OPTIM_ADAMW ? 3 : o->kind == OPTIM_ADAM ? 2 : 1;
}

double optim_lr(const Optim *o, int64_t t)
{
	int64_t u = t - o->warmup;

	if (t <= o->warmup)
		return o->lr * (double)t / (double)o->warmup;
	if (o->sched == SCHED_STEP && o->step_size > 0)
		return o->lr * pow(o->gamma, (double)((u - 1) / o->step_size));
	if (o->sched == SCHED_COSINE && o->total > o->warmup)
		return o->lr * (1 + cos(3.14159265358979323846 * (double)(u - 1) / (double)(o->total - o->warmup))) / 2;
	return o->lr;
}

void optim_scalars(const Optim *o, int64_t t, float *out)
{
	double lr = optim_lr(o, t);

	if (o->kind == OPTIM_ADAM || o->kind == OPTIM_ADAMW) {
		/* in double, rounded once: PyTorch computes these in Python floats */
		double bc1 = 1 - pow(o->beta1, (double)t), bc2 = 1 - pow(o->beta2, (double)t);
		out[0] = (float)(lr / bc1);
		out[1] = (float)sqrt(bc2);
		if (o->kind == OPTIM_ADAMW)
			out[2] = (float)(1 - lr * o->weight_decay);
	} else {
		out[0] = (float)lr;
	}
}

/*
 * The same two functions as C source, for the AOT train step (burncc train
 * -o): `void FN(int64_t t, float *ks)` fills ks[optim_nscalar] for step t
 * with the hyper-parameters as hex-float constants.  Every branch and
 * operation is the one optim_lr and optim_scalars take, in double, so a C
 * driver gets the scalars a burncc train run gets, bit for bit (with the
 * same libm).  ctest train_aot compares the two runs' losses.
 */
void optim_scalars_c(FILE *f, const Optim *o, const char *fn)
{
	/* (void)t: SGD at a constant rate reads no step (-Werror builds) */
	fprintf(f, "void %s(int64_t t, float *ks)\n{\n\tdouble lr = %a;\n\n\t(void)t;\n",
	        fn, o->lr);
	if (o->warmup > 0)
		fprintf(f, "\tif (t <= %lld)\n\t\tlr = %a * (double)t / (double)%lld;\n\telse\n",
		        (long long)o->warmup, o->lr, (long long)o->warmup);
	if (o->sched == SCHED_STEP && o->step_size > 0)
		fprintf(f, "\tif (t > %lld)\n\t\tlr = %a * pow(%a, (double)((t - %lld - 1) / %lld));\n",
		        (long long)o->warmup, o->lr, o->gamma, (long long)o->warmup,
		        (long long)o->step_size);
	else if (o->sched == SCHED_COSINE && o->total > o->warmup)
		fprintf(f, "\tif (t > %lld)\n\t\tlr = %a * (1 + cos(3.14159265358979323846 * "
		        "(double)(t - %lld - 1) / (double)%lld)) / 2;\n", (long long)o->warmup,
		        o->lr, (long long)o->warmup, (long long)(o->total - o->warmup));
	else if (o->warmup > 0)
		fprintf(f, "\t\t;\n");
	if (o->kind == OPTIM_ADAM || o->kind == OPTIM_ADAMW) {
		fprintf(f, "\tks[0] = (float)(lr / (1 - pow(%a, (double)t)));\n"
		        "\tks[1] = (float)sqrt(1 - pow(%a, (double)t));\n", o->beta1, o->beta2);
		if (o->kind == OPTIM_ADAMW)
			fprintf(f, "\tks[2] = (float)(1 - lr * %a);\n", o->weight_decay);
	} else {
		fprintf(f, "\tks[0] = (float)lr;\n");
	}
	fprintf(f, "}\n");
}

/* A new graph input named name, of like's shape and dtype (like < 0: an
 * f32 scalar). */
static int new_input(Ctx *c, Graph *g, const char *name, int like)
{
	int v = graph_add_value(g, name);
	Value *x;

	if (v < 0)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory"), -1;
	x = GV(g, v);
	x->kind = VK_INPUT;
	if (like >= 0) {
		x->dtype = GV(g, like)->dtype;
		value_copy_shape(x, GV(g, like));
	} else {
		x->dtype = DT_F32;
		x->rank = 0;
	}
	graph_add_input(g, v);
	return v;
}

static int mul(AD *a, int x, int y) { return ad_op2(a, OP_Mul, x, y); }
static int add(AD *a, int x, int y) { return ad_op2(a, OP_Add, x, y); }
static int sub(AD *a, int x, int y) { return ad_op2(a, OP_Sub, x, y); }
static int dvd(AD *a, int x, int y) { return ad_op2(a, OP_Div, x, y); }

/* The clipping factor min(1, clip / (norm + 1e-6)) of the gradients, an
 * f32 scalar; the squares summed in f32 whatever the parameters' type. */
static int clip_factor(AD *a, const Optim *o, int np, const int *grad)
{
	int tot = -1, one;

	for (int i = 0; i < np; i++) {
		int gi = grad[i], r = GV(a->g, gi)->rank, s;
		if (GV(a->g, gi)->dtype != DT_F32)
			gi = ad_cast(a, gi, DT_F32);
		s = ad_rsum(a, mul(a, gi, gi), r ? (1u << r) - 1 : 0, 0);
		tot = tot < 0 ? s : add(a, tot, s);
	}
	one = ad_scalar(a, DT_F32, 1);
	return ad_op2(a, OP_Min, one, dvd(a, ad_scalar(a, DT_F32, o->clip),
	              add(a, ad_op1(a, OP_Sqrt, tot), ad_scalar(a, DT_F32, 1e-6))));
}

int pass_optim(Ctx *c, Graph *g, const Optim *o, int np, const int *param,
               const int *grad, int *out_new, int *out_in_state,
               int *out_in_scalar)
{
	AD a = { c, g, g->nval, NULL, NULL, 0 };
	int ns = optim_nstate(o), nk = optim_nscalar(o), sc[3] = { -1, -1, -1 }, clip = -1;
	const char *snames = optim_state_names(o);
	const char *const *kname;
	static const char *const k_lr[] = { "optim/lr" };
	static const char *const k_adam[] = { "optim/a", "optim/c", "optim/e" };
	int adam = o->kind == OPTIM_ADAM || o->kind == OPTIM_ADAMW;

	if (o->kind < OPTIM_SGD || o->kind > OPTIM_RMSPROP)
		return burn_fail(c, BURN_ERR_INVALID, "unknown optimiser %d", o->kind);
	if (!(o->lr > 0) || !(o->momentum >= 0 && o->momentum < 1) || !(o->weight_decay >= 0) ||
	    !(o->clip >= 0) || (o->nesterov && (o->kind != OPTIM_SGD || o->momentum == 0)) ||
	    (adam && (!(o->beta1 >= 0 && o->beta1 < 1) || !(o->beta2 >= 0 && o->beta2 < 1))) ||
	    ((adam || o->kind == OPTIM_RMSPROP) && !(o->eps > 0)) ||
	    (o->kind == OPTIM_RMSPROP && !(o->alpha >= 0 && o->alpha < 1)) ||
	    (adam && o->momentum != 0) || o->warmup < 0 ||
	    (o->sched == SCHED_STEP && (o->step_size < 1 || !(o->gamma > 0))))
		return burn_fail(c, BURN_ERR_INVALID, "optimiser hyper-parameters out of range");
	kname = adam ? k_adam : k_lr;
	for (int k = 0; k < nk; k++)
		if ((out_in_scalar[k] = sc[k] = new_input(c, g, kname[k], -1)) < 0)
			return c->code;
	if (o->clip > 0 && (clip = clip_factor(&a, o, np, grad)) < 0)
		return c->code ? c->code : BURN_ERR_INTERNAL;
	for (int i = 0; i < np; i++) {
		int p = param[i], gp = grad[i], st[2] = { -1, -1 }, np_ = -1, k[3];
		int dt = GV(g, p)->dtype;
		if (!dtype_is_float(dt) || GV(g, gp)->dtype != dt)
			return burn_fail(c, BURN_ERR_SHAPE, "parameter '%s': not float",
			                 GV(g, p)->name);
		for (int s = 0; s < ns; s++) {
			const char *nm = arena_printf(&g->arena, "%s/%c", GV(g, p)->name, snames[s]);
			if (!nm || (st[s] = new_input(c, g, nm, p)) < 0)
				return c->code ? c->code : burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			out_in_state[i * ns + s] = st[s];
		}
		/* the scalars in the parameter's type */
		for (int s = 0; s < nk; s++)
			k[s] = dt == DT_F32 ? sc[s] : ad_cast(&a, sc[s], dt);
		if (clip >= 0)
			gp = mul(&a, gp, dt == DT_F32 ? clip : ad_cast(&a, clip, dt));
		/* L2 weight decay on the gradient (AdamW's is decoupled) */
		if (o->weight_decay != 0 && o->kind != OPTIM_ADAMW)
			gp = add(&a, gp, mul(&a, p, ad_k(&a, p, o->weight_decay)));
		if (adam) {
			int m, v, den, pe = p;
			m = add(&a, mul(&a, st[0], ad_k(&a, p, o->beta1)),
			        mul(&a, gp, ad_k(&a, p, 1 - o->beta1)));
			v = add(&a, mul(&a, st[1], ad_k(&a, p, o->beta2)),
			        mul(&a, mul(&a, gp, gp), ad_k(&a, p, 1 - o->beta2)));
			den = add(&a, dvd(&a, ad_op1(&a, OP_Sqrt, v), k[1]), ad_k(&a, p, o->eps));
			if (o->kind == OPTIM_ADAMW)
				pe = mul(&a, p, k[2]);
			np_ = sub(&a, pe, mul(&a, dvd(&a, m, den), k[0]));
			out_new[i * 3 + 1] = m;
			out_new[i * 3 + 2] = v;
		} else if (o->kind == OPTIM_RMSPROP) {
			int v = add(&a, mul(&a, st[0], ad_k(&a, p, o->alpha)),
			            mul(&a, mul(&a, gp, gp), ad_k(&a, p, 1 - o->alpha)));
			int u = dvd(&a, gp, add(&a, ad_op1(&a, OP_Sqrt, v), ad_k(&a, p, o->eps)));
			out_new[i * (1 + ns) + 1] = v;
			if (ns == 2) {
				u = add(&a, mul(&a, st[1], ad_k(&a, p, o->momentum)), u);
				out_new[i * 3 + 2] = u;
			}
			np_ = sub(&a, p, mul(&a, u, k[0]));
		} else {
			int d = gp;
			if (ns) {
				int b = add(&a, mul(&a, st[0], ad_k(&a, p, o->momentum)), d);
				out_new[i * 2 + 1] = b;
				d = o->nesterov ? add(&a, d, mul(&a, b, ad_k(&a, p, o->momentum))) : b;
			}
			np_ = sub(&a, p, mul(&a, d, k[0]));
		}
		if (np_ < 0)
			return c->code ? c->code : BURN_ERR_INTERNAL;
		out_new[i * (1 + ns)] = np_;
	}
	return BURN_OK;
}
