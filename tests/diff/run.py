#!/usr/bin/python3
"""Differential tests: every graph compiled seven ways, each result compared
with a float64 reference (docs/NUMERICS.md).

  run.py BUILD random [--graphs N] [--per-model K] [--seed S] [--jobs J]
                      [--out DIR] [--time-limit SEC] [--gpu-every M]
  run.py BUILD sweep  [--jobs J]
  run.py BUILD cases  DIR [--xfail FILE]

The seven ways ("variants"): generated C, fused (`burncc model.onnx`) and
one kernel per node (`--no-fuse`), built with $CC and $BURNCC_CFLAGS
(default -O1, as burncc check); the same two kernel programs run by the
kernel-IR interpreter (BUILD/tests/diff_interp); and the fused program
lowered for the gpu target (no renderer yet) run by the interpreter; the
fused and unfused programs through the llvm target's JIT.  The reference is ref.py, the
tolerances numerics.py: one model, no per-case knobs.

random: N graphs from seeds S, S+1, ... packed K to a model (gen.py), so
one compile checks K graphs; the gpu way runs on every M-th model only
(default every one: the interpreter starts a thread per simulated GPU
thread, and that way alone costs more than the other four together).  A model that disagrees is split into its
subgraphs, and each failing subgraph is reduced (outputs dropped, nodes
cut into inputs holding their reference values, inputs made smaller one
dimension at a time) to a minimal case folder under --out (default BUILD/diff-failures), ready to become a
regression case in tests/diff/cases.
sweep: the op-level sweeps of sweep.py.
cases: every case folder in DIR (model.onnx + test_data_set_0); the ones
named in --xfail must fail (known bugs), the others must pass.

Exit status 0 when everything agrees (and every xfail fails).
"""
import argparse
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import warnings

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref      # noqa: E402
import gen      # noqa: E402

# overflow, NaN and inf are what the tests are about: no warnings for them
np.seterr(all='ignore')
warnings.filterwarnings('ignore', category=RuntimeWarning)

# interp-gpu: the kernels as lowered and scheduled for the gpu target
# (its tiles and limits), which has no renderer yet, run by the interpreter
# llvm-*: the llvm target's JIT in process (diff_interp --backend llvm);
# skipped where burncc is built without it (diff_interp exits 77)
# cuda-*: the cuda target on the GPU (diff_interp --backend cuda), only when
# asked for: $BURNCC_DIFF_VARIANTS, a comma-separated list, replaces the
# default seven (e.g. cuda-fused,cuda-nofuse on the GPU machine);
# vulkan-*: the vulkan target (lavapipe here), likewise only when asked for
VARIANTS = ['c-fused', 'c-nofuse', 'interp-fused', 'interp-nofuse', 'interp-gpu',
            'llvm-fused', 'llvm-nofuse']
ALL_VARIANTS = VARIANTS + ['cuda-fused', 'cuda-nofuse', 'vulkan-fused', 'vulkan-nofuse']
if os.environ.get('BURNCC_DIFF_VARIANTS'):
    VARIANTS = os.environ['BURNCC_DIFF_VARIANTS'].split(',')
    for _v in VARIANTS:
        if _v not in ALL_VARIANTS:
            sys.exit('BURNCC_DIFF_VARIANTS: unknown variant %r (known: %s)'
                     % (_v, ', '.join(ALL_VARIANTS)))

HARNESS = r'''
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include "model.h"
static void *slurp(const char *p, int64_t want) {
  FILE *f = fopen(p, "rb"); char *b = calloc(1, want + 16);
  if (!f || !b || (want && fread(b, 1, want, f) != (size_t)want)) exit(11);
  fclose(f); return b; }
int main(int argc, char **argv) {
  int nin = atoi(argv[1]), nout = atoi(argv[2]), i; char p[4096];
  void **in = calloc(nin + 1, sizeof *in), **out = calloc(nout + 1, sizeof *out);
  char *arena = malloc(MODEL_ARENA_BYTES + 2 * MODEL_ARENA_ALIGN);
  if (!arena) return 13;
  arena += MODEL_ARENA_ALIGN - (uintptr_t)arena % MODEL_ARENA_ALIGN;
  (void)argc;
  for (i = 0; i < nin; i++) { snprintf(p, sizeof p, "%s/in%d.bin", argv[3], i);
    in[i] = slurp(p, model_inputs[i].bytes); }
  for (i = 0; i < nout; i++) out[i] = calloc(1, model_outputs[i].bytes + 16);
  if (model_run_v((const void *const *)in, out, arena)) return 14;
  for (i = 0; i < nout; i++) { FILE *f; snprintf(p, sizeof p, "%s/out%d.bin", argv[4], i);
    f = fopen(p, "wb");
    if (!f || fwrite(out[i], 1, model_outputs[i].bytes, f) != (size_t)model_outputs[i].bytes) return 15;
    fclose(f); }
  return 0; }
'''


