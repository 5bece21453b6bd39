/* The reader's text and the page's messages, for the book's models in the page: window.bookText.
 *
 * Plain JavaScript (ES2017), no dependency; loaded before book-model.js, which reads it and hands the
 * same functions on as window.bookModel's (theme, setTheme, fill, words, normalize, checkText,
 * ReaderError, whitespace): the explorers use those.
 *   words             Python's str.split(), which tokenization.Vocab.encode splits at
 *   normalize         tokenization.normalize_sentence, rule for rule (tests/test_live_model.py compares)
 *   checkText         what the explorer checks before any model is loaded
 * The messages come from the page's theme (transformer_lib.browser.theme), read by theme() below.
 */
(function () {
  "use strict";
  if (window.bookText) return;

  const hasDocument = typeof document !== "undefined";

  // The theme and messages of transformer_lib.browser.theme: the JSON the build writes into the page
  // (script#tc-live-theme), else the copy an explorer's HTML carries (script.tc-live-theme).
  let THEME = null;
  function theme() {
    if (!THEME && hasDocument) {
      const node = document.getElementById("tc-live-theme") || document.querySelector("script.tc-live-theme");
      if (node) THEME = JSON.parse(node.textContent);
    }
    if (!THEME) throw new Error("this page holds no theme (transformer_lib.browser.theme)");
    return THEME;
  }
  // A message template with {name} fields filled in, as Python's str.format fills them.
  function fill(name, values) {
    return theme().messages[name].replace(/\{(\w+)\}/g, (_, key) => String(values[key]));
  }

  // The characters Python's str.split() splits at (str.isspace), which Vocab.encode uses. JavaScript's
  // \\s is another set (it has U+FEFF and lacks U+001C..U+001F); tests/test_live_model.py compares.
  const WHITESPACE = new Set("\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004" +
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000");

  function words(text) { // str.split()
    const out = [];
    let word = "";
    for (const ch of text) {
      if (WHITESPACE.has(ch)) {
        if (word) out.push(word);
        word = "";
      } else {
        word += ch;
      }
    }
    if (word) out.push(word);
    return out;
  }

  // tokenization.normalize_sentence, rule for rule: typed text written the way the training
  // sentences are (tests/test_live_model.py compares the two on the same strings).
  const WORD_CHAR = /[\p{L}\p{N}_]/u; // Python's \w
  const NOT_A_LETTER = /[^\p{L}\p{N}_]|_|\p{Nd}/gu; // punctuation, digits, any other apostrophe
  const ELISION = /^(c|d|j|l|m|n|s|t|qu)'/u;
  const INVISIBLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Z}]$/u; // not str.isprintable(), or a space

  function normalize(text) { // -> [normalized text, changes]
    const changes = [];
    let out = text.normalize("NFC").replace(/[\u2019\u2018\u02bc`]/g, "'");
    if (out.toLowerCase() !== out) {
      out = out.toLowerCase();
      changes.push("capitals written in lower case");
    }
    let expanded = "";
    const chars = [...out];
    for (let i = 0; i < chars.length; i++) { // (\w)n't\b -> "\1 not"
      const tail = chars.slice(i + 1, i + 4).join("");
      if (WORD_CHAR.test(chars[i]) && tail === "n't" && !(i + 4 < chars.length && WORD_CHAR.test(chars[i + 4]))) {
        expanded += chars[i] + " not";
        i += 3;
      } else {
        expanded += chars[i];
      }
    }
    if (expanded !== out) {
      out = expanded;
      changes.push("\u201cn't\u201d written as \u201c not\u201d");
    }
    const kept = [];
    const removed = new Set();
    let split = false;
    for (let word of words(out)) {
      const elision = word.match(ELISION);
      if (elision && word.length > elision[0].length) { // j'aime: the elided word, then the rest
        kept.push(elision[0]);
        word = word.slice(elision[0].length);
        split = true;
      }
      const whole = word.match(ELISION);
      if (whole && whole[0] === word) {
        kept.push(word);
        continue;
      }
      for (const m of word.matchAll(NOT_A_LETTER)) removed.add(m[0]);
      kept.push(...words(word.replace(NOT_A_LETTER, " ")));
    }
    if (split) changes.push("elided words split after the apostrophe");
    if (removed.size) {
      const shown = [...removed].sort((a, b) => a.codePointAt(0) - b.codePointAt(0)).map((c) =>
        INVISIBLE.test(c) ? "U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") : c);
      changes.push("removed: " + shown.join(" "));
    }
    return [kept.join(" "), changes];
  }

  // What the explorer checks before any model is loaded: a string with at least one word.
  function checkText(text) {
    if (typeof text !== "string") throw new ReaderError(`sentence: expected a str, got ${typeof text}`);
    if (words(text).length === 0) throw new ReaderError(fill("empty", {}), "info");
  }

  // Why a typed text left no words to read (browser.explorers.no_words_message): digits are named.
  function noWords(typed) {
    return fill(/\p{Nd}/u.test(typed) ? "no_words_digits" : "no_words", {});
  }

  // The translator's notes on how its model read a sentence, browser.explorers.reading_notes rule for
  // rule (with the "read as" note first, as the explorers put it): `unknown`, the unknown words read;
  // `typed`, the number of tokens typed; `ids`, those read; `isTarget(word)`, whether the model writes it.
  function readingNotes({ text, changes, unknown, unk, typed, ids, isTarget }) {
    const notes = [];
    const quoted = (list) => list.map((word) => fill("unknown_word", { word })).join(", ");
    if (changes.length) notes.push(fill("read_as", { text, changes: changes.join("; ") }));
    if (unknown.length) {
      const distinct = [...new Set(unknown)];
      const target = distinct.filter(isTarget);
      if (target.length && 2 * unknown.filter(isTarget).length >= ids.length) {
        notes.push(fill("french", { words: quoted(target) })); // what to do comes first
      }
      notes.push(fill("unknown", { unk, words: quoted(distinct) }));
      notes.push(fill("unknown_guess", { words: quoted(distinct) }));
    }
    if (typed > ids.length) notes.push(fill("too_long", { typed, read: ids.length }));
    if (ids.length === 1) notes.push(fill("one_word", {})); // the corpus has no one-word sentence
    else if (!unknown.length && new Set(ids).size === 1) notes.push(fill("repeated_word", {}));
    return notes;
  }

  class ReaderError extends Error {
    constructor(message, level) {
      super(message);
      this.name = "ReaderError";
      this.level = level || "error"; // "info" for an empty box: nothing is wrong yet
    }
  }

  function mulberry32(seed) { // a small seeded generator of uniform numbers in [0, 1) (book-lm.js's draws too)
    let t = seed >>> 0;
    return () => {
      t = (t + 0x6d2b79f5) >>> 0;
      let r = Math.imul(t ^ (t >>> 15), 1 | t);
      r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
      return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
    };
  }

  window.bookText = {
    mulberry32,
    theme,
    setTheme(value) { THEME = value; }, // for a page without one (the tests in Node)
    fill,
    ReaderError,
    whitespace: [...WHITESPACE].join(""),
    words,
    normalize,
    checkText,
    noWords,
    readingNotes,
  };
})();
