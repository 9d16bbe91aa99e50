'use strict';
/**
 * pokegym simulator bridge: one Node process hosting many Showdown battles.
 *
 * Protocol (newline-delimited JSON over stdin/stdout, strictly request/response):
 *   in : {"c": [[op, ...args], ...]}      one line, a batch of commands
 *   out: {"r": [result, ...]}             one line, a result per command, in order
 *
 * Commands
 *   ["start", id, spec]      spec = {formatid, seed, p1: {name, team, seed}, p2: {...}, log}
 *                            team: export text, packed text or null (random formats)
 *   ["write", id, text]      simulator input lines, e.g. ">p1 move 1\n>p2 switch 3"
 *   ["close", id]            drop a battle (finished or abandoned)
 *   ["format", formatid]     facts about a format, or {"error": ...} when unknown
 *   ["validate", formatid, team]  -> {"problems": [...] | null}
 *   ["teams", id]            -> [p1 sets, p2 sets]: the full sets both sides play (omniscient)
 *   ["generate", formatid, seed]  -> one random team of a random-team format (sets)
 *   ["import", team]         -> the sets of a team given as export or packed text
 *   ["dex", gen]             -> Showdown's species, moves, items, abilities, natures and
 *                               type chart for a generation (JSON fields only)
 *   ["damage", formatid, attackerSet, defenderSet, moveId, options]
 *                            -> Showdown's own damage for one attacker/defender/move in a
 *                               fresh battle, for each of the 16 damage rolls, without and
 *                               with a critical hit (the reference the damage calculator is
 *                               tested against; see damageReference below for the options)
 *   ["speed", formatid, p1Set, p2Set, options]
 *                            -> Showdown's own Speed for two Pokémon in a fresh battle:
 *                               getStat('spe') and getActionSpeed() (the reference
 *                               pokegym.world.speed is tested against; see speedReference)
 *   ["ping"]                 -> "pong"
 *   ["stats", gc]            -> battle count, memory (after a full GC if gc) and CPU use
 *   ["crash"]                exits the process (tests use it)
 *
 * A battle command returns [p1Text, p2Text, logText, ended, errors, p1Requests,
 * p2Requests]: the protocol lines each player would receive (Showdown's own
 * per-side split of `|split|` blocks), the spectator log when asked for, whether
 * the battle has ended, any simulator exceptions, and the `|request|` objects each
 * player received (they come after that player's lines). `|t:|` timestamp lines are dropped so a
 * seeded battle replays byte for byte.
 */
const path = require('path');
const fs = require('fs');

const showdownDir = process.argv[2];
if (!showdownDir) {
  process.stderr.write('usage: node sim_bridge.js <pokemon-showdown package dir>\n');
  process.exit(2);
}
const sim = require(path.join(showdownDir, 'dist', 'sim'));
const {extractChannelMessages} = require(path.join(showdownDir, 'dist', 'sim', 'battle'));
const {Battle, BattleStream, Teams, TeamValidator, Dex} = sim;

const battles = new Map();
// CPU accounting for `stats` (benchmarks): simulator work vs. the bridge's own.
const usage = {writes: 0, simulatorMicros: 0, outputMicros: 0};
const TIMESTAMP = /^\|t:\|/;

function keep(lines) {
  const out = [];
  for (const line of lines) if (!TIMESTAMP.test(line)) out.push(line);
  return out;
}

function readTeam(team) {
  if (team === null || team === undefined || team === '') return null;
  if (Array.isArray(team)) return team;
  if (team.includes('\n') || team.includes('\r')) {
    const sets = Teams.import(team);
    if (!sets || !sets.length) throw new Error('could not read the team text');
    return sets;
  }
  return Teams.unpack(team);
}