class Env:
    def __init__(self, build):
        self.burncc = os.path.join(build, 'burncc')
        self.interp = os.path.join(build, 'tests', 'diff_interp')
        self.cc = os.environ.get('CC') or 'cc'
        self.cflags = (os.environ.get('BURNCC_CFLAGS') or '-O1').split()
        self.variants = VARIANTS


def np_of(dt):
    return {'f32': np.float32, 'f64': np.float64, 'f16': np.float16,
            'bf16': np.uint16, 'i64': np.int64, 'bool': np.bool_}[dt]


def io_types(model):
    ins = [(i.name, ref.DT[i.type.tensor_type.elem_type],
            tuple(d.dim_value for d in i.type.tensor_type.shape.dim))
           for i in model.graph.input]
    outs = [(o.name, ref.DT[o.type.tensor_type.elem_type],
             tuple(d.dim_value for d in o.type.tensor_type.shape.dim))
            for o in model.graph.output]
    return ins, outs


def sh(cmd, cwd=None, timeout=600):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.returncode, p.stdout.decode(errors='replace')


def run_variants(env, wd, model, feeds, variants=VARIANTS):
    """Run model on feeds every way; returns {variant: [arrays] or error}."""
    os.makedirs(wd, exist_ok=True)
    mpath = os.path.join(wd, 'model.onnx')
    onnx.save(model, mpath)
    ins, outs = io_types(model)
    for k, (name, dt, shape) in enumerate(ins):
        np.ascontiguousarray(feeds[name].astype(np_of(dt))).tofile(
            os.path.join(wd, 'in%d.bin' % k))
    res = {}
    for var in variants:
        od = os.path.join(wd, var)
        os.makedirs(od, exist_ok=True)
        nf = ['--no-fuse'] if var.endswith('nofuse') else []
        if var.startswith('c-'):
            rc, log = sh([env.burncc] + nf + [mpath, '-o', os.path.join(od, 'model.c')])
            if rc == 0:
                with open(os.path.join(od, 'harness.c'), 'w') as f:
                    f.write(HARNESS)
                rc, log = sh([env.cc, '-std=c99'] + env.cflags +
                             ['-Wall', '-Werror', '-o', 'model', 'model.c', 'harness.c', '-lm'], cwd=od)
                if rc:
                    log = 'generated C does not build: ' + log
            if rc == 0:
                rc, log = sh(['./model', str(len(ins)), str(len(outs)), wd, od], cwd=od)
                if rc:
                    log = 'run: exit %d %s' % (rc, log)
        else:
            tg = ['--target', 'gpu'] if var.endswith('gpu') else []
            if var.split('-')[0] in ('llvm', 'cuda', 'vulkan'):
                tg = ['--backend', var.split('-')[0]]
            rc, log = sh([env.interp] + nf + tg + [mpath, wd, od])
            if rc == 77:
                continue
        if rc:
            res[var] = 'error: ' + log.strip().split('\n')[0][:300]
            continue
        arrs = []
        for k, (name, dt, shape) in enumerate(outs):
            a = np.fromfile(os.path.join(od, 'out%d.bin' % k), dtype=np_of(dt))
            arrs.append(a.reshape(shape))
        res[var] = arrs
    return res


def disagreements(model, feeds, res):
    """[(output name, variant, message)] for every output of every variant
    that differs from the reference."""
    env = ref.evaluate(model, feeds)
    ins, outs = io_types(model)
    bad = []
    for var, r in res.items():
        if isinstance(r, str):
            bad.append((None, var, r))
            continue
        for k, (name, dt, shape) in enumerate(outs):
            rr = env[name]
            got = r[k]
            if dt == 'bf16':
                continue
            m = ref.compare(got, rr)
            if m.any():
                i = tuple(np.argwhere(m)[0])
                bad.append((name, var, '%d of %d differ; first at %s: got %.9g, '
                            'expected %.9g (bound %.3g)' % (
                                int(m.sum()), m.size, list(map(int, i)), float(got[i]),
                                float(rr.v[i]), float(rr.e[i]))))
    return bad


