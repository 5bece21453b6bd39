/* The book's Transformer, run in the reader's browser: window.bookModel.
 *
 * Longer than 400 lines: the model's forward pass and its greedy decoding, mirrored piece by piece
 * from the Python library, read as one program (the list below maps each piece to its module).
 *
 * Plain JavaScript (ES2017), no dependency. It computes what transformer_lib computes:
 *   tokenisation      tokenization.Vocab.encode (words of Python's str.split(); unknown words -> <unk>)
 *   embeddings        embeddings.TokenEmbedding: E[id] * sqrt(d_model), plus the sinusoidal table
 *                     of positional_encoding.sinusoidal_table (float64, rounded to float32)
 *   attention         attention.attention_weights: softmax(Q K^T / sqrt(d_k)), masked keys at -inf
 *   layers            encoder.EncoderLayer / decoder.DecoderLayer inside residual.Residual
 *                     (post-norm LayerNorm(x + f(x)), or pre-norm x + f(LayerNorm(x)) with a final norm)
 *   decoding          decoding.greedy_decode: one token at a time on a key/value cache, <pad> and <sos>
 *                     banned, stop at <eos> or after max_len tokens; max_len by decoding.default_max_len's
 *                     rule, which the manifest carries ("decoding": per_source_token * S + extra, capped)
 *   attention maps    capture.capture_translation: the decoder inputs <sos> + output that produced a
 *                     token (a translation cut at its limit never read its last token: no row for it)
 * The encoder (Core.encodeRows) also runs chapter 9's Vision Transformer (vit-explorer.js), on rows it embeds.
 * The weights (book-model.bin, float32) and the rest (book-model.json), written by transformer_lib.browser.model
 * at build time, are fetched when first needed; so is each snapshot of the replay (book-model-step{N}.bin).
 * The reader's text (words, normalize, checkText) and the messages of the page's theme
 * (transformer_lib.browser.theme) come from book-text.js (window.bookText), loaded just before.
 * Outside a page (Node, in the tests) there is no document: the model runs from bookModel.Model.
 */
