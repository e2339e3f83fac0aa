// burncc.mjs - run a model built by `burncc MODEL.onnx --target wasm -o
// model.wasm` in a browser (or Node): the wasm target's runtime, an ES
// module with no dependencies.
//
//   import { load } from "./burncc.mjs";
//   const model = await load("model.wasm");   // a URL, a Response, bytes
//   model.inputs;     // [{ name, dtype, dims, bytes }], in ONNX order
//   const [y] = model.run([x]);               // or model.run({ x: ... })
//   y.data;           // a Float32Array (a copy), y.dims, y.name
//
// The module's exports are codegen/wasm/target_wasm.c's: one static buffer
// per input and output and a static arena in its own memory, which never
// grows, so the typed-array views made here at load stay valid.  run()
// copies the inputs in, runs, and copies the outputs out (runInPlace with
// inputView/outputView skips the copies).  One model instance runs one
// call at a time; load it again (or in a Worker) for more.

// ONNX TensorProto data types -> typed arrays (f16 and bf16 as raw bits).
const ARRAYS = {
  1: Float32Array, 2: Uint8Array, 3: Int8Array, 4: Uint16Array, 5: Int16Array,
  6: Int32Array, 7: BigInt64Array, 9: Uint8Array, 10: Uint16Array,
  11: Float64Array, 12: Uint32Array, 13: BigUint64Array, 16: Uint16Array,
};
// The generated run function's return codes (PREFIX_OK, _ERR_ARG, _ERR_ARENA).
const STATUS = { 1: "a NULL input or output", 2: "a NULL or misaligned arena" };

async function bytesOf(src) {
  if (src instanceof ArrayBuffer || ArrayBuffer.isView(src)) return src;
  const r = typeof Response !== "undefined" && src instanceof Response
    ? src : await fetch(src);
  if (!r.ok) throw new Error(`burncc: cannot load ${r.url}: HTTP ${r.status}`);
  return r.arrayBuffer();
}

function cString(mem, p) {
  const b = new Uint8Array(mem.buffer, p);
  return new TextDecoder().decode(b.subarray(0, b.indexOf(0)));
}

// Tensor i of the inputs (io 0) or outputs (io 1), with a view on its buffer.
function tensor(x, io, i) {
  const dtype = x.dtype(io, i), rank = x.rank(io, i), bytes = x.bytes(io, i);
  const Arr = ARRAYS[dtype];
  if (!Arr) throw new Error(`burncc: tensor ${i}: ONNX dtype ${dtype} has no typed array`);
  const dims = [];
  for (let d = 0; d < rank; d++) dims.push(x.dim(io, i, d));
  const at = io ? x.output(i) : x.input(i);
  return {
    name: cString(x.memory, x.name(io, i)), dtype, dims, bytes,
    view: new Arr(x.memory.buffer, at, bytes / Arr.BYTES_PER_ELEMENT),
  };
}

export class Model {
  constructor(instance) {
    const x = instance.exports;
    for (const f of ["run", "input", "output", "num_inputs", "memory"])
      if (!(f in x)) throw new Error(`burncc: not a burncc wasm module (no export ${f})`);
    this.exports = x;
    this._in = [], this._out = [];
    for (let i = 0; i < x.num_inputs(); i++) this._in.push(tensor(x, 0, i));
    for (let i = 0; i < x.num_outputs(); i++) this._out.push(tensor(x, 1, i));
    const info = (t) => ({ name: t.name, dtype: t.dtype, dims: t.dims, bytes: t.bytes });
    this.inputs = this._in.map(info);
    this.outputs = this._out.map(info);
  }

  // The typed array over input / output i in the module's memory.
  inputView(i) { return this._in[i].view; }
  outputView(i) { return this._out[i].view; }

  // Run on whatever the input views hold; throws on an error status.
  runInPlace() {
    const rc = this.exports.run();
    if (rc) throw new Error(`burncc: run failed (${rc}: ${STATUS[rc] || "unknown"})`);
  }

  // inputs: an array in ONNX order or an object by ONNX name; each a typed
  // array of the input's type (or any array of numbers) of its element
  // count.  Returns [{ name, dtype, dims, data }], data a copy.
  run(inputs) {
    this._in.forEach((t, i) => {
      const v = Array.isArray(inputs) ? inputs[i] : inputs[t.name];
      if (v === undefined) throw new Error(`burncc: input '${t.name}' not given`);
      if (v.length !== t.view.length)
        throw new Error(`burncc: input '${t.name}': ${v.length} elements, ` +
                        `the model takes ${t.view.length} (dims ${t.dims.join("x")})`);
      if (v instanceof t.view.constructor) t.view.set(v);
      else if (t.view instanceof BigInt64Array || t.view instanceof BigUint64Array)
        t.view.set(Array.from(v, (e) => BigInt(e)));
      else t.view.set(v);
    });
    this.runInPlace();
    return this._out.map((t) => ({
      name: t.name, dtype: t.dtype, dims: t.dims, data: t.view.slice(),
    }));
  }
}

// Fetch (or take) the module's bytes, instantiate it, and describe it.
export async function load(src) {
  const { instance } = await WebAssembly.instantiate(await bytesOf(src), {});
  return new Model(instance);
}
