"""A float64 reference for ONNX graphs, with an error bound per element.

evaluate(model, feeds) runs the graph op by op in NumPy float64 (never
through burncc: the kernel-IR interpreter shares burncc's mistakes) and
returns, for every value, an R: the exact-ish value, the bound E of how far
a correct implementation in the value's type may be from it, and a mask of
elements the model cannot decide.  The rules are those of numerics.py and
docs/NUMERICS.md.  Only the ops the generator (gen.py) emits are known;
any other raises KeyError.
"""
import math
import numpy as np
from onnx import numpy_helper, TensorProto

import numerics as N

DT = {TensorProto.FLOAT: 'f32', TensorProto.DOUBLE: 'f64',
      TensorProto.FLOAT16: 'f16', TensorProto.BFLOAT16: 'bf16',
      TensorProto.INT64: 'i64', TensorProto.BOOL: 'bool'}
NP = {'f32': np.float32, 'f64': np.float64, 'f16': np.float16,
      'i64': np.int64, 'bool': np.bool_}


class R:
    """A reference value: v (float64, or int64/bool), its bound e (>= 0),
    its undecidable mask u, and its ONNX type name dt."""
    def __init__(self, v, dt, e=None, u=None):
        self.v = v
        self.dt = dt
        self.e = np.zeros(v.shape) if e is None else e
        self.u = np.zeros(v.shape, bool) if u is None else u

    def isfloat(self):
        return self.dt in N.UNIT


def _finish(op, y, dt, prop, u, extra=0.0):
    """The result of one float op: add the op's own error to the carried
    bound prop (and extra, a sum's growth term), apply the type's range
    (overflow to inf), and mark what cannot be decided."""
    c = N.COMPUTE[dt]
    with np.errstate(all='ignore'):
        return _finish2(op, y, dt, prop, u, extra, c)


def _finish2(op, y, dt, prop, u, extra, c):
    ay = np.abs(y)
    own = N.ULPS[op] * 2 * N.UNIT[c] * ay + N.ABS_ERR.get(op, 0.0)
    if c == 'f64':
        own = 2 * own        # the reference rounds as often as the target
    if dt != c:
        own = own + N.UNIT[dt] * ay + N.TINY[dt] / 2
    own = own + N.TINY[c] / 2
    if op in N.SUBNORMAL_LOSS:
        own = own + N.NORM_MIN[c]
    e = prop + own + extra
    with np.errstate(invalid='ignore', over='ignore'):
        # round to nearest overflows from FMAX + half an ulp on
        thresh = N.FMAX[dt] * (1 + N.UNIT[dt])
        fin = np.isfinite(y)
        near = fin & (np.abs(ay - thresh) <= N.SAFETY * e)
        y = np.where(fin & (ay > thresh), np.copysign(np.inf, y), y)
        # below half the smallest subnormal a result rounds to a signed 0
        y = np.where(fin & (ay <= N.TINY[dt] / 2), np.copysign(0.0, y), y)
        fin = np.isfinite(y)
        bad_e = fin & ~np.isfinite(e)
        e = np.where(fin & np.isfinite(e), e, 0.0)
    return R(y, dt, e, u | near | bad_e)


def _sigmoid(a):
    # no cancellation in 1 + tanh(x/2) for large negative x
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e))


def _unary(op, f, x, disc=None, lip=None):
    """y = f(x): the carried error from the interval [x - e, x + e] (exact
    for monotone f).  disc(lo, hi) marks where the interval crosses a
    discontinuity; a NaN at an end of the interval where f(x) is a number
    (a domain edge) is undecidable too."""
    with np.errstate(all='ignore'):
        y = f(x.v)
        has = x.e > 0
        lo = np.where(has, x.v - x.e, x.v)
        hi = np.where(has, x.v + x.e, x.v)
        flo, fhi = f(lo), f(hi)
        prop = np.where(has, np.maximum(np.abs(flo - y), np.abs(fhi - y)), 0.0)
        ny = np.isnan(y)
        u = x.u | (has & ((np.isnan(flo) != ny) | (np.isnan(fhi) != ny)))
        if disc is not None:
            u = u | (has & disc(lo, hi))
        if lip is not None:
            # periodic functions: the interval's ends say nothing, the
            # Lipschitz constant and the range do
            prop = np.where(has, np.minimum(lip * x.e, 2.0), 0.0)
        prop = np.where(np.isnan(prop) & ~np.isnan(y), np.inf, prop)
    return _finish(op, y, x.dt, prop, u)


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x


