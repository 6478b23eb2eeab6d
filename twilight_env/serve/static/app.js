// Twilight in the browser: plain JavaScript, no build step. Every move goes to the server
// (/api/...), which checks it with the engine; the page only draws what the server sends.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const ROMAN = { C1: "I", C2: "II", C3: "III", C4: "IV", C5: "V" };
const KIND_NAMES = { P: "Purgatory", C1: "Hierarch", C2: "High Priest", C3: "Priest", C4: "Adept",
  C5: "Novice", "3": "3 souls", "4": "4 souls", "5": "5 souls", "6": "6 souls", "7": "7 souls",
  A: "Altar ×1", T: "Temple ×2", O: "Obelisk ×3" };

// text from the server or a record file goes into HTML only escaped
const esc = (x) => String(x).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

const app = {
  mode: "play",      // play | watch | replay
  view: null,        // last view from the server (or the replay frame shown)
  gid: null,
  unavailable: {},   // agents this install cannot run (GET /api/agents), name -> {needs, message}
  busy: false,
  paused: false,
  timer: null,
  dealsSeen: 0,
  bannerOpen: false,
  pages: new Map(),  // replay: page number -> the frames of that page (a few pages kept)
  count: 0,          // replay: positions of the record
  loading: null,     // replay: the page being fetched
  records: null,     // the records of the opened file
  record: 0,         // index of the record replayed
  frame: 0,
  hint: null,
};

// ---------------------------------------------------------------- server calls
async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: `HTTP ${r.status}` }; }
  if (!r.ok) throw new Error(data && data.error ? data.error : `HTTP ${r.status}`);
  return data;
}

function showError(msg) {
  const e = $("error");
  e.textContent = msg;
  e.classList.remove("hidden");
  clearTimeout(showError.t);
  showError.t = setTimeout(() => e.classList.add("hidden"), 6000);
}

// ---------------------------------------------------------------- cards
function cardEl(code, opts = {}) {
  const cult = code[0] === "S" ? "sun" : "moon";
  const kind = code.slice(1);
  const d = document.createElement("div");
  d.className = `card ${cult}`;
  d.dataset.card = code;
  const big = ROMAN[kind] || kind;
  d.innerHTML = `<span class="rank">${esc(big)}</span><span class="cname">${esc(KIND_NAMES[kind])}</span>`;
  d.title = `${code}: ${cult === "sun" ? "Sun" : "Moon"} ${KIND_NAMES[kind]}`;
  if (opts.small) d.classList.add("small");
  return d;
}

function backEl(cult) {
  const d = document.createElement("div");
  d.className = `back ${cult}`;
  d.title = `a ${cult === "sun" ? "Sun" : "Moon"} card (face down)`;
  return d;
}

function cultName(c) { return c === "sun" ? "Sun" : "Moon"; }

// ---------------------------------------------------------------- seats
function baseSeat(v) { return app.mode === "play" && v.you ? v.you.seat : 0; }

function seatTitle(v, s) {
  const seat = v.seats[s];
  let role = seat.role === "solo" ? "solo, Moon" : seat.role === "new moon" ? "new moon, open" : cultName(seat.cult);
  let who = v.who && v.who[s] ? v.who[s] : "";
  if (app.mode === "play" && v.you) {
    const mine = v.seats[v.you.seat].cult;
    if (s !== v.you.seat && who !== "you" && !who.startsWith("new moon")) {
      who += seat.cult === mine ? " · partner" : " · opponent";
    }
  }
  return { role, who };
}

