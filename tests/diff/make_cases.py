#!/usr/bin/python3
"""Write the regression cases of tests/diff/cases: each disagreement the
differential tests found, as the minimal graph the reducer left (tidied by
hand into a few lines here), with inputs that show it.  run.py's `cases`
mode checks them against the float64 reference; the ones in xfail.txt are
open bugs and must still fail.  Run with Debian's python3 (onnx, numpy);
the cases are checked in.
"""
import os
import shutil
import sys

import numpy as np
from onnx import helper as h, TensorProto as T

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run   # noqa: E402

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cases')
TY = {np.float32: T.FLOAT, np.float16: T.FLOAT16, np.float64: T.DOUBLE}


def case(name, note, nodes, feeds, outs):
    """feeds: name -> array (graph inputs); outs: [(name, np type, shape)]."""
    g = h.make_graph(nodes, name,
                     [h.make_tensor_value_info(k, TY[v.dtype.type], list(v.shape))
                      for k, v in feeds.items()],
                     [h.make_tensor_value_info(n, TY[t], list(s)) for n, t, s in outs])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)], producer_name='burncc-diff')
    m.ir_version = 8
    d = os.path.join(here, name)
    shutil.rmtree(d, ignore_errors=True)
    run.write_case(d, m, feeds, note)


def f32(*x):
    return np.array(x, np.float32)


