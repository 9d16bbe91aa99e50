// The page of `pokegym play --web` and `pokegym replay`.
// Every piece of text from the server is written with textContent (never innerHTML):
// names and nicknames are chosen by players and must show as text.
"use strict";

const TYPE_COLORS = {
  Normal: "#A8A77A", Fire: "#EE8130", Water: "#6390F0", Electric: "#F7D02C",
  Grass: "#7AC74C", Ice: "#96D9D6", Fighting: "#C22E28", Poison: "#A33EA1",
  Ground: "#E2BF65", Flying: "#A98FF3", Psychic: "#F95587", Bug: "#A6B91A",
  Rock: "#B6A136", Ghost: "#735797", Dragon: "#6F35FC", Dark: "#705746",
  Steel: "#B7B7CE", Fairy: "#D685AD", Stellar: "#40B5A5",
};
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

const page = {
  version: -1,
  state: null,
  polling: 0,          // a new poll loop bumps this; older loops stop
  clockOffset: 0,      // server time - local time, seconds
  logShown: 0,
  marked: 0,           // the last decision given a performance mark (for benchmarks)
  tera: false,
  replay: null,
  frame: 0,
};

// ------------------------------------------------------------------ helpers
function el(tag, options, children) {
  const node = document.createElement(tag);
  const o = options || {};
  if (o.cls) node.className = o.cls;
  if (o.text !== undefined && o.text !== null) node.textContent = String(o.text);
  if (o.title) node.title = String(o.title);
  if (o.attrs) for (const [k, v] of Object.entries(o.attrs)) node.setAttribute(k, String(v));
  for (const child of children || []) if (child) node.appendChild(child);
  return node;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

function typeBadge(type) {
  const badge = el("span", { cls: "type", text: type });
  badge.style.backgroundColor = TYPE_COLORS[type] || "#888";
  return badge;
}

function silhouette(types, size) {
  // A Pokémon without a sprite file: a creature shape in its type colours.
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 68 56");
  svg.setAttribute("width", String(size * 68 / 56));
  svg.setAttribute("height", String(size));
  svg.setAttribute("class", "silhouette");
  svg.setAttribute("role", "img");
  const first = TYPE_COLORS[(types || [])[0]] || "#777";
  const second = TYPE_COLORS[(types || [])[1]] || first;
  const body = document.createElementNS(SVG, "path");
  body.setAttribute("d",
    "M20 50 C10 50 8 40 12 33 C8 28 9 20 15 18 C14 10 20 5 27 8 C31 3 39 3 42 8 " +
    "C49 5 55 10 54 18 C60 21 61 29 56 33 C60 40 58 50 48 50 Z");
  body.setAttribute("fill", first);
  body.setAttribute("stroke", second);
  body.setAttribute("stroke-width", "3");
  body.setAttribute("opacity", "0.85");
  const eye1 = document.createElementNS(SVG, "circle");
  eye1.setAttribute("cx", "28"); eye1.setAttribute("cy", "22"); eye1.setAttribute("r", "3");
  eye1.setAttribute("fill", "#fff");
  const eye2 = eye1.cloneNode(); eye2.setAttribute("cx", "40");
  svg.append(body, eye1, eye2);
  return svg;
}

function spriteOf(mon, size) {
  if (mon && mon.sprite) {
    const img = el("img", { cls: "sprite", attrs: { src: mon.sprite, alt: mon.species } });
    img.height = size;
    return img;
  }
  const shape = silhouette(mon ? mon.types : [], size);
  const title = document.createElementNS(SVG, "title");
  title.textContent = mon ? mon.species : "unknown";
  shape.appendChild(title);
  return shape;
}

function hpBar(mon) {
  const pct = Math.max(0, Math.min(100, Math.round((mon.hp || 0) * 100)));
  const fill = el("div", { cls: "hp-fill" });
  fill.style.width = pct + "%";
  fill.classList.add(pct > 50 ? "hp-high" : pct > 20 ? "hp-mid" : "hp-low");
  return el("div", { cls: "hp-bar", attrs: { role: "meter", "aria-valuenow": pct,
    "aria-valuemin": 0, "aria-valuemax": 100 } }, [fill]);
}

function monTitle(mon) {
  // "Nickname (Species)" when the player named it, else the species.
  return mon.name && mon.name !== mon.species ? `${mon.name} (${mon.species})` : mon.species;
}

function effectivenessText(x) {
  if (x === null || x === undefined) return "";
  if (x === 0) return "no effect";
  if (x >= 4) return "×4 super effective";
  if (x >= 2) return "×2 super effective";
  if (x <= 0.25) return "×¼ resisted";
  if (x < 1) return "×½ resisted";
  return "×1";
}

async function api(method, path, data, signal) {
  // no-store: the browser neither caches nor queues a request behind an identical one
  // still in flight (Chromium holds a second GET of the same URL until the first ends).
  const options = { method, headers: {}, credentials: "same-origin", cache: "no-store", signal };
  if (data !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(data);
  }
  const response = await fetch(path, options);
  let payload = null;
  if (response.status !== 204) {
    try { payload = await response.json(); } catch (e) { payload = null; }
  }
  return { ok: response.ok, status: response.status, data: payload };
}

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

// ------------------------------------------------------------------- drawing
function drawInfo(box, mon, own) {
  clear(box);
  box.hidden = !mon;  // Team Preview: nobody is out yet
  if (!mon) return;
  const types = el("span", { cls: "types" }, (mon.types || []).map(typeBadge));
  box.appendChild(el("div", { cls: "mon-title" }, [
    el("span", { cls: "mon-name", text: monTitle(mon) }),
    el("span", { cls: "level", text: "L" + mon.level }), types]));
  box.appendChild(hpBar(mon));
  const line = el("div", { cls: "mon-line" }, [el("span", { cls: "hp-text", text: mon.hp_text })]);
  if (mon.status) line.appendChild(el("span", { cls: "status status-" + mon.status.toLowerCase(), text: mon.status }));
  for (const [stat, value] of Object.entries(mon.boosts || {})) {
    line.appendChild(el("span", { cls: value > 0 ? "boost up" : "boost down",
      text: `${stat} ${value > 0 ? "+" : ""}${value}` }));
  }
  if (mon.terastallized) line.appendChild(el("span", { cls: "tera on", text: `Tera ${mon.tera_type || ""}` }));
  else if (own && mon.tera_type) line.appendChild(el("span", { cls: "tera", text: `Tera type ${mon.tera_type}` }));
  box.appendChild(line);
  const facts = [];
  if (mon.ability) facts.push(`Ability: ${mon.ability}`);
  else if (mon.possible_abilities && mon.possible_abilities.length) facts.push(`Possible abilities: ${mon.possible_abilities.join(", ")}`);
  if (mon.item) facts.push(`Item: ${mon.item}`);
  if (!own && mon.moves && mon.moves.length) facts.push(`Revealed moves: ${mon.moves.map((m) => m.name).join(", ")}`);
  for (const fact of facts) box.appendChild(el("div", { cls: "fact", text: fact }));
}

function drawSprite(box, mon) {
  clear(box);
  if (mon) box.appendChild(spriteOf(mon, 96));
  if (mon && mon.fainted) box.classList.add("fainted"); else box.classList.remove("fainted");
}

function drawField(field) {
  const box = clear($("field"));
  const parts = [];
  if (field.weather.length) parts.push(["weather", "Weather: " + field.weather.join(", ")]);
  if (field.terrain.length) parts.push(["terrain", field.terrain.join(", ")]);
  if (field.fields.length) parts.push(["fields", field.fields.join(", ")]);
  const side = (list) => list.map((c) => (c.layers > 1 ? `${c.name} ×${c.layers}` : c.name)).join(", ");
  if (field.opponent_side.length) parts.push(["side", "Opponent's side: " + side(field.opponent_side)]);
  if (field.player_side.length) parts.push(["side", "Your side: " + side(field.player_side)]);
  if (!parts.length) parts.push(["muted", "No weather, terrain or hazards"]);
  for (const [cls, text] of parts) box.appendChild(el("span", { cls: "field-item " + cls, text }));
}

function teamRow(mon, own) {
  const row = el("li", { cls: mon.fainted ? "fainted" : "" }, [spriteOf(mon, 32),
    el("span", { cls: "mon-name", text: monTitle(mon) }),
    el("span", { cls: "hp-text", text: mon.hp_text })]);
  if (mon.status) row.appendChild(el("span", { cls: "status status-" + mon.status.toLowerCase(), text: mon.status }));
  if (mon.active) row.appendChild(el("span", { cls: "active-mark", text: "active" }));
  const details = [];
  if (mon.item) details.push(mon.item);
  if (mon.ability) details.push(mon.ability);
  if (mon.moves && mon.moves.length) details.push(mon.moves.map((m) => m.name).join(", "));
  if (details.length) row.title = details.join(" · ");
  if (!own && mon.moves && mon.moves.length) row.appendChild(el("span", { cls: "muted small", text: mon.moves.map((m) => m.name).join(", ") }));
  return row;
}

function drawTeams(view) {
  const mine = clear($("player-team"));
  for (const mon of view.player.team) mine.appendChild(teamRow(mon, true));
  const theirs = clear($("opponent-team"));
  const list = view.team_preview && view.opponent.preview.length ? view.opponent.preview : view.opponent.team;
  for (const mon of list) theirs.appendChild(teamRow(mon, false));
  if (!view.team_preview && view.opponent.unseen > 0) {
    theirs.appendChild(el("li", { cls: "muted", text: `${view.opponent.unseen} not seen yet` }));
  }
}

function drawArena(view) {
  drawInfo($("opponent-info"), view.opponent.active, false);
  drawInfo($("player-info"), view.player.active, true);
  drawSprite($("opponent-sprite"), view.opponent.active);
  drawSprite($("player-sprite"), view.player.active);
  drawField(view.field);
  drawTeams(view);
}

function moveButton(choice, gimmick) {
  const button = el("button", { cls: "choice move", attrs: { type: "button", "data-number": choice.number,
    "data-kind": choice.kind } });
  if (gimmick) button.setAttribute("data-gimmick-number", String(gimmick.number));
  button.style.borderColor = TYPE_COLORS[choice.type] || "#888";
  button.appendChild(el("span", { cls: "choice-name", text: choice.name }));
  const facts = el("span", { cls: "choice-facts" });
  if (choice.type) facts.appendChild(typeBadge(choice.type));
  const bits = [];
  if (choice.category) bits.push(choice.category);
  if (choice.power) bits.push(`${choice.power} BP`);
  bits.push(choice.accuracy ? `${choice.accuracy}%` : "—");
  if (choice.maxpp) bits.push(`PP ${choice.pp}/${choice.maxpp}`);
  if (choice.priority) bits.push(`priority ${choice.priority > 0 ? "+" : ""}${choice.priority}`);
  facts.appendChild(el("span", { text: bits.join(" · ") }));
  button.appendChild(facts);
  const eff = effectivenessText(choice.effectiveness);
  if (eff) {
    const cls = choice.effectiveness > 1 ? "eff super" : choice.effectiveness < 1 ? "eff weak" : "eff";
    button.appendChild(el("span", { cls, text: eff }));
  }
  if (choice.description) button.title = choice.description;
  button.addEventListener("click", () => {
    const useGimmick = page.tera && button.hasAttribute("data-gimmick-number");
    sendChoice(Number(useGimmick ? button.getAttribute("data-gimmick-number") : button.getAttribute("data-number")));
  });
  return button;
}

function switchButton(choice) {
  const mon = choice.pokemon;
  const button = el("button", { cls: "choice switch", attrs: { type: "button", "data-number": choice.number,
    "data-kind": choice.kind } });
  if (mon) button.appendChild(spriteOf(mon, 32));
  button.appendChild(el("span", { cls: "choice-name", text: mon ? monTitle(mon) : choice.name }));
  if (mon) {
    button.appendChild(el("span", { cls: "choice-facts" }, [...(mon.types || []).map(typeBadge),
      el("span", { text: mon.hp_text })]));
    if (mon.status) button.appendChild(el("span", { cls: "status status-" + mon.status.toLowerCase(), text: mon.status }));
  }
  button.addEventListener("click", () => sendChoice(choice.number));
  return button;
}

function drawChoices(state) {
  const box = clear($("choices"));
  const view = state.view;
  if (state.status !== "choosing" || !view) return;
  const choices = view.choices;
  const moves = choices.filter((c) => c.kind === "move");
  const gimmicks = choices.filter((c) => c.kind === "gimmick");
  const switches = choices.filter((c) => c.kind === "switch" || c.kind === "lead");
  if (gimmicks.length) {
    const word = gimmicks[0].gimmick === "dynamax" ? "Dynamax" : `Terastallize${gimmicks[0].tera_type ? " into " + gimmicks[0].tera_type : ""}`;
    const toggle = el("input", { attrs: { type: "checkbox", id: "tera-toggle" } });
    toggle.checked = page.tera;
    toggle.addEventListener("change", () => { page.tera = toggle.checked; });
    box.appendChild(el("label", { cls: "gimmick-toggle" }, [toggle, el("span", { text: " " + word })]));
  } else {
    page.tera = false;
  }
  if (moves.length) {
    const row = el("div", { cls: "choice-row moves" });
    for (const move of moves) row.appendChild(moveButton(move, gimmicks.find((g) => g.name === move.name)));
    box.appendChild(el("h3", { text: "Attack" }));
    box.appendChild(row);
  }
  if (switches.length) {
    const row = el("div", { cls: "choice-row switches" });
    for (const choice of switches) row.appendChild(switchButton(choice));
    box.appendChild(el("h3", { text: view.team_preview ? "Lead with" : "Switch to" }));
    box.appendChild(row);
  }
}

function drawLog(entries, reset) {
  const box = $("log");
  if (reset) { clear(box); page.logShown = 0; }
  for (const entry of entries.slice(page.logShown)) {
    box.appendChild(el("p", { cls: "log-" + entry.kind, text: entry.text }));
  }
  page.logShown = entries.length;
  box.scrollTop = box.scrollHeight;
}

function setMessage(text, isError) {
  const box = $("message");
  box.textContent = text || "";
  box.className = isError ? "error" : "";
}

// ------------------------------------------------------------------- battle
function render(state) {
  page.state = state;
  if (state.status === "none") { showStart(); return; }
  $("start").hidden = true;
  $("battle").hidden = false;
  $("subtitle").textContent = `${state.player_name} vs ${state.opponent_name} · ${state.format}`;
  page.clockOffset = state.server_time - Date.now() / 1000;
  if (state.view) drawArena(state.view);
  drawLog(state.log, state.log.length < page.logShown);
  const ended = ["ended", "rating", "saving", "finished", "error"].includes(state.status);
  $("decision-title").textContent = ended ? "Battle over"
    : state.status === "choosing" && state.view ? state.view.title
    : state.status === "starting" ? "Starting the battle…" : "Waiting for the opponent…";
  if (state.status === "choosing") setMessage(state.message, false);
  else if (state.status === "waiting") setMessage(state.message || "The opponent is choosing…", false);
  else setMessage(state.status === "error" ? state.message : "", state.status === "error");
  drawChoices(state);
  // User-timing marks (cheap, read by benchmarks/bench_web.py): choices drawn, battle over.
  if (state.status === "choosing" && state.decision !== page.marked) {
    page.marked = state.decision;
    performance.mark(`pokegym:choices:${state.decision}`);
  }
  if (ended && page.marked !== -1) { page.marked = -1; performance.mark("pokegym:ended"); }
  $("forfeit-box").hidden = ended;
  $("result").hidden = !ended;
  if (ended) drawResult(state);
}

function drawResult(state) {
  const result = state.result;
  $("result-text").textContent = result ? result.text || result.result : state.message || "";
  $("rating").hidden = state.status !== "rating";
  const done = $("rating-done");
  done.textContent = result ? (result.rating ? `You rated this opponent ${result.rating}/5.` : "No rating given.") : "";
  const link = $("replay-link");
  if (result && result.replay) {
    link.hidden = false;
    link.href = "/replay?name=" + encodeURIComponent(result.replay);
  } else {
    link.hidden = true;
  }
  $("new-battle").hidden = !(state.status === "finished" || state.status === "error");
}

async function sendChoice(number) {
  const state = page.state;
  if (!state || state.status !== "choosing") return;
  for (const button of document.querySelectorAll("#choices button")) button.disabled = true;
  performance.mark(`pokegym:click:${state.decision}`);
  const answer = await api("POST", "/api/choice", { decision: state.decision, option: number });
  if (!answer.ok) {
    setMessage(answer.data && answer.data.error ? answer.data.error : `The server answered ${answer.status}.`, true);
    for (const button of document.querySelectorAll("#choices button")) button.disabled = false;
    return;
  }
  setMessage("Sent: " + answer.data.choice + ". The opponent is choosing…", false);
}

// Used by the page's own buttons; a test may call it with anything to see the answer.
window.pokegymSend = async function (payload) {
  const answer = await api("POST", "/api/choice", payload);
  if (!answer.ok) setMessage(answer.data && answer.data.error ? answer.data.error : `The server answered ${answer.status}.`, true);
  return answer;
};

function stopPolling() {
  page.polling++;
  if (page.pollAbort) page.pollAbort.abort();  // free the connection of a held long poll
  page.pollAbort = null;
}

async function poll() {
  stopPolling();
  const mine = page.polling;
  const abort = new AbortController();
  page.pollAbort = abort;
  while (mine === page.polling) {
    let answer;
    const battle = page.state && page.state.id ? page.state.id : "";
    try {
      answer = await api("GET", `/api/state?battle=${battle}&after=${page.version}`, undefined, abort.signal);
    } catch (e) {
      if (mine !== page.polling) return;
      await sleep(1000);
      continue;
    }
    if (mine !== page.polling) return;
    if (answer.status === 204) continue;
    if (!answer.ok || !answer.data) { await sleep(1000); continue; }
    if (answer.data.status === "none") { render(answer.data); return; }
    page.version = answer.data.version;
    render(answer.data);
  }
}

function tickClock() {
  const state = page.state;
  const clock = $("clock");
  if (!state || !state.started_at || state.status === "none") { clock.textContent = ""; return; }
  const now = Date.now() / 1000 + page.clockOffset;
  const fmt = (s) => { s = Math.max(0, Math.floor(s)); return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`; };
  if (["ended", "rating", "saving", "finished", "error"].includes(state.status)) { clock.textContent = ""; return; }
  let text = `Battle ${fmt(now - state.started_at)}`;
  if (state.status === "choosing") text = `Your turn ${fmt(now - state.decision_at)} · ` + text;
  clock.textContent = text;
}

// -------------------------------------------------------------------- start
async function showStart() {
  stopPolling();
  page.version = -1;
  page.state = null;
  $("battle").hidden = true;
  $("start").hidden = false;
  $("subtitle").textContent = "";
  const config = await api("GET", "/api/config");
  if (!config.ok) return;
  if (config.data.replays_only) { location.replace("/replay?name=0"); return; }
  const select = clear($("opponent"));
  for (const opponent of config.data.opponents) {
    select.appendChild(el("option", { text: opponent.name === opponent.spec ? opponent.name : `${opponent.name} (${opponent.spec})`, attrs: { value: opponent.spec } }));
  }
  $("subtitle").textContent = config.data.format_name || "";
}

async function startBattle(event) {
  event.preventDefault();
  $("start-error").textContent = "";
  $("start-button").disabled = true;
  performance.clearMarks();
  page.marked = 0;
  performance.mark("pokegym:start");
  const answer = await api("POST", "/api/battle", { opponent: $("opponent").value, name: $("name").value });
  $("start-button").disabled = false;
  if (!answer.ok) { $("start-error").textContent = answer.data ? answer.data.error : "The server refused."; return; }
  page.version = -1;
  page.logShown = 0;
  clear($("log"));
  render(answer.data);
  page.version = answer.data.version;
  poll();
}

// ------------------------------------------------------------------- replays
function drawFrame() {
  const replay = page.replay;
  const frame = replay.frames[page.frame];
  drawArena(frame.view);
  $("replay-range").value = String(page.frame);
  $("replay-turn").textContent = `Turn ${frame.turn} (${page.frame + 1}/${replay.frames.length})`;
  const entries = [];
  for (const f of replay.frames.slice(0, page.frame + 1)) {
    for (const line of (f.events || "").split("\n")) if (line.trim()) entries.push({ kind: "turn", text: line });
  }
  drawLog(entries, true);
  $("replay-result").textContent = frame.result || "";
}

async function showReplay() {
  const name = new URLSearchParams(location.search).get("name") || "0";
  const answer = await api("GET", "/api/replay?name=" + encodeURIComponent(name));
  if (!answer.ok) {
    $("fatal").hidden = false;
    $("fatal").textContent = answer.data ? answer.data.error : "The replay could not be loaded.";
    return;
  }
  page.replay = answer.data;
  $("battle").hidden = false;
  $("controls").hidden = true;
  $("replay-bar").hidden = false;
  $("subtitle").textContent = `Replay: ${answer.data.players[0]} vs ${answer.data.players[1]}` +
    (answer.data.format ? ` · ${answer.data.format}` : "");
  $("replay-range").max = String(answer.data.frames.length - 1);
  const go = (i) => { page.frame = Math.max(0, Math.min(page.replay.frames.length - 1, i)); drawFrame(); };
  $("replay-first").addEventListener("click", () => go(0));
  $("replay-prev").addEventListener("click", () => go(page.frame - 1));
  $("replay-next").addEventListener("click", () => go(page.frame + 1));
  $("replay-last").addEventListener("click", () => go(page.replay.frames.length - 1));
  $("replay-range").addEventListener("input", () => go(Number($("replay-range").value)));
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight") go(page.frame + 1);
    if (e.key === "ArrowLeft") go(page.frame - 1);
  });
  go(0);
}

// --------------------------------------------------------------------- boot
function boot() {
  if (location.pathname === "/replay") { showReplay(); return; }
  $("start-form").addEventListener("submit", startBattle);
  $("forfeit").addEventListener("click", () => { $("forfeit-confirm").hidden = false; });
  $("forfeit-no").addEventListener("click", () => { $("forfeit-confirm").hidden = true; });
  $("forfeit-yes").addEventListener("click", async () => {
    $("forfeit-confirm").hidden = true;
    const answer = await api("POST", "/api/forfeit", {});
    if (!answer.ok) setMessage(answer.data ? answer.data.error : "The forfeit was refused.", true);
  });
  const ratings = $("rating-buttons");
  for (let i = 1; i <= 5; i++) {
    const button = el("button", { cls: "rate", text: String(i), attrs: { type: "button", "data-rating": i } });
    button.addEventListener("click", () => api("POST", "/api/rating", { rating: i }));
    ratings.appendChild(button);
  }
  $("rating-skip").addEventListener("click", () => api("POST", "/api/rating", { rating: null }));
  $("new-battle").addEventListener("click", showStart);
  setInterval(tickClock, 500);
  poll();
}

document.addEventListener("DOMContentLoaded", boot);