function renderSeat(v, s, slot, legal) {
  const seat = v.seats[s];
  const el = document.createElement("div");
  el.className = `seat ${seat.cult}`;
  el.id = `seat-${s}`;
  if (v.acting_seat === s) el.classList.add("acting");
  if (v.chooser === s && v.phase !== "over") el.classList.add("choosing");
  const t = seatTitle(v, s);
  const head = document.createElement("div");
  head.className = "seat-head";
  head.innerHTML = `<b>Seat ${s}</b> <span class="role">${esc(t.role)}</span> <span class="who">${esc(t.who)}</span>`;
  el.appendChild(head);
  const info = document.createElement("div");
  info.className = "seat-info";
  info.textContent = `holds ☀ ${seat.counts.sun} · ☾ ${seat.counts.moon} · took ${seat.taken}`;
  el.appendChild(info);
  const hand = document.createElement("div");
  hand.className = "hand";
  if (seat.hand) {
    for (const code of seat.hand) {
      const c = cardEl(code);
      const a = legal.cards[code];
      if (a !== undefined && v.acting_seat === s) {
        c.classList.add("legal");
        c.dataset.action = a;
        c.tabIndex = 0;
        c.addEventListener("click", () => sendMove(a));
        c.addEventListener("keydown", (e) => { if (e.key === "Enter") sendMove(a); });
        if (app.hint && app.hint.action === a) c.classList.add("hinted");
      }
      hand.appendChild(c);
    }
    if (!seat.hand.length) hand.innerHTML = '<span class="empty">no cards</span>';
  } else {
    for (let i = 0; i < seat.counts.sun; i++) hand.appendChild(backEl("sun"));
    for (let i = 0; i < seat.counts.moon; i++) hand.appendChild(backEl("moon"));
  }
  el.appendChild(hand);
  const a = legal.requests[s];
  if (a !== undefined) {
    const b = document.createElement("button");
    b.className = "request legal";
    b.id = `request-${s}`;
    b.dataset.action = a;
    const need = cultName(v.seats[v.chooser].cult);
    b.textContent = `Request seat ${s} to play a ${need} card for you`;
    b.addEventListener("click", () => sendMove(a));
    if (app.hint && app.hint.action === a) b.classList.add("hinted");
    el.appendChild(b);
  }
  slot.appendChild(el);
}

// ---------------------------------------------------------------- centre
function renderTrick(v) {
  const box = $("trick");
  box.innerHTML = "";
  const cur = v.current_trick;
  const started = cur.some((p) => p) || v.phase === "hold";
  let places, title;
  if (started || !v.tricks.length) {
    title = v.phase === "over" ? "Deal over" : `Trick ${v.trick + 1} of 7 · leader seat ${v.leader}`;
    places = [0, 1, 2, 3].map((p) => cur[p] || { place: p, chooser: (v.leader + p) % 4, holder: null, card: null });
  } else {
    const last = v.tricks[v.tricks.length - 1];
    title = `Trick ${last.number}: ` + (last.taker === null ? "went to the pending pile (Purgatory)"
      : `taken by seat ${last.taker}`);
    places = last.cards.map((c, p) => ({ place: p, ...c }));
  }
  $("trick-title").textContent = title;
  for (const p of places) {
    const slot = document.createElement("div");
    slot.className = "place";
    slot.id = `place-${p.place}`;
    const cap = document.createElement("div");
    cap.className = "place-cap";
    if (p.card) {
      cap.textContent = p.holder === p.chooser ? `for seat ${p.chooser}` : `for seat ${p.chooser} · from seat ${p.holder}`;
      slot.appendChild(cardEl(p.card));
    } else {
      const wait = document.createElement("div");
      wait.className = "slot-empty";
      const pending = started && v.phase === "hold" && p.place === v.place;
      wait.textContent = pending ? `seat ${v.chooser} asks seat ${v.holder}…` : "";
      slot.appendChild(wait);
      cap.textContent = `chooser seat ${p.chooser}`;
    }
    slot.appendChild(cap);
    box.appendChild(slot);
  }
}

function finalText(v) {
  // the final score of a finished game, with what it means for the person playing
  const sun = v.sides.find((s) => s.cult === "sun").score;
  const moon = v.sides.find((s) => s.cult === "moon").score;
  let res = "";
  if (app.mode === "play" && v.you && v.episode === "deal") {
    const mine = v.seats[v.you.seat].cult === "sun" ? sun - moon : moon - sun;
    res = mine > 0 ? ` Your side wins by ${mine}.` : mine < 0 ? ` Your side loses by ${-mine}.` : " A tie.";
  }
  return `${v.episode === "match" ? "Last deal" : "Final"}: Sun ${sun}, Moon ${moon}.${res}`;
}