def _softplus(x):
    return np.logaddexp(0.0, x)


def _may_overflow(s, dt):
    """Where a sum's terms total more than FMAX in magnitude, a partial
    sum may overflow to inf in one summation order and not in another."""
    with np.errstate(invalid='ignore'):
        return s > N.FMAX[dt] / 2


def _sum_exact(terms_abs, all_int):
    """Where a sum of integers stays below 2^24 it is exact in f32."""
    return all_int & (terms_abs < 2.0 ** 24)


def _is_int(*rs):
    return all(np.all(r.e == 0) and np.all(np.isfinite(r.v)) and
               np.all(r.v == np.round(r.v)) for r in rs)


def _reduce(op, x, axes, keep):
    """The reductions over axes (a tuple), keepdims keep."""
    ax = tuple(sorted(a % x.v.ndim for a in axes)) if axes else tuple(range(x.v.ndim))
    n = int(np.prod([x.v.shape[a] for a in ax])) if ax else 1
    red = lambda a, f=np.sum: f(a, axis=ax, keepdims=keep)
    u = red(x.u, np.any)
    c = N.COMPUTE[x.dt]
    with np.errstate(all='ignore'):
        if op in ('ReduceSum', 'ReduceMean'):
            y = red(x.v)
            s = red(np.abs(x.v))
            prop = red(x.e)
            u = u | _may_overflow(s, x.dt)
            g = np.where(_sum_exact(s, _is_int(x)), 0.0, N.sum_growth(n) * N.UNIT[c] * s)
            if op == 'ReduceMean':
                y, prop, g = y / n, prop / n, g / n
            return _finish(op, y, x.dt, prop, u, g)
        if op in ('ReduceMax', 'ReduceMin'):
            y = red(x.v, np.max if op == 'ReduceMax' else np.min)
            return _finish(op, y, x.dt, red(x.e, np.max), u)
        if op in ('ReduceSumSquare', 'ReduceL2'):
            sq = x.v * x.v
            y = red(sq)
            # |(x + d)^2 - x^2| <= 2 |x| d + d^2: the square term is all
            # there is where x is 0 (a rounding error squared and summed)
            prop = red(2 * np.abs(x.v) * x.e + x.e * x.e)
            u = u | _may_overflow(y, x.dt)
            g = np.where(_sum_exact(y, _is_int(x)), 0.0, N.sum_growth(n) * N.UNIT[c] * y)
            if op == 'ReduceSumSquare':
                return _finish(op, y, x.dt, prop, u, g)
            r = np.sqrt(y)
            # d sqrt(s) = ds / (2 sqrt(s)); at s = 0 the error is sqrt(err)
            de = prop + g
            e2 = np.where(r > 0, de / (2 * r), np.sqrt(de))
            e2 = np.minimum(e2, np.sqrt(de))
            return _finish(op, r, x.dt, e2, u)
        if op == 'ReduceLogSumExp':
            m = np.max(x.v, axis=ax, keepdims=True)
            mf = np.where(np.isfinite(m), m, 0.0)
            u = u | red(np.isinf(x.v), np.any)
            s = np.sum(np.exp(x.v - mf), axis=ax, keepdims=True)
            y = np.log(s) + mf
            if not keep:
                y, mf = np.squeeze(y, ax), np.squeeze(mf, ax)
            # |d lse| <= max |dx|; the sum of the shifted exps adds its
            # growth relative to s (>= 1), i.e. absolutely in the log
            g = N.sum_growth(n) * N.UNIT[c] + N.UNIT[c] * np.abs(mf)
            return _finish(op, y, x.dt, red(x.e, np.max), u, g)
    raise KeyError(op)