# ---- subgraphs and reduction ----------------------------------------------

def submodel(model, feeds, keep_out):
    """The part of model that computes the outputs keep_out (names)."""
    g = model.graph
    need = set(keep_out)
    nodes = []
    for n in reversed(g.node):
        if any(o in need for o in n.output):
            nodes.append(n)
            need.update(i for i in n.input if i)
    nodes.reverse()
    inputs = [i for i in g.input if i.name in need]
    inits = [t for t in g.initializer if t.name in need]
    outputs = [o for o in g.output if o.name in keep_out]
    m = h.make_model(h.make_graph(nodes, g.name, inputs, outputs, inits),
                     opset_imports=model.opset_import, producer_name='burncc-diff')
    m.ir_version = model.ir_version
    return m, {i.name: feeds[i.name] for i in inputs}


def cut(model, feeds, node_index, renv):
    """Replace node node_index by graph inputs holding its outputs'
    reference values (rounded to their types)."""
    g = model.graph
    n = g.node[node_index]
    nodes = [x for i, x in enumerate(g.node) if i != node_index]
    inputs = list(g.input)
    feeds = dict(feeds)
    for o in n.output:
        r = renv[o]
        if not r.isfloat() and r.dt != 'bool':
            return None
        if r.dt == 'bf16' or np.any(r.u):
            return None
        a = r.v.astype(np_of(r.dt))
        inputs.append(h.make_tensor_value_info(o, onnx.helper.np_dtype_to_tensor_dtype(a.dtype)
                                               if hasattr(onnx.helper, 'np_dtype_to_tensor_dtype')
                                               else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype],
                                               list(a.shape)))
        feeds[o] = a
    outs = [x.name for x in g.output]
    m = h.make_model(h.make_graph(nodes, g.name, inputs, list(g.output), list(g.initializer)),
                     opset_imports=model.opset_import, producer_name='burncc-diff')
    m.ir_version = model.ir_version
    if any(o.name in [i.name for i in inputs] for o in g.output):
        return None
    return submodel(m, feeds, outs)


def error_graphs(model, bad):
    """The graphs named by compile errors: burncc's messages name the node,
    "node 'Cast_856'" (ONNX name, or op and index when it has none)."""
    out = []
    for _, _, msg in bad:
        m = re.search(r"node '([^']*)'", msg)
        if not m:
            continue
        for i, n in enumerate(model.graph.node):
            if m.group(1) in (n.name, '%s_%d' % (n.op_type, i)):
                out.append(n.output[0].split('_')[0] + '_')
                break
    return sorted(set(out))


def fails(env, wd, model, feeds):
    try:
        res = run_variants(env, wd, model, feeds, env.variants)
        return disagreements(model, feeds, res)
    except (KeyError, ValueError):   # a candidate the reference cannot run
        return None


def reduce_case(env, wd, model, feeds, bad):
    """Shrink a failing model while it still disagrees the same way (same
    variants failing, each with a wrong value or each with an error: a
    wrong value never turns into a refused model)."""
    def sig(b):
        return sorted(set((v, n is None) for n, v, _ in b)) if b else None
    want = sig(bad)
    # one failing output
    for name in sorted(set(n for n, _, _ in bad if n)):
        m, f = submodel(model, feeds, [name])
        b = fails(env, wd, m, f)
        if b and sig(b) == want:
            model, feeds, bad = m, f, b
            break
    changed = True
    while changed:
        changed = False
        renv = ref.evaluate(model, feeds)
        for i in range(len(model.graph.node)):
            c = cut(model, feeds, i, renv)
            if c is None:
                continue
            b = fails(env, wd, c[0], c[1])
            if b and sig(b) == want:
                model, feeds, bad = c[0], c[1], b
                changed = True
                break
    m, f, b = shrink_shapes(env, wd, model, feeds, want, sig)
    if b:
        model, feeds, bad = m, f, b
    return model, feeds, bad