class HostedBattle {
  constructor(id, spec) {
    this.id = id;
    this.buf = {p1: [], p2: [], log: spec.log ? [] : null};
    this.requests = {p1: [], p2: []};
    this.ended = false;
    this.errors = [];
    this.logChannel = spec.log === 'omniscient' ? -1 : 0;
    const stream = new BattleStream({keepAlive: true});
    stream.pushMessage = (type, data) => this.receive(type, data);
    stream.pushError = (err) => this.errors.push(String((err && err.stack) || err));
    stream.pushEnd = () => {};
    this.stream = stream;
    const start = {formatid: spec.formatid};
    if (spec.seed) start.seed = spec.seed;
    this.write(`>start ${JSON.stringify(start)}`);
    for (const slot of ['p1', 'p2']) {
      const player = spec[slot] || {};
      const options = {name: player.name || slot};
      const team = readTeam(player.team);
      if (team) options.team = team;
      if (player.seed) options.seed = player.seed;
      this.write(`>player ${slot} ${JSON.stringify(options)}`);
    }
  }

  receive(type, data) {
    if (type === 'update') {
      const channels = this.buf.log ? [1, 2, this.logChannel] : [1, 2];
      const msgs = extractChannelMessages(data, channels);
      this.buf.p1.push(...keep(msgs[1]));
      this.buf.p2.push(...keep(msgs[2]));
      if (this.buf.log) this.buf.log.push(...keep(msgs[this.logChannel]));
    } else if (type === 'sideupdate') {
      const nl = data.indexOf('\n');
      const side = data.slice(0, nl);
      if (side !== 'p1' && side !== 'p2') return;
      const body = data.slice(nl + 1);
      if (body.startsWith('|request|')) {
        // Requests travel as raw JSON (not as an escaped string): see flush().
        if (body.length > 9) this.requests[side].push(body.slice(9));
      } else {
        this.buf[side].push(body);
      }
    } else if (type === 'end') {
      this.ended = true;
    }
  }

  write(text) {
    // BattleStream._write runs the commands synchronously and flushes the
    // battle's updates through pushMessage before returning.
    this.stream._write(text);
  }

  /**
   * The battle's news since the last flush, as the JSON text of
   * [p1Text, p2Text, logText, ended, errors, p1Requests, p2Requests].
   * Request objects are spliced in as the simulator wrote them, so they are
   * neither escaped here nor decoded twice on the Python side.
   */
  flush() {
    const head = JSON.stringify([
      this.buf.p1.join('\n'),
      this.buf.p2.join('\n'),
      this.buf.log ? this.buf.log.join('\n') : null,
      this.ended,
      this.errors,
    ]);
    const out = `${head.slice(0, -1)},[${this.requests.p1.join(',')}],[${this.requests.p2.join(',')}]]`;
    this.buf.p1 = [];
    this.buf.p2 = [];
    if (this.buf.log) this.buf.log = [];
    this.requests.p1 = [];
    this.requests.p2 = [];
    this.errors = [];
    return new RawJSON(out);
  }
}

/** A result already serialised to JSON text. */
class RawJSON {
  constructor(text) {
    this.text = text;
  }
}

function formatInfo(formatid) {
  const format = Dex.formats.get(formatid);
  if (!format.exists || format.effectType !== 'Format') {
    return {error: `unknown format ${formatid}`};
  }
  const ruleTable = Dex.formats.getRuleTable(format);
  const dex = Dex.forFormat(format);
  return {
    id: format.id,
    name: format.name,
    mod: format.mod,
    gen: dex.gen,
    gameType: format.gameType || 'singles',
    randomTeams: !!format.team,
    teamPreview: ruleTable.has('teampreview'),
    pickedTeamSize: ruleTable.pickedTeamSize || null,
    maxTeamSize: ruleTable.maxTeamSize || 6,
    dynamax: dex.gen === 8 && !ruleTable.has('dynamaxclause'),
    terastal: dex.gen === 9 && !ruleTable.has('terastalclause'),
  };
}

