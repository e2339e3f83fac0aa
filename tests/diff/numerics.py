"""The numerics policy of docs/NUMERICS.md as numbers: the one place every
comparison of the differential tests takes its tolerances from.

A result is compared with a float64 reference computed op by op (ref.py).
Along with each reference value the evaluator carries an error bound E:
how far a correct float32 (f16, bf16, f64) implementation may land from the
exact value, from

  - the error of the op's inputs, carried through the op (interval ends for
    unary ops, first-order rules for the others, see ref.py), plus
  - the op's own error: its budget in ulps of the type it computes in
    (ULPS below) times |y|, plus the rounding of the stored type, plus
  - for sums of n terms (reductions, MatMul, Gemm, Conv):
    sum_growth(n) * u * sum|terms|, zero when every term is an integer and
    the partial sums stay below 2^24 (exact in f32).

A got value g passes when  |g - ref| <= SAFETY * E + ABS_FLOOR(dtype),
both NaN, or both the same infinity.  Values the model cannot decide
(an input range straddling a discontinuity or the overflow threshold) are
"uncertain" and not compared; ref.py counts them.

Nothing here is tuned per case.  A tolerance is never widened to make a
case pass: a disagreement is a bug in burncc or in this model, and is fixed
as such (docs/NUMERICS.md).
"""
import math

# Unit roundoff (half an ulp at 1.0) of each type a kernel computes or
# stores in.  f16, bf16 and float8 are storage types: kernels compute in
# f32 and round on every store (docs/ARCHITECTURE.md, storage-only types).
UNIT = {
    'f32': 2.0 ** -24,
    'f64': 2.0 ** -53,
    'f16': 2.0 ** -11,
    'bf16': 2.0 ** -8,
}
COMPUTE = {'f32': 'f32', 'f64': 'f64', 'f16': 'f32', 'bf16': 'f32'}

# Smallest positive subnormal of each float type; no target flushes
# subnormals to zero (NUMERICS.md, flush-to-zero), so one of these is the
# absolute floor of a comparison.
TINY = {
    'f32': 2.0 ** -149,
    'f64': 2.0 ** -1074,
    'f16': 2.0 ** -24,
    'bf16': 2.0 ** -133,
}

# Largest finite value: a result beyond it is +-inf (IEEE overflow).
FMAX = {
    'f32': 3.4028234663852886e38,
    'f64': 1.7976931348623157e308,
    'f16': 65504.0,
    'bf16': 3.3895313892515355e38,
}

# Error budget of each op, in ulps of its compute type (1 ulp = 2 u),
# against the exact result of the op on its (exact) inputs.  Correctly
# rounded IEEE operations are 0.5.  Transcendentals: glibc's float
# functions are within 1-2 ulps; burncc's own formulas (sigmoid as
# 1/(1+exp(-x)), tanh, softplus, erf as a rational approximation with
# absolute error < 4e-7: see ABS_ERR) may compose two or three of them.
ULPS = {
    'Add': 0.5, 'Sub': 0.5, 'Mul': 0.5, 'Div': 0.5, 'Sqrt': 0.5,
    'Neg': 0, 'Abs': 0, 'Relu': 0, 'Max': 0, 'Min': 0, 'Where': 0,
    'Floor': 0, 'Ceil': 0, 'Sign': 0, 'Clip': 0, 'Identity': 0,
    'Reciprocal': 0.5, 'LeakyRelu': 0.5, 'PRelu': 0.5,
    'Exp': 2, 'Log': 2, 'Tanh': 4, 'Sigmoid': 4, 'Softplus': 4,
    'Erf': 2, 'Sin': 2, 'Cos': 2, 'Elu': 4, 'Selu': 4, 'Softsign': 2,
    'HardSigmoid': 1.5, 'HardSwish': 2.5, 'Pow': 4, 'Mish': 8,
    # rows of a reduction: the sum's growth term comes on top
    'ReduceSum': 0.5, 'ReduceMean': 1.5, 'ReduceMax': 0, 'ReduceMin': 0,
    'ReduceSumSquare': 1, 'ReduceL2': 1.5, 'ReduceLogSumExp': 4,
    'Softmax': 6, 'LogSoftmax': 6,
    'MatMul': 0.5, 'Gemm': 1.5, 'Conv': 0.5,
    'Cast': 0.5, 'Transpose': 0, 'Reshape': 0, 'Flatten': 0,
    'Squeeze': 0, 'Unsqueeze': 0, 'Concat': 0, 'Slice': 0,
    'Greater': 0, 'Less': 0,
}

# Absolute error of an op on top of its ulps (approximations whose error is
# absolute rather than relative near zero).
ABS_ERR = {'Erf': 4e-7}

# Smallest normal number of each compute type.  The exp-based ops may
# lose the subnormal digits of a result (sigmoid(-90) as 1/(1+exp(90))
# is 0 once exp overflows; exp(-100) from exp2 pieces): an absolute error
# up to this on top of their budget.  Inputs are never flushed, and the
# other ops are exact on subnormals (no flush-to-zero, NUMERICS.md).
NORM_MIN = {'f32': 2.0 ** -126, 'f64': 2.0 ** -1022}
SUBNORMAL_LOSS = ('Exp', 'Sigmoid', 'Softplus', 'Softmax', 'Tanh', 'Erf',
                  'HardSwish', 'Mish', 'Elu', 'Selu', 'Pow', 'ReduceLogSumExp')

# Multiple of the bound E a result may differ by.  The bound is first
# order (no E*E terms, no O(u^2) in the sums), so a constant factor covers
# the rest.  Fixed, for every op and type.
SAFETY = 4.0


def sum_growth(n):
    """Error growth of a sum of n terms in units of u * sum|terms|.

    The textbook bound of recursive summation in any order (Higham,
    Accuracy and Stability, 4.2): (n - 1) u sum|x| to first order, plus one
    rounding for a scaled or fused result.  No assumption that rounding
    errors are random: sums of repeated values round the same way every
    step (a sequential softmax over 2^16 + 1 integers is 2.7e-4 off, 70 u
    times sqrt(n)), and burncc's C target sums sequentially or in 8 x 32
    register tiles.  Sums of integers below 2^24 are exact (ref.py)."""
    return float(max(n, 1))


def abs_floor(dtype):
    """The absolute slack of every comparison of a value of dtype."""
    return 4 * TINY[dtype]
