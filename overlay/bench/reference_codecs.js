// The reference side of `euchre-overlay bench codecs --reference PATH` (see overlay/bench/codecs.py).
//
// Usage: node reference_codecs.js PATH, where PATH is a built `euchre-game-notation` package
// folder (or its entry file): anything `require` accepts.  The driver speaks one JSON object
// per line on stdin/stdout, so the Python side can interleave its own timed passes with ours:
//
//   {"cmd": "load", "docs": [...]}  -> {"condensed": [b64|null], "expanded": [b64|null], "errors": [...]}
//       encodes every document in both forms once (null where the reference refuses it);
//   {"cmd": "keep", "indices": [...]} -> {"games": n}   the corpus every later pass runs over;
//   {"cmd": "time", "case": NAME}   -> {"seconds": s}  one timed pass of a case over the corpus;
//   {"cmd": "quit"}.
//
// What one pass times, per game, through the reference's public functions:
//   *_encode: convertEgnFileToBinData(doc, condensed), i.e. annotation-key check, JSON schema
//             validation (ajv), deal packing, protobuf encode, magic byte; the input is the
//             already parsed document (no JSON.parse).
//   *_decode: convertBinDataToEgnFile(bytes, condensed), i.e. protobuf decode, toObject,
//             key mapping, deal unpacking, JSON schema validation; no JSON.stringify.
// Each result is dropped at once, as the Python side drops its own (see _each there).
"use strict";

const path = require("path");
const readline = require("readline");

const egn = require(path.resolve(process.argv[2]));

let docs = [];
let blobs = { condensed: [], expanded: [] };
let kept = [];

function b64(bytes) {
  return Buffer.from(bytes).toString("base64");
}

function load(input) {
  docs = input;
  const out = { condensed: [], expanded: [], errors: [] };
  for (const doc of docs) {
    for (const form of ["condensed", "expanded"]) {
      try {
        const bytes = egn.convertEgnFileToBinData(doc, form === "condensed");
        egn.convertBinDataToEgnFile(bytes, form === "condensed");
        out[form].push(b64(bytes));
      } catch (err) {
        out[form].push(null);
        out.errors.push(String(err && err.message ? err.message : err).slice(0, 200));
      }
    }
  }
  blobs = {
    condensed: out.condensed.map((s) => (s === null ? null : Buffer.from(s, "base64"))),
    expanded: out.expanded.map((s) => (s === null ? null : Buffer.from(s, "base64"))),
  };
  return out;
}

function pass(name) {
  const [form, op] = name.split("_");
  const condensed = form === "condensed";
  const start = process.hrtime.bigint();
  if (op === "encode") {
    for (const i of kept) egn.convertEgnFileToBinData(docs[i], condensed);
  } else {
    const list = blobs[form];
    for (const i of kept) egn.convertBinDataToEgnFile(list[i], condensed);
  }
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  let reply;
  if (msg.cmd === "load") reply = load(msg.docs);
  else if (msg.cmd === "keep") {
    kept = msg.indices;
    reply = { games: kept.length };
  } else if (msg.cmd === "time") reply = { seconds: pass(msg.case) };
  else if (msg.cmd === "quit") {
    rl.close();
    return;
  } else reply = { error: `unknown command ${msg.cmd}` };
  process.stdout.write(JSON.stringify(reply) + "\n");
});