def _softmax(op, x, axis):
    c = N.COMPUTE[x.dt]
    n = x.v.shape[axis]
    with np.errstate(all='ignore'):
        m = np.max(x.v, axis=axis, keepdims=True)
        mf = np.where(np.isfinite(m), m, 0.0)
        ex = np.exp(x.v - mf)
        s = np.sum(ex, axis=axis, keepdims=True)
        emax = np.max(x.e, axis=axis, keepdims=True)
        # a row holding an infinity: inf - inf in the max shift, NaN or
        # not by implementation; ONNX does not say
        u = np.any(x.u | np.isinf(x.v), axis=axis, keepdims=True)
        u = np.broadcast_to(u, x.v.shape)
        g = N.sum_growth(n) * N.UNIT[c]
        if op == 'Softmax':
            y = ex / s
            # y_i (dx_i - sum_j y_j dx_j) to first order; exactly, y_i
            # moves by a factor within exp(+-(dx_i + max dx)): large input
            # bounds (an f32 sum of 1e20 and 65504) are far from linear
            prop = y * np.expm1(x.e + emax)
            # the max shift x - max rounds before exp: a relative error
            # of u |x - max| in each numerator (65 ulps at x - max = -64)
            shift = N.UNIT[c] * np.abs(x.v - mf) * y
            return _finish(op, y, x.dt, prop, u.copy(), g * y + shift)
        y = x.v - mf - np.log(s)
        prop = x.e + emax
        extra = g + N.UNIT[c] * (np.abs(x.v) + np.abs(mf))
        return _finish(op, y, x.dt, prop, u.copy(), extra)


def _matmul(op, a, b, dt):
    """y = a @ b with the bound of a dot product of K terms."""
    k = a.v.shape[-1]
    c = N.COMPUTE[dt]
    with np.errstate(all='ignore'):
        y = np.matmul(a.v, b.v)
        s = np.matmul(np.abs(a.v), np.abs(b.v))
        prop = np.matmul(np.abs(a.v), b.e) + np.matmul(a.e, np.abs(b.v)) + \
            np.matmul(a.e, b.e)
        u = (np.matmul(a.u.astype(float), np.ones(b.v.shape)) +
             np.matmul(np.ones(a.v.shape), b.u.astype(float))) > 0
        g = np.where(_sum_exact(s, _is_int(a, b)), 0.0, N.sum_growth(k) * N.UNIT[c] * s)
    return y, prop, u | _may_overflow(s, dt), g


