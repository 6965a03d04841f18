// simagent web page: plain JS, no build step. All text from the server goes in via textContent.
"use strict";

const $ = (sel) => document.querySelector(sel);
let current = null;     // thread id shown
let source = null;      // EventSource of the current thread
let lastSeq = -1;
let shownFiles = {};    // review: job -> name -> text as shown
let approveEdits = null; // edits sent with "Approve and run": approved once they pass the checks

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({}));
  if (res.status === 401) showLogin();
  if (!res.ok) {
    const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
    throw new Error(detail || res.statusText);
  }
  return data;
}

function showLogin() { $("#login").hidden = false; }

$("#login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  try {
    await api("POST", "/api/login", { token: $("#login-token").value });
    $("#login").hidden = true;
    $("#login-token").value = "";
    loadThreads();
  } catch (err) { $("#login-error").textContent = err.message; }
});

// ---- sessions ---------------------------------------------------------------------------------

async function loadThreads() {
  const data = await api("GET", "/api/threads");
  const list = $("#thread-list");
  list.replaceChildren();
  for (const t of data.threads) {
    const link = el("a", { href: "#" + t.thread_id, "data-thread": t.thread_id },
      el("span", { class: "badge " + t.status, text: t.status }),
      el("span", { class: "req", text: t.request.split("\n")[0] || t.thread_id }));
    list.append(el("li", { class: t.thread_id === current ? "active" : "" }, link));
  }
}

$("#new-thread").addEventListener("click", () => {
  closeStream();
  current = null;
  history.replaceState(null, "", "/");
  clearThread();
  $("#request-input").focus();
});

window.addEventListener("hashchange", () => {
  const id = location.hash.slice(1);
  if (id && id !== current) openThread(id);
});

// ---- one thread -------------------------------------------------------------------------------

function clearThread() {
  for (const id of ["#thread-header", "#clarify", "#review", "#progress", "#plan", "#answer", "#files-panel"]) {
    $(id).hidden = true;
  }
  $("#chat").replaceChildren();
  $("#events").replaceChildren();
  lastSeq = -1;
}

function bubble(who, text, cls = "") {
  $("#chat").append(el("div", { class: `msg ${who} ${cls}` }, el("span", { class: "who", text: who }),
    el("p", { text })));
}

async function openThread(id) {
  closeStream();
  current = id;
  clearThread();
  await refresh();
  connect();
  loadThreads();
}

async function refresh() {
  if (!current) return;
  let view;
  try { view = await api("GET", `/api/threads/${encodeURIComponent(current)}`); }
  catch (err) { bubble("simagent", err.message, "error"); return; }
  render(view);
}

function render(view) {
  $("#thread-header").hidden = false;
  $("#thread-id").textContent = view.thread_id;
  const status = $("#status");
  status.textContent = view.status;
  status.className = "badge " + view.status;
  $("#resume").hidden = view.status !== "interrupted";
  const archive = $("#archive");
  archive.hidden = !(view.files && view.files.length);
  archive.href = `/api/threads/${encodeURIComponent(view.thread_id)}/archive`;

  const chat = $("#chat");
  chat.replaceChildren();
  const lines = (view.request || "").split("\n");
  bubble("you", lines[0]);
  for (const reply of lines.slice(1)) bubble("you", reply, "reply");

  renderClarify(view);
  renderReview(view);
  renderPlan(view);
  renderAnswer(view);
  renderFiles(view);
  if (view.status === "running") bubble("simagent", "working…", "working");
  else if (view.error && !view.answer) bubble("simagent", view.error, "error");
}

function renderClarify(view) {
  const pending = view.interrupt && view.interrupt.kind === "clarification";
  $("#clarify").hidden = !pending;
  if (!pending) return;
  bubble("simagent", view.interrupt.question, "question");
  $("#question").textContent = view.interrupt.question;
  $("#reply-input").focus();
}

function editsKept(files, edits) {
  return Object.entries(edits).every(([job, named]) =>
    Object.entries(named).every(([name, text]) => files[job] && files[job][name] === text));
}

