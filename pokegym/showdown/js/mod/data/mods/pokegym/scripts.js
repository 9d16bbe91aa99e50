'use strict';
// Gen 9 with pokegym's designed moves: each move is learnable (as a TM, source "9M")
// by the Pokémon it was designed for, so teams that use it pass Showdown's validator.
const {library, toID} = require('./library');

exports.Scripts = {
  gen: 9,
  inherit: 'gen9',
  init() {
    for (const item of library.moves) {
      for (const name of item.pokemon) {
        let id = toID(name);
        if (!this.data.Learnsets[id]) {
          const species = this.species.get(name);
          id = toID(species.changesFrom || species.baseSpecies);
        }
        if (!this.data.Learnsets[id]) continue;
        const entry = this.modData('Learnsets', id);
        entry.learnset = Object.assign({}, entry.learnset, {[item.id]: ['9M']});
      }
    }
  },
};