/** Showdown's data for one generation, as plain JSON (effect callbacks are dropped). */
function dexData(gen) {
  const dex = Dex.forGen(gen);
  const pick = (entries) => {
    const out = {};
    for (const entry of entries) {
      if (entry.isNonstandard && entry.isNonstandard !== 'Past' && entry.isNonstandard !== 'Gigantamax') {
        continue;
      }
      // Keep which callbacks an effect has (names only), so data users can tell
      // e.g. a damage-modifying item from an inert one.
      const json = JSON.parse(JSON.stringify(entry));
      json.callbacks = Object.keys(entry).filter((key) => typeof entry[key] === 'function');
      out[entry.id] = json;
    }
    return out;
  };
  const typeChart = {};
  for (const type of dex.types.all()) {
    if (type.isNonstandard) continue;
    typeChart[type.name] = type.damageTaken;
  }
  return {
    gen,
    species: pick(dex.species.all()),
    moves: pick(dex.moves.all()),
    items: pick(dex.items.all()),
    abilities: pick(dex.abilities.all()),
    natures: pick(dex.natures.all()),
    typeChart,
  };
}

const ZERO_BOOSTS = {atk: 0, def: 0, spa: 0, spd: 0, spe: 0, accuracy: 0, evasion: 0};

function applyPokemonState(battle, pokemon, state) {
  state = state || {};
  if (state.itemRemoved) {
    pokemon.item = '';
    pokemon.itemState = {id: '', target: pokemon};
  }
  if (state.tera) battle.actions.terastallize(pokemon);
  if (state.status) {
    if (!pokemon.setStatus(state.status, pokemon, null, true)) {
      pokemon.status = state.status;
      pokemon.statusState = {id: state.status, target: pokemon};
    }
  } else if (pokemon.status) {
    pokemon.clearStatus();
  }
  for (const [id, bestStat] of Object.entries(state.volatiles || {})) {
    pokemon.addVolatile(id);
    if (pokemon.volatiles[id] && bestStat) pokemon.volatiles[id].bestStat = bestStat;
  }
  if (state.hp !== undefined && state.hp !== null) pokemon.hp = state.hp;
  pokemon.boosts = Object.assign({}, ZERO_BOOSTS, state.boosts || {});
  pokemon.activeTurns = state.activeTurns === undefined ? 1 : state.activeTurns;
  pokemon.newlySwitched = !!state.newlySwitched;
  if (state.timesAttacked) pokemon.timesAttacked = state.timesAttacked;
  if (state.fainted) pokemon.side.totalFainted = state.fainted;
}

/**
 * The first of `trySpreadMoveHit`'s checks (and spreadMoveHit's TryHit of the move) that
 * stops `move` from `attacker` on `defender`, by name, or '' when the move hits.
 */
function firstFailure(battle, attacker, defender, move) {
  if (!battle.singleEvent('Try', move, null, attacker, defender, move)) return 'try';
  if (!battle.singleEvent('PrepareHit', move, {}, defender, attacker, move)) return 'prepareHit';
  if (!battle.runEvent('PrepareHit', attacker, defender, move)) return 'prepareHit';
  if (!battle.runEvent('TryHit', defender, attacker, move)) return 'tryHit';
  if (!defender.runImmunity(move)) return 'type';
  if (move.flags['powder'] && !battle.dex.getImmunity('powder', defender)) return 'powder';
  if (!battle.singleEvent('TryImmunity', move, {}, defender, attacker, move)) return 'tryImmunity';
  if (move.ohko && (defender.volatiles['dynamax'] || attacker.level < defender.level ||
      (move.ohko !== true && defender.hasType(move.ohko)))) {
    return 'ohko';
  }
  if (!battle.singleEvent('TryHit', move, {}, defender, attacker, move)) return 'moveTryHit';
  return '';
}

