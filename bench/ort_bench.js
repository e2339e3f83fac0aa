// ort_bench.js MODEL THREADS: time ONNX Runtime (onnxruntime-node, CPU) on
// MODEL with the inputs model_bench.c uses; prints "median best runs" in ms.
const ort = require(process.env.ORT_PATH || 'onnxruntime-node');
(async () => {
  const [model, threads] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(model, {
    intraOpNumThreads: +threads, interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential' });
  const feeds = {};
  const meta = s.inputMetadata;
  for (let i = 0; i < s.inputNames.length; i++) {
    const name = s.inputNames[i], m = meta[i];
    const dims = m.shape.map(d => (typeof d === 'number' ? d : 1));
    const n = dims.reduce((a, b) => a * b, 1);
    if (m.type === 'float32') {
      const a = new Float32Array(n);
      for (let k = 0; k < n; k++) a[k] = Math.sin(k) / 2;
      feeds[name] = new ort.Tensor('float32', a, dims);
    } else if (m.type === 'int64') {
      feeds[name] = new ort.Tensor('int64', new BigInt64Array(n), dims);
    } else {
      throw new Error('input type ' + m.type);
    }
  }
  await s.run(feeds);
  const t = [];
  const start = performance.now();
  while (t.length < 100000 && (performance.now() - start < 1000 || t.length < 10)) {
    const t0 = performance.now();
    await s.run(feeds);
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  console.log(`${t[t.length >> 1].toFixed(3)} ${t[0].toFixed(3)} ${t.length}`);
})();
