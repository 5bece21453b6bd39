/* Chapter 8's language model, run in the reader's browser: window.bookLM.
 *
 * Plain JavaScript (ES2017), built on the one JS model core of book-model.js (window.bookModel.Core:
 * embeddings, projections, norms, residuals, cached self-attention, output logits), so no attention
 * maths is copied here. It computes what transformer_lib computes:
 *   model             models.DecoderOnlyTransformer: causal self-attention blocks on a key/value cache
 *   next draw         sampling.next_token_probs as language_model.next_word_probs calls it: after <sos>
 *                     and the prompt's words, the tokens of language_model.never_drawn (<pad>, <sos>,
 *                     <unk>; the manifest lists them) out, the temperature first (tempered_logits: best
 *                     logit shifted to 0, then / T), then sampling.filter_logits (top-k keeps every token
 *                     at least as large as the k-th; top-p the smallest most-probable set reaching p, ties
 *                     with its least probable token kept), then softmax; temperature 0 is greedy
 *   continuation      sampling.sample_continuation: one draw a step until <eos> or maxNew tokens, from a
 *                     seeded generator of its own (mulberry32), so a seed gives the same text in every page
 *   attention maps    capture.capture_attention for <sos> + the prompt's words
 * All arithmetic is in float64 on the float32 weights, as the chapter's double-precision model.
 * The weights (book-lm.bin) and the rest (book-lm.json) are written by transformer_lib.browser.model
 * (write_book_lm) at build time and fetched the first time they are needed.
 */