function promptText(v) {
  // a finished game says its result in the middle of the board, on screen on a phone too
  if (v.phase === "over") return v.over && app.mode !== "replay" ? finalText(v) : "";
  if (app.mode === "play" && v.to_act) {
    const forNm = v.acting_seat !== v.you.seat;
    const need = cultName(v.seats[v.chooser].cult);
    if (v.phase === "choose") {
      return forNm
        ? `You choose for the new moon (seat ${v.acting_seat}): play a glowing Moon card from its open hand, or request a seat.`
        : `Your turn (place ${v.place + 1}): play a glowing ${need} card, or request a seat to play one for you.`;
    }
    return forNm
      ? `Seat ${v.chooser} requests a ${need} card from the new moon: pick one of its glowing cards.`
      : `Seat ${v.chooser} requests a ${need} card from you: pick one of your glowing cards.`;
  }
  const who = v.who && v.who[v.acting_seat] ? ` (${v.who[v.acting_seat]})` : "";
  const doing = v.phase === "hold" ? `gives a card for seat ${v.chooser}` : "chooses";
  return `Seat ${v.acting_seat}${who} ${doing}…`;
}

// ---------------------------------------------------------------- side panels
function renderScores(v) {
  const box = $("scores");
  // once the deal is over its score is final (the last deal of a match: the match is over too)
  const head = v.phase === "over" ? (v.over && v.episode === "match" ? "Final · last deal" : "Final") : "This deal so far";
  let h = `<h3 id="score-head">${head}</h3><table><tr><th>side</th><th>seats</th><th>souls</th><th>×</th><th>score</th></tr>`;
  for (const s of v.sides) {
    h += `<tr id="score-${s.cult}" data-score="${s.score}"><td><span class="chip ${s.cult}">${cultName(s.cult)}</span></td>`
      + `<td>${s.seats.join(", ")}</td><td>${s.souls}</td><td>${s.multiplier}</td><td><b>${s.score}</b></td></tr>`;
  }
  h += "</table>";
  if (v.episode === "match" || (v.deals && v.deals.length > 1)) {
    h += `<h3>Match${v.target ? " to " + v.target : ""}</h3><table><tr><th></th>`;
    for (const l of v.lines) h += `<th>${esc(l)}</th>`;
    h += "</tr>";
    for (const d of v.deals) {
      h += `<tr><td>deal ${d.deal}</td>` + d.points.map((x) => `<td>${x}</td>`).join("") + "</tr>";
    }
    h += `<tr class="totals"><td>total</td>` + v.totals.map((x) => `<td><b>${x}</b></td>`).join("") + "</tr></table>";
    if (v.you) h += `<div class="note">your line: ${esc(v.lines[v.you.line])}</div>`;
  }
  if (v.over) {
    const sun = v.sides.find((s) => s.cult === "sun").score;
    const moon = v.sides.find((s) => s.cult === "moon").score;
    h += `<div id="final" data-sun="${sun}" data-moon="${moon}">${finalText(v)}</div>`;
    if (v.episode === "match" && v.winners) {
      const names = v.winners.map((i) => v.lines[i]).join(" and ");
      let m = v.winners.length ? `Match over: ${esc(names)} won` : "Match over: the new-moon line won";
      if (v.you) m += v.winners.includes(v.you.line) ? " (you win)." : " (you lose).";
      h += `<div id="match-result">${m}</div>`;
    }
  }
  h += creditedTable(v);
  box.innerHTML = h;
}

// 3 players: what each player's score line is credited for the finished deal (R7.5)
function creditedTable(v) {
  if (v.num_players !== 3 || !v.credited) return "";
  let h = '<table id="credited"><tr><th>credited</th><th>seats</th><th>points</th></tr>';
  for (const c of v.credited) {
    h += `<tr data-line="${esc(c.line)}" data-points="${c.points}"><td>${esc(c.line)}</td>`
      + `<td>${c.seats.join(", ")}</td><td><b>${c.points}</b></td></tr>`;
  }
  return h + "</table>";
}

function renderPending(v) {
  const box = $("pending");
  box.innerHTML = "<h3>Pending pile</h3>";
  const row = document.createElement("div");
  row.className = "row";
  if (!v.pending.length) row.innerHTML = '<span class="empty">empty</span>';
  for (const c of v.pending) row.appendChild(cardEl(c, { small: true }));
  box.appendChild(row);
  if (v.neutral.length) {
    const n = document.createElement("div");
    n.className = "note";
    n.textContent = `neutral (last trick held a Purgatory): ${v.neutral.join(" ")}`;
    box.appendChild(n);
  }
}