/**
 * Showdown's damage for one hit of `moveId` from `attackerSet` (p1) on `defenderSet` (p2),
 * computed by Showdown itself: a fresh battle of `formatid` with one Pokémon a side, the
 * state in `options` applied, the move prepared as `useMove` prepares it (ModifyType,
 * ModifyMove), then the checks of `trySpreadMoveHit` in its order (the move's Try,
 * PrepareHit — Fling's power, Protean's type change —, TryHit, type immunity, powder,
 * the move's TryImmunity, the OHKO rules), then `battle.actions.getDamage` called once
 * per damage roll with the roll forced and the crit forced through `move.willCrit`
 * (`critRolls` are the numbers of a hit that crits if it can: CriticalHit handlers such
 * as Battle Armor still veto it; `rolls` force no crit, even for moves that always crit).
 *
 * options: {attacker: state, defender: state, weather, terrain, gravity, trickRoom,
 *           reflect, lightScreen, auroraVeil (on the defender's side), hit (move.hit),
 *           priorHits (with hit n: first play hits 1..n-1 for real, each through
 *           spreadMoveHit without a crit and with the move's DamagingHit and Update
 *           effects: Weak Armor, Disguise breaking...), chargeTurn (first run the move's
 *           own TryMove as on the turn it is chosen: Meteor Beam's +1 SpA, then the
 *           turn it hits if it charged), damageEvent (pass each roll through the
 *           target's Damage event: Disguise, Sturdy, Focus Sash)}
 * state:   {hp, boosts, status, tera, itemRemoved, volatiles: {id: bestStat}, activeTurns,
 *           newlySwitched, timesAttacked, fainted (allies fainted)}
 * Returns {rolls: [16], critRolls: [16], type, category, basePower, immune, fail,
 * priorDamage, defender: {species, hp, maxhp, boosts}}: a roll is Showdown's damage (a
 * number, or null when the move fails / does no damage); `fail` names the check that
 * stopped the move; `defender` is the target just before the hit asked about.
 */
function damageReference(formatid, attackerSet, defenderSet, moveId, options) {
  options = options || {};
  const battle = new Battle({formatid, seed: [1, 2, 3, 4]});
  battle.setPlayer('p1', {name: 'p1', team: [attackerSet]});
  battle.setPlayer('p2', {name: 'p2', team: [defenderSet]});
  if (battle.requestState === 'teampreview') battle.makeChoices('team 1', 'team 1');
  const attacker = battle.p1.active[0];
  const defender = battle.p2.active[0];
  const field = battle.field;
  field.clearWeather();
  field.clearTerrain();
  if (options.weather) field.setWeather(options.weather, attacker);
  if (options.terrain) field.setTerrain(options.terrain, attacker);
  if (options.gravity) field.addPseudoWeather('gravity', attacker);
  if (options.trickRoom) field.addPseudoWeather('trickroom', attacker);
  if (options.reflect) battle.p2.addSideCondition('reflect', defender);
  if (options.lightScreen) battle.p2.addSideCondition('lightscreen', defender);
  if (options.auroraVeil) battle.p2.addSideCondition('auroraveil', defender);
  applyPokemonState(battle, attacker, options.attacker);
  applyPokemonState(battle, defender, options.defender);
  attacker.updateSpeed();
  defender.updateSpeed();

  let move = battle.dex.getActiveMove(moveId);
  battle.setActiveMove(move, attacker, defender);
  if (options.chargeTurn) {
    // The turn the move is chosen; a move that charged hits on the next one.
    const charged = battle.singleEvent('TryMove', move, null, attacker, defender, move);
    if (charged === null) battle.singleEvent('TryMove', move, null, attacker, defender, move);
  }
  battle.singleEvent('ModifyType', move, null, attacker, defender, move, move);
  battle.singleEvent('ModifyMove', move, null, attacker, defender, move, move);
  move = battle.runEvent('ModifyType', attacker, defender, move, move);
  move = battle.runEvent('ModifyMove', attacker, defender, move, move);
  move.hit = 1;
  if (move.ignoreImmunity === undefined) move.ignoreImmunity = move.category === 'Status';
  const out = {type: move.type, category: move.category, immune: false, fail: '', rolls: [],
    critRolls: [], priorDamage: []};
  const fail = firstFailure(battle, attacker, defender, move);
  if (fail) {
    out.immune = true;
    out.fail = fail;
    for (let i = 0; i < 16; i++) {
      out.rolls.push(0);
      out.critRolls.push(0);
    }
    return out;
  }
  for (let hit = 1; options.priorHits && hit < (options.hit || 1); hit++) {
    move.hit = hit;
    const earlier = Object.assign(Object.create(Object.getPrototypeOf(move)), move);
    earlier.willCrit = move.willCrit || false;
    const [damage] = battle.actions.spreadMoveHit([defender], attacker, earlier);
    out.priorDamage.push(typeof damage[0] === 'number' ? damage[0] : null);
    battle.eachEvent('Update');
  }
  move.hit = options.hit || 1;
  out.defender = {species: defender.species.id, hp: defender.hp, maxhp: defender.maxhp,
    boosts: Object.assign({}, defender.boosts)};
  // Effects that are used up by a hit (resist berries, Gems...) are restored
  // between the forced calls, so every roll sees the same starting state.
  const saved = [attacker, defender].map((p) => ({
    pokemon: p, item: p.item, itemState: Object.assign({}, p.itemState),
    abilityState: Object.assign({}, p.abilityState), hp: p.hp,
  }));
  const random = battle.random;
  for (const crit of [false, true]) {
    for (let roll = 0; roll < 16; roll++) {
      for (const s of saved) {
        s.pokemon.item = s.item;
        s.pokemon.itemState = Object.assign({}, s.itemState);
        s.pokemon.abilityState = Object.assign({}, s.abilityState);
        s.pokemon.hp = s.hp;
      }
      const active = Object.assign(Object.create(Object.getPrototypeOf(move)), move);
      active.willCrit = crit;
      // randomizer(): damage * (100 - random(16)) / 100; roll 0 is the 85 % roll.
      battle.random = (m, n) => (m === 16 && n === undefined ? 15 - roll : random.call(battle, m, n));
      let damage;
      try {
        damage = battle.actions.getDamage(attacker, defender, active, true);
        if (options.damageEvent && typeof damage === 'number') {
          damage = battle.runEvent('Damage', defender, attacker, active, damage, true);
        }
      } finally {
        battle.random = random;
      }
      (crit ? out.critRolls : out.rolls).push(typeof damage === 'number' ? damage : null);
    }
  }
  for (const s of saved) {
    s.pokemon.item = s.item;
    s.pokemon.itemState = Object.assign({}, s.itemState);
    s.pokemon.abilityState = Object.assign({}, s.abilityState);
    s.pokemon.hp = s.hp;
  }
  out.basePower = move.basePower;
  return out;
}

