/* Every tensor of one translation, in the reader's browser: window.bookModel.activations.
 *
 * What transformer_lib.capture.capture_activations returns, computed by book-model.js's own forward
 * pass (Model.translate: encode, then decodeStep per token), not by a second copy of it: the model
 * runs through a recorder, an object whose prototype is the model and whose embed, project,
 * attendRow, norm, lin, logits and newCache call the model's and keep what they return (as the
 * Python capture keeps what forward hooks see). The translation and the capture are one pass. The blocks carry the library's names (encoder.0.self_attn.q, ...), positions first.
 * tests/test_live_activations.py holds every block equal to the Python capture.
 */
(function () {
  "use strict";
  const bookModel = window.bookModel;
  if (!bookModel || bookModel.activations) return;
  const { Model } = bookModel;
  const base = Model.prototype;

  // The recorder copies every row it keeps (the model reuses none, but the blocks are plain arrays, as
  // JSON and the tests read them): with a counted loop, several times faster than Array.from on a typed
  // array, which iterates; the names are worked out once per prefix (benchmarks/model_explorer.py).
  const names = new Map();
  const blockName = (prefix) => {
    let name = names.get(prefix);
    if (name === undefined) names.set(prefix, name = prefix.replace(".layers.", ".").replace(/^(src|tgt)_embed$/, "$1"));
    return name;
  };
  function plain(x, from, to) {
    const [a, b] = [from || 0, to === undefined ? x.length : to];
    const out = new Array(b - a);
    for (let i = a; i < b; i++) out[i - a] = x[i];
    return out;
  }
  const heads = (row, h) => { // (d_model) -> (h, d_k), as MultiHeadAttention.split_heads
    const dk = row.length / h;
    const out = new Array(h);
    for (let i = 0; i < h; i++) out[i] = plain(row, i * dk, (i + 1) * dk);
    return out;
  };

  function softmax(row) { // torch.softmax over the vocabulary, in float64
    let max = -Infinity;
    for (let i = 0; i < row.length; i++) if (row[i] > max) max = row[i];
    const e = new Array(row.length);
    let sum = 0;
    for (let i = 0; i < row.length; i++) sum += (e[i] = Math.exp(row[i] - max));
    for (let i = 0; i < row.length; i++) e[i] /= sum;
    return e;
  }

  // The residuals of a stack in the order they run, then its final norm (pre-norm models have one).
  function residualChain(cfg, stack) {
    const names = stack === "encoder" ? ["attn_residual", "ff_residual"] : ["self_residual", "cross_residual", "ff_residual"];
    const chain = [];
    const layers = stack === "encoder" ? cfg.n_encoder_layers : cfg.n_decoder_layers;
    for (let l = 0; l < layers; l++) for (const n of names) chain.push(`${stack}.layers.${l}.${n}`);
    return chain;
  }

  // A recorder: the model's forward pass, with what each of its steps returns kept under its block name.
  function recorder(model) {
    const cfg = model.config;
    const h = cfg.n_heads;
    const blocks = {};
    const keep = (name, value) => (blocks[name] || (blocks[name] = [])).push(value);
    const previous = {}; // pre-norm: a norm reads the sum of the residual before it
    for (const stack of ["encoder", "decoder"]) {
      const chain = residualChain(cfg, stack);
      chain.forEach((r, i) => { if (i > 0) previous[`${r}.norm`] = chain[i - 1]; });
      previous[`${stack}.final_norm`] = chain[chain.length - 1];
    }
    const rec = Object.create(model);
    rec.blocks = blocks;
    rec.newCache = function (memory) { // the decoder's caches, kept: complete() reads the keys
      this.caches = base.newCache.call(this, memory);
      return this.caches;
    };
    rec.embed = function (prefix, id, pos) {
      const d = cfg.d_model;
      const side = blockName(prefix);
      keep(`${side}.token`, plain(this.t(`${prefix}.token.embedding.weight`), id * d, (id + 1) * d));
      const x = base.embed.call(this, prefix, id, pos);
      keep(`${side}.input`, plain(x));
      return x;
    };
    rec.project = function (prefix, which, x) {
      const y = base.project.call(this, prefix, which, x);
      if (which !== "w_o") keep(`${blockName(prefix)}.${which.slice(2)}`, heads(y, h)); // W_O: attendRow keeps it
      return y;
    };
    rec.attendRow = function (prefix, q, keys, values) {
      const r = base.attendRow.call(this, prefix, q, keys, values);
      const name = blockName(prefix);
      keep(`${name}.scores`, r.scores.map((row) => plain(row)));
      keep(`${name}.weights`, r.weights.map((row) => plain(row)));
      keep(`${name}.heads`, heads(r.concat, h));
      keep(`${name}.output`, plain(r.output));
      return r;
    };
    rec.norm = function (prefix, x) {
      const y = base.norm.call(this, prefix, x);
      const name = blockName(prefix);
      keep(name, plain(y)); // a residual's norm ("<residual>.norm") or a stack's final_norm
      if (!cfg.norm_first && !name.endsWith("final_norm")) keep(`${name.slice(0, -5)}.sum`, plain(x)); // post-norm
      if (cfg.norm_first && previous[prefix]) keep(`${blockName(previous[prefix])}.sum`, plain(x));
      return y;
    };
    rec.lin = function (prefix, x, nOut, nIn) {
      const y = base.lin.call(this, prefix, x, nOut, nIn);
      // feedForward applies its ReLU to this very array, in place: what is kept is the hidden layer
      if (prefix.endsWith(".linear1")) keep(`${blockName(prefix.slice(0, -8))}.hidden`, y);
      if (prefix.endsWith(".linear2")) keep(`${blockName(prefix.slice(0, -8))}.output`, plain(y));
      return y;
    };
    rec.logits = function (x, prefix) {
      const y = base.logits.call(this, x, prefix);
      keep(`${prefix}.logits`, plain(y));
      keep(`${prefix}.probabilities`, softmax(y));
      return y;
    };
    return rec;
  }

  // What the recorder kept, completed as capture_activations returns it: decoder self-attention ran on
  // a cache of the past, so each step's score row holds the keys read so far; the future keys' scores,
  // which the causal mask then hides, are computed here as attendRow computes the others (q . k / sqrt(d_k)).
  function complete(rec, n) {
    const cfg = rec.config;
    const dk = cfg.d_model / cfg.n_heads;
    const scale = Math.sqrt(dk);
    const blocks = rec.blocks;
    for (const name of Object.keys(blocks)) { // the hidden layers, kept as typed arrays, as plain ones
      if (name.endsWith(".hidden")) blocks[name] = blocks[name].map((row) => plain(row));
    }
    for (let l = 0; l < cfg.n_decoder_layers; l++) {
      const name = `decoder.${l}.self_attn`;
      const keys = rec.caches[l].self.keys; // every position's key, once the last step has run
      const queries = blocks[`${name}.q`];
      for (const [t, rows] of blocks[`${name}.scores`].entries()) {
        rows.forEach((row, head) => {
          const q = queries[t][head];
          for (let j = row.length; j < n; j++) {
            let s = 0;
            for (let i = 0; i < dk; i++) s += q[i] * keys[j][head * dk + i];
            row.push(s / scale);
          }
        });
      }
      blocks[`${name}.masked`] = blocks[`${name}.scores`].map((rows, t) =>
        rows.map((row) => row.map((s, j) => (j > t ? -Infinity : s))));
      for (const rows of blocks[`${name}.weights`]) for (const row of rows) while (row.length < n) row.push(0);
    }
    for (const name of Object.keys(blocks)) { // no padding in one sentence: the other masks hide nothing
      if (name.endsWith(".scores") && !blocks[name.replace(/scores$/, "masked")]) {
        blocks[name.replace(/scores$/, "masked")] = blocks[name].map((rows) => rows.map((row) => row.slice()));
      }
    }
    return blocks;
  }

  // The typed text's translation and every block behind it (capture.capture_activations), in one
  // forward pass: translate's own (the encoder, then one decoder step per token read), run through the
  // recorder. passMs: the time of that pass, the translation included.
  Model.prototype.activations = function (typed) {
    const started = performance.now();
    const rec = recorder(this);
    const result = rec.translate(typed);
    const blocks = complete(rec, result.decoder_tokens.length);
    return { ...result, blocks, passMs: performance.now() - started };
  };

  /** Promise of translate's result plus blocks: {name: [position][...]}, as capture_activations. */
  bookModel.activations = async function (text) {
    bookModel.checkText(text); // before loading: an empty box costs no download
    const model = await bookModel.load();
    return model.activations(text);
  };
})();