function renderTricks(v) {
  const box = $("lasttrick");
  let h = "<h3>Tricks</h3>";
  if (!v.tricks.length) h += '<span class="empty">none yet</span>';
  for (const t of v.tricks) {
    h += `<div class="trickline">${t.number}. ` + t.cards.map((c) => `<span class="tcode ${c.card[0] === "S" ? "sun" : "moon"}">${c.card}</span>`).join(" ")
      + ` → ${t.taker === null ? "pending" : "seat " + t.taker}</div>`;
  }
  box.innerHTML = h;
}

function renderLog(v) {
  const box = $("log");
  const lines = app.mode === "replay" ? [v.text] : v.log;
  box.innerHTML = "<h3>Moves</h3>" + lines.map((l) => `<div>${esc(l)}</div>`).join("");
}

function renderStatus(v) {
  let h = "";
  if (app.mode === "replay") {
    const n = app.records ? app.records.length : 1;
    const rec = n > 1 ? ` · <b id="rp-which">record ${app.record} of ${n}</b> (numbered 0..${n - 1})` : "";
    h = `Replay${rec} · ${v.num_players} players · deal ${v.deal} · position ${app.frame} of ${app.count - 1}`;
  } else {
    // while it runs: "Playing · ..." or "Watching · ..."; once over: "Game over · you played · ..."
    const what = `${v.num_players} players · ${v.episode === "match" ? "match, deal " + v.deal_number : "one deal"}${v.seed === null ? "" : " · seed " + v.seed}`;
    if (v.over) h = `<b>Game over</b> · ${app.mode === "play" ? "you played" : "agents played"} · ${what}`;
    else h = `${app.mode === "play" ? "Playing" : "Watching"} · ${what}`;
  }
  $("status").innerHTML = h;
}

// ---------------------------------------------------------------- whole view
function legalMaps(v) {
  const cards = {}, requests = {};
  if (app.mode === "play" && v.to_act) {
    for (const m of v.legal) {
      if (m.kind === "card") cards[m.card] = m.action;
      else requests[m.seat] = m.action;
    }
  }
  return { cards, requests };
}

function render(v) {
  app.view = v;
  const base = baseSeat(v);
  const legal = legalMaps(v);
  const pos = { bottom: base, left: (base + 1) % 4, top: (base + 2) % 4, right: (base + 3) % 4 };
  for (const [name, s] of Object.entries(pos)) {
    const slot = $(`pos-${name}`);
    slot.innerHTML = "";
    renderSeat(v, s, slot, legal);
  }
  renderTrick(v);
  const prompt = promptText(v);
  $("prompt").textContent = prompt;
  $("prompt").classList.toggle("hidden", !prompt);
  const req = $("requests");
  req.innerHTML = "";
  renderScores(v);
  renderPending(v);
  renderTricks(v);
  renderLog(v);
  renderStatus(v);
  $("play-controls").classList.toggle("hidden", app.mode !== "play" || v.over);
  $("speed-controls").classList.toggle("hidden", app.mode === "replay" || v.over);
  $("replay-controls").classList.toggle("hidden", app.mode !== "replay");
  $("hint").disabled = !(app.mode === "play" && v.to_act);
  const dl = $("download");
  if (app.mode !== "replay" && v.over) {
    dl.href = `/api/games/${v.id}/record`;
    dl.classList.remove("hidden");
  } else dl.classList.add("hidden");
  document.body.dataset.state = v.over ? "over" : (app.mode === "play" && v.to_act ? "your-turn" : "waiting");
  document.body.dataset.step = app.mode === "replay" ? app.frame : v.step;
  if (app.mode !== "replay") checkDealEnd(v);
}

function checkDealEnd(v) {
  // the view lists the last few deals; deals_played counts them all
  const n = v.deals_played !== undefined ? v.deals_played : (v.deals ? v.deals.length : 0);
  if (n > app.dealsSeen && v.deals && v.deals.length) {
    app.dealsSeen = n;
    const d = v.deals[v.deals.length - 1];
    const sunSide = v.num_players === 4 ? 0 : 1;
    let txt = `Deal ${d.deal} over: Sun side ${d.sides[sunSide]}, Moon side ${d.sides[1 - sunSide]}.`;
    if (v.episode === "match") {
      txt += " Totals: " + d.lines.map((l, i) => `${l} ${d.totals[i]}`).join(", ") + ".";
      txt += v.over ? " The match is decided." : " The next deal is dealt.";
      app.bannerOpen = !v.over;
      $("banner-text").textContent = txt;
      $("banner").classList.toggle("hidden", v.over);
    }
  }
}