/**
 * Showdown's Speed numbers for `p1Set` and `p2Set`, one Pokémon a side in a fresh battle
 * of `formatid` with the state in `options` applied (as damageReference applies it).
 *
 * options: {p1: state, p2: state, weather, terrain, trickRoom, tailwind: [p1, p2],
 *           swamp: [p1, p2]}   (state: see damageReference)
 * Returns {p1: {stat, action}, p2: {stat, action}}: `stat` is getStat('spe'), `action`
 * getActionSpeed() (Trick Room and the 13-bit truncation included).
 */
function speedReference(formatid, p1Set, p2Set, options) {
  options = options || {};
  const battle = new Battle({formatid, seed: [1, 2, 3, 4]});
  battle.setPlayer('p1', {name: 'p1', team: [p1Set]});
  battle.setPlayer('p2', {name: 'p2', team: [p2Set]});
  if (battle.requestState === 'teampreview') battle.makeChoices('team 1', 'team 1');
  const mons = [battle.p1.active[0], battle.p2.active[0]];
  const sides = [battle.p1, battle.p2];
  const field = battle.field;
  field.clearWeather();
  field.clearTerrain();
  if (options.weather) field.setWeather(options.weather, mons[0]);
  if (options.terrain) field.setTerrain(options.terrain, mons[0]);
  if (options.trickRoom) field.addPseudoWeather('trickroom', mons[0]);
  for (let i = 0; i < 2; i++) {
    if ((options.tailwind || [])[i]) sides[i].addSideCondition('tailwind', mons[i]);
    if ((options.swamp || [])[i]) sides[i].addSideCondition('grasspledge', mons[i]);
    applyPokemonState(battle, mons[i], options[i === 0 ? 'p1' : 'p2']);
  }
  const out = {};
  mons.forEach((mon, i) => {
    mon.updateSpeed();
    out[i === 0 ? 'p1' : 'p2'] = {stat: mon.getStat('spe'), action: mon.speed};
  });
  return out;
}

