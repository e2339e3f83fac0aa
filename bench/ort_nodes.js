// ort_nodes.js MODEL [RUNS]: ONNX Runtime's time per node (onnxruntime-node,
// CPU, one thread, its profiler), the minimum over RUNS runs (default 400)
// of each node, in ms, and their sum; the inputs as bench/ort_bench.js.
const ort = require(process.env.ORT_PATH || 'onnxruntime-node');
const fs = require('fs');
const os = require('os');
const path = require('path');
(async () => {
  const [model, runs] = process.argv.slice(2);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_nodes'));
  const s = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential', enableProfiling: true,
    profileFilePrefix: path.join(dir, 'p') });
  const feeds = {};
  const meta = s.inputMetadata;
  for (let i = 0; i < s.inputNames.length; i++) {
    const m = meta[i];
    const dims = m.shape.map(d => (typeof d === 'number' ? d : 1));
    const n = dims.reduce((a, b) => a * b, 1);
    if (m.type !== 'float32')
      throw new Error('input type ' + m.type);
    const a = new Float32Array(n);
    for (let k = 0; k < n; k++) a[k] = Math.sin(k) / 2;
    feeds[s.inputNames[i]] = new ort.Tensor('float32', a, dims);
  }
  for (let r = 0; r < (+runs || 400); r++) await s.run(feeds);
  await s.release();   // writes the profile
  const f = fs.readdirSync(dir).map(x => path.join(dir, x))[0];
  const min = new Map();
  for (const e of JSON.parse(fs.readFileSync(f, 'utf8'))) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const k = e.name.slice(0, -12) + ' (' + e.args.op_name + ')';
    min.set(k, Math.min(min.has(k) ? min.get(k) : Infinity, e.dur));
  }
  let sum = 0;
  for (const [k, us] of min) { console.log(`${k} ${(us / 1e3).toFixed(4)}`); sum += us; }
  console.log(`sum ${(sum / 1e3).toFixed(4)}`);
  fs.rmSync(dir, { recursive: true });
})();