// ---------------------------------------------------------------- moves and agents
function delay() { return Number($("speed").value); }

function schedule() {
  clearTimeout(app.timer);
  const v = app.view;
  if (!v || app.mode === "replay" || v.over || !v.agents_to_move || app.paused || app.bannerOpen) return;
  app.timer = setTimeout(agentStep, delay());
}

async function agentStep() {
  if (app.busy) return;
  app.busy = true;
  try {
    render(await api("POST", `/api/games/${app.gid}/advance`, { steps: 1 }));
  } catch (e) {
    showError(e.message);
  } finally {
    app.busy = false;
  }
  schedule();
}

async function sendMove(action) {
  if (app.busy) return;
  app.busy = true;
  app.hint = null;
  $("hint-text").textContent = "";
  try {
    render(await api("POST", `/api/games/${app.gid}/move`, { action, step: app.view.step }));
  } catch (e) {
    showError(e.message);
  } finally {
    app.busy = false;
  }
  schedule();
}

function unavailableIn(specs) {
  // the first spec naming an agent this install cannot run (GET /api/agents: unavailable), or null
  for (const s of specs) {
    const name = (s || "").split(":")[0].trim();
    if (app.unavailable && Object.prototype.hasOwnProperty.call(app.unavailable, name)) return app.unavailable[name].message;
  }
  return null;
}

async function startGame(body) {
  clearTimeout(app.timer);
  const off = unavailableIn([body.opponents, body.partner, ...(body.agents || [])]);
  if (off) { showError(off); return; }
  try {
    const v = await api("POST", "/api/games", body);
    if (app.gid) api("DELETE", `/api/games/${app.gid}`).catch(() => {});
    app.gid = v.id;
    app.dealsSeen = 0;
    app.bannerOpen = false;
    app.paused = false;
    $("pause").textContent = "Pause";
    $("banner").classList.add("hidden");
    showBoard();
    $("howto").open = app.mode === "play" && !localStorage.getItem("twilight-seen-howto");
    if (app.mode === "play") localStorage.setItem("twilight-seen-howto", "1");
    render(v);
    schedule();
  } catch (e) {
    showError(e.message);
  }
}

function intOrNull(el) { return el.value === "" ? undefined : Number(el.value); }

function playBody() {
  const b = { mode: "play", players: Number($("play-players").value), seat: Number($("play-seat").value),
    episode: $("play-episode").value, opponents: $("play-opponents").value.trim(),
    partner: $("play-partner").value.trim() };
  if (b.episode === "match") b.target = intOrNull($("play-target"));
  const seed = intOrNull($("play-seed"));
  if (seed !== undefined) b.seed = seed;
  return b;
}

function watchBody() {
  const n = Number($("watch-players").value);
  const agents = [];
  for (let i = 0; i < n; i++) agents.push($(`watch-agent-${i}`).value.trim());
  const b = { mode: "watch", players: n, episode: $("watch-episode").value, agents };
  if (b.episode === "match") b.target = intOrNull($("watch-target"));
  const seed = intOrNull($("watch-seed"));
  if (seed !== undefined) b.seed = seed;
  return b;
}

// ---------------------------------------------------------------- replay
// A record file: one JSON record (.json), or JSON lines (.jsonl), gzip-compressed or not
// (.jsonl.gz, as `twilight arena --records` writes): then the index field picks one.
async function readRecords(file) {
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  let text;
  if (head[0] === 0x1f && head[1] === 0x8b) {
    text = await new Response(file.stream().pipeThrough(new DecompressionStream("gzip"))).text();
  } else {
    text = await file.text();
  }
  try {
    return [JSON.parse(text)];
  } catch (e) {
    const lines = text.split("\n").filter((l) => l.trim());
    if (lines.length < 2) throw e;
    return lines.map((l, i) => {
      try { return JSON.parse(l); } catch (err) { throw new Error(`line ${i + 1}: ${err.message}`); }
    });
  }
}