function renderReview(view) {
  const pending = view.interrupt && view.interrupt.kind === "review";
  $("#review").hidden = !pending;
  if (!pending) { approveEdits = null; return; }
  const payload = view.interrupt;
  const repair = payload.repair;
  if (approveEdits && !repair && editsKept(payload.files || {}, approveEdits)) {
    // the edited inputs passed the same pre-run checks as the CLI's: run them, as asked
    approveEdits = null;
    $("#review").hidden = true;
    bubble("simagent", "Your edits passed the pre-run checks; running them.", "question");
    sendReview({ action: "approve" });
    return;
  }
  approveEdits = null;
  $("#review-title").textContent = repair ? "Review the proposed repair" : "Review the generated inputs";
  $("#repair").hidden = !repair;
  $("#reject-repair").hidden = !(payload.actions || []).includes("reject");
  $("#review-error").textContent = "";
  if (repair) {
    const changes = $("#repair-changes");
    changes.replaceChildren();
    for (const c of repair.changes || []) {
      changes.append(el("li", { text: `${c.job} by ${c.handler}: ${c.action} (${c.reason})` }));
    }
    const diff = $("#repair-diff");
    diff.replaceChildren();
    for (const line of (repair.diff || "(no textual change)").split("\n")) {
      const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "";
      diff.append(el("span", { class: cls, text: line + "\n" }));
    }
  }
  const box = $("#review-files");
  box.replaceChildren();
  shownFiles = payload.files || {};
  for (const [job, files] of Object.entries(shownFiles)) {
    for (const [name, text] of Object.entries(files)) {
      const area = el("textarea", { class: "input-file", "data-job": job, "data-name": name, spellcheck: "false",
        rows: String(Math.min(24, text.split("\n").length + 1)) });
      area.value = text;
      box.append(el("details", { open: "" }, el("summary", { text: `${job}/${name}` }), area));
    }
  }
  bubble("simagent", repair ? "An LLM proposed a repair: approve, edit or reject it below."
    : "Inputs are ready: review, edit, give feedback or approve them below.", "question");
}

function editedFiles() {
  const out = {};
  let changed = false;
  for (const area of document.querySelectorAll("textarea.input-file")) {
    const job = area.dataset.job, name = area.dataset.name;
    if (area.value !== shownFiles[job][name]) {
      (out[job] = out[job] || {})[name] = area.value;
      changed = true;
    }
  }
  return changed ? out : null;
}

async function sendReview(body) {
  try {
    await api("POST", `/api/threads/${encodeURIComponent(current)}/review`, body);
    $("#review").hidden = true;
    startRun();
  } catch (err) { $("#review-error").textContent = err.message; }
}

$("#approve").addEventListener("click", () => {
  const files = editedFiles();
  approveEdits = files;
  sendReview(files ? { action: "edit", files } : { action: "approve" });
});
$("#check-edits").addEventListener("click", () => {
  const files = editedFiles();
  if (!files) { $("#review-error").textContent = "nothing edited"; return; }
  approveEdits = null;
  sendReview({ action: "edit", files });
});
$("#reject-repair").addEventListener("click", () => sendReview({ action: "reject" }));
$("#abort").addEventListener("click", () => sendReview({ action: "abort" }));
$("#feedback-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("#feedback-input").value.trim();
  if (!text) return;
  $("#feedback-input").value = "";
  bubble("you", text, "reply");
  sendReview({ action: "feedback", text });
});

$("#reply-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const reply = $("#reply-input").value.trim();
  if (!reply) return;
  try {
    await api("POST", `/api/threads/${encodeURIComponent(current)}/reply`, { reply });
    $("#reply-input").value = "";
    $("#clarify").hidden = true;
    bubble("you", reply, "reply");
    startRun();
  } catch (err) { bubble("simagent", err.message, "error"); }
});

$("#resume").addEventListener("click", async () => {
  try {
    await api("POST", `/api/threads/${encodeURIComponent(current)}/resume`, {});
    startRun();
  } catch (err) { bubble("simagent", err.message, "error"); }
});

$("#composer").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const request = $("#request-input").value.trim();
  if (!request) return;
  try {
    const data = await api("POST", "/api/threads", { request, auto_approve: !$("#review-inputs").checked });
    $("#request-input").value = "";
    closeStream();
    current = data.thread_id;
    history.replaceState(null, "", "#" + current);
    clearThread();
    render({ thread_id: current, request, status: "running" });
    startRun();
    loadThreads();
  } catch (err) { bubble("simagent", err.message, "error"); }
});
$("#request-input").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("#composer").requestSubmit(); }
});

// ---- live progress (server-sent events) -------------------------------------------------------

function closeStream() { if (source) { source.close(); source = null; } }

function startRun() {
  const status = $("#status");
  status.textContent = "running";
  status.className = "badge running";
  connect();
}

