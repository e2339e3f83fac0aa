// ort_ref.js MODEL B S X Y [B S X Y ...]: run MODEL (one f32 input and
// output, [B, S, 32]) in ONNX Runtime (onnxruntime-node, CPU, one thread)
// on the raw f32 input X at each (B, S), writing the raw f32 output to Y.
// make_ort_ref.sh runs it to store the transformer test's references.
const fs = require('fs');
const ort = require(process.env.ORT_PATH || 'onnxruntime-node');
(async () => {
  const [model, ...rest] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' });
  for (let i = 0; i + 3 < rest.length; i += 4) {
    const b = +rest[i], n = +rest[i + 1];
    const buf = fs.readFileSync(rest[i + 2]);
    const x = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
    if (x.length !== b * n * 32)
      throw new Error(`${rest[i + 2]}: ${x.length} floats, want ${b * n * 32}`);
    const out = await s.run({ [s.inputNames[0]]: new ort.Tensor('float32', x, [b, n, 32]) });
    const y = out[s.outputNames[0]];
    fs.writeFileSync(rest[i + 3], Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
  }
})().catch(e => { console.error(e.message); process.exit(1); });
