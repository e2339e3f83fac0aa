"""Op-level sweeps (after ggml's test-backend-ops): each op family over
shapes that cross the C target's vector and tile edges (1, 31, 33, 127,
129, primes, a reduction over 2^16 + 1 elements; MatMul, Gemm and Conv
around the 8 x 32 register tiles), every variant against the float64
reference.  One model per family, one subgraph per shape.
"""
import itertools
import multiprocessing
import os
import shutil
import tempfile
import time

import numpy as np
from onnx import helper as h

import gen

EDGES = [1, 31, 33, 127, 129, 1021]


def fam_pointwise(g, i):
    """Unary and binary ops over lengths around the vector width."""
    ops = ['Exp', 'Log', 'Tanh', 'Sigmoid', 'Erf', 'Sqrt', 'Reciprocal',
           'Relu', 'Sin', 'Floor', 'HardSwish']
    for n in EDGES:
        for op in ops:
            x = g.input((n,), 'f32', 'stress' if op in ('Exp', 'Sigmoid', 'Tanh') else 'normal')
            g.output(g.unary(x, op))
        for op in ['Add', 'Mul', 'Div', 'Max', 'Min', 'Where']:
            x = g.input((3, n), 'f32')
            y = g.input((n,) if op != 'Where' else (3, 1), 'f32',
                        'pos' if op == 'Div' else 'normal')
            if op == 'Where':
                c = g.node('Greater', [x, y], (3, n), 'bool')
                g.output(g.node('Where', [c, x, y], (3, n), 'f32'))
            else:
                g.output(g.node(op, [x, y], (3, n), 'f32'))


def fam_reduce(g, i):
    """Every reduction over rows and columns of edge lengths, and over
    2^16 + 1 elements (integers, so the exact sum is the reference)."""
    ops = ['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin',
           'ReduceSumSquare', 'ReduceL2', 'Softmax', 'LogSoftmax']
    for n in EDGES + [65537]:
        rows = 1 if n > 2000 else 3
        for op in ops:
            for ax in ([1, 0] if rows > 1 else [1]):
                x = g.input((rows, n), 'f32', 'int' if n > 2000 else 'normal')
                if op in ('Softmax', 'LogSoftmax'):
                    y = g.node(op, [x], x.shape, 'f32', axis=ax)
                else:
                    shape = (1, n) if ax == 0 else (rows, 1)
                    if op == 'ReduceSum':
                        y = g.node(op, [x, g.const(np.array([ax]), 'i64')], shape, 'f32', keepdims=1)
                    else:
                        y = g.node(op, [x], shape, 'f32', axes=[ax], keepdims=1)
                g.output(y)


def fam_matmul(g, i):
    """MatMul over M, N, K around the 8 x 32 tile, plus a bias epilogue."""
    for m, n, k in itertools.product([1, 7, 8, 9, 33], [1, 31, 32, 33, 65],
                                     [1, 8, 9, 31, 129]):
        a = g.input((m, k), 'f32')
        b = g.input((k, n), 'f32')
        y = g.node('MatMul', [a, b], (m, n), 'f32')
        if (m + n + k) % 2:
            y = g.node('Add', [y, g.input((n,), 'f32')], (m, n), 'f32')
        g.output(y)


def fam_gemm(g, i):
    """Gemm's transposes, alpha/beta and C broadcasts at tile edges."""
    for (m, n, k), ta, tb in itertools.product(
            [(7, 33, 9), (8, 32, 8), (9, 31, 33), (17, 65, 3), (1, 129, 31)],
            [0, 1], [0, 1]):
        a = g.input((k, m) if ta else (m, k), 'f32')
        b = g.input((n, k) if tb else (k, n), 'f32')
        c = g.input((n,) if (ta + tb) % 2 else (m, 1), 'f32')
        g.output(g.node('Gemm', [a, b, c], (m, n), 'f32', transA=ta, transB=tb,
                        alpha=0.5, beta=2.0))


def fam_conv(g, i):
    """Conv with output channels and output pixels around the tile."""
    for co, (hh, ww), (kh, kw), st, grp in itertools.product(
            [1, 7, 8, 9, 17], [(1, 31), (4, 8), (5, 33), (9, 9)],
            [(1, 1), (3, 3)], [1, 2], [1, 'dw']):
        ci = 3 if grp == 1 else co
        group = 1 if grp == 1 else co
        pads = [kh // 2, kw // 2] * 2
        x = g.input((1, ci, hh, ww), 'f32')
        w = g.input((co, ci // group, kh, kw), 'f32')
        b = g.input((co,), 'f32')
        oh = (hh + 2 * (kh // 2) - kh) // st + 1
        ow = (ww + 2 * (kw // 2) - kw) // st + 1
        y = g.node('Conv', [x, w, b], (1, co, oh, ow), 'f32', group=group, pads=pads,
                   strides=[st, st], kernel_shape=[kh, kw])
        g.output(g.node('Relu', [y], y.shape, 'f32'))


FAMILIES = [fam_pointwise, fam_reduce, fam_matmul, fam_gemm, fam_conv]


def one(args):
    import run as runmod
    build, fi = args
    fam = FAMILIES[fi]
    rng = np.random.default_rng(1000 + fi)
    g = gen.G(rng, 's_')
    g.range = 'normal'
    fam(g, fi)
    graph = h.make_graph(g.nodes, fam.__name__, g.inputs, g.outputs, g.inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', gen.OPSET)])
    model.ir_version = 8
    env = runmod.Env(build)
    wd = tempfile.mkdtemp(prefix='burncc-sweep-')
    try:
        res = runmod.run_variants(env, wd, model, g.feeds)
        bad = runmod.disagreements(model, g.feeds, res)
    finally:
        shutil.rmtree(wd, ignore_errors=True)
    return fam.__name__, len(g.outputs), bad


def main(a, runmod):
    t0 = time.time()
    rc, total = 0, 0
    jobs = [(a.build, i) for i in range(len(FAMILIES))]
    with multiprocessing.Pool(a.jobs) as pool:
        for name, n, bad in pool.imap(one, jobs):
            total += n
            print('%s %s: %d outputs%s' % ('FAIL' if bad else 'PASS', name, n,
                  ''.join('\n  %s %s: %s' % (v, o, m) for o, v, m in bad[:8])))
            rc |= bool(bad)
    print('sweep: %d outputs in %d families, %.0f s' % (total, len(FAMILIES), time.time() - t0))
    return rc
