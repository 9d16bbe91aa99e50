'use strict';
/**
 * pokegym's move library, as the Showdown mod `pokegym` sees it.
 *
 * The library is a JSON file written by pokegym (`pokegym moves approve`); its path
 * comes from the POKEGYM_MOVES_FILE environment variable, which pokegym sets for every
 * Showdown process it starts. It is read once, when a process first loads the mod:
 * a process started before a move was approved does not know that move.
 *
 *   {"version": 1, "moves": [{"id": "magmalance", "pokemon": ["Garchomp"],
 *                             "entry": {...a Showdown move entry...}, ...}]}
 */
const fs = require('fs');

const VERSION = 1;

function toID(text) {
  return String(text || '').toLowerCase().replace(/[^a-z0-9]+/g, '');
}

function loadLibrary() {
  const file = process.env.POKEGYM_MOVES_FILE;
  if (!file || !fs.existsSync(file)) return {version: VERSION, moves: [], file: file || null};
  let data;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`pokegym move library ${file} is not valid JSON (${err.message})`);
  }
  if (!data || data.version !== VERSION || !Array.isArray(data.moves)) {
    throw new Error(`${file} is not a pokegym move library of version ${VERSION}`);
  }
  for (const item of data.moves) {
    if (!item || !item.id || !item.entry || !Array.isArray(item.pokemon)) {
      throw new Error(`${file} holds a malformed move: ${JSON.stringify(item).slice(0, 200)}`);
    }
  }
  data.file = file;
  return data;
}

const library = loadLibrary();

module.exports = {library, toID};