function connect() {
  closeStream();
  const id = current;
  source = new EventSource(`/api/threads/${encodeURIComponent(id)}/events?since=${lastSeq + 1}`);
  source.onmessage = (msg) => {
    const event = JSON.parse(msg.data);
    lastSeq = Math.max(lastSeq, event.seq);
    showEvent(event);
  };
  source.addEventListener("idle", async () => {
    closeStream();
    if (id !== current) return;
    await refresh();
    loadThreads();
  });
  source.onerror = () => { /* the browser reconnects by itself */ };
}

function showEvent(event) {
  $("#progress").hidden = false;
  let text;
  if (event.type === "stage") text = `${event.name}: ${event.detail || ""}`;
  else if (event.type === "job") {
    const wall = event.wall_s ? ` in ${Number(event.wall_s).toFixed(1)} s` : "";
    text = `job ${event.id}: ${event.status}${wall}${event.message ? " (" + event.message + ")" : ""}`;
  } else if (event.type === "plan") text = `jobs: ${event.line}`;
  else if (event.type === "notice") text = event.text;
  else if (event.type === "status") text = `status: ${event.status}${event.error ? " — " + event.error : ""}`;
  else text = `${event.type}: ${JSON.stringify(event)}`;
  $("#events").append(el("li", { class: `ev ${event.type} ${event.status || ""}` },
    el("span", { class: "t", text: `${Number(event.t).toFixed(1)} s` }), el("span", { text })));
}

// ---- plan -------------------------------------------------------------------------------------

function renderPlan(view) {
  const plan = view.plan;
  $("#plan").hidden = !plan;
  if (!plan) return;
  const protocols = $("#protocols");
  protocols.replaceChildren();
  for (const run of plan.runs) {
    protocols.append(el("li", {}, el("strong", { text: run.protocol }),
      document.createTextNode(` for ${run.properties.join(", ")} — jobs ${run.jobs.join(", ")}`)));
  }
  $("#dag").replaceChildren(dagSvg(plan.jobs, view.thread_id));
  const body = $("#defaults tbody");
  body.replaceChildren();
  for (const d of view.defaults_applied || []) {
    body.append(el("tr", {}, el("td", { text: d.parameter }), el("td", { text: d.value }),
      el("td", { text: d.reason || "" })));
  }
}

function dagSvg(jobs, threadId) {
  const NS = "http://www.w3.org/2000/svg";
  const depth = {};
  const byId = Object.fromEntries(jobs.map((j) => [j.id, j]));
  const level = (j) => depth[j.id] ??= j.depends_on.length
    ? 1 + Math.max(...j.depends_on.map((d) => (byId[d] ? level(byId[d]) : 0))) : 0;
  jobs.forEach(level);
  const columns = {};
  for (const j of jobs) (columns[depth[j.id]] = columns[depth[j.id]] || []).push(j);
  const W = 250, H = 54, GX = 60, GY = 16, pos = {};
  for (const [col, list] of Object.entries(columns)) {
    list.forEach((j, row) => { pos[j.id] = { x: 10 + col * (W + GX), y: 10 + row * (H + GY) }; });
  }
  const width = 20 + (Object.keys(columns).length) * (W + GX) - GX;
  const height = 20 + Math.max(...Object.values(columns).map((l) => l.length)) * (H + GY) - GY;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("id", "plan-dag");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const defs = document.createElementNS(NS, "defs");
  const marker = document.createElementNS(NS, "marker");
  for (const [k, v] of Object.entries({ id: "arrow", markerWidth: "8", markerHeight: "8", refX: "8", refY: "4",
    orient: "auto" })) marker.setAttribute(k, v);
  const tip = document.createElementNS(NS, "path");
  tip.setAttribute("d", "M0,0 L8,4 L0,8 z");
  tip.setAttribute("fill", "#667");
  marker.append(tip);
  defs.append(marker);
  svg.append(defs);
  for (const j of jobs) {
    for (const d of j.depends_on) {
      if (!pos[d]) continue;
      const line = document.createElementNS(NS, "line");
      for (const [k, v] of Object.entries({ x1: pos[d].x + W, y1: pos[d].y + H / 2, x2: pos[j.id].x - 2,
        y2: pos[j.id].y + H / 2, stroke: "#667", "marker-end": "url(#arrow)" })) line.setAttribute(k, v);
      svg.append(line);
    }
  }
  for (const j of jobs) {
    const g = document.createElementNS(NS, "g");
    g.setAttribute("class", `job ${j.status}`);
    g.setAttribute("data-job", j.id);
    const rect = document.createElementNS(NS, "rect");
    for (const [k, v] of Object.entries({ x: pos[j.id].x, y: pos[j.id].y, width: W, height: H, rx: 6 })) {
      rect.setAttribute(k, v);
    }
    const title = document.createElementNS(NS, "text");
    title.setAttribute("x", pos[j.id].x + 8);
    title.setAttribute("y", pos[j.id].y + 20);
    title.textContent = j.id;
    const sub = document.createElementNS(NS, "text");
    sub.setAttribute("x", pos[j.id].x + 8);
    sub.setAttribute("y", pos[j.id].y + 40);
    sub.setAttribute("class", "sub");
    const wall = j.wall_s ? `, ${j.wall_s.toFixed(1)} s` : "";
    sub.textContent = `${j.engine} ${j.stage}: ${j.status}${wall}`;
    const tooltip = document.createElementNS(NS, "title");
    tooltip.textContent = `${j.protocol}${j.message ? " — " + j.message : ""}`;
    g.append(rect, title, sub, tooltip);
    if (j.folder) {
      const a = document.createElementNS(NS, "a");
      a.setAttribute("href", fileUrl(threadId, j.folder + "/" + (j.inputs[0] || "")));
      a.setAttribute("target", "_blank");
      a.append(g);
      svg.append(a);
    } else svg.append(g);
  }
  return svg;
}

