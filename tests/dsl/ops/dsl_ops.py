#!/usr/bin/python3
"""dsl_ops.py BURNCC NODE_DIR WORK [--xfail FILE] [--op NAME] [-j N] [--cases N]

Every op of the op table called from the .burn language, checked against
the ONNX path's reference: for each op, up to 3 cases (--cases) of the ONNX node
suite whose model is that op alone (not in tests/conformance/xfail.txt)
are written as a script that calls the op by its DSL name with the case's
inputs as tensor literals, its attributes as keyword arguments and its
optional inputs skipped by keyword, and prints each result with
.tolist(); the printed values must match the case's expected outputs
(dtype's tolerance as `burncc check`: floats rtol 1e-3 atol 1e-5, f16
4e-3/1e-3, bf16 2e-2/1e-2, integers and bool exactly; shapes exactly).

Prints one line per op (PASS, FAIL with the reason, or SKIP: why it has
no case the DSL can express), then a summary.  Exit 1 on a failure not
listed in the xfail file (op names with reasons), or on a listed op that
passes.
"""
import json, math, os, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
import numpy as np
import onnx
from onnx import numpy_helper

args = sys.argv[1:]
if len(args) < 3:
    sys.exit(__doc__)
burncc, node_dir, work = args[:3]
opts = args[3:]
xfail_file = opts[opts.index("--xfail") + 1] if "--xfail" in opts else None
only = opts[opts.index("--op") + 1] if "--op" in opts else None
jobs = int(opts[opts.index("-j") + 1]) if "-j" in opts else 2
per_op = int(opts[opts.index("--cases") + 1]) if "--cases" in opts else 3
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..", "..")
os.makedirs(work, exist_ok=True)

# the DSL's op table: ONNX name -> (snake name, [(input, flags)])
table = {}
for line in open(os.path.join(root, "api", "dsl_ops.def")):
    m = re.match(r'D\((\w+),\s*"(\w+)",\s*"([^"]*)",', line)
    if m:
        ins = [tuple(x.split(":")) for x in m.group(3).split()]
        table[m.group(1)] = (m.group(2), ins)

conf_xfail = set()
for line in open(os.path.join(root, "tests", "conformance", "xfail.txt")):
    if line.strip() and not line.startswith("#"):
        conf_xfail.add(line.split()[0])
expected_fail = {}
if xfail_file:
    for line in open(xfail_file):
        if line.strip() and not line.startswith("#"):
            k, _, why = line.strip().partition(" ")
            expected_fail[k] = why.strip()

DT = {1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64",
      9: "bool", 10: "f16", 11: "f64", 12: "u32", 13: "u64", 16: "bf16"}
MAX_ELEMS = 1 << 16

def lit(x):
    """A number as the DSL writes it."""
    x = float(x)
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INF" if x > 0 else "(-INF)"
    if x == int(x) and abs(x) < 2**53:
        return str(int(x))
    return repr(x)

def nested(a):
    if a.ndim == 0:
        return lit(a)
    return "[" + ", ".join(nested(s) for s in a) + "]"

def tensor_lit(arr, dt):
    a = np.asarray(arr)
    if dt == 16 and a.dtype == np.uint16:    # bf16 as bit patterns
        a = (a.astype(np.uint32) << 16).view(np.float32)
    if a.dtype == np.bool_:
        a = a.astype(np.int64)
    if a.ndim == 0:
        return "tensor(%s, dtype=%s)" % (lit(a), DT[dt])
    return "tensor(%s, dtype=%s)" % (nested(a.astype(np.float64) if a.dtype.kind == "f" else a), DT[dt])

def attr_lit(a):
    t = a.type
    if t == onnx.AttributeProto.INT:
        return lit(a.i)
    if t == onnx.AttributeProto.FLOAT:
        v = lit(a.f)
        return v if not re.fullmatch(r"-?\d+", v) else v + ".0"
    if t == onnx.AttributeProto.STRING:
        s = a.s.decode("utf-8", "replace")
        if any(c in s for c in '"\\\n'):
            return None
        return '"%s"' % s
    if t == onnx.AttributeProto.INTS:
        return "[" + ", ".join(lit(v) for v in a.ints) + "]"
    if t == onnx.AttributeProto.FLOATS:
        return "[" + ", ".join(lit(v) for v in a.floats) + "]"
    return None

def load_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(open(path, "rb").read())
    return t

