/* Decoding step by step in the reader's browser: window.bookModel.trace.
 *
 * decoding.beam_search, one step at a time, on book-model.js's model core (its encoder, decoder
 * steps with key/value caches and output projection: no second copy of the maths here), recorded
 * as transformer_lib.decoding_steps.trace_decoding records it: at every step the live beams read
 * (prefix, log-probability, top candidates, the cross-attention row of the query reading the last
 * token), the best extension (the token being chosen), the beams kept and the hypotheses that
 * ended. With one beam this is greedy decoding. The length rule and the length-penalty alpha come
 * from the manifest the build writes (browser.model). tests/test_live_stepper.py compares the two.
 */
(function () {
  "use strict";
  const bookModel = window.bookModel;
  if (!bookModel || bookModel.trace) return;
  const { ReaderError, Model } = bookModel;
  const MAX_BEAM = 4; // the stepper's choices: greedy (1) and beam search (2 to 4)

  function logSoftmax(logits, banned) { // decoding.next_token_logits (float32 logits, banned at -inf) + log_softmax
    const v = Float64Array.from(logits, (x) => Math.fround(x));
    for (const id of banned) v[id] = -Infinity;
    let max = -Infinity;
    for (const x of v) if (x > max) max = x;
    let sum = 0;
    for (const x of v) sum += Math.exp(x - max);
    const shift = max + Math.log(sum);
    for (let i = 0; i < v.length; i++) v[i] -= shift;
    return v;
  }

  function topCandidates(logProbs, vocab, k) {
    const order = Array.from(logProbs.keys()).sort((a, b) => logProbs[b] - logProbs[a] || a - b);
    return order.slice(0, k).map((i) => [vocab[i], Math.exp(logProbs[i])]);
  }

  function copyCaches(caches) { // a beam's caches for a beam that continues it (keys are never changed)
    return caches.map((c) => ({ self: { keys: c.self.keys.slice(), values: c.self.values.slice() },
      crossKeys: c.crossKeys, crossValues: c.crossValues }));
  }

  // decoding.beam_search of one sentence, recorded: the payload of decoding_steps.SearchTrace.
  function traceIds(model, ids, beamSize) {
    const vocab = model.tgtVocab;
    const { sos, eos, pad } = model.ids;
    const alpha = model.lengthRule.alpha;
    const maxLen = model.maxNewTokens(ids.length);
    const penalty = (length) => Math.pow((5 + length) / 6, alpha); // decoding.length_penalty
    const { memory } = model.encode(ids);
    let beams = [{ ids: [sos], logProb: 0, caches: model.newCache(memory) }];
    const finished = []; // every hypothesis, in the order beam_search finishes them
    const steps = [];
    let done = false;
    for (let step = 0; step < maxLen; step++) {
      const read = beams.map((beam) => {
        const r = model.decodeStep(beam.ids[beam.ids.length - 1], step, beam.caches);
        return { logProbs: logSoftmax(model.logits(r.x, "generator"), [pad, sos]), cross: r.crossRows };
      });
      const extensions = []; // every (beam, token), ranked as beam_search's topk over k * V scores
      read.forEach((r, j) => r.logProbs.forEach((lp, token) =>
        extensions.push({ beam: j, token, score: beams[j].logProb + lp, flat: j * vocab.length + token })));
      extensions.sort((a, b) => b.score - a.score || a.flat - b.flat);
      const kept = [];
      const ended = [];
      for (let rank = 0; rank < Math.min(2 * beamSize, extensions.length); rank++) {
        const c = extensions[rank];
        if (c.score === -Infinity) break;
        const generated = [...beams[c.beam].ids.slice(1), c.token];
        if (c.token === eos) {
          if (rank < beamSize) ended.push({ ids: generated.slice(0, -1), logProb: c.score,
            score: c.score / penalty(generated.length), eos: true });
          continue;
        }
        kept.push({ beam: c.beam, ids: generated, logProb: c.score });
        if (kept.length === beamSize) break;
      }
      finished.push(...ended);
      done = finished.length >= beamSize;
      const best = extensions[0];
      const record = {
        step: step + 1,
        beams: beams.map((beam, j) => ({ prefix: beam.ids.map((i) => vocab[i]), log_prob: beam.logProb,
          candidates: topCandidates(read[j].logProbs, vocab, bookModel.theme().limits.trace_top_k), cross: read[j].cross.map((layer) =>
            layer.map((row) => Array.from(row))) })),
        kept: done ? [] : kept.map((b) => ({ beam: b.beam, tokens: b.ids.map((i) => vocab[i]), log_prob: b.logProb })),
        finished: ended.map((h) => ({ tokens: h.ids.map((i) => vocab[i]), log_prob: h.logProb, score: h.score })),
        chosen: { beam: best.beam, token: vocab[best.token], probability: Math.exp(read[best.beam].logProbs[best.token]) },
      };
      steps.push(record);
      if (done) break;
      if (step === maxLen - 1) { // cut at max_len: the live beams finish as they stand
        for (const b of kept) {
          const h = { ids: b.ids, logProb: b.logProb, score: b.logProb / penalty(b.ids.length), eos: false };
          finished.push(h);
          record.finished.push({ tokens: h.ids.map((i) => vocab[i]), log_prob: h.logProb, score: h.score });
        }
        record.kept = [];
        break;
      }
      beams = kept.map((b) => ({ ids: [sos, ...b.ids], logProb: b.logProb, caches: copyCaches(beams[b.beam].caches) }));
    }
    let best = finished[0];
    for (const h of finished) if (h.score > best.score) best = h; // max(): the first of equal scores
    return { beam_size: beamSize, max_len: maxLen, src_tokens: ids.map((i) => model.srcVocab[i]), steps,
      tokens: best.ids.map((i) => vocab[i]), ended: best.eos, alpha };
  }

  function checkOptions(options) {
    const { beam = 1, step = null } = options || {};
    if (!Number.isInteger(beam) || beam < 1 || beam > MAX_BEAM) {
      throw new ReaderError(`beam: expected a whole number from 1 to ${MAX_BEAM}, got ${beam}`);
    }
    if (step !== null && (!Number.isInteger(step) || step < 1)) {
      throw new ReaderError(`step: expected a whole number from 1, got ${step}`);
    }
    return { beam, step };
  }

  // The trace of the typed text, read as translate reads it; with a step, also that step as `current`.
  function traceText(model, typed, options) {
    const { beam, step } = checkOptions(options);
    const { ids, unknown, notes } = model.read(typed);
    const trace = traceIds(model, ids, beam);
    Object.assign(trace, { unknown, notes, text: trace.tokens.join(" ") });
    if (step !== null) {
      if (step > trace.steps.length) {
        throw new ReaderError(`step: this search took ${trace.steps.length} steps, got step ${step}`);
      }
      trace.current = trace.steps[step - 1];
    }
    return trace;
  }

  Model.prototype.trace = function (typed, options) { return traceText(this, typed, options); };

  /** Promise of {beam_size, max_len, src_tokens, steps, tokens, ended, text, unknown, notes[, current]}:
   *  decoding_steps.trace_decoding's record of the typed text (options: {beam: 1..4, step: 1..}). */
  bookModel.trace = async function (text, options) {
    bookModel.checkText(text); // before loading: an empty box costs no download
    checkOptions(options);
    const model = await bookModel.load();
    return model.trace(text, options);
  };
  bookModel.maxBeam = MAX_BEAM;
})();
