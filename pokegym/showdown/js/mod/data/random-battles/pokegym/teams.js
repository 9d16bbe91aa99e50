'use strict';
/**
 * Random teams for "[Gen 9] Designed Moves Random Battle": Gen 9 random battle teams in
 * which every Pokémon that has a designed move knows it (in place of its weakest
 * attack), and every team holds at least one such Pokémon when the library has one
 * with random-battle sets. All draws use the generator's seeded PRNG, so a seeded
 * battle stays reproducible.
 */
const gen9 = require('../gen9/teams');
const {library, toID} = require('../../mods/pokegym/library');

class DesignedMovesTeams extends gen9.RandomTeams {
  designedFor(speciesName) {
    const species = this.dex.species.get(speciesName);
    const ids = [species.id, toID(species.baseSpecies), toID(species.changesFrom)];
    return library.moves.filter((item) => item.pokemon.some((name) => ids.includes(toID(name))));
  }

  teachDesigned(set) {
    const options = this.designedFor(set.species);
    if (!options.length) return false;
    const item = this.sample(options);
    const known = set.moves.map(toID);
    if (known.includes(item.id)) return true;
    let slot = -1;
    let lowest = Infinity;
    set.moves.forEach((name, i) => {
      const move = this.dex.moves.get(name);
      if (move.category !== 'Status' && move.basePower < lowest) {
        lowest = move.basePower;
        slot = i;
      }
    });
    if (slot < 0) slot = set.moves.length - 1;
    set.moves[slot] = item.id;
    return true;
  }

  randomTeam() {
    const team = super.randomTeam();
    let taught = 0;
    for (const set of team) if (this.teachDesigned(set)) taught++;
    if (!taught && team.length) {
      const present = new Set(team.map((set) => this.dex.species.get(set.species).baseSpecies));
      const candidates = [];
      for (const item of library.moves) {
        for (const name of item.pokemon) {
          const species = this.dex.species.get(name);
          if (species.exists && this.randomSets[species.id] && !present.has(species.baseSpecies)) {
            candidates.push(species);
          }
        }
      }
      if (candidates.length) {
        const species = this.sample(candidates);
        const set = this.randomSet(species, {}, false, false);
        this.teachDesigned(set);
        team[team.length - 1] = set;
      }
    }
    return team;
  }
}

exports.RandomTeams = DesignedMovesTeams;
exports.default = DesignedMovesTeams;
