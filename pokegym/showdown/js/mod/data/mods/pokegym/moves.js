'use strict';
// The designed moves of pokegym's move library (see library.js), added to Gen 9's moves.
const {library} = require('./library');

const Moves = {};
for (const item of library.moves) {
  Moves[item.id] = Object.assign({}, item.entry);
}

exports.Moves = Moves;