def reshape_io(model, feeds, name, arr):
    """model and feeds with input name holding arr (a smaller shape); the
    outputs' declared shapes follow from the reference.  None when the
    graph does not take the new shape (a Reshape's constant, a MatMul's
    inner dimension)."""
    feeds = dict(feeds)
    feeds[name] = arr
    try:
        env = ref.evaluate(model, feeds)
    except (KeyError, ValueError, IndexError):
        return None
    g = model.graph
    ins = [h.make_tensor_value_info(i.name, i.type.tensor_type.elem_type,
                                    list(feeds[i.name].shape)) for i in g.input]
    outs = [h.make_tensor_value_info(o.name, o.type.tensor_type.elem_type,
                                     list(env[o.name].v.shape)) for o in g.output]
    m = h.make_model(h.make_graph(list(g.node), g.name, ins, outs, list(g.initializer)),
                     opset_imports=model.opset_import, producer_name='burncc-diff')
    m.ir_version = model.ir_version
    return m, feeds


def shrink_shapes(env, wd, model, feeds, want, sig):
    """Make the inputs smaller, one dimension at a time (to 1, or half),
    while the model still fails the same way."""
    bad = None
    for i in model.graph.input:
        for d in range(feeds[i.name].ndim):
            for n in (1, feeds[i.name].shape[d] // 2):
                a = feeds[i.name]
                if n < 1 or n >= a.shape[d]:
                    continue
                c = reshape_io(model, feeds, i.name, np.take(a, range(n), axis=d))
                if c is None:
                    continue
                b = fails(env, wd, c[0], c[1])
                if b and sig(b) == want:
                    model, feeds, bad = c[0], c[1], b
                    break
    return model, feeds, bad


def write_case(folder, model, feeds, note):
    """A case folder in the ONNX node-test layout; outputs are the
    reference rounded to their types (burncc check reads it too)."""
    os.makedirs(os.path.join(folder, 'test_data_set_0'), exist_ok=True)
    onnx.save(model, os.path.join(folder, 'model.onnx'))
    ins, outs = io_types(model)
    renv = ref.evaluate(model, feeds)
    for k, (name, dt, shape) in enumerate(ins):
        t = nh.from_array(feeds[name].astype(np_of(dt)), name)
        with open(os.path.join(folder, 'test_data_set_0', 'input_%d.pb' % k), 'wb') as f:
            f.write(t.SerializeToString())
    for k, (name, dt, shape) in enumerate(outs):
        t = nh.from_array(renv[name].v.astype(np_of(dt)), name)
        with open(os.path.join(folder, 'test_data_set_0', 'output_%d.pb' % k), 'wb') as f:
            f.write(t.SerializeToString())
    with open(os.path.join(folder, 'NOTE'), 'w') as f:
        f.write(note + '\n')
    with open(os.path.join(folder, 'model.txt'), 'w') as f:
        f.write(onnx.helper.printable_graph(model.graph) + '\n')


# ---- modes ------------------------------------------------------------------

def one_model(args):
    """Worker: generate, run and check one model; reduce what fails."""
    build, seed, per, out, exclude, gpu = args
    env = Env(build)
    if not gpu:
        env.variants = [v for v in VARIANTS if v != 'interp-gpu']
    wd = tempfile.mkdtemp(prefix='burncc-diff-')
    try:
        model, feeds, graphs = gen.make_model(seed, per, exclude)
        res = run_variants(env, wd, model, feeds, env.variants)
        bad = disagreements(model, feeds, res)
        found = []
        if bad:
            prefixes = sorted(set(n.split('_')[0] + '_' for n, _, _ in bad if n))
            prefixes += [p for p in error_graphs(model, bad) if p not in prefixes]
            prefixes = prefixes or [p for p, _ in graphs]
            for p in prefixes[:4]:
                outs = [o.name for o in model.graph.output if o.name.startswith(p)]
                m, f = submodel(model, feeds, outs)
                b = fails(env, wd, m, f)
                if not b:
                    mine = [x for x in bad if x[0] and x[0].startswith(p)]
                    found.append((p, 'graph %s fails only inside the whole model: %s' % (
                        p, '; '.join('%s %s: %s' % (v, n, msg) for n, v, msg in mine[:4])),
                        mine[:3], None))
                    continue
                m, f, b = reduce_case(env, wd, m, f, b)
                folder = os.path.join(out, 'seed%d_%s' % (seed, p.rstrip('_')))
                note = 'seed %d graph %s: %s' % (seed, p, '; '.join(
                    '%s %s: %s' % (v, n, msg) for n, v, msg in b[:4]))
                write_case(folder, m, f, note)
                found.append((p, note, b[:3], folder))
        return seed, len(graphs), bad, found
    finally:
        shutil.rmtree(wd, ignore_errors=True)


def mode_random(a):
    out = a.out or os.path.join(a.build, 'diff-failures')
    nmodels = (a.graphs + a.per_model - 1) // a.per_model
    jobs = [(a.build, a.seed + i, min(a.per_model, a.graphs - i * a.per_model), out,
             tuple(a.exclude), i % a.gpu_every == 0) for i in range(nmodels)]
    t0 = time.time()
    ngraphs, nbad, ngpu = 0, 0, 0
    with multiprocessing.Pool(a.jobs) as pool:
        for seed, n, bad, found in pool.imap_unordered(one_model, jobs):
            ngraphs += n
            ngpu += n if (seed - a.seed) % a.gpu_every == 0 else 0
            print('seed %d: %d graphs, %s (%.0f s)' % (seed, n, 'DISAGREE' if bad else 'agree',
                                                     time.time() - t0), flush=True)
            if bad:
                nbad += 1
                print('DISAGREE seed %d: %d outputs' % (seed, len(bad)))
                for p, note, b, folder in found:
                    print('  %s -> %s' % (note, folder or '(not reduced)'))
            if a.time_limit and time.time() - t0 > a.time_limit:
                pool.terminate()
                break
    dt = time.time() - t0
    print('%d graphs in %d models, %s (%d graphs), %.0f s: %d models disagree' % (
        ngraphs, nmodels, ', '.join(VARIANTS), ngpu, dt, nbad))
    return 1 if nbad else 0


def load_case(folder):
    model = onnx.load(os.path.join(folder, 'model.onnx'))
    feeds = {}
    for k, i in enumerate(model.graph.input):
        t = onnx.TensorProto()
        with open(os.path.join(folder, 'test_data_set_0', 'input_%d.pb' % k), 'rb') as f:
            t.ParseFromString(f.read())
        feeds[i.name] = nh.to_array(t)
    return model, feeds


def mode_cases(a):
    xfail = {}
    if a.xfail:
        for line in open(a.xfail):
            line = line.strip()
            if line and not line.startswith('#'):
                name, _, why = line.partition(' ')
                xfail[name] = why.strip()
    env = Env(a.build)
    folders = sorted(d for d in os.listdir(a.dir)
                     if os.path.exists(os.path.join(a.dir, d, 'model.onnx')))
    rc = 0
    for d in folders:
        model, feeds = load_case(os.path.join(a.dir, d))
        wd = tempfile.mkdtemp(prefix='burncc-diff-')
        try:
            bad = disagreements(model, feeds, run_variants(env, wd, model, feeds))
        finally:
            shutil.rmtree(wd, ignore_errors=True)
        if d in xfail:
            if bad:
                print('XFAIL %s: %s\n  %s' % (d, xfail[d], '; '.join(
                    '%s %s: %s' % (v, n, m) for n, v, m in bad[:2])))
            else:
                print('XPASS %s: fixed? remove it from the xfail list' % d)
                rc = 1
        elif bad:
            print('FAIL %s: %s' % (d, '; '.join('%s %s: %s' % (v, n, m) for n, v, m in bad[:4])))
            rc = 1
        else:
            print('PASS %s' % d)
    return rc


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('build')
    p.add_argument('mode', choices=['random', 'sweep', 'cases'])
    p.add_argument('dir', nargs='?')
    p.add_argument('--graphs', type=int, default=5000)
    p.add_argument('--per-model', type=int, default=200)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--jobs', type=int, default=os.cpu_count() or 2)
    p.add_argument('--out')
    p.add_argument('--xfail')
    p.add_argument('--time-limit', type=float, default=0)
    p.add_argument('--gpu-every', type=int, default=1,
                   help='random: the gpu way on every M-th model only')
    p.add_argument('--exclude', action='append', default=list(gen.KNOWN_BAD),
                   help='an op the generator must not emit (repeatable; '
                   'default: the ops with open bugs, gen.KNOWN_BAD)')
    p.add_argument('--all-ops', action='store_const', const=[], dest='exclude',
                   help='emit every op, also those with open bugs')
    a = p.parse_args()
    a.build = os.path.abspath(a.build)
    a.gpu_every = max(a.gpu_every, 1)
    if a.mode == 'random':
        return mode_random(a)
    if a.mode == 'cases':
        return mode_cases(a)
    import sweep
    return sweep.main(a, sys.modules[__name__])


if __name__ == '__main__':
    sys.exit(main())
