/*
 * optim.c - SGD (momentum, weight decay) and Adam as graph IR appended to a
 * train step; the equations and the inputs it adds are in optim.h.
 */
#include <math.h>
#include <string.h>
#include "autodiff.h"
#include "optim.h"

int optim_nstate(const Optim *o)
{
	if (o->kind == OPTIM_ADAM)
		return 2;
	return o->momentum != 0 ? 1 : 0;
}

int optim_nscalar(const Optim *o)
{
	return o->kind == OPTIM_ADAM ? 2 : 0;
}

void optim_scalars(const Optim *o, int64_t t, float *out)
{
	if (o->kind == OPTIM_ADAM) {
		/* in double, rounded once: PyTorch computes these in Python floats */
		double bc1 = 1 - pow(o->beta1, (double)t), bc2 = 1 - pow(o->beta2, (double)t);
		out[0] = (float)(o->lr / bc1);
		out[1] = (float)sqrt(bc2);
	}
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

int pass_optim(Ctx *c, Graph *g, const Optim *o, int np, const int *param,
               const int *grad, int *out_new, int *out_in_state,
               int *out_in_scalar)
{
	AD a = { c, g, g->nval, NULL, NULL, 0 };
	int ns = optim_nstate(o), nk = optim_nscalar(o), sc[2] = { -1, -1 };
	static const char *const kname[2] = { "optim/a", "optim/c" };
	static const char *const sname[2] = { "m", "v" };

	if (o->kind != OPTIM_SGD && o->kind != OPTIM_ADAM)
		return burn_fail(c, BURN_ERR_INVALID, "unknown optimiser %d", o->kind);
	if (!(o->lr > 0) || o->momentum < 0 || o->momentum >= 1 || o->weight_decay < 0 ||
	    (o->kind == OPTIM_ADAM && (!(o->beta1 >= 0 && o->beta1 < 1) ||
	                              !(o->beta2 >= 0 && o->beta2 < 1) || !(o->eps > 0))))
		return burn_fail(c, BURN_ERR_INVALID, "optimiser hyper-parameters out of range");
	for (int k = 0; k < nk; k++)
		if ((out_in_scalar[k] = sc[k] = new_input(c, g, kname[k], -1)) < 0)
			return c->code;
	for (int i = 0; i < np; i++) {
		int p = param[i], gp = grad[i], st[2] = { -1, -1 }, np_ = -1;
		int dt = GV(g, p)->dtype;
		if (!dtype_is_float(dt) || GV(g, gp)->dtype != dt)
			return burn_fail(c, BURN_ERR_SHAPE, "parameter '%s': not float",
			                 GV(g, p)->name);
		for (int k = 0; k < ns; k++) {
			const char *nm = arena_printf(&g->arena, "%s/%s", GV(g, p)->name,
			                              o->kind == OPTIM_ADAM ? sname[k] : "b");
			if (!nm || (st[k] = new_input(c, g, nm, p)) < 0)
				return c->code ? c->code : burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			out_in_state[i * ns + k] = st[k];
		}
		if (o->kind == OPTIM_ADAM) {
			int m, v, ka = sc[0], kc = sc[1], den;
			if (dt != DT_F32) {
				ka = ad_cast(&a, ka, dt);
				kc = ad_cast(&a, kc, dt);
			}
			m = add(&a, mul(&a, st[0], ad_k(&a, p, o->beta1)),
			        mul(&a, gp, ad_k(&a, p, 1 - o->beta1)));
			v = add(&a, mul(&a, st[1], ad_k(&a, p, o->beta2)),
			        mul(&a, mul(&a, gp, gp), ad_k(&a, p, 1 - o->beta2)));
			den = add(&a, ad_op2(&a, OP_Div, ad_op1(&a, OP_Sqrt, v), kc),
			          ad_k(&a, p, o->eps));
			np_ = sub(&a, p, mul(&a, ad_op2(&a, OP_Div, m, den), ka));
			out_new[i * 3 + 1] = m;
			out_new[i * 3 + 2] = v;
		} else {
			int d = gp;
			if (o->weight_decay != 0)
				d = add(&a, d, mul(&a, p, ad_k(&a, p, o->weight_decay)));
			if (ns) {
				d = add(&a, mul(&a, st[0], ad_k(&a, p, o->momentum)), d);
				out_new[i * 2 + 1] = d;
			}
			np_ = sub(&a, p, mul(&a, d, ad_k(&a, p, o->lr)));
		}
		if (np_ < 0)
			return c->code ? c->code : BURN_ERR_INTERNAL;
		out_new[i * (1 + ns)] = np_;
	}
	return BURN_OK;
}