async function openRecord(file) {
  clearTimeout(app.timer);
  try {
    app.records = await readRecords(file);
  } catch (e) {
    showError(`${file.name} is not a JSON record file (.json, .jsonl or .jsonl.gz): ${e.message}`);
    return;
  }
  const idx = $("replay-index");
  idx.max = app.records.length - 1;
  idx.value = 0;
  $("replay-index-box").classList.toggle("hidden", app.records.length < 2);
  $("replay-count").textContent = `of ${app.records.length} records (0 is the first)`;
  // on the board, a file of several records keeps a picker: the record number, back and forward
  $("rp-records").classList.toggle("hidden", app.records.length < 2);
  $("rp-record").max = app.records.length - 1;
  $("rp-record-count").textContent = `of ${app.records.length} (0..${app.records.length - 1})`;
  await replayRecord(0);
}

// the server sends a record's positions a page at a time (at most REPLAY_PAGE per answer)
const REPLAY_PAGE = 500;

async function replayPage(record, page) {
  const r = await api("POST", `/api/replay?offset=${page * REPLAY_PAGE}&limit=${REPLAY_PAGE}`, record);
  // the answer names each deal's agents once ("who" by deal number); each frame shows its deal's
  for (const f of r.frames) f.who = r.who[f.deal];
  return r;
}

async function replayRecord(i) {
  if (!app.records || !(i >= 0 && i < app.records.length)) {
    showError(`record index must be 0..${app.records ? app.records.length - 1 : 0}`);
    return;
  }
  try {
    const r = await replayPage(app.records[i], 0);
    app.record = i;
    $("replay-index").value = i;
    $("rp-record").value = i;
    $("rp-rec-prev").disabled = i === 0;
    $("rp-rec-next").disabled = i === app.records.length - 1;
    app.pages = new Map([[0, r.frames]]);
    app.count = r.count;
    app.frame = 0;
    $("rp-slider").max = r.count - 1;
    showBoard();
    $("howto").open = false;
    showFrame(0);
  } catch (e) {
    showError(e.message);
  }
}

function showFrame(i) {
  if (!app.count) return;
  app.frame = Math.max(0, Math.min(app.count - 1, i));
  $("rp-slider").value = app.frame;
  const page = Math.floor(app.frame / REPLAY_PAGE);
  const frames = app.pages.get(page);
  if (!frames) {  // fetch that page, then show the position asked for last
    if (app.loading === page) return;
    app.loading = page;
    const record = app.record;
    replayPage(app.records[record], page).then((r) => {
      if (record !== app.record) return;
      app.pages.set(page, r.frames);
      while (app.pages.size > 4) app.pages.delete(app.pages.keys().next().value);
      app.loading = null;
      showFrame(app.frame);
    }).catch((e) => { app.loading = null; showError(e.message); });
    return;
  }
  const f = frames[app.frame - page * REPLAY_PAGE];
  $("rp-text").textContent = `${app.frame} / ${app.count - 1}: ${f.text}`;
  render({ ...f, log: [f.text] });
}

// ---------------------------------------------------------------- setup
function fillSeats() {
  const n = Number($("play-players").value);
  const sel = $("play-seat");
  const opts = n === 4
    ? [[0, "0 (Sun)"], [1, "1 (Moon)"], [2, "2 (Sun)"], [3, "3 (Moon)"]]
    : [[0, "0: the solo (Moon, with the new moon)"], [1, "1: Sun, solo's left"], [3, "3: Sun, solo's right"]];
  sel.innerHTML = opts.map(([v, t]) => `<option value="${v}">${t}</option>`).join("");
}

function fillWatchAgents() {
  const n = Number($("watch-players").value);
  const box = $("watch-agents");
  const old = [...box.querySelectorAll("input")].map((i) => i.value);
  box.innerHTML = "";
  for (let i = 0; i < n; i++) {
    const l = document.createElement("label");
    l.innerHTML = `Player ${i} <input id="watch-agent-${i}" list="agent-list" size="10" value="${esc(old[i] || "heuristic")}">`;
    box.appendChild(l);
  }
}

function showBoard() {
  // during a game the setup form gives way to the board; the rules move to the side column
  $("setup").classList.add("hidden");
  $("game").classList.remove("hidden");
  $("side").appendChild($("howto"));
}

function showSetup() {
  clearTimeout(app.timer);
  $("game").classList.add("hidden");
  $("banner").classList.add("hidden");
  $("setup").classList.remove("hidden");
  $("setup").after($("howto"));
  $("howto").open = true;
}

