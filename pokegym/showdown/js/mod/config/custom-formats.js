'use strict';
// Formats added by pokegym. They use the `pokegym` mod (data/mods/pokegym): Gen 9 plus
// the designed moves of the library named by POKEGYM_MOVES_FILE.
exports.Formats = [
  {section: 'pokegym'},
  {
    name: '[Gen 9] Designed Moves',
    desc: 'Gen 9 OU in which Pokémon may know the designed moves approved for them.',
    mod: 'pokegym',
    ruleset: ['[Gen 9] OU'],
  },
  {
    name: '[Gen 9] Designed Moves Random Battle',
    desc: 'Gen 9 random battles in which Pokémon know the designed moves approved for them.',
    mod: 'pokegym',
    team: 'random',
    ruleset: ['Obtainable', 'Species Clause', 'HP Percentage Mod', 'Cancel Mod', 'Sleep Clause Mod', 'Illusion Level Mod'],
  },
];
