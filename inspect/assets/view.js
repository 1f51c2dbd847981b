// Rendering of sessions and timelines: plain DOM, no framework.

export function el(tag, attrs = {}, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") n.className = v; else if (k === "text") n.textContent = v; else n.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined && k !== false) n.append(k instanceof Node ? k : String(k));
  return n;
}

const json = (v) => JSON.stringify(v, null, 2);

export function sessionList(sessions) {
  if (!sessions.length) return el("p", { class: "muted" }, "The store holds no session yet.");
  const rows = sessions.map((s) => el("tr", {},
    el("td", {}, el("a", { href: "?session=" + encodeURIComponent(s.session), class: "session-link" }, s.session)),
    el("td", {}, s.instances.map((i) => i.id + " (" + i.bot + ", " + i.kind + ")").join(", ")),
    el("td", {}, String(s.instances.reduce((n, i) => n + i.entries, 0)))));
  return el("table", { class: "sessions" },
    el("thead", {}, el("tr", {}, el("th", {}, "session"), el("th", {}, "instances"), el("th", {}, "journal entries"))),
    el("tbody", {}, ...rows));
}

export function summary(t) {
  const s = t.summary;
  const parts = [["turns", s.turns], ["rounds", s.rounds], ["calls", s.calls], ["refused", s.refused], ["failed", s.failed],
    ["notes", s.notes], ["reached the model", s.consumed], ["expired", s.expired], ["methods", s.methods], ["reads", s.reads], ["traces", s.traces]];
  return el("div", { class: "summary" }, ...parts.map(([k, v]) => el("span", {}, k + ": " + v)));
}

function stepChip(st) {
  let text = st.step + ": " + st.verdict;
  if (st.at) text += " at " + st.at;
  if (st.marks && st.marks.length) text += " [" + st.marks.join(", ") + "]";
  const cls = "step " + st.verdict + (st.recorded ? "" : " inferred");
  const chip = el("span", { class: cls, title: st.reason || st.error || (st.recorded ? "" : "not in the journal: follows from the outcome") }, text);
  if (!st.guards || !st.guards.length) return chip;
  // each guard's own verdict, as the journal holds it
  return el("span", { class: "guards" }, chip, ...st.guards.map((g) => {
    let t = "guard " + g.pattern + " at " + g.at + ": " + g.verdict;
    if (g.attempt) t += " (attempt " + g.attempt + ")";
    if (g.marks && g.marks.length) t += " [" + g.marks.join(", ") + "]";
    if (g.reason || g.error) t += ": " + (g.reason || g.error);
    return el("span", { class: "step guard " + g.verdict }, t);
  }));
}

function head(kind, ...rest) {
  return el("div", { class: "head" }, el("span", { class: "kind" }, kind), ...rest);
}

function where(ev) {
  const w = [];
  if (ev.turn) w.push("turn " + ev.turn);
  if (ev.round) w.push("round " + ev.round);
  return el("span", { class: "muted" }, w.join(" · "));
}

export function eventItem(ev) {
  const li = el("li", { class: "ev " + ev.kind + (ev.status ? " " + ev.status : ""), "data-seq": ev.seq, "data-kind": ev.kind });
  switch (ev.kind) {
    case "turn":
      li.append(head("turn", "Turn " + ev.turn + " begins", ev.status !== "ok" ? el("span", { class: "status refused" }, ev.status) : null));
      if (ev.input !== undefined) li.append(el("details", {}, el("summary", {}, "input"), el("pre", {}, json(ev.input))));
      if (ev.reason) li.append(el("div", { class: "reason" }, ev.reason));
      break;
    case "turn-end":
      li.append(head("turn end", "Turn " + ev.turn + " ends", ev.error ? el("span", { class: "err" }, ev.error) : null));
      if (ev.revs) li.append(el("div", { class: "reason muted" }, "owner revisions: " + Object.entries(ev.revs).map(([k, v]) => k + " " + v).join(", ")));
      break;
    case "round":
      li.append(head("round", "Round " + ev.round + " begins", ev.status !== "ok" ? el("span", { class: "status refused" }, ev.status + (ev.reason ? ": " + ev.reason : "")) : null));
      break;
    case "round-end":
      li.append(head("round end", "Round " + ev.round + " ends", ev.continue ? el("span", { class: "muted" }, ev.host_continue ? "the host continues" : "behaviors continue the loop") : el("span", { class: "muted" }, "the loop may stop")));
      break;
    case "call": {
      li.append(head("call", el("span", { class: "path" }, ev.path), el("span", { class: "status " + ev.status }, ev.status), where(ev),
        ev.refused_by ? el("span", {}, "refused by " + ev.refused_by + (ev.refused_at ? " at " + ev.refused_at : "")) : null));
      if (ev.reason) li.append(el("div", { class: "reason" }, ev.reason));
      if (ev.error) li.append(el("div", { class: "reason err" }, ev.error));
      if (ev.chain) li.append(el("div", { class: "chain" }, ...ev.chain.map(stepChip)));
      const det = el("details", {}, el("summary", {}, "arguments and result"), el("pre", {}, "arguments: " + json(ev.input)));
      if (ev.result !== undefined) det.append(el("pre", {}, "result: " + json(ev.result)));
      if (ev.diagnostics) det.append(el("pre", {}, "diagnostics: " + json(ev.diagnostics)));
      if (ev.call_id) det.append(el("pre", {}, "call id: " + ev.call_id));
      li.append(det);
      break;
    }
    case "note": {
      const n = ev.note;
      const state = n.state === "consumed" ? "reached the model" + (n.consumed_at ? " (" + n.consumed_at + ")" : "") : n.state;
      li.append(head("note", el("span", {}, n.kind + " note from " + (n.program || "?") + (n.phase ? " at " + n.phase : "")), el("span", { class: "status" }, state)));
      li.append(el("div", { class: "reason note-text" }, n.text));
      break;
    }
    case "method":
      li.append(head("method", el("span", { class: "path" }, ev.owner + "." + ev.name), el("span", { class: "status " + ev.status }, ev.status),
        ev.rev ? el("span", { class: "muted" }, "revision " + ev.rev) : null));
      if (ev.reason || ev.error) li.append(el("div", { class: "reason" }, ev.reason || ev.error));
      li.append(el("details", {}, el("summary", {}, "input and result"), el("pre", {}, "input: " + json(ev.input) + "\nresult: " + json(ev.result))));
      break;
    case "command":
      li.append(head("command", el("span", { class: "path" }, ev.name), el("span", { class: "status " + ev.status }, ev.status)));
      break;
    case "read":
      li.append(head("read", el("span", { class: "path" }, ev.key), el("span", { class: "muted" }, "answered " + JSON.stringify(ev.value ?? null))));
      break;
    case "delivery":
      li.append(head("answer", el("span", {}, ev.delivery + " " + (ev.key || "")), el("span", { class: "muted" }, JSON.stringify(ev.value ?? null))));
      break;
    case "trace":
      li.append(head(ev.level, el("span", { class: "muted" }, ev.program + ":"), el("span", {}, ev.text)));
      break;
    default:
      li.append(head(ev.kind, el("span", { class: "muted" }, ev.key || "")));
  }
  return li;
}