(function () {
  "use strict";
  if (window.bookModel) return;

  const hasDocument = typeof document !== "undefined";
  const scriptUrl = (hasDocument && document.currentScript && document.currentScript.src) ||
    (window.location && window.location.href) || "http://localhost/";
  const MANIFEST_URL = new URL("book-model.json", scriptUrl).href;

  // The reader's text and the page's messages (book-text.js, loaded first).
  const { theme, fill, words, normalize, checkText, ReaderError } = window.bookText;

  // ------------------------------------------------------------------ linear algebra on rows

  function linear(x, w, b, nOut, nIn) { // x: Float64Array(nIn); w: (nOut, nIn) row-major, as nn.Linear
    const y = new Float64Array(nOut);
    for (let o = 0; o < nOut; o++) {
      let s = b ? b[o] : 0;
      const row = o * nIn;
      for (let i = 0; i < nIn; i++) s += w[row + i] * x[i];
      y[o] = s;
    }
    return y;
  }

  function layerNorm(x, gamma, beta, eps) { // biased variance, eps inside the root (residual.layer_norm)
    const n = x.length;
    let mean = 0;
    for (let i = 0; i < n; i++) mean += x[i];
    mean /= n;
    let variance = 0;
    for (let i = 0; i < n; i++) variance += (x[i] - mean) * (x[i] - mean);
    variance /= n;
    const inv = 1 / Math.sqrt(variance + eps);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
    return y;
  }

  function add(a, b) {
    const y = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) y[i] = a[i] + b[i];
    return y;
  }

  function sinusoidalRow(pos, d) { // positional_encoding.sinusoidal_table, one row
    const row = new Float64Array(d);
    for (let i = 0; i < d; i += 2) {
      const angle = pos * (1 / Math.pow(10000, i / d));
      row[i] = Math.fround(Math.sin(angle));
      if (i + 1 < d) row[i + 1] = Math.fround(Math.cos(angle));
    }
    return row;
  }

  // ------------------------------------------------------------------ the model

  // The one JS model core: the layers every model in the page is built from (the translator
  // below, the language model in book-lm.js), each mirroring the library module named beside it.
  // A manifest's weights are named as the model's state_dict.
  class Core {
    constructor(manifest, buffer) {
      this.manifest = manifest;
      this.config = manifest.config;
      const floats = new Float32Array(buffer); // the file is little-endian float32, as every browser's typed arrays
      if (floats.length !== manifest.weights.floats) {
        throw new Error(`${manifest.weights.file}: expected ${manifest.weights.floats} floats, got ${floats.length}`);
      }
      this.tensors = {};
      for (const [name, entry] of Object.entries(manifest.weights.tensors)) {
        const size = entry.shape.reduce((a, b) => a * b, 1);
        this.tensors[name] = floats.subarray(entry.offset, entry.offset + size);
      }
      const d = this.config.d_model;
      this.positions = [];
      for (let p = 0; p < this.config.max_len; p++) this.positions.push(sinusoidalRow(p, d));
      this.ids = manifest.special_ids;
      this.specials = new Set(manifest.tokenization.specials);
    }

    // Vocab.encode_with_unknowns over the vocabulary `index` (token -> id): a special token typed as a
    // word is not the special, it reads as <unk>, like any unknown word. Both models tokenize with it.
    encodeWords(text, index) {
      const ids = [];
      const unknown = [];
      for (const w of words(text)) {
        const id = this.specials.has(w) ? undefined : index.get(w);
        if (id === undefined) {
          unknown.push(w);
          ids.push(this.ids.unk);
        } else {
          ids.push(id);
        }
      }
      return { ids, unknown };
    }

    t(name) {
      const tensor = this.tensors[name];
      if (!tensor) throw new Error(`${this.manifest.weights.file}: no tensor ${name}`);
      return tensor;
    }

    embed(prefix, id, pos) { // InputEmbedding: token * sqrt(d_model) + position (dropout is off)
      const d = this.config.d_model;
      const table = this.t(`${prefix}.token.embedding.weight`);
      const scale = Math.sqrt(d);
      const pe = this.positions[pos];
      const x = new Float64Array(d);
      for (let i = 0; i < d; i++) x[i] = Math.fround(table[id * d + i] * scale) + pe[i];
      return x;
    }

    lin(prefix, x, nOut, nIn) {
      return linear(x, this.t(`${prefix}.weight`), this.t(`${prefix}.bias`), nOut, nIn);
    }

    norm(prefix, x) {
      return layerNorm(x, this.t(`${prefix}.weight`), this.t(`${prefix}.bias`), this.config.layer_norm_eps);
    }

    residual(prefix, x, sublayer) { // residual.Residual
      if (this.config.norm_first) return add(x, sublayer(this.norm(`${prefix}.norm`, x)));
      return this.norm(`${prefix}.norm`, add(x, sublayer(x)));
    }

    feedForward(prefix, x) { // feed_forward.PositionwiseFeedForward with ReLU
      const d = this.config.d_model;
      const dff = this.config.d_ff;
      const h = this.lin(`${prefix}.linear1`, x, dff, d);
      for (let i = 0; i < dff; i++) if (h[i] < 0) h[i] = 0;
      return this.lin(`${prefix}.linear2`, h, d, dff);
    }

    project(prefix, which, x) { // (d_model) -> (d_model) by w_q, w_k or w_v
      const d = this.config.d_model;
      return this.lin(`${prefix}.${which}`, x, d, d);
    }

    // One query row against cached keys and values: returns the output (d_model), the heads'
    // outputs side by side (concat) and the scores and weights per head (each of length keys.length). Every key is visible (no padding, and
    // a cache holds only the past), so no mask is needed here; attend() masks for the encoder.
    attendRow(prefix, q, keys, values) {
      const d = this.config.d_model;
      const h = this.config.n_heads;
      const dk = d / h;
      const scale = Math.sqrt(dk);
      const concat = new Float64Array(d);
      const weights = [];
      const scored = []; // per head, the scores before the softmax (book-activations.js shows them)
      for (let head = 0; head < h; head++) {
        const off = head * dk;
        const scores = new Float64Array(keys.length);
        let max = -Infinity;
        for (let j = 0; j < keys.length; j++) {
          let s = 0;
          for (let i = 0; i < dk; i++) s += q[off + i] * keys[j][off + i];
          s /= scale;
          scores[j] = s;
          if (s > max) max = s;
        }
        scored.push(Float64Array.from(scores));
        let sum = 0;
        for (let j = 0; j < keys.length; j++) {
          scores[j] = Math.exp(scores[j] - max);
          sum += scores[j];
        }
        for (let j = 0; j < keys.length; j++) {
          scores[j] /= sum;
          for (let i = 0; i < dk; i++) concat[off + i] += scores[j] * values[j][off + i];
        }
        weights.push(scores);
      }
      return { output: this.project(prefix, "w_o", concat), weights, scores: scored, concat };
    }

    // Causal self-attention for one new position with a cache of the past (a decoder's sub-layer):
    // the key and value of y join the cache, and the query attends to everything cached.
    cachedSelfAttention(prefix, y, cache) {
      cache.keys.push(this.project(prefix, "w_k", y));
      cache.values.push(this.project(prefix, "w_v", y));
      return this.attendRow(prefix, this.project(prefix, "w_q", y), cache.keys, cache.values);
    }

    // encoder.Encoder on rows already embedded (the translator's source, the Vision Transformer's class
    // token and patches): every layer, then the final norm of a pre-norm stack. Returns the rows and
    // each layer's weights, [layer][head][query][key].
    encodeRows(prefix, rows) {
      const cfg = this.config;
      let xs = rows;
      const maps = [];
      for (let l = 0; l < cfg.n_encoder_layers; l++) {
        const p = `${prefix}.layers.${l}`;
        const layerWeights = [];
        xs = this.selfAttentionBlock(`${p}.attn_residual`, `${p}.self_attn`, xs, layerWeights);
        xs = xs.map((x) => this.residual(`${p}.ff_residual`, x, (y) => this.feedForward(`${p}.feed_forward`, y)));
        maps.push(layerWeights);
      }
      if (cfg.norm_first) xs = xs.map((x) => this.norm(`${prefix}.final_norm`, x));
      return { memory: xs, maps };
    }

    // Bidirectional self-attention over all positions inside a residual (the encoder's sub-layer).
    selfAttentionBlock(residualPrefix, attnPrefix, xs, layerWeights) {
      const inputs = this.config.norm_first ? xs.map((x) => this.norm(`${residualPrefix}.norm`, x)) : xs;
      const keys = inputs.map((x) => this.project(attnPrefix, "w_k", x));
      const values = inputs.map((x) => this.project(attnPrefix, "w_v", x));
      const rows = inputs.map((x) => this.attendRow(attnPrefix, this.project(attnPrefix, "w_q", x), keys, values));
      for (let head = 0; head < this.config.n_heads; head++) layerWeights.push(rows.map((r) => Array.from(r.weights[head])));
      const post = (x) => (this.config.norm_first ? x : this.norm(`${residualPrefix}.norm`, x)); // LayerNorm(x + f(x))
      return xs.map((x, i) => post(add(x, rows[i].output)));
    }

    logits(x, prefix) { // the output projection (generator / lm_head): (d_model) -> (vocab)
      const w = this.t(`${prefix}.weight`);
      return linear(x, w, this.t(`${prefix}.bias`), w.length / this.config.d_model, this.config.d_model);
    }
  }

  // The book's translator (models.Transformer): encoder, decoder with caches, greedy decoding.
  class Model extends Core {
    constructor(manifest, buffer) {
      super(manifest, buffer);
      this.srcVocab = manifest.src_vocab;
      this.tgtVocab = manifest.tgt_vocab;
      this.srcIndex = new Map(this.srcVocab.map((token, i) => [token, i]));
      this.lengthRule = manifest.decoding; // decoding.default_max_len's rule, written by browser.model
      if (!this.lengthRule) throw new Error(`${manifest.weights.file}: the manifest holds no decoding rule`);
    }

    maxNewTokens(srcLen) { // decoding.default_max_len
      const rule = this.lengthRule;
      const wanted = rule.per_source_token * srcLen + rule.extra;
      return rule.max_len === null ? wanted : Math.min(wanted, rule.max_len);
    }

    // The typed text as the model reads it (translate's and trace's first half): ids, unknown words,
    // the notes of browser.explorers.reading_notes.
    read(typed) {
      checkText(typed);
      const [text, changes] = normalize(typed); // as the training sentences are written
      if (!words(text).length) throw new ReaderError(window.bookText.noWords(typed));
      const { ids: allIds, unknown } = this.tokenize(text);
      const ids = allIds.slice(0, this.config.max_len);
      const notes = window.bookText.readingNotes({ text, changes, unknown, unk: this.srcVocab[this.ids.unk],
        typed: allIds.length, ids, isTarget: (word) => this.tgtVocab.includes(word) });
      return { ids, unknown, notes };
    }

    tokenize(text) { // the source sentence's ids (Core.encodeWords)
      return this.encodeWords(text, this.srcIndex);
    }

    encode(srcIds) { // Transformer.encode: (S) ids -> memory rows, and each layer's weights
      return this.encodeRows("encoder", srcIds.map((id, pos) => this.embed("src_embed", id, pos)));
    }

    newCache(memory) { // decoder.DecoderLayerCache for every layer; cross keys/values once
      const caches = [];
      for (let l = 0; l < this.config.n_decoder_layers; l++) {
        const p = `decoder.layers.${l}.cross_attn`;
        caches.push({
          self: { keys: [], values: [] },
          crossKeys: memory.map((m) => this.project(p, "w_k", m)),
          crossValues: memory.map((m) => this.project(p, "w_v", m)),
        });
      }
      return caches;
    }

    // One decoding step: the token at position pos, through every decoder layer with the cache.
    // Returns the decoder output row and, per layer and head, the self and cross weight rows.
    decodeStep(id, pos, caches) {
      const cfg = this.config;
      let x = this.embed("tgt_embed", id, pos);
      const selfRows = [];
      const crossRows = [];
      for (let l = 0; l < cfg.n_decoder_layers; l++) {
        const p = `decoder.layers.${l}`;
        const cache = caches[l];
        x = this.residual(`${p}.self_residual`, x, (y) => {
          const r = this.cachedSelfAttention(`${p}.self_attn`, y, cache.self);
          selfRows.push(r.weights);
          return r.output;
        });
        x = this.residual(`${p}.cross_residual`, x, (y) => {
          const r = this.attendRow(`${p}.cross_attn`, this.project(`${p}.cross_attn`, "w_q", y), cache.crossKeys, cache.crossValues);
          crossRows.push(r.weights);
          return r.output;
        });
        x = this.residual(`${p}.ff_residual`, x, (y) => this.feedForward(`${p}.feed_forward`, y));
      }
      if (cfg.norm_first) x = this.norm("decoder.final_norm", x);
      return { x, selfRows, crossRows };
    }

    nextToken(x) { // decoding.next_token_logits + argmax: <pad> and <sos> are never a next token
      const logits = this.logits(x, "generator");
      let best = -1;
      let bestValue = -Infinity;
      for (let i = 0; i < logits.length; i++) {
        if (i === this.ids.pad || i === this.ids.sos) continue;
        const v = Math.fround(logits[i]);
        if (v > bestValue) { bestValue = v; best = i; } // the first maximum, as torch.argmax
      }
      return best;
    }

    translate(typed) {
      const cfg = this.config;
      const { ids, unknown, notes } = this.read(typed);
      const { memory, maps: encoderSelf } = this.encode(ids);
      const caches = this.newCache(memory);
      const maxNew = this.maxNewTokens(ids.length); // decoding.translate's limit
      const out = [];
      const selfRows = [];
      const crossRows = [];
      let fed = this.ids.sos;
      let ended = false;
      for (let step = 0; step < maxNew; step++) {
        const r = this.decodeStep(fed, step, caches);
        selfRows.push(r.selfRows);
        crossRows.push(r.crossRows);
        const next = this.nextToken(r.x);
        if (next === this.ids.eos) { ended = true; break; }
        out.push(next);
        fed = next;
      }
      // one row per token read: <sos> and each output token but, when cut at the limit, the last
      const n = selfRows.length;
      const decoderSelf = [];
      const cross = [];
      for (let l = 0; l < cfg.n_decoder_layers; l++) {
        const selfLayer = [];
        const crossLayer = [];
        for (let head = 0; head < cfg.n_heads; head++) {
          selfLayer.push(selfRows.map((rows) => { // causal: the future keys have weight 0
            const row = new Array(n).fill(0);
            rows[l][head].forEach((w, j) => { row[j] = w; });
            return row;
          }));
          crossLayer.push(crossRows.map((rows) => Array.from(rows[l][head])));
        }
        decoderSelf.push(selfLayer);
        cross.push(crossLayer);
      }
      const tokens = out.map((i) => this.tgtVocab[i]);
      return {
        tokens,
        text: tokens.join(" "),
        unknown,
        notes,
        ended,
        src_tokens: ids.map((i) => this.srcVocab[i]),
        decoder_tokens: [this.tgtVocab[this.ids.sos], ...tokens.slice(0, n - 1)],
        attention: { encoder_self: encoderSelf, decoder_self: decoderSelf, cross },
      };
    }
  }

  // ------------------------------------------------------------------ loading, once, on first use

  // A model's two files (browser.model writes them): its manifest, then the weights it names.
  async function fetchModelFiles(manifestUrl) {
    const manifestResponse = await fetch(manifestUrl);
    if (!manifestResponse.ok) throw new Error(`could not load ${manifestUrl} (HTTP ${manifestResponse.status})`);
    const manifest = await manifestResponse.json();
    const weightsUrl = new URL(manifest.weights.file, manifestUrl).href;
    const weightsResponse = await fetch(weightsUrl);
    if (!weightsResponse.ok) throw new Error(`could not load ${weightsUrl} (HTTP ${weightsResponse.status})`);
    return { manifest, buffer: await weightsResponse.arrayBuffer() };
  }

  let loading = null;
  function load() {
    if (!loading) {
      loading = (async () => {
        const started = performance.now();
        const { manifest, buffer } = await fetchModelFiles(MANIFEST_URL);
        const model = new Model(manifest, buffer);
        window.bookModel.loadMs = performance.now() - started;
        window.bookModel.snapshots = manifest.snapshots ? manifest.snapshots.steps.slice() : [];
        return model;
      })();
      loading.catch(() => { loading = null; }); // a failed load may be retried
    }
    return loading;
  }

  // ------------------------------------------------------------------ the replay: snapshots of training

  // A snapshot's float32 weights, in the shipped model's layout (manifest.weights), from its file
  // (transformer_lib.browser.model.snapshot_files): the float32 section (row scales, vectors), then the
  // int8 matrices. Each weight is int8 * scale rounded once to float32, as pretrained.snapshots.dequantize.
  function dequantize(manifest, entry, buffer) {
    if (buffer.byteLength !== 4 * entry.floats + entry.int8) {
      throw new Error(`${entry.file}: expected ${4 * entry.floats + entry.int8} bytes, got ${buffer.byteLength}`);
    }
    const floats = new Float32Array(buffer, 0, entry.floats);
    const int8s = new Int8Array(buffer, 4 * entry.floats, entry.int8);
    const out = new Float32Array(manifest.weights.floats);
    for (const [name, target] of Object.entries(manifest.weights.tensors)) {
      const source = entry.tensors[name];
      if (!source) throw new Error(`${entry.file}: no tensor ${name}`);
      const size = target.shape.reduce((a, b) => a * b, 1);
      if (source.q === undefined) {
        out.set(floats.subarray(source.offset, source.offset + size), target.offset);
        continue;
      }
      const rows = target.shape[0];
      const columns = size / rows;
      for (let r = 0; r < rows; r++) {
        const scale = floats[source.offset + r];
        for (let c = 0; c < columns; c++) out[target.offset + r * columns + c] = int8s[source.q + r * columns + c] * scale;
      }
    }
    return out.buffer;
  }

  const snapshotLoads = new Map(); // step -> Promise of its Model: each file fetched once
  function modelAt(step) {
    return load().then((shipped) => {
      const replay = shipped.manifest.snapshots;
      if (step === undefined || step === null) return shipped;
      if (typeof step !== "number" || !Number.isInteger(step)) {
        throw new TypeError(`step: expected an int, got ${typeof step === "number" ? step : typeof step}`);
      }
      if (!replay || !replay.steps.includes(step)) {
        throw new RangeError(`step: expected one of [${replay ? replay.steps.join(", ") : ""}], got ${step}`);
      }
      if (step === replay.shipped_step) return shipped;
      if (!snapshotLoads.has(step)) {
        const entry = replay.files[String(step)];
        const url = new URL(entry.file, MANIFEST_URL).href;
        const loading = fetch(url).then(async (response) => {
          if (!response.ok) throw new Error(`could not load ${url} (HTTP ${response.status})`);
          return new Model(shipped.manifest, dequantize(shipped.manifest, entry, await response.arrayBuffer()));
        });
        loading.catch(() => snapshotLoads.delete(step)); // a failed load may be retried
        snapshotLoads.set(step, loading);
      }
      return snapshotLoads.get(step);
    });
  }

  window.bookModel = {
    manifestUrl: MANIFEST_URL,
    snapshots: null, // the replay's training steps, once the manifest is loaded (load())
    modelAt, // Promise of the Model at one of the snapshots' steps (none: the shipped model)
    dequantize,
    fetchModelFiles, // a model's manifest and weights (book-lm.js loads the language model with it)
    loadMs: null,
    load,
    ReaderError,
    Core, // the shared layers (book-lm.js builds the language model on them)
    Model, // the forward pass on a manifest and its weights, without fetching (tests run it in Node)
    theme,
    setTheme: window.bookText.setTheme, // for a page without one (the tests in Node)
    fill,
    whitespace: window.bookText.whitespace,
    words,
    normalize,
    checkText,
    /** Promise of {tokens, text, unknown, notes, ended, src_tokens, decoder_tokens,
     *  attention: {encoder_self, decoder_self, cross}} with attention as [layer][head][query][key]. */
    async translate(text, options) { // options.step: one of snapshots (none: the shipped model)
      checkText(text); // before loading: an empty box costs no download
      const model = await modelAt(options ? options.step : undefined);
      return model.translate(text);
    },
    async tokenize(text) {
      const model = await load();
      return model.tokenize(text);
    },
  };
})();