def case_script(case):
    """(script, expected outputs [(dtype, array)]) or (None, why)."""
    m = onnx.load(os.path.join(node_dir, case, "model.onnx"))
    if len(m.graph.node) != 1:
        return None, "not one node"
    n = m.graph.node[0]
    if n.domain not in ("", "ai.onnx"):
        return None, "domain " + n.domain
    snake, spec = table[n.op_type]
    ds = os.path.join(node_dir, case, "test_data_set_0")
    ins = {}
    for k, vi in enumerate(m.graph.input):
        p = os.path.join(ds, "input_%d.pb" % k)
        if not os.path.exists(p):
            return None, "no input data"
        ins[vi.name] = load_pb(p)
    for t in m.graph.initializer:
        ins[t.name] = t
    parts, kw = [], False
    for k, name in enumerate(n.input):
        if name == "":
            kw = True
            continue
        t = ins.get(name)
        if t is None:
            return None, "input from nowhere"
        if t.data_type not in DT:
            return None, "input dtype %d" % t.data_type
        arr = numpy_helper.to_array(t)
        if arr.size > MAX_ELEMS:
            return None, "inputs too large for a literal"
        val = tensor_lit(arr, t.data_type)
        if kw:
            if k >= len(spec) or spec[k][1].endswith("*"):
                return None, "input %d after a skipped one has no name" % k
            parts.append("%s=%s" % (spec[k][0], val))
        else:
            parts.append(val)
    attrs = []
    for a in n.attribute:
        v = attr_lit(a)
        if v is None:
            return None, "attribute %s cannot be written in the DSL" % a.name
        attrs.append("%s=%s" % (a.name, v))
    nout = len(n.output)
    call = "%s(%s)" % (snake, ", ".join(parts + attrs + (["nout=%d" % nout] if nout > 1 else [])))
    exp = []
    for k in range(nout):
        p = os.path.join(ds, "output_%d.pb" % k)
        if not os.path.exists(p) or n.output[k] == "":
            return None, "output %d not given" % k
        t = load_pb(p)
        if t.data_type not in DT:
            return None, "output dtype %d" % t.data_type
        exp.append((t.data_type, numpy_helper.to_array(t)))
    lines = ["let r = %s;" % call]
    if nout == 1:
        lines.append("print(r.tolist());")
    else:
        for k in range(nout):
            lines.append("print(r[%d].tolist());" % k)
    return "\n".join(lines) + "\n", exp

def parse_vals(text):
    text = text.replace("nan", "NaN").replace("-inf", "-Infinity").replace("inf", "Infinity")
    return json.loads(text)

def close(dt, got, want):
    if dt == 16 and want.dtype == np.uint16:
        want = (want.astype(np.uint32) << 16).view(np.float32)
    got = np.array(got, dtype=np.float64)
    want = np.asarray(want).astype(np.float64)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (list(got.shape), list(want.shape))
    if dt in (1, 11, 10, 16):
        rtol, atol = {1: (1e-3, 1e-5), 11: (1e-3, 1e-5), 10: (4e-3, 1e-3), 16: (2e-2, 1e-2)}[dt]
        ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = got == want
    if not ok.all():
        i = np.argwhere(~ok)[0]
        return "at %s: %r, expected %r" % (list(i), got[tuple(i)], want[tuple(i)])
    return None

def run_case(op, case):
    script, exp = case_script(case)
    if script is None:
        return ("skip", exp)
    path = os.path.join(work, case + ".burn")
    open(path, "w").write(script)
    try:
        r = subprocess.run([burncc, "run", "--no-cache", path], capture_output=True,
                           text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return ("fail", "%s: timed out" % case)
    if r.returncode != 0:
        return ("fail", "%s: %s" % (case, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0]))
    outs = r.stdout.strip().splitlines()
    if len(outs) != len(exp):
        return ("fail", "%s: %d outputs printed, %d expected" % (case, len(outs), len(exp)))
    for k, (dt, want) in enumerate(exp):
        try:
            got = parse_vals(outs[k])
        except ValueError:
            return ("fail", "%s: output %d unreadable: %s" % (case, k, outs[k][:80]))
        why = close(dt, got, want)
        if why:
            return ("fail", "%s: output %d %s" % (case, k, why))
    return ("pass", case)

# cases by op: single-node models, sorted, not expected to fail on the ONNX path
by_op = {op: [] for op in table}
for case in sorted(os.listdir(node_dir)):
    if case in conf_xfail or not os.path.exists(os.path.join(node_dir, case, "model.onnx")):
        continue
    try:
        m = onnx.load(os.path.join(node_dir, case, "model.onnx"), load_external_data=False)
    except Exception:
        continue
    if len(m.graph.node) == 1 and m.graph.node[0].op_type in by_op:
        by_op[m.graph.node[0].op_type].append(case)

def run_op(op):
    if only and op != only:
        return None
    results, skips = [], []
    for case in by_op[op]:
        st, what = run_case(op, case)
        if st == "skip":
            skips.append("%s: %s" % (case, what))
            continue
        results.append((st, what))
        if len(results) == per_op:
            break
    if not results:
        return (op, "SKIP", skips[0] if skips else "no single-op case in the node suite")
    fails = [w for s, w in results if s == "fail"]
    if fails:
        return (op, "FAIL", fails[0])
    return (op, "PASS", ", ".join(w for s, w in results))

with ThreadPoolExecutor(max_workers=jobs) as ex:
    res = [r for r in ex.map(run_op, table) if r]
npass = nfail = nskip = bad = 0
for op, st, why in res:
    note = ""
    if st == "FAIL" and op in expected_fail:
        note = "  (expected: %s)" % expected_fail[op]
    elif st == "FAIL":
        bad = 1
    elif st == "PASS" and op in expected_fail:
        note = "  (UNEXPECTED PASS: remove it from the xfail list)"
        bad = 1
    print("%s %s: %s%s" % (st, op, why, note))
    npass += st == "PASS"
    nfail += st == "FAIL"
    nskip += st == "SKIP"
print("dsl_ops: %d ops pass, %d fail (%d expected), %d have no case the DSL can express"
      % (npass, nfail, sum(1 for op, st, _ in res if st == "FAIL" and op in expected_fail), nskip))
sys.exit(bad)