def _conv(x, w, b, at):
    """2-D convolution (NCHW, OIHW) by explicit loops over the window."""
    group = at.get('group', 1)
    st = at.get('strides', [1, 1])
    dl = at.get('dilations', [1, 1])
    pads = at.get('pads', [0, 0, 0, 0])
    nb, ci, hh, ww = x.v.shape
    co, cg, kh, kw = w.v.shape
    pad = lambda a: np.pad(a, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    xv, xe, xu = pad(x.v), pad(x.e), pad(x.u.astype(float))
    oh = (hh + pads[0] + pads[2] - dl[0] * (kh - 1) - 1) // st[0] + 1
    ow = (ww + pads[1] + pads[3] - dl[1] * (kw - 1) - 1) // st[1] + 1
    y = np.zeros((nb, co, oh, ow))
    s, prop, u = y.copy(), y.copy(), y.copy()
    opg = co // group
    with np.errstate(all='ignore'):
        for gi in range(group):
            for i in range(kh):
                for j in range(kw):
                    sl = (slice(None), slice(gi * cg, (gi + 1) * cg),
                          slice(i * dl[0], i * dl[0] + st[0] * (oh - 1) + 1, st[0]),
                          slice(j * dl[1], j * dl[1] + st[1] * (ow - 1) + 1, st[1]))
                    wv = w.v[gi * opg:(gi + 1) * opg, :, i, j]
                    we = w.e[gi * opg:(gi + 1) * opg, :, i, j]
                    wu = w.u[gi * opg:(gi + 1) * opg, :, i, j].astype(float)
                    o = slice(gi * opg, (gi + 1) * opg)
                    ein = lambda p, q: np.einsum('nchw,oc->nohw', p, q)
                    y[:, o] += ein(xv[sl], wv)
                    s[:, o] += ein(np.abs(xv[sl]), np.abs(wv))
                    prop[:, o] += ein(np.abs(xv[sl]), we) + ein(xe[sl], np.abs(wv))
                    u[:, o] += ein(xu[sl], np.ones_like(wv)) + ein(np.ones_like(xv[sl]), wu)
    k = cg * kh * kw
    c = N.COMPUTE[x.dt]
    ints = _is_int(x, w) and (b is None or _is_int(b))
    if b is not None:
        bb = b.v.reshape(1, -1, 1, 1)
        y = y + bb
        s = s + np.abs(bb)
        prop = prop + b.e.reshape(1, -1, 1, 1)
        u = u + b.u.reshape(1, -1, 1, 1)
        k += 1
    g = np.where(_sum_exact(s, ints), 0.0, N.sum_growth(k) * N.UNIT[c] * s)
    return _finish('Conv', y, x.dt, prop, (u > 0) | _may_overflow(s, x.dt), g)


def _attrs(node):
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _const_ints(r):
    return [int(t) for t in np.asarray(r.v).reshape(-1)]


def _move(r, f):
    """A data movement op: the same function of value, bound and mask."""
    return R(f(r.v), r.dt, f(r.e), f(r.u))


def _node(node, ins):
    op = node.op_type
    at = _attrs(node)
    x = ins[0] if ins else None
    un = {
        'Abs': (np.abs, None), 'Neg': (np.negative, None), 'Exp': (np.exp, None),
        'Log': (np.log, None), 'Sqrt': (np.sqrt, None),
        'Reciprocal': (lambda a: 1.0 / a, lambda lo, hi: (lo <= 0) & (hi >= 0)),
        'Tanh': (np.tanh, None), 'Sigmoid': (_sigmoid, None),
        'Relu': (lambda a: np.maximum(a, 0.0), None),
        'Softplus': (_softplus, None), 'Erf': (_erf, None),
        'Floor': (np.floor, lambda lo, hi: np.floor(lo) != np.floor(hi)),
        'Ceil': (np.ceil, lambda lo, hi: np.ceil(lo) != np.ceil(hi)),
        'Sign': (np.sign, lambda lo, hi: (lo <= 0) & (hi >= 0)),
        # the limits +-1 at +-inf, not inf/inf (burncc's choice,
        # ARCHITECTURE "Numerics at the edges"; ONNX's formula says NaN)
        'Softsign': (lambda a: np.where(np.isinf(a), np.sign(a), a / (1 + np.abs(a))), None),
        'Identity': (lambda a: a, None),
        'Mish': (lambda a: a * np.tanh(_softplus(a)), None),
    }
    if op in un:
        f, disc = un[op]
        return [_unary(op, f, x, disc)]
    if op in ('Sin', 'Cos'):
        return [_unary(op, np.sin if op == 'Sin' else np.cos, x, lip=1.0)]
    if op == 'LeakyRelu':
        al = at.get('alpha', 0.01)
        return [_unary(op, lambda a: np.where(a < 0, al * a, a), x)]
    if op == 'Elu':
        al = at.get('alpha', 1.0)
        return [_unary(op, lambda a: np.where(a < 0, al * np.expm1(np.minimum(a, 0)), a), x)]
    if op == 'Selu':
        al = at.get('alpha', 1.67326319217681884765625)
        ga = at.get('gamma', 1.05070102214813232421875)
        return [_unary(op, lambda a: ga * np.where(a <= 0, al * np.expm1(np.minimum(a, 0)), a), x)]
    if op in ('HardSigmoid', 'HardSwish'):
        # ONNX defines both through t = alpha x + beta with float
        # attributes (HardSwish: alpha = 1/6 in the compute type: float(1/6)
        # for f32, f16, bf16, 1/6 for f64); an f32 t rounds twice, which
        # the cancellation near t = 0 magnifies.  HardSwish(-inf) is its
        # limit 0, not -inf * 0 (burncc's choice, as Softsign's).
        c = N.COMPUTE[x.dt]
        sixth = 1 / 6 if c == 'f64' else float(np.float32(1 / 6))
        al = at.get('alpha', 0.2) if op == 'HardSigmoid' else sixth
        be = at.get('beta', 0.5) if op == 'HardSigmoid' else 0.5

        def hswish(a):
            t = np.clip(al * a + be, 0, 1)
            return np.where(t == 0, 0.0, a * t)
        f = (lambda a: np.clip(al * a + be, 0, 1)) if op == 'HardSigmoid' else hswish
        y = _unary(op, f, x)
        t = al * x.v + be
        with np.errstate(all='ignore'):
            inner = N.UNIT[c] * (np.abs(al * x.v) + abs(be))
            if op == 'HardSwish':
                inner = np.abs(x.v) * inner
            y.e = y.e + np.where((t > 0) & (t < 1), inner, 0.0)
        return [y]
    if op == 'Clip':
        lo = ins[1].v if len(ins) > 1 and ins[1] is not None else -np.inf
        hi = ins[2].v if len(ins) > 2 and ins[2] is not None else np.inf
        return [_unary(op, lambda a: np.minimum(np.maximum(a, lo), hi), x)]
    if op == 'Cast':
        to = DT[at['to']]
        if to in N.UNIT and x.isfloat():
            y = _finish('Identity', x.v, to, x.e, x.u.copy())
            if N.UNIT[to] > N.UNIT[x.dt]:
                y.e = y.e + N.UNIT[to] * np.abs(y.v) + N.TINY[to] / 2
            return [y]
        raise KeyError('Cast to ' + to)
    if op in ('Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Pow', 'PRelu'):
        a, b = ins
        with np.errstate(all='ignore'):
            av, bv, ae, be = a.v, b.v, a.e, b.e
            u = a.u | b.u
            if op == 'Add':
                y, prop = av + bv, ae + be
            elif op == 'Sub':
                y, prop = av - bv, ae + be
            elif op == 'Mul':
                y, prop = av * bv, np.abs(bv) * ae + np.abs(av) * be + ae * be
            elif op == 'Div':
                y = av / bv
                d = np.abs(bv) - be
                prop = np.where(be > 0, (np.abs(av) * be / np.abs(bv) + ae) / d, ae / np.abs(bv))
                u = u | ((be > 0) & (d <= 0))
                # x / 0 is +-inf or NaN by the sign of x, or 0 / 0: not
                # decided where x's interval holds 0
                u = u | ((bv == 0) & (ae > 0) & (np.abs(av) <= ae))
            elif op in ('Max', 'Min'):
                f = np.maximum if op == 'Max' else np.minimum
                y, prop = f(av, bv), np.maximum(ae, be) + 0 * (av + bv)
            elif op == 'PRelu':
                # the slope broadcasts to X, never X to the slope
                if np.broadcast_shapes(av.shape, bv.shape) != av.shape:
                    raise ValueError('PRelu slope does not broadcast to X')
                y = np.where(av < 0, bv * av, av)
                prop = np.where(av < 0, np.abs(bv) * ae + np.abs(av) * be + ae * be, ae)
                # where x's interval holds 0 a result may take the other
                # branch: both are 0 at x = 0, so it lies within
                # max(|slope|, 1) |x| of 0
                cross = (ae > 0) & (np.abs(av) <= ae)
                prop = np.where(cross, np.abs(y) + np.maximum(np.abs(bv) + be, 1) *
                                (np.abs(av) + ae), prop)
            else:   # Pow: positive base (the generator's contract)
                y = np.power(av, bv)
                prop = np.abs(y) * (np.abs(bv) * ae / np.abs(av) + np.abs(np.log(np.abs(av))) * be)
                u = u | ((ae > 0) & (ae >= np.abs(av)))
            prop = np.where(np.isnan(prop) & ~np.isnan(y), np.inf, prop)
            return [_finish(op, y, a.dt, prop, np.broadcast_to(u, np.shape(y)).copy())]
    if op in ('Greater', 'Less'):
        a, b = ins
        y = a.v > b.v if op == 'Greater' else a.v < b.v
        close = np.abs(a.v - b.v) <= N.SAFETY * (a.e + b.e)
        return [R(y, 'bool', None, a.u | b.u | ((a.e + b.e > 0) & close))]
    if op == 'Where':
        cnd, a, b = ins
        y = np.where(cnd.v, a.v, b.v)
        e = np.where(cnd.v, a.e, b.e)
        u = cnd.u | np.where(cnd.v, a.u, b.u)
        return [R(y, a.dt, e + 0 * y, u | np.zeros(y.shape, bool))]
    if op.startswith('Reduce'):
        if op == 'ReduceSum':
            axes = _const_ints(ins[1]) if len(ins) > 1 and ins[1] is not None else []
        else:
            axes = at.get('axes', [])
        return [_reduce(op, x, axes, at.get('keepdims', 1))]
    if op in ('Softmax', 'LogSoftmax'):
        return [_softmax(op, x, at.get('axis', -1) % x.v.ndim)]
    if op == 'MatMul':
        y, prop, u, g = _matmul(op, ins[0], ins[1], ins[0].dt)
        return [_finish(op, y, ins[0].dt, prop, u, g)]
    if op == 'Gemm':
        a, b = ins[0], ins[1]
        if at.get('transA', 0):
            a = _move(a, lambda t: t.T)
        if at.get('transB', 0):
            b = _move(b, lambda t: t.T)
        al, be = at.get('alpha', 1.0), at.get('beta', 1.0)
        y, prop, u, g = _matmul(op, a, b, a.dt)
        y, prop, g = al * y, abs(al) * prop, abs(al) * g
        if len(ins) > 2 and ins[2] is not None:
            cc = ins[2]
            y = y + be * cc.v
            prop = prop + abs(be) * cc.e
            u = u | cc.u
            g = g + N.UNIT[N.COMPUTE[a.dt]] * np.abs(be * cc.v) * 2
        return [_finish(op, y, a.dt, prop, np.broadcast_to(u, y.shape).copy(), g)]
    if op == 'Conv':
        return [_conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, at)]
    if op == 'Transpose':
        perm = at.get('perm', list(range(x.v.ndim))[::-1])
        return [_move(x, lambda t: np.transpose(t, perm))]
    if op == 'Reshape':
        shape = _const_ints(ins[1])
        shape = [x.v.shape[i] if d == 0 else d for i, d in enumerate(shape)]
        return [_move(x, lambda t: t.reshape(shape))]
    if op == 'Flatten':
        ax = at.get('axis', 1) % (x.v.ndim + 1) if x.v.ndim else 0
        sh = (int(np.prod(x.v.shape[:ax])), int(np.prod(x.v.shape[ax:])))
        return [_move(x, lambda t: t.reshape(sh))]
    if op == 'Unsqueeze':
        axes = _const_ints(ins[1])
        return [_move(x, lambda t: np.expand_dims(t, tuple(axes)))]
    if op == 'Squeeze':
        axes = _const_ints(ins[1])
        return [_move(x, lambda t: np.squeeze(t, tuple(axes)))]
    if op == 'Concat':
        ax = at['axis']
        return [R(np.concatenate([r.v for r in ins], ax), x.dt,
                  np.concatenate([r.e for r in ins], ax),
                  np.concatenate([r.u for r in ins], ax))]
    raise KeyError(op)