// ---- answer, plots, files ---------------------------------------------------------------------

function fileUrl(threadId, path) {
  return `/api/threads/${encodeURIComponent(threadId)}/files/${path.split("/").map(encodeURIComponent).join("/")}`;
}

function link(threadId, path, text) {
  return el("a", { href: fileUrl(threadId, path), target: "_blank", rel: "noopener", text });
}

function jobFolder(view, jobId) {
  const job = view.plan && view.plan.jobs.find((j) => j.id === jobId);
  return job ? job.folder : null;
}

function renderAnswer(view) {
  const answer = view.answer;
  $("#answer").hidden = !answer;
  if (!answer) return;
  bubble("simagent", answer.summary || answer.status, answer.status);
  $("#summary").textContent = answer.error ? `${answer.status}: ${answer.error}` : answer.status;
  const body = $("#results tbody");
  body.replaceChildren();
  for (const r of answer.answers) {
    const folder = jobFolder(view, r.job);
    const jobCell = el("td", {}, el("span", { text: r.job }));
    if (folder) {
      const job = view.plan.jobs.find((j) => j.id === r.job);
      for (const name of job.inputs) jobCell.append(" ", link(view.thread_id, `${folder}/${name}`, name));
    }
    if (r.log) jobCell.append(" ", link(view.thread_id, r.log, "log"));
    if (r.data_file) jobCell.append(" ", link(view.thread_id, r.data_file, "data"));
    const unc = r.uncertainty === null ? "exact (0 K)" : Number(r.uncertainty).toPrecision(2);
    body.append(el("tr", {}, el("td", { text: r.quantity }), el("td", { class: "num", text: Number(r.value).toPrecision(6) }),
      el("td", { class: "num", text: unc }), el("td", { text: r.unit }), el("td", { class: "method", text: r.method }),
      jobCell));
  }
  const corrections = $("#corrections");
  corrections.replaceChildren();
  for (const c of answer.corrections || []) {
    corrections.append(el("li", { text: `correction — ${c.job}: ${c.action} (${c.handler}; ${c.reason})` }));
  }
  const citations = $("#citations");  // literature and manual passages: labelled, never computed values
  citations.replaceChildren();
  for (const c of answer.citations || []) {
    const where = c.section ? ` § ${c.section}` : "";
    const page = c.page ? ` p. ${c.page}` : "";
    citations.append(el("li", { text: `[${c.key}] ${c.kind}: ${c.title}${where}${page}${c.doi ? " doi:" + c.doi : ""}` }));
  }
  const plots = $("#plots");
  plots.replaceChildren();
  for (const p of view.plots || []) {
    plots.append(el("figure", {}, el("img", { src: fileUrl(view.thread_id, p), alt: p }),
      el("figcaption", { text: p })));
  }
}

function renderFiles(view) {
  const files = view.files || [];
  $("#files-panel").hidden = !files.length;
  const list = $("#files");
  list.replaceChildren();
  for (const f of files) list.append(el("li", {}, link(view.thread_id, f, f)));
}

// ---- start ------------------------------------------------------------------------------------

(async () => {
  try { await loadThreads(); } catch (err) { return; }
  const id = location.hash.slice(1);
  if (id) openThread(id);
})();