function switchTab(tab) {
  app.mode = tab;
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === tab);
  for (const f of document.querySelectorAll(".setup-form")) f.classList.toggle("hidden", f.dataset.tab !== tab);
  showSetup();
}

function matchOnly() {
  for (const [sel, form] of [["play-episode", "form-play"], ["watch-episode", "form-watch"]]) {
    const m = $(sel).value === "match";
    for (const el of $(form).querySelectorAll(".match-only")) el.classList.toggle("hidden", !m);
  }
}

async function init() {
  if (params.has("speed")) $("speed").value = params.get("speed");
  $("speed-text").textContent = `${delay()} ms`;
  fillSeats();
  fillWatchAgents();
  matchOnly();
  try {
    const r = await api("GET", "/api/agents");
    // offer only the agents that can run on this install; say which are left out and why
    app.unavailable = r.unavailable || {};
    const off = Object.keys(app.unavailable);
    $("agent-list").innerHTML = r.agents.filter((a) => !off.includes(a)).map((a) => `<option value="${esc(a)}">`).join("");
    const note = $("agents-off");
    note.textContent = off.length ? `Not available on this install: ${off.map((a) => `${a} (needs ${app.unavailable[a].needs})`).join(", ")}.` : "";
    note.classList.toggle("hidden", !off.length);
  } catch (e) { showError(e.message); }
  for (const f of document.querySelectorAll("form")) f.addEventListener("submit", (e) => e.preventDefault());
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => switchTab(b.dataset.tab));
  $("play-players").addEventListener("change", fillSeats);
  $("watch-players").addEventListener("change", fillWatchAgents);
  $("play-episode").addEventListener("change", matchOnly);
  $("watch-episode").addEventListener("change", matchOnly);
  $("start-play").addEventListener("click", () => startGame(playBody()));
  $("start-watch").addEventListener("click", () => startGame(watchBody()));
  $("replay-file").addEventListener("change", (e) => { if (e.target.files[0]) openRecord(e.target.files[0]); });
  $("replay-open").addEventListener("click", () => {
    const i = Number($("replay-index").value);
    if (app.records && i >= 0 && i < app.records.length) replayRecord(i);
    else showError(`record index must be 0..${app.records ? app.records.length - 1 : 0}`);
  });
  $("speed").addEventListener("input", () => { $("speed-text").textContent = `${delay()} ms`; });
  $("pause").addEventListener("click", () => {
    app.paused = !app.paused;
    $("pause").textContent = app.paused ? "Resume" : "Pause";
    schedule();
  });
  $("step-one").addEventListener("click", () => { if (app.view && app.view.agents_to_move) agentStep(); });
  $("banner-ok").addEventListener("click", () => {
    app.bannerOpen = false;
    $("banner").classList.add("hidden");
    schedule();
  });
  $("new-game").addEventListener("click", () => { showSetup(); window.scrollTo(0, 0); });
  $("hint").addEventListener("click", async () => {
    try {
      const off = unavailableIn([$("hint-agent").value]);
      if (off) { showError(off); return; }
      const h = await api("POST", `/api/games/${app.gid}/hint`, { agent: $("hint-agent").value.trim() });
      app.hint = h;
      $("hint-text").textContent = `${h.agent} would: ${h.text}`;
      render(app.view);
    } catch (e) { showError(e.message); }
  });
  $("rp-first").addEventListener("click", () => showFrame(0));
  $("rp-prev").addEventListener("click", () => showFrame(app.frame - 1));
  $("rp-next").addEventListener("click", () => showFrame(app.frame + 1));
  $("rp-last").addEventListener("click", () => showFrame(app.count - 1));
  $("rp-slider").addEventListener("input", (e) => showFrame(Number(e.target.value)));
  $("rp-rec-prev").addEventListener("click", () => replayRecord(app.record - 1));
  $("rp-rec-next").addEventListener("click", () => replayRecord(app.record + 1));
  $("rp-record").addEventListener("change", (e) => replayRecord(Number(e.target.value)));
  document.addEventListener("keydown", (e) => {
    if (app.mode !== "replay" || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowLeft") showFrame(app.frame - 1);
    if (e.key === "ArrowRight") showFrame(app.frame + 1);
  });
  document.body.dataset.ready = "1";
}

init();
