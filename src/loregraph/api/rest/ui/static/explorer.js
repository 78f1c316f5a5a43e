// loregraph graph explorer: plain JS over the group-scoped JSON routes (/groups/{g}/explore/...), Cytoscape.js
// for drawing. The API key stays in this tab (sessionStorage) and goes out as the API expects it (Bearer).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { key: "", group: "", asOf: null, offset: 0, limit: 100, range: null, colourBy: "type" };
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                   "#9c755f", "#bab0ac", "#1f77b4", "#2ca02c"];
  const colours = new Map();
  const colourOf = (k) => { if (!k) return "#c0c6d0"; if (!colours.has(k)) colours.set(k, PALETTE[colours.size % PALETTE.length]); return colours.get(k); };

  const cy = cytoscape({
    container: $("graph"),
    style: [
      { selector: "node", style: { label: "data(name)", "background-color": "data(colour)", "font-size": 11,
                                   "text-valign": "bottom", "text-margin-y": 4, width: 22, height: 22 } },
      { selector: "node.hit", style: { "border-width": 4, "border-color": "#111" } },
      { selector: "node:selected", style: { "border-width": 4, "border-color": "#e15759" } },
      { selector: "edge", style: { width: 1.5, "line-color": "#9aa5b4", "target-arrow-color": "#9aa5b4",
                                   "target-arrow-shape": "triangle", "curve-style": "bezier" } },
      { selector: "edge:selected, edge.ended", style: { label: "data(type)", "font-size": 8, color: "#5b6575",
                                                        "text-rotation": "autorotate" } },
      { selector: "edge.ended", style: { "line-style": "dashed" } },
    ],
    wheelSensitivity: 0.3, minZoom: 0.05, maxZoom: 1.5,
  });
  window.explorer = { cy, state };  // for tests and the curious

  function status(text, error) { $("status").textContent = text; $("status").className = error ? "error" : ""; }

  async function api(path, params) {
    const url = new URL(`/groups/${encodeURIComponent(state.group)}${path}`, location.origin);
    for (const [k, v] of Object.entries(params || {})) {
      if (v === null || v === undefined) continue;
      (Array.isArray(v) ? v : [v]).forEach((x) => url.searchParams.append(k, x));
    }
    const headers = state.key ? { Authorization: `Bearer ${state.key}` } : {};
    const r = await fetch(url, { headers });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) {
      const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail || body);
      throw new Error(`${r.status}: ${detail}`);
    }
    return body;
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? "")));
    return e;
  }
  const day = (t) => (t ? t.slice(0, 10) : "…");
  const interval = (f) => `${day(f.valid_at)} → ${f.invalid_at ? day(f.invalid_at) : "now"}`;

  function colourKey(n) { return state.colourBy === "community" ? n.community_id : n.type; }

  function addPiece(piece) {
    const add = [];
    for (const n of piece.nodes) {
      const data = { id: n.id, name: n.name, type: n.type, community_id: n.community_id, community: n.community, colour: colourOf(colourKey(n)) };
      const have = cy.getElementById(n.id);
      if (have.nonempty()) have.data(data); else add.push({ group: "nodes", data });
    }
    for (const e of piece.edges) {
      if (cy.getElementById(e.id).nonempty()) continue;
      add.push({ group: "edges", data: { id: e.id, source: e.source, target: e.target, type: e.type, fact: e.fact,
                                         valid_at: e.valid_at, invalid_at: e.invalid_at }, classes: e.current ? "" : "ended" });
    }
    cy.add(add);
    return add.length;
  }

  function centreOn(eles) {
    // fit the hits' neighbourhood, then put the hits (not their labels) in the middle of the view
    cy.resize();
    cy.fit(eles.closedNeighborhood(), 60);
    const bb = eles.boundingBox({ includeLabels: false, includeOverlays: false }), z = cy.zoom();
    cy.pan({ x: cy.width() / 2 - z * (bb.x1 + bb.x2) / 2, y: cy.height() / 2 - z * (bb.y1 + bb.y2) / 2 });
  }

  function relayout() { cy.resize(); cy.layout({ name: "cose", animate: false, randomize: false, nodeRepulsion: () => 40000,
                                          idealEdgeLength: () => 70, componentSpacing: 80, padding: 40 }).run(); }

  function updateRange(piece) {
    // the slider spans the earliest and latest times of the facts seen so far, up to now
    const times = [];
    for (const e of piece.edges) for (const t of [e.valid_at, e.invalid_at]) if (t) times.push(Date.parse(t));
    if (piece.time_min) times.push(Date.parse(piece.time_min));
    if (piece.time_max) times.push(Date.parse(piece.time_max));
    if (!times.length) return;
    const lo = Math.min(...times), hi = Math.max(Date.now(), ...times);
    if (!state.range) state.range = { lo, hi };
    else state.range = { lo: Math.min(lo, state.range.lo), hi: Math.max(hi, state.range.hi) };
  }

  function sliderTime() {
    const v = Number($("slider").value);
    if (v >= 100 || !state.range) return null;  // the right end is "now": current facts
    const { lo, hi } = state.range;
    return new Date(lo + (hi - lo) * v / 100).toISOString();
  }

  async function loadPage(reset) {
    if (reset) { cy.elements().remove(); state.offset = 0; }
    const piece = await api("/explore/graph", { as_of: state.asOf, limit: state.limit, offset: state.offset });
    updateRange(piece);
    addPiece(piece);
    state.offset += state.limit;
    $("more").disabled = !piece.more;
    relayout();
    status(`${cy.nodes().length} entities, ${cy.edges().length} facts${state.asOf ? " as of " + day(state.asOf) : " (current)"}`);
  }

  async function open(ev) {
    ev.preventDefault();
    state.key = $("key").value.trim();
    state.group = $("group").value.trim();
    sessionStorage.setItem("loregraph.key", state.key);
    sessionStorage.setItem("loregraph.group", state.group);
    state.range = null; state.asOf = null; $("slider").value = 100; $("asof").textContent = "now";
    try { await loadPage(true); } catch (e) { cy.elements().remove(); status(e.message, true); }
  }

  async function search(ev) {
    ev.preventDefault();
    const q = $("query").value.trim();
    if (!q || !state.group) return;
    try {
      const hits = await api("/explore/search", { q, as_of: state.asOf, limit: 5 });
      cy.nodes().removeClass("hit");
      addPiece(hits.piece);
      relayout();
      const found = cy.collection(hits.entity_ids.map((id) => cy.getElementById(id)).filter((n) => n.nonempty()));
      found.addClass("hit");
      if (found.nonempty()) centreOn(found);
      status(found.nonempty() ? `${found.length} entities match “${q}”` : `nothing matches “${q}”`);
    } catch (e) { status(e.message, true); }
  }

  async function moveSlider() {
    state.asOf = sliderTime();
    $("asof").textContent = state.asOf ? day(state.asOf) : "now";
    const shown = cy.nodes().map((n) => n.id());
    try {
      cy.edges().remove();
      // the same entities; the facts among them as of the chosen time (50 ids a request)
      for (let i = 0; i < shown.length; i += 50) {
        const edges = await api("/explore/facts", { entity_id: shown.slice(i, i + 50), as_of: state.asOf });
        addPiece({ nodes: [], edges: edges.filter((e) => cy.getElementById(e.source).nonempty() && cy.getElementById(e.target).nonempty()) });
      }
      status(`${cy.nodes().length} entities, ${cy.edges().length} facts${state.asOf ? " as of " + day(state.asOf) : " (current)"}`);
    } catch (e) { status(e.message, true); }
  }

  async function showEntity(node) {
    const id = node.id();
    const box = $("details");
    box.replaceChildren(el("p", { class: "muted" }, "loading…"));
    try {
      const [ent, tl] = await Promise.all([
        api(`/entities/${encodeURIComponent(id)}`), api(`/explore/entities/${encodeURIComponent(id)}/timeline`)]);
      const facts = el("div", { id: "facts" });
      for (const f of tl.facts.slice().reverse()) {
        const row = el("div", { class: "fact" + (f.current ? "" : " ended"), "data-fact": f.id },
          el("div", {}, f.fact || `${f.type} ${f.other_name}`),
          el("div", { class: "interval" }, `${f.current ? "current" : "ended"} · ${interval(f)}`),
          el("button", { class: "provenance", onclick: () => provenance(f.id, row) }, "where from?"));
        facts.append(row);
      }
      const timeline = el("ol", { class: "timeline", id: "timeline", hidden: "" });
      for (const f of tl.facts) timeline.append(el("li", {}, el("span", { class: "interval" }, interval(f) + " "), f.fact || f.type));
      const tabs = el("div", { class: "tabs" },
        el("button", { class: "active", onclick: (e) => tab(e, facts, timeline) }, "facts"),
        el("button", { onclick: (e) => tab(e, timeline, facts) }, "timeline"));
      box.replaceChildren(
        el("h2", { id: "entity-name" }, ent.name),
        el("div", { class: "muted" }, `${ent.type}${tl.entity.community ? " · community: " + tl.entity.community : ""}`),
        ent.aliases.length ? el("div", {}, "aliases: " + ent.aliases.join(", ")) : "",
        ent.summary ? el("p", {}, ent.summary) : "",
        el("h3", {}, `${tl.facts.length} facts`), tabs, facts, timeline);
    } catch (e) { box.replaceChildren(el("p", { class: "muted" }, e.message)); }
  }

  function tab(ev, show, hide) {
    show.hidden = false; hide.hidden = true;
    for (const b of ev.target.parentNode.children) b.classList.toggle("active", b === ev.target);
  }

  async function provenance(factId, row) {
    try {
      const x = await api(`/explain/${encodeURIComponent(factId)}`);
      const box = el("div", { class: "prov" });
      for (const s of x.sources) box.append(el("div", {}, `${day(s.valid_at)} ${s.source_description || s.message_name}: ${s.content}`));
      if (x.ended_by) box.append(el("div", {}, `ended by (${day(x.ended_by.valid_at)}): ${x.ended_by.content}`));
      if (!x.sources.length && !x.ended_by) box.append(el("div", {}, "no source recorded"));
      row.querySelector(".prov")?.remove();
      row.append(box);
    } catch (e) { row.append(el("div", { class: "prov" }, e.message)); }
  }

  cy.on("tap", "node", async (ev) => {
    showEntity(ev.target);
    try {  // expand the neighbourhood of the clicked entity
      const piece = await api("/explore/neighbourhood", { entity_id: ev.target.id(), as_of: state.asOf, limit: 50 });
      if (addPiece(piece)) relayout();
    } catch (e) { status(e.message, true); }
  });
  $("connect").addEventListener("submit", open);
  $("search").addEventListener("submit", search);
  $("slider").addEventListener("change", moveSlider);
  $("more").addEventListener("click", () => loadPage(false).catch((e) => status(e.message, true)));
  $("colour").addEventListener("change", () => {
    state.colourBy = $("colour").value;
    cy.nodes().forEach((n) => n.data("colour", colourOf(state.colourBy === "community" ? n.data("community_id") : n.data("type"))));
  });
  $("key").value = sessionStorage.getItem("loregraph.key") || "";
  $("group").value = sessionStorage.getItem("loregraph.group") || "";
})();
