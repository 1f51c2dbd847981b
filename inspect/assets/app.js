// attune inspect: the page's entry module. Every request goes to the
// address the page came from (its path holds the run's token).
import { el, sessionList, summary, eventItem } from "./view.js";

const main = document.getElementById("main");
const crumb = document.getElementById("crumb");
const PAGE = 500;

async function get(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function fail(err) {
  main.replaceChildren(el("p", { class: "err" }, String(err.message || err)));
}

async function showList() {
  crumb.textContent = "sessions";
  const { sessions } = await get("api/sessions");
  main.replaceChildren(el("h2", {}, "Sessions"), sessionList(sessions));
}

// pager links to the pages of a long session: ?session=ID&page=N (from 1).
function pager(id, page, pages, first) {
  const link = (text, n, rel) => n >= 1 && n <= pages && n !== page
    ? el("a", { href: "?session=" + encodeURIComponent(id) + "&page=" + n, class: "page-link", rel }, text)
    : el("span", { class: "muted" }, text);
  const from = first.offset, to = first.offset + first.events.length;
  return el("nav", { class: "pager", id: "pager" }, link("« first", 1, "first"), link("‹ previous", page - 1, "prev"),
    el("span", { id: "page-of" }, "page " + page + " of " + pages + " (events " + (to > from ? from + "–" + (to - 1) : "none") + " of " + first.total + ")"),
    link("next ›", page + 1, "next"), link("last »", pages, "last"));
}

async function showSession(id, page) {
  crumb.textContent = "session " + id;
  const first = await get("api/session?id=" + encodeURIComponent(id) + "&offset=" + (page - 1) * PAGE + "&limit=" + PAGE);
  const pages = Math.max(1, Math.ceil(first.total / PAGE));
  const list = el("ol", { class: "timeline", id: "timeline" });
  const more = el("button", { id: "more" }, "");
  const filter = el("select", { id: "filter" }, ...["all", "calls", "refused", "notes", "traces"].map((v) => el("option", { value: v }, v)));
  const title = el("h2", {}, "Session " + first.session);
  const insts = el("p", { class: "muted" }, first.instances.map((i) => i.id + " — bot " + i.bot + ", " + i.kind).join("; "));
  const replayBtn = el("button", { id: "replay" }, "replay against its pin");
  const replayOut = el("p", { id: "replay-result", class: "muted" });
  replayBtn.addEventListener("click", async () => {
    replayOut.textContent = "replaying…";
    try {
      const r = await get("api/replay?id=" + encodeURIComponent(id));
      replayOut.className = r.first_divergence ? "err" : "muted";
      replayOut.textContent = r.first_divergence ? "first divergence: " + r.first_divergence
        : "the replay reproduced the session (" + r.instances.map((i) => i.id + ": " + i.steps + " steps").join(", ") + ")";
    } catch (e) { replayOut.className = "err"; replayOut.textContent = String(e.message || e); }
  });
  main.replaceChildren(title, insts, summary(first), el("div", { class: "filters" }, el("label", {}, "show ", filter), replayBtn), replayOut,
    pager(id, page, pages, first), list, more);
  let loaded = 0;
  const append = (page) => {
    const frag = document.createDocumentFragment();
    for (const ev of page.events) frag.append(eventItem(ev));
    list.append(frag);
    loaded = page.offset + page.events.length;
    more.textContent = "show more (" + loaded + " of " + page.total + " events)";
    more.hidden = loaded >= page.total;
    applyFilter();
  };
  const applyFilter = () => {
    const f = filter.value;
    for (const li of list.children) {
      const k = li.dataset.kind;
      const show = f === "all" || (f === "calls" && k === "call") || (f === "refused" && li.classList.contains("refused")) ||
        (f === "notes" && k === "note") || (f === "traces" && k === "trace");
      li.hidden = !show;
    }
  };
  filter.addEventListener("change", applyFilter);
  more.addEventListener("click", async () => {
    try { append(await get("api/session?id=" + encodeURIComponent(id) + "&offset=" + loaded + "&limit=" + PAGE)); } catch (e) { fail(e); }
  });
  append(first);
  document.body.dataset.ready = "1";
}

const params = new URLSearchParams(location.search);
const id = params.get("session");
const page = Math.max(1, parseInt(params.get("page") || "1", 10) || 1);
(id ? showSession(id, page) : showList()).then(() => { document.body.dataset.ready = "1"; }, fail);