def main():
    os.makedirs(here, exist_ok=True)
    # -- found by the random graphs (seeds 1, 3, 4: fused ReduceLogSumExp)
    case('lse_fused_overflow',
         'ReduceLogSumExp fused with its epilogue loses the max shift: '
         'log(sum(exp(x))) overflows for x near 100 (got inf, expected 100.69); '
         'unfused it is right',
         [h.make_node('ReduceLogSumExp', ['x'], ['r'], axes=[1], keepdims=1),
          h.make_node('Add', ['x', 'r'], ['y'])],
         {'x': f32(100, 99, 90, -3).reshape(1, 4)}, [('y', np.float32, (1, 4))])
    # -- Softplus as log(exp(x) + 1) (seed 1 g78, g193)
    case('softplus_overflow',
         'Softplus(x) = log(exp(x)+1) overflows for x > 88.7 (got inf, expected x)',
         [h.make_node('Softplus', ['x'], ['y'])],
         {'x': f32(89, 100, 1000, 3e38)}, [('y', np.float32, (4,))])
    case('softplus_underflow',
         'Softplus(x) = log(exp(x)+1) is 0 for x < -17 where it is exp(x) '
         '(got 0, expected 5.1e-12 at x = -26)',
         [h.make_node('Softplus', ['x'], ['y'])],
         {'x': f32(-26, -20, -40, -80)}, [('y', np.float32, (4,))])
    # -- Elu/Selu as alpha*(exp(x)-1) (seed 1 g188)
    case('selu_near_zero',
         'Selu(x) for small negative x as gamma*alpha*(exp(x)-1) cancels: '
         '44 ulp at x = -0.0083 (expm1 is exact there)',
         [h.make_node('Selu', ['x'], ['y'])],
         {'x': f32(-0.00829395, -1e-4, -3e-6, -0.02)}, [('y', np.float32, (4,))])
    case('elu_near_zero',
         'Elu(x) for small negative x as alpha*(exp(x)-1) cancels '
         '(thousands of ulps at x = -1e-5)',
         [h.make_node('Elu', ['x'], ['y'], alpha=1.0)],
         {'x': f32(-1e-5, -1e-4, -3e-3, -0.02)}, [('y', np.float32, (4,))])
    # -- f16 Conv (seed 1 g75)
    rng = np.random.default_rng(75)
    case('conv_f16_accumulates_in_f16',
         'f16 Conv accumulates in the f16 output buffer, rounding every '
         'partial sum (0.5% off for 8 channels in seed 1 g75; here 256 '
         'channels); kernels should accumulate in f32 and round once',
         [h.make_node('Conv', ['x', 'w', 'b'], ['y'], kernel_shape=[1, 1])],
         {'x': rng.uniform(0, 8, (1, 256, 3, 3)).astype(np.float16),
          'w': rng.uniform(0, 1, (2, 256, 1, 1)).astype(np.float16),
          'b': f32(0.8535, 0.9502).astype(np.float16)},
         [('y', np.float16, (1, 2, 3, 3))])
    # -- found by the random graphs, seed 4 graph g192 (reduced)
    case('cast_f16_of_fused_row',
         'A Cast to f16 of a reduction row inside a fused group does not '
         'compile: "kir k_fused_reduce: bad var row dtype" (fused only)',
         [h.make_node('ReduceSumSquare', ['x'], ['r'], axes=[0, 1], keepdims=1),
          h.make_node('Cast', ['r'], ['h'], to=T.FLOAT16),
          h.make_node('Cast', ['h'], ['f'], to=T.FLOAT),
          h.make_node('Add', ['f', 'b'], ['y'])],
         {'x': f32(1.5, -2).reshape(1, 2, 1, 1), 'b': f32(0.25).reshape(1, 1, 1, 1)},
         [('y', np.float32, (1, 1, 1, 1))])
    # -- passing guards: what the reference had to learn, kept as cases
    # (the disagreements of diff_random on the merged main, 2026-12-01:
    # each was the reference's error, fixed in ref.py)
    case('hardswish_f64',
         'HardSwish on f64 takes alpha = 1/6 in f64, not float(1/6) '
         '(seeds 4, 6, 8-10, 12, 14: the reference took float(1/6))',
         [h.make_node('HardSwish', ['x'], ['y'])],
         {'x': np.array([-2.015421943, -0.7, 0.291666667, 1.2, 2.9], np.float64)},
         [('y', np.float64, (5,))])
    inf = np.inf
    case('softsign_hardswish_at_inf',
         'Softsign, HardSwish and HardSigmoid take their limits at +-inf '
         '(burncc\'s choice; ONNX\'s formulas give NaN), f32 and f16 (where '
         'exp overflows first), and keep NaN (seeds 7, 10, 12: the reference '
         'said NaN, and its HardSigmoid bound was NaN at inf)',
         [h.make_node('Softsign', ['x'], ['a']), h.make_node('HardSwish', ['x'], ['b']),
          h.make_node('HardSigmoid', ['x'], ['c'], alpha=0.25, beta=0.5),
          h.make_node('Exp', ['e'], ['ee']), h.make_node('Softsign', ['ee'], ['d']),
          h.make_node('Neg', ['ee'], ['ne']), h.make_node('HardSwish', ['ne'], ['f'])],
         {'x': f32(inf, -inf, np.nan, 3e38, -3e38, 0, -2.5),
          'e': np.array([12, -3, 11.5], np.float16)},
         [('a', np.float32, (7,)), ('b', np.float32, (7,)), ('c', np.float32, (7,)),
          ('d', np.float16, (3,)), ('f', np.float16, (3,))])
    case('softmax_far_below_max',
         'Softmax of values 64 and 86 below the row max: x - max rounds in '
         'f32 before exp, 65 ulps of the result (seeds 9, 63: the reference '
         'left that rounding out)',
         [h.make_node('Softmax', ['x'], ['y'], axis=0)],
         {'x': f32(36.05957, -28.338696, -50.43706).reshape(3, 1)},
         [('y', np.float32, (3, 1))])
    case('l2_of_rounding_error',
         'ReduceL2 of a rounding error (x - bf16(x), reference value 0): '
         'the square of the input bound is all of the result\'s bound '
         '(seed 53: the reference carried only 2|x|e, 0 at x = 0)',
         [h.make_node('Cast', ['x'], ['b'], to=T.BFLOAT16),
          h.make_node('Cast', ['b'], ['f'], to=T.FLOAT),
          h.make_node('Sub', ['f', 'x'], ['d']),
          h.make_node('ReduceL2', ['d'], ['r'], axes=[0], keepdims=1),
          h.make_node('Mul', ['x', 'r'], ['y'])],
         {'x': f32(2.2036786)}, [('y', np.float32, (1,))])
    case('prelu_across_zero',
         'PRelu of a value whose bound holds 0 (a bf16 rounding error, '
         'reference value 0) may take the slope branch (seed 99: the '
         'reference carried only the branch of the reference value)',
         [h.make_node('Cast', ['x'], ['b'], to=T.BFLOAT16),
          h.make_node('Cast', ['b'], ['f'], to=T.FLOAT),
          h.make_node('Sub', ['f', 'x'], ['d']),
          h.make_node('PRelu', ['d', 's'], ['y'])],
         {'x': f32(1.01, 1.006, 3.3), 's': f32(1000)}, [('y', np.float32, (3,))])
    case('div_by_zero_of_near_zero',
         'x / 0 where x may be 0 (sigmoid(-100) = 3.7e-44, which the exp-based '
         'ops may flush to 0): -inf or NaN, not decided (seeds 9, 57: the '
         'reference said -inf)',
         [h.make_node('Sigmoid', ['x'], ['s']), h.make_node('Div', ['s', 'z'], ['y'])],
         {'x': f32(-100, 7, -3e-39), 'z': f32(-0.0)}, [('y', np.float32, (3,))])
    case('softmax_of_rounded_huge',
         'Softmax of 1e20 + 65504 and 1e20 - 65504: equal in f32 (0.5 each), '
         '1 and 0 in f64; an input bound of 8.8e12 is far from linear '
         '(seed 37: the reference carried y (dx + max dx), 0 at y = 0)',
         [h.make_node('Sub', ['x', 'b'], ['d']),
          h.make_node('Softmax', ['d'], ['y'], axis=0)],
         {'x': f32(65504, -65504, 3).reshape(3, 1), 'b': f32(-1e20)},
         [('y', np.float32, (3, 1))])
    case('sigmoid_tails',
         'Sigmoid far out in both tails (no cancellation in 1 + tanh)',
         [h.make_node('Sigmoid', ['x'], ['y'])],
         {'x': f32(-29, -77, -87, 20, 89, -0.0)}, [('y', np.float32, (6,))])
    case('log_of_underflowed_product',
         'Log of a product that underflows to -0 is -inf, not NaN',
         [h.make_node('Mul', ['a', 'b'], ['p']), h.make_node('Log', ['p'], ['y'])],
         {'a': f32(3e-39, -3e-39, 1e-30), 'b': f32(-3e-39, -3e-39, 1e-30)},
         [('y', np.float32, (3,))])
    case('nan_propagation',
         'NaN propagates through Max, Min, Relu, Clip and ReduceMax, as in '
         'ONNX and NumPy (fmaxf and PTX max.f32 would drop it)',
         [h.make_node('Max', ['x', 'z'], ['a']), h.make_node('Min', ['z', 'x'], ['b']),
          h.make_node('Relu', ['x'], ['c']), h.make_node('Clip', ['x', 'z'], ['d']),
          h.make_node('ReduceMax', ['x'], ['e'], axes=[0], keepdims=1),
          h.make_node('Exp', ['x'], ['x2']),
          h.make_node('ReduceMin', ['x2'], ['f'], axes=[0], keepdims=0)],
         {'x': f32(1, np.nan, -2, 3), 'z': f32(0)},
         [('a', np.float32, (4,)), ('b', np.float32, (4,)), ('c', np.float32, (4,)),
          ('d', np.float32, (4,)), ('e', np.float32, (1,)), ('f', np.float32, ())])


if __name__ == '__main__':
    main()
