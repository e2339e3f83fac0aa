#!/usr/bin/python3
"""Write tests/gemm/cases: models whose GEMMs take each path of the CPU
GEMM core (passes/ops_linalg.c: B in panels packed at compile time,
copied at run time, written so by im2col; A in panels; blocks of rows with
rest rows and rest columns; fused epilogues) and MaxPool's NaN-propagating max, in the
ONNX node-test layout `burncc check` reads.  References are numpy in
float64, rounded to float32.  Run with Debian's python3 (onnx, numpy); the
cases are checked in.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cases')
rng = np.random.default_rng(13)


def rnd(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def case(name, nodes, feeds, consts, outs):
    """feeds: graph inputs; consts: initializers; outs: name -> reference."""
    g = h.make_graph(nodes, name,
                     [h.make_tensor_value_info(k, T.FLOAT, list(v.shape))
                      for k, v in feeds.items()],
                     [h.make_tensor_value_info(k, T.FLOAT, list(v.shape))
                      for k, v in outs.items()],
                     initializer=[nh.from_array(v, k) for k, v in consts.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)], producer_name='burncc-test')
    m.ir_version = 8
    d = os.path.join(here, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    onnx.save(m, os.path.join(d, 'model.onnx'))
    for i, (k, v) in enumerate(feeds.items()):
        with open(os.path.join(d, 'test_data_set_0', 'input_%d.pb' % i), 'wb') as f:
            f.write(nh.from_array(v, k).SerializeToString())
    for i, (k, v) in enumerate(outs.items()):
        with open(os.path.join(d, 'test_data_set_0', 'output_%d.pb' % i), 'wb') as f:
            f.write(nh.from_array(v.astype(np.float32), k).SerializeToString())


def f64(x):
    return x.astype(np.float64)


def conv2d(x, w, b, pad):
    n, c, hh, ww = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(f64(x), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = hh + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum('nchw,mc->nmhw', xp[:, :, i:i + oh, j:j + ow], f64(w[:, :, i, j]))
    return y + f64(b)[None, :, None, None]


def conv_ref(x, w, b, strides, pads, dil, group=1):
    """Conv in float64: pads = [top, left, bottom, right]."""
    n, c, hh, ww = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(f64(x), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (hh + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (ww + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // strides[1] + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                r, q = i * dil[0], j * dil[1]
                win = xp[:, g * cg:(g + 1) * cg, r:r + strides[0] * (oh - 1) + 1:strides[0],
                         q:q + strides[1] * (ow - 1) + 1:strides[1]]
                y[:, g * mg:(g + 1) * mg] += np.einsum('nchw,mc->nmhw', win,
                                                       f64(w[g * mg:(g + 1) * mg, :, i, j]))
    if b is not None:
        y += f64(b)[None, :, None, None]
    return y


def maxpool(x, k, s, ceil):
    n, c, hh, ww = x.shape
    def out(i):
        o = ((i - k + s - 1) // s if ceil else (i - k) // s) + 1
        return o - 1 if ceil and (o - 1) * s >= i else o
    oh, ow = out(hh), out(ww)
    y = np.full((n, c, oh, ow), -np.inf, np.float32)
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * s:i * s + k, j * s:j * s + k]
            nan = np.isnan(win).any(axis=(2, 3))
            y[:, :, i, j] = np.where(nan, np.nan, np.nanmax(np.where(np.isnan(win), -np.inf, win),
                                                             axis=(2, 3)))
    return y


def main():
    # B known at run time, large enough to be copied into panels: 43 rows
    # (5 tiles and 3 rest rows), 100 columns (3 panels and 4 rest)
    a, b = rnd(43, 70), rnd(70, 100)
    case('matmul_b_runtime', [h.make_node('MatMul', ['a', 'b'], ['y'])],
         {'a': a, 'b': b}, {}, {'y': f64(a) @ f64(b)})
    # B constant: panels at compile time; A with a batch dim folded into M
    a, b = rnd(2, 43, 70), rnd(70, 100)
    case('matmul_b_const', [h.make_node('MatMul', ['a', 'b'], ['y'])],
         {'a': a}, {'b': b}, {'y': f64(a) @ f64(b)})
    # fewer rows than a tile: wider panels; a fused Relu
    a, b = rnd(3, 70), rnd(70, 150)
    case('matmul_b_const_few_rows', [h.make_node('MatMul', ['a', 'b'], ['t']),
                                     h.make_node('Relu', ['t'], ['y'])],
         {'a': a}, {'b': b}, {'y': np.maximum(f64(a) @ f64(b), 0)})
    # batched B (not copied: the batch loop runs on threads)
    a, b = rnd(2, 20, 30), rnd(2, 30, 40)
    case('matmul_batched', [h.make_node('MatMul', ['a', 'b'], ['y'])],
         {'a': a, 'b': b}, {}, {'y': f64(a) @ f64(b)})
    # Gemm, transB with B at run time (copied from its transposed strides),
    # alpha, beta and a row of C
    a, b, c = rnd(37, 50), rnd(90, 50), rnd(90)
    case('gemm_transb_runtime',
         [h.make_node('Gemm', ['a', 'b', 'c'], ['y'], transB=1, alpha=0.5, beta=2.0)],
         {'a': a, 'b': b, 'c': c}, {}, {'y': 0.5 * f64(a) @ f64(b).T + 2 * f64(c)})
    # Gemm, transA and a constant transB (transposed, then packed) and a
    # constant C, and a fused Sigmoid
    a, b, c = rnd(50, 37), rnd(90, 50), rnd(37, 90)
    case('gemm_const_transab',
         [h.make_node('Gemm', ['a', 'b', 'c'], ['t'], transA=1, transB=1),
          h.make_node('Sigmoid', ['t'], ['y'])],
         {'a': a}, {'b': b, 'c': c},
         {'y': 1 / (1 + np.exp(-(f64(a).T @ f64(b).T + f64(c))))})
    # pointwise Conv: constant weights in A panels, X copied into panels
    x, w, bias = rnd(1, 24, 9, 9), rnd(40, 24, 1, 1), rnd(40)
    case('conv_pointwise', [h.make_node('Conv', ['x', 'w', 'b'], ['t']),
                            h.make_node('Relu', ['t'], ['y'])],
         {'x': x}, {'w': w, 'b': bias}, {'y': np.maximum(conv2d(x, w, bias, 0), 0)})
    # 3x3 Conv with padding (the implicit GEMM; im2col with the step
    # `im2col`): 19 output channels (2 tiles and 3 rest rows), two images
    x, w, bias = rnd(2, 5, 11, 13), rnd(19, 5, 3, 3), rnd(19)
    case('conv_3x3_pads', [h.make_node('Conv', ['x', 'w', 'b'], ['t'], pads=[1, 1, 1, 1]),
                           h.make_node('Relu', ['t'], ['y'])],
         {'x': x}, {'w': w, 'b': bias}, {'y': np.maximum(conv2d(x, w, bias, 1), 0)})
    # MaxPool 3x3 stride 2, ceil_mode (SqueezeNet's), with NaNs
    x = rnd(1, 3, 14, 15)
    x[0, 1, 4, 5] = np.nan
    x[0, 2, 13, 14] = np.nan
    case('maxpool_ceil_nan',
         [h.make_node('MaxPool', ['x'], ['y'], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
         {'x': x}, {}, {'y': maxpool(x, 3, 2, True)})
    # more rows than two blocks (tune.gemm_mc): blocks of rows are the
    # parallel loop (the last block shorter, 6 rest rows); a fused Relu
    a, b = rnd(150, 20), rnd(20, 70)
    case('matmul_row_blocks', [h.make_node('MatMul', ['a', 'b'], ['t']),
                               h.make_node('Relu', ['t'], ['y'])],
         {'a': a, 'b': b}, {}, {'y': np.maximum(f64(a) @ f64(b), 0)})

    # the implicit GEMM (lower_conv_igemm): padded phase planes read in
    # rows of a taps table, odd shapes.  Stride 2, asymmetric pads, 3
    # channels, 13 outputs (a tile and 5 rest rows), two images, fused Relu
    x, w, bias = rnd(2, 3, 17, 19), rnd(13, 3, 3, 3), rnd(13)
    ref = conv_ref(x, w, bias, [2, 2], [1, 0, 2, 1], [1, 1])
    case('conv_implicit_s2_pads',
         [h.make_node('Conv', ['x', 'w', 'b'], ['t'], strides=[2, 2], pads=[1, 0, 2, 1]),
          h.make_node('Relu', ['t'], ['y'])],
         {'x': x}, {'w': w, 'b': bias}, {'y': np.maximum(ref, 0)})
    # dilations 2 and 3, a 3x2 kernel, no bias, 7 channels, 21 outputs
    x, w = rnd(1, 7, 15, 12), rnd(21, 7, 3, 2)
    case('conv_implicit_dilated',
         [h.make_node('Conv', ['x', 'w'], ['y'], dilations=[2, 3], pads=[2, 1, 1, 2])],
         {'x': x}, {'w': w}, {'y': conv_ref(x, w, None, [1, 1], [2, 1, 1, 2], [2, 3])})
    # strides 3 x 2 with dilation 2 (phases of the dilated taps), 9 outputs
    x, w, bias = rnd(1, 5, 23, 20), rnd(9, 5, 3, 3), rnd(9)
    case('conv_implicit_s3_dil2',
         [h.make_node('Conv', ['x', 'w', 'b'], ['y'], strides=[3, 2], dilations=[2, 2],
                      pads=[3, 3, 3, 3])],
         {'x': x}, {'w': w, 'b': bias},
         {'y': conv_ref(x, w, bias, [3, 2], [3, 3, 3, 3], [2, 2])})
    # 5x5, 17 channels, 37 outputs over 40x40 (several panels and a
    # rest); multiples of 1/4 below 1, so every partial sum is exact in f32
    # (K = 425 sums of normal values cancel to below the tolerance)
    def quarters(*shape):
        return (rng.integers(-3, 4, shape) / 4).astype(np.float32)
    x, w, bias = quarters(1, 17, 40, 40), quarters(37, 17, 5, 5), quarters(37)
    case('conv_implicit_5x5',
         [h.make_node('Conv', ['x', 'w', 'b'], ['y'], pads=[2, 2, 2, 2])],
         {'x': x}, {'w': w, 'b': bias},
         {'y': conv_ref(x, w, bias, [1, 1], [2, 2, 2, 2], [1, 1])})
    # groups: not a GEMM (the direct loops), checked beside the others
    x, w, bias = rnd(1, 6, 9, 11), rnd(10, 3, 3, 3), rnd(10)
    case('conv_groups_s2',
         [h.make_node('Conv', ['x', 'w', 'b'], ['y'], strides=[2, 2], pads=[1, 1, 1, 1],
                      group=2)],
         {'x': x}, {'w': w, 'b': bias},
         {'y': conv_ref(x, w, bias, [2, 2], [1, 1, 1, 1], [1, 1], group=2)})
    # pointwise Conv with few rows (20 <= tune.gemm_pack_tiles * gemm_mr):
    # only the last panel of X (15 of 143 columns, padded to 16) is copied,
    # the full panels are read from X; 2 tiles and 4 rest rows, fused Relu
    x, w, bias = rnd(1, 37, 11, 13), rnd(20, 37, 1, 1), rnd(20)
    case('conv_pointwise_few_rows', [h.make_node('Conv', ['x', 'w', 'b'], ['t']),
                                     h.make_node('Relu', ['t'], ['y'])],
         {'x': x}, {'w': w, 'b': bias}, {'y': np.maximum(conv2d(x, w, bias, 0), 0)})

if __name__ == '__main__':
    main()