function validate(formatid, team) {
  const validator = TeamValidator.get(formatid);
  let sets;
  try {
    sets = readTeam(team);
  } catch (err) {
    return {problems: [`The team could not be read: ${err.message}`]};
  }
  if (!sets) return {problems: ['The team is empty.']};
  return {problems: validator.validateTeam(sets) || null, packed: Teams.pack(sets)};
}

function run(cmd) {
  const op = cmd[0];
  switch (op) {
    case 'start': {
      const [, id, spec] = cmd;
      if (battles.has(id)) throw new Error(`battle ${id} already exists`);
      const battle = new HostedBattle(id, spec);
      battles.set(id, battle);
      return battle.flush();
    }
    case 'write': {
      const battle = battles.get(cmd[1]);
      if (!battle) throw new Error(`no battle ${cmd[1]}`);
      const before = process.cpuUsage();
      battle.write(cmd[2]);
      const spent = process.cpuUsage(before);
      usage.writes++;
      usage.simulatorMicros += spent.user + spent.system;
      return battle.flush();
    }
    case 'close':
      battles.delete(cmd[1]);
      return true;
    case 'teams': {
      const battle = battles.get(cmd[1]);
      if (!battle) throw new Error(`no battle ${cmd[1]}`);
      return battle.stream.battle.sides.map((side) => side.team);
    }
    case 'generate':
      return Teams.generate(cmd[1], {seed: cmd[2]});
    case 'import':
      return readTeam(cmd[1]);
    case 'dex':
      return dexData(cmd[1]);
    case 'format':
      return formatInfo(cmd[1]);
    case 'validate':
      return validate(cmd[1], cmd[2]);
    case 'damage':
      return damageReference(cmd[1], cmd[2], cmd[3], cmd[4], cmd[5]);
    case 'speed':
      return speedReference(cmd[1], cmd[2], cmd[3], cmd[4]);
    case 'ping':
      return 'pong';
    case 'stats': {
      // ["stats", true] collects garbage first (Node runs with --expose-gc), so
      // that heapUsed measures live objects: what a leak check needs.
      if (cmd[1] && typeof global.gc === 'function') global.gc();
      const cpu = process.cpuUsage();
      const memory = process.memoryUsage();
      return {
        battles: battles.size,
        rss: memory.rss,
        heapUsed: memory.heapUsed,
        writes: usage.writes,
        simulatorSeconds: usage.simulatorMicros / 1e6,
        outputSeconds: usage.outputMicros / 1e6,
        processSeconds: (cpu.user + cpu.system) / 1e6,
      };
    }
    case 'crash':
      process.exit(3);
      return null;
    default:
      throw new Error(`unknown command ${op}`);
  }
}

function handle(line) {
  if (!line) return;
  let batch;
  try {
    batch = JSON.parse(line).c;
  } catch (err) {
    writeAll(JSON.stringify({fatal: `bad request line: ${err.message}`}) + '\n');
    return;
  }
  const results = [];
  for (const cmd of batch) {
    let result;
    try {
      result = run(cmd);
    } catch (err) {
      result = {error: String((err && err.stack) || err)};
    }
    results.push(result instanceof RawJSON ? result.text : JSON.stringify(result));
  }
  const before = process.cpuUsage();
  writeAll(`{"r":[${results.join(',')}]}\n`);
  const spent = process.cpuUsage(before);
  usage.outputMicros += spent.user + spent.system;
}

// Plain blocking writes to fd 1: the reader is waiting for exactly this line.
function writeAll(text) {
  const buf = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < buf.length) {
    try {
      offset += fs.writeSync(1, buf, offset);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
    }
  }
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    handle(line);
  }
});
process.stdin.on('end', () => process.exit(0));