(function () {
  "use strict";
  if (window.bookLM) return;
  const book = window.bookModel; // book-model.js: loaded first
  const { Core, ReaderError, fill } = book;

  const hasDocument = typeof document !== "undefined";
  const scriptUrl = (hasDocument && document.currentScript && document.currentScript.src) ||
    (window.location && window.location.href) || "http://localhost/";
  const MANIFEST_URL = new URL("book-lm.json", scriptUrl).href;
  const MAX_SEED = 4294967295; // mulberry32's seeds: 32-bit unsigned integers

  // ------------------------------------------------------------------ the sampling maths, once

  function argmax(values) { // the first maximum, as torch.argmax
    let best = 0;
    for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
    return best;
  }

  function softmax(logits) { // -inf -> 0
    let max = -Infinity;
    for (const v of logits) if (v > max) max = v;
    const out = new Float64Array(logits.length);
    let sum = 0;
    for (let i = 0; i < logits.length; i++) {
      out[i] = logits[i] === -Infinity ? 0 : Math.exp(logits[i] - max);
      sum += out[i];
    }
    for (let i = 0; i < out.length; i++) out[i] /= sum;
    return out;
  }

  function tempered(logits, temperature) { // sampling.tempered_logits
    let max = -Infinity;
    for (const v of logits) if (v > max) max = v;
    return Float64Array.from(logits, (v) => (v - max) / temperature);
  }

  function filterLogits(logits, topK, topP) { // sampling.filter_logits, ties kept in both filters
    let out = Float64Array.from(logits);
    if (topK !== null && topK < out.length) {
      const kth = Array.from(out).sort((a, b) => b - a)[topK - 1];
      out = out.map((v) => (v < kth ? -Infinity : v));
    }
    if (topP !== null && topP < 1) {
      const probs = softmax(out);
      const ranked = Array.from(probs).sort((a, b) => b - a); // most probable first
      let mass = 0;
      let boundary = Infinity;
      for (const p of ranked) { // the nucleus: each token with less than top_p ranked before it
        mass += p;
        if (mass - p < topP && p < boundary) boundary = p;
      }
      out = out.map((v, i) => (probs[i] < boundary ? -Infinity : v));
    }
    return out;
  }

  // sampling.next_token_probs: banned out, temperature, filter, softmax; temperature 0: one-hot
  function nextTokenProbs(logits, { temperature, topK, topP }, banned) {
    const allowed = Float64Array.from(logits);
    for (const id of banned) allowed[id] = -Infinity;
    if (temperature === 0) {
      const probs = new Float64Array(allowed.length);
      probs[argmax(allowed)] = 1;
      return probs;
    }
    return softmax(filterLogits(tempered(allowed, temperature), topK, topP));
  }

  const mulberry32 = window.bookText.mulberry32; // book-text.js: the page's one seeded generator

  function draw(probs, uniform) { // the id whose share of [0, 1) holds a uniform number, in id order
    const u = uniform();
    let mass = 0;
    let last = 0;
    for (let i = 0; i < probs.length; i++) {
      if (probs[i] <= 0) continue;
      mass += probs[i];
      last = i;
      if (u < mass) return i;
    }
    return last; // rounding left u above the total mass: the last possible token
  }

  // ------------------------------------------------------------------ the reader's settings

  // The explorer's checks and messages (transformer_lib.browser.lm_explorer.read_lm_settings does the
  // same in the kernel; tests/test_live_lm.py compares the two). Numbers or null for "off".
  function checkSettings(options) {
    const o = Object.assign({ temperature: 1, topK: null, topP: null }, options || {});
    const bad = (name, value) => new ReaderError(fill(name, { value: String(value) }));
    if (typeof o.temperature !== "number" || !Number.isFinite(o.temperature) || o.temperature < 0) {
      throw bad("lm_temperature", o.temperature);
    }
    if (o.topK !== null && !(Number.isInteger(o.topK) && o.topK >= 1)) throw bad("lm_top_k", o.topK);
    if (o.topP !== null && !(typeof o.topP === "number" && o.topP > 0 && o.topP <= 1)) throw bad("lm_top_p", o.topP);
    return { temperature: o.temperature, topK: o.topK, topP: o.topP };
  }

  function checkSeed(seed) {
    if (!(Number.isInteger(seed) && seed >= 0 && seed <= MAX_SEED)) {
      throw new ReaderError(fill("lm_seed", { value: String(seed), max: MAX_SEED }));
    }
    return seed;
  }

  function checkPrompt(prompt) {
    if (typeof prompt !== "string") throw new ReaderError(`prompt: expected a str, got ${typeof prompt}`);
  }

  // ------------------------------------------------------------------ the model

  class LanguageModel extends Core {
    constructor(manifest, buffer) {
      super(manifest, buffer);
      this.vocab = manifest.tgt_vocab;
      this.index = new Map(this.vocab.map((token, i) => [token, i]));
      this.neverDrawn = manifest.never_drawn;
    }

    tokenize(text) { // the prompt's ids (Core.encodeWords)
      return this.encodeWords(text, this.index);
    }

    newCache() { // one growing cache of keys and values per block
      return Array.from({ length: this.config.n_decoder_layers }, () => ({ keys: [], values: [] }));
    }

    // DecoderOnlyTransformer.forward for one new token at position pos, on the cache: its logits and,
    // per layer and head, its attention row over the positions so far.
    step(id, pos, cache) {
      const cfg = this.config;
      let x = this.embed("embed", id, pos);
      const rows = [];
      for (let l = 0; l < cfg.n_decoder_layers; l++) {
        const p = `blocks.layers.${l}`;
        x = this.residual(`${p}.attn_residual`, x, (y) => {
          const r = this.cachedSelfAttention(`${p}.self_attn`, y, cache[l]);
          rows.push(r.weights);
          return r.output;
        });
        x = this.residual(`${p}.ff_residual`, x, (y) => this.feedForward(`${p}.feed_forward`, y));
      }
      if (cfg.norm_first) x = this.norm("blocks.final_norm", x);
      return { logits: this.logits(x, "lm_head"), rows };
    }

    // <sos> and the prompt's words, read: the cache, the last logits and the attention maps.
    read(prompt) {
      checkPrompt(prompt);
      const [text, changes] = book.normalize(prompt); // as the training sentences are written
      const { ids: wordIds, unknown } = this.tokenize(text);
      const notes = [];
      // the notes of lm_explorer's _read_prompt: long text shortened as validation.shorten does
      const shorten = (s, limit) => (s.length <= limit ? s : s.slice(0, limit - 1) + "\u2026");
      if (changes.length) notes.push(fill("read_as", { text: shorten(text, 80), changes: changes.join("; ") }));
      // most words unknown (English, say): what to type instead comes first
      if (2 * unknown.length > wordIds.length) notes.push(fill("lm_writes_french", {}));
      if (unknown.length) notes.push(fill("unknown", { unk: this.vocab[this.ids.unk],
        words: [...new Set(unknown)].map((word) => fill("unknown_word", { word: shorten(word, 40) })).join(", ") }));
      const ids = [this.ids.sos, ...wordIds];
      if (ids.length > this.config.max_len) {
        throw new ReaderError(fill("lm_too_long", { typed: wordIds.length, read: this.config.max_len - 1 }));
      }
      const cache = this.newCache();
      const stepRows = [];
      let logits = null;
      ids.forEach((id, pos) => {
        const r = this.step(id, pos, cache);
        stepRows.push(r.rows);
        logits = r.logits;
      });
      return { text, ids, unknown, notes, cache, logits, stepRows };
    }

    // [layer][head][query][key], the future keys at 0 (the causal mask), as capture_attention gives them
    maps(stepRows) {
      const n = stepRows.length;
      const out = [];
      for (let l = 0; l < this.config.n_decoder_layers; l++) {
        const layer = [];
        for (let head = 0; head < this.config.n_heads; head++) {
          layer.push(stepRows.map((rows) => {
            const row = new Array(n).fill(0);
            rows[l][head].forEach((w, j) => { row[j] = w; });
            return row;
          }));
        }
        out.push(layer);
      }
      return out;
    }

    next(prompt, options) {
      const settings = checkSettings(options);
      const r = this.read(prompt);
      const probs = nextTokenProbs(r.logits, settings, this.neverDrawn);
      const unfiltered = nextTokenProbs(r.logits, { temperature: settings.temperature, topK: null, topP: null },
        this.neverDrawn);
      return {
        probs: Array.from(probs), // the next draw's distribution, over the vocabulary in id order
        unfiltered: Array.from(unfiltered), // the same before top-k and top-p
        kept: Array.from(probs, (p) => p > 0),
        vocab: this.vocab,
        text: r.text,
        notes: r.notes,
        unknown: r.unknown,
        tokens: r.ids.map((i) => this.vocab[i]), // <sos> and the prompt's words, as the maps' axes
        attention: this.maps(r.stepRows),
        settings,
      };
    }

    sample(prompt, options) {
      const o = options || {};
      const settings = checkSettings(o);
      const seed = checkSeed(o.seed === undefined ? 0 : o.seed);
      const r = this.read(prompt);
      const room = this.config.max_len - r.ids.length + 1; // sample_continuation's limit
      const maxNew = o.maxNew === undefined ? Math.min(book.theme().limits.lm_max_new_tokens, room) : o.maxNew;
      if (!(Number.isInteger(maxNew) && maxNew >= 1 && maxNew <= room)) {
        throw new ReaderError(fill("lm_max_new", { value: String(maxNew), room }));
      }
      const uniform = mulberry32(seed);
      const drawn = [];
      let ended = false;
      let logits = r.logits;
      for (let step = 0; step < maxNew; step++) {
        const probs = nextTokenProbs(logits, settings, this.neverDrawn);
        const next = settings.temperature === 0 ? argmax(probs) : draw(probs, uniform);
        if (next === this.ids.eos) { ended = true; break; }
        drawn.push(next);
        if (step + 1 < maxNew) logits = this.step(next, r.ids.length + step, r.cache).logits;
      }
      const tokens = drawn.map((i) => this.vocab[i]);
      return { ids: drawn, tokens, text: tokens.join(" "), ended, seed, maxNew, prompt: r.text, notes: r.notes,
        settings };
    }
  }

  // ------------------------------------------------------------------ loading, once, on first use

  let loading = null;
  function load() {
    if (!loading) {
      loading = (async () => {
        const started = performance.now();
        const { manifest, buffer } = await book.fetchModelFiles(MANIFEST_URL);
        const model = new LanguageModel(manifest, buffer);
        window.bookLM.loadMs = performance.now() - started;
        return model;
      })();
      loading.catch(() => { loading = null; }); // a failed load may be retried
    }
    return loading;
  }

  window.bookLM = {
    manifestUrl: MANIFEST_URL,
    loadMs: null,
    load,
    LanguageModel, // the model on a manifest and its weights, without fetching (tests run it in Node)
    sampling: { nextTokenProbs, filterLogits, tempered, softmax, argmax, mulberry32, draw },
    checkSettings,
    checkSeed,
    maxSeed: MAX_SEED,
    /** Promise of {probs, unfiltered, kept, vocab, text, notes, unknown, tokens, attention, settings}:
     *  probs is the next draw's distribution over the whole vocabulary, in the library's id order;
     *  attention is [layer][head][query][key] over <sos> and the prompt's words. */
    async next(prompt, options) {
      checkPrompt(prompt);
      checkSettings(options); // before loading: a wrong setting costs no download
      return (await load()).next(prompt, options);
    },
    /** Promise of {ids, tokens, text, ended, seed, maxNew, prompt, notes, settings}: a continuation drawn with
     *  the seeded generator, until <eos> or maxNew tokens (default language_model.MAX_NEW_TOKENS, from the
     *  theme, or what the positions allow). */
    async sample(prompt, options) {
      checkPrompt(prompt);
      checkSettings(options);
      checkSeed(options && options.seed !== undefined ? options.seed : 0);
      return (await load()).sample(prompt, options);
    },
  };
})();