def to_f64(a):
    """A float array of any numpy type as float64 (bf16 comes as uint16)."""
    return a.astype(np.float64)


def evaluate(model, feeds):
    """All values of model's graph for the inputs feeds (name -> array)."""
    g = model.graph
    env = {}
    for t in g.initializer:
        a = numpy_helper.to_array(t)
        dt = DT[t.data_type]
        env[t.name] = R(to_f64(a) if dt in N.UNIT else a, dt)
    for i in g.input:
        if i.name in env:
            continue
        dt = DT[i.type.tensor_type.elem_type]
        a = feeds[i.name]
        env[i.name] = R(to_f64(a) if dt in N.UNIT else a, dt)
    for node in g.node:
        ins = [env[n] if n else None for n in node.input]
        outs = _node(node, ins)
        for name, r in zip(node.output, outs):
            env[name] = r
    return env


def compare(got, r):
    """Elements of got (an array of the output's type) that disagree with
    reference r, as a bool mask; uncertain elements never disagree."""
    if not r.isfloat():
        return (got != r.v) & ~r.u
    gv = got.astype(np.float64)
    with np.errstate(invalid='ignore'):
        tol = N.SAFETY * r.e + N.abs_floor(r.dt)
        fin = np.isfinite(r.v)
        ok = np.where(np.isnan(r.v), np.isnan(gv),
                      np.where(fin, np.abs(gv - r.v) <= tol, gv == r.v))
    return ~ok & ~r.u
