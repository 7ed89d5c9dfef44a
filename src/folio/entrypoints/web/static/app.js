// folio's web page: the library, a book with its reading position, its conversations and the chat.
// Plain ES modules, no build step. Invariant: text from a book, a reader or a model is only ever set
// as text (textContent) or through renderMarkdown (sanitized); never as raw HTML.
import * as api from "./api.js";
import { renderMarkdown } from "./markdown.js";
import { reflow, renderAnswer } from "./citations.js";
import { highlightsPanel } from "./highlights.js";
import { chipMarker, highlightList, passageNodes } from "./source_highlights.js";

const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");
const CONTEXT_CHARS = 600; // text shown on each side of a cited passage
const POLL_MS = 400;
const wide = window.matchMedia("(min-width: 721px)");

// ---------------------------------------------------------------- small DOM helpers

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function toast(message, kind = "") {
  const el = document.getElementById("toast");
  el.textContent = message;
  el.className = `toast show ${kind}`;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (el.className = "toast"), 4000);
}

function errorBox(error, retry) {
  return h("div", { class: "error-box", role: "alert" },
    h("span", { text: error.message || String(error) }),
    retry ? h("button", { type: "button", class: "retry", onclick: retry }, "Retry") : null);
}

function setCrumbs(...items) {
  crumbs.replaceChildren(...items.flatMap((item, i) => [
    ...(i ? [h("span", { class: "sep", "aria-hidden": "true" }, "›")] : []),
    item.href ? h("a", { href: item.href }, item.text) : h("span", { "aria-current": "page" }, item.text),
  ]));
}

// A modal dialog. `fields` are nodes placed in the form; `submit(form)` may throw an ApiError,
// shown in the dialog (which then stays open). Resolves with submit's value, or null if cancelled.
function dialog({ title, fields = [], ok = "OK", danger = false, cancel = true, submit = async () => true }) {
  const dlg = document.getElementById("dialog");
  const form = document.getElementById("dialog-form");
  const okButton = document.getElementById("dialog-ok");
  const error = document.getElementById("dialog-error");
  document.getElementById("dialog-title").textContent = title;
  document.getElementById("dialog-body").replaceChildren(...fields);
  okButton.textContent = ok;
  okButton.className = danger ? "danger" : "primary";
  document.getElementById("dialog-cancel").hidden = !cancel;
  error.textContent = "";
  return new Promise((resolve) => {
    let result = null;
    const onSubmit = async (event) => {
      event.preventDefault();
      okButton.disabled = true;
      try {
        result = await submit(form);
        dlg.close();
      } catch (e) {
        error.textContent = e.message || String(e);
      } finally {
        okButton.disabled = false;
      }
    };
    const close = () => dlg.close();
    const cancelButton = document.getElementById("dialog-cancel");
    form.addEventListener("submit", onSubmit);
    cancelButton.addEventListener("click", close);
    dlg.addEventListener("close", () => {
      form.removeEventListener("submit", onSubmit);
      cancelButton.removeEventListener("click", close);
      resolve(result);
    }, { once: true });
    dlg.showModal();
    const first = form.querySelector("#dialog-body input, #dialog-body textarea");
    (first || okButton).focus();
  });
}

function field(label, name, value = "", attrs = {}) {
  return h("label", { class: "field" }, h("span", { text: label }),
    h("input", { name, value: value ?? "", autocomplete: "off", ...attrs }));
}

function when(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const today = new Date().toDateString() === date.toDateString();
  return today ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString([], { day: "numeric", month: "short" });
}

// Screen readers hear that an answer is ready (the streaming text itself is not read out).
function announce(message) {
  const region = document.getElementById("announce");
  region.textContent = "";
  setTimeout(() => (region.textContent = message), 50);
}

function percentOf(book) {
  const p = book.reading_position;
  return p && p.percent !== null && p.percent !== undefined ? p.percent : null;
}

// The title, or "Frankenstein (EPUB)" beside a book of the same title.
const nameOf = (book) => book.name || book.title;

function positionText(book) {
  const p = book.reading_position;
  if (!p || p.kind === "none") return "No position set: the whole book is open";
  return `Read ${p.description}`;  // "through Chapter 5 (p. 46 of 205, 23%)", the book's own words
}

// ---------------------------------------------------------------- sign-in

async function whoAmI() {
  try {
    await api.get("/me");
    const who = document.getElementById("who");
    who.replaceChildren();
    if (api.token()) {
      who.append(
        h("button", { type: "button", class: "link", onclick: () => { api.setToken(""); location.reload(); } }, "Sign out"));
    }
    return true;
  } catch (e) {
    if (e.status === 401) return false;
    throw e;
  }
}

function signIn(message = "") {
  setCrumbs({ text: "Sign in" });
  const input = h("input", { id: "token", name: "token", type: "password", autocomplete: "current-password", required: true });
  const error = h("p", { class: "error", role: "alert", text: message });
  const form = h("form", { class: "signin card" },
    h("h1", { text: "Sign in to folio" }),
    h("p", { text: "Paste the token you got from `folio users add` (or from whoever runs this folio)." }),
    h("label", { class: "field", for: "token" }, h("span", { text: "Token" }), input),
    error,
    h("button", { type: "submit", class: "primary" }, "Sign in"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    api.setToken(input.value.trim());
    try {
      if (await whoAmI()) return start();
      api.setToken("");
      error.textContent = "This token is not valid.";
    } catch (e) {
      error.textContent = e.message;
    }
  });
  main.replaceChildren(form);
  input.focus();
}

// ---------------------------------------------------------------- library

async function libraryView() {
  setCrumbs({ text: "Library" });
  const input = h("input", { type: "file", multiple: true, id: "files", class: "visually-hidden", tabindex: "-1",
    accept: ".epub,.pdf,.txt,.text,.md,.markdown,.html,.htm,.xhtml" });
  const drop = h("label", { class: "dropzone", for: "files", tabindex: "0" },
    h("strong", { text: "Add books" }),
    h("span", { text: "Drop EPUB, PDF, HTML, Markdown or text files here, or choose files" }),
    input);
  drop.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); input.click(); }
  });
  const uploads = h("ul", { class: "uploads", "aria-label": "Uploads", "aria-live": "polite" });
  const cards = h("div", { class: "cards", id: "cards" });
  input.addEventListener("change", () => { addFiles([...input.files], uploads, cards); input.value = ""; });
  for (const type of ["dragenter", "dragover"]) {
    drop.addEventListener(type, (e) => { e.preventDefault(); drop.classList.add("over"); });
  }
  for (const type of ["dragleave", "drop"]) {
    drop.addEventListener(type, () => drop.classList.remove("over"));
  }
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    addFiles([...e.dataTransfer.files], uploads, cards);
  });
  main.replaceChildren(h("section", { class: "library" },
    h("h1", { text: "Your library" }), drop, uploads, cards));
  resumeImports(uploads, cards);
  await renderCards(cards);
}

async function renderCards(cards) {
  let books;
  try {
    books = await api.get("/books");
  } catch (e) {
    cards.replaceChildren(errorBox(e, () => renderCards(cards)));
    return;
  }
  if (!books.length) {
    cards.replaceChildren(h("p", { class: "empty", text: "No books yet. Add one above to start." }));
    return;
  }
  cards.replaceChildren(...books.map((book) => bookCard(book, cards)));
}

function bookCard(book, cards) {
  const percent = percentOf(book);
  const href = `#/book/${encodeURIComponent(book.id)}`;
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const meta = [book.format.toUpperCase(), plural(book.pages, "page"), plural(book.chapters, "chapter")].join(" · ");
  return h("article", { class: "card book-card", "data-book-id": book.id },
    h("h2", {}, h("a", { href, class: "title" }, nameOf(book))),
    h("p", { class: "author", text: book.author || "Unknown author" }),
    book.series ? h("p", { class: "series", text: seriesText(book) }) : null,
    h("p", { class: "meta", text: meta }),
    h("div", { class: "progress-line" },
      percent === null ? null : h("progress", { max: 100, value: percent, "aria-label": "How far you have read" }),
      h("span", { class: "position", text: positionText(book) })),
    h("div", { class: "actions" },
      h("a", { href, class: "button primary" }, "Open"),
      h("button", { type: "button", onclick: () => editBook(book, cards) }, "Edit"),
      h("button", { type: "button", class: "danger-text", onclick: () => deleteBook(book, cards) }, "Delete")));
}

// "Harbour Saga, book 2": chatting with a volume also searches the earlier ones, never a later one
function seriesText(book) {
  return book.series_index === null ? book.series : `${book.series}, book ${book.series_index}`;
}

async function editBook(book, cards) {
  const done = await dialog({
    title: "Edit book",
    ok: "Save",
    fields: [field("Title", "title", book.title, { required: true, maxlength: 500 }),
      field("Author", "author", book.author || "", { maxlength: 500 }),
      field("Series", "series", book.series || "", { maxlength: 300 }),
      field("Number in the series", "series_index", book.series_index ?? "",
        { type: "number", min: 0, max: 10000, step: "any" })],
    submit: async (form) => {
      const data = new FormData(form);
      const index = data.get("series_index");
      return api.patch(`/books/${encodeURIComponent(book.id)}`, {
        title: data.get("title"), author: data.get("author"), series: data.get("series"),
        series_index: index === "" ? null : Number(index),
      });
    },
  });
  if (done) { toast("Saved"); await renderCards(cards); }
}

async function deleteBook(book, cards) {
  const done = await dialog({
    title: `Delete “${nameOf(book)}”?`,
    fields: [h("p", { text: "The book and all its conversations are deleted. This cannot be undone." })],
    ok: "Delete",
    danger: true,
    submit: () => api.del(`/books/${encodeURIComponent(book.id)}`).then(() => true),
  });
  if (done) { toast(`Deleted “${nameOf(book)}”`); await renderCards(cards); }
}

// Imports still running when the reader left the library (kept for this tab's session).
const JOBS_KEY = "folio.jobs";
const pendingJobs = () => JSON.parse(sessionStorage.getItem(JOBS_KEY) || "[]");
function keepJob(job, done = false) {
  const others = pendingJobs().filter((j) => j.job_id !== job.job_id);
  sessionStorage.setItem(JOBS_KEY, JSON.stringify(done ? others : [...others, { job_id: job.job_id, filename: job.filename }]));
}

function uploadItem(name, uploads) {
  const bar = h("progress", { max: 100, value: 0, "aria-label": `Progress of ${name}` });
  const status = h("span", { class: "status", text: "Waiting" });
  const li = h("li", { class: "upload" }, h("span", { class: "name", text: name }), bar, status);
  uploads.append(li);
  return { li, bar, status };
}

function resumeImports(uploads, cards) {
  for (const job of pendingJobs()) {
    const item = uploadItem(job.filename, uploads);
    item.bar.value = 50;
    watchImport({ job_id: job.job_id, filename: job.filename, status: "queued" }, item, cards, true);
  }
}

// Each new book's row asks how far the reader has read before its upload starts; the uploads then
// run one after the other, in the order the answers come.
let uploadQueue = Promise.resolve();

function addFiles(files, uploads, cards) {
  const items = files.map((file) => ({ file, ...uploadItem(file.name, uploads) }));
  items.forEach((item, i) => askPosition(item, "", i === 0).then((position) => {
    uploadQueue = uploadQueue.then(() => uploadOne(item, cards, position));
  }));
}

// "How far have you read? [chapter] [Not started] [Whole book]" in the upload row. The chapter (or
// page, or percentage) is typed as the book names it and checked against the book once it is read;
// resolves with the answer as the API takes it ("Chapter 5", "not started", "whole").
function askPosition(item, message = "", focus = true) {
  return new Promise((resolve) => {
    const input = h("input", { name: "position", maxlength: 200, autocomplete: "off",
      placeholder: "Chapter 5, p. 45 or 23%", "aria-label": `Chapter, page or percentage of ${item.file.name}` });
    const error = h("p", { class: "error", role: "alert", text: message });
    const form = h("form", { class: "ask", "aria-label": `How far have you read ${item.file.name}?` },
      h("span", { class: "question", text: "How far have you read?" }), input,
      h("button", { type: "submit", class: "primary" }, "Set"),
      h("button", { type: "button", class: "not-started", onclick: () => done("not started") }, "Not started"),
      h("button", { type: "button", class: "whole", onclick: () => done("whole") }, "Whole book"),
      error);
    function done(answer) {
      form.remove();
      item.status.textContent = "Waiting";
      resolve(answer);
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const answer = input.value.trim();
      if (answer) done(answer);
      else error.textContent = "Give a chapter as the book names it, a page or a percentage, or choose Not started or Whole book";
    });
    item.li.classList.remove("failed");
    item.status.textContent = "Not uploaded yet: first, how far have you read it?";
    item.status.removeAttribute("role");
    item.li.append(form);
    if (focus) input.focus();
  });
}

async function uploadOne(item, cards, position) {
  const { file, bar, status } = item;
  try {
    status.textContent = "Uploading";
    const accepted = await api.upload(file, (fraction) => {
      bar.value = Math.round(fraction * 50);
      status.textContent = `Uploading ${Math.round(fraction * 100)}%`;
    }, { position });
    keepJob(accepted.job);
    await watchImport(accepted.job, item, cards, false);
  } catch (e) {
    failed(item, e);
  }
}

function failed({ li, status }, e) {
  li.classList.add("failed");
  status.textContent = e.message;
  status.setAttribute("role", "alert");
}

async function watchImport(started, item, cards, resumed) {
  const { li, bar, status } = item;
  let job = started;
  try {
    if (resumed) job = await api.get(`/jobs/${encodeURIComponent(job.job_id)}`);
    while (job.status === "queued" || job.status === "running") {
      const share = job.total ? job.done / job.total : 0;
      bar.value = 50 + Math.round(share * 50);
      status.textContent = `Importing${job.stage ? ": " + job.stage : ""}` +
        (job.total ? ` ${job.done}/${job.total}` : "");
      await new Promise((r) => setTimeout(r, POLL_MS));
      if (!li.isConnected) return; // the reader left the library: resumed when they come back
      job = await api.get(`/jobs/${encodeURIComponent(job.job_id)}`);
    }
    keepJob(job, true);
    if (job.status === "failed") {
      const error = new Error(job.error ? job.error.message : "The import failed");
      error.code = job.error && job.error.code;
      throw error;
    }
    bar.value = 100;
    status.textContent = "Imported";
    li.classList.add("done");
    setTimeout(() => li.remove(), 3000);
    await renderCards(cards);
  } catch (e) {
    if (e.status === 404) keepJob(job, true); // gone (another session, a restart): forget it
    if (e.code === "INVALID_POSITION" && item.file) { // nothing was stored: ask again, upload again
      bar.value = 0;
      const again = await askPosition(item, e.message);
      uploadQueue = uploadQueue.then(() => uploadOne(item, cards, again));
      return;
    }
    failed(item, e);
  }
}

// ---------------------------------------------------------------- a book: position, conversations, chat

const view = { bookId: null, book: null, cid: null, busy: null, els: null, revealAsked: 0 };

async function bookView(bookId, cid) {
  if (view.bookId === bookId && view.els && main.contains(view.els.chat)) {
    if (cid !== view.cid) await openConversation(cid);
    return;
  }
  view.bookId = bookId;
  view.cid = undefined;
  view.reveal = Boolean(localStorage.getItem(`folio.reveal.${bookId}`));
  let book;
  try {
    book = await loadBook(bookId);
  } catch (e) {
    view.bookId = null;
    main.replaceChildren(errorBox(e, () => bookView(bookId, cid)), h("p", {}, h("a", { href: "#/" }, "Back to the library")));
    return;
  }
  view.book = book;
  const els = {
    position: h("section", { class: "panel position-panel", "aria-label": "Reading position" }),
    chapters: h("ol", { class: "chapters", "aria-label": "Chapters" }),
    reveal: h("div", { class: "reveal-line" }),
    conversations: h("ul", { class: "conversations", "aria-label": "Conversations" }),
    chat: h("section", { class: "chat", "aria-label": "Chat" }),
  };
  view.els = els;
  const side = h("aside", { class: "sidebar" },
    h("details", { class: "panel", open: wide.matches, id: "book-panel" },
      h("summary", {}, h("span", { class: "book-title", text: nameOf(book) }), h("span", { class: "author", text: book.author || "" }),
        h("span", { class: "summary-position", id: "summary-position" })),
      els.position),
    h("details", { class: "panel", open: wide.matches, id: "conversations-panel" },
      h("summary", { text: "Conversations" }),
      h("div", { class: "conversation-actions" },
        h("button", { type: "button", class: "primary new-conversation", onclick: () => { location.hash = bookHash(); } }, "New conversation"),
        importButton()),
      els.conversations),
    highlightsPanel({ h, bookId, open: wide.matches, toast, confirm: (title, text) =>
      dialog({ title, fields: [h("p", { text })], ok: "Delete", danger: true }) }).panel,
    h("details", { class: "panel", open: wide.matches, id: "chapters-panel" },
      h("summary", { text: `Chapters (${book.chapters.length})` }), els.reveal, els.chapters));
  main.replaceChildren(h("div", { class: "book-layout" }, side, els.chat));
  renderPosition();
  await Promise.all([renderConversations(), openConversation(cid)]);
}

function loadBook(bookId) {
  return api.get(`/books/${encodeURIComponent(bookId)}${view.reveal ? "?all_chapters=true" : ""}`);
}

function bookHash(cid) {
  const base = `#/book/${encodeURIComponent(view.bookId)}`;
  return cid ? `${base}/c/${encodeURIComponent(cid)}` : base;
}

// "Answers use the book through Chapter 5 (p. 46 of 205, 23%)": the position as it is now.
function renderChatPosition() {
  const line = document.getElementById("chat-position");
  if (!line) return;
  const p = view.book.reading_position;
  line.replaceChildren(p.kind === "none"
    ? h("span", { class: "unset", text: "No reading position set: answers may come from the whole book." })
    : h("span", { text: `${positionText(view.book)}: answers use nothing past it.` }));
}

function renderPosition() {
  const { book, els } = view;
  const limit = book.reading_position.char_offset;
  let here = -1;
  book.chapters.forEach((c, i) => { if (limit !== null && c.char_start < limit) here = i; });
  const kind = h("select", { name: "kind", "aria-label": "Set the position by" },
    h("option", { value: "chapter" }, "Chapter"), h("option", { value: "page" }, "Page"),
    h("option", { value: "percent" }, "Percent"));
  kind.value = book.reading_position.kind === "none" ? "chapter" : book.reading_position.kind;
  const value = h("input", { name: "value", "aria-label": "Page or percent", size: 6,
    value: book.reading_position.kind === "chapter" ? "" : book.reading_position.value ?? "", inputmode: "decimal" });
  const chapter = h("select", { name: "chapter", "aria-label": "Chapter" },
    ...book.chapters.map((c, i) => h("option", { value: i + 1 },
      `${c.title ?? "Unread chapter"}${c.page ? ` (${pagesOf(c)})` : ""}`)));
  chapter.value = String(here >= 0 ? here + 1 : 1);
  const showKind = () => {
    chapter.hidden = kind.value !== "chapter";
    value.hidden = !chapter.hidden;
    value.placeholder = kind.value === "page" ? "page" : "0-100";
  };
  kind.addEventListener("change", showKind);
  showKind();
  const error = h("p", { class: "error", role: "alert" });
  const form = h("form", { class: "position-form" }, kind, chapter, value,
    h("div", { class: "buttons" },
      h("button", { type: "submit", class: "primary" }, "Set"),
      h("button", { type: "button", onclick: () => setPosition({ percent: 100 }, error) }, "Whole book")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    // the chapter picked from the book's own list (its entry), never a number typed as an index
    if (kind.value === "chapter") return setPosition({ chapter_index: Number(chapter.value) }, error);
    const raw = value.value.trim();
    if (!raw) {
      error.textContent = `Give a ${kind.value === "page" ? "page" : "percentage"}`;
      return;
    }
    const body = kind.value === "page" ? { page: raw } : { [kind.value]: Number(raw) };
    if (kind.value !== "page" && !Number.isFinite(body[kind.value])) {
      error.textContent = `“${raw}” is not a number`;
      return;
    }
    setPosition(body, error);
  });
  document.getElementById("summary-position").textContent = positionText(book);
  els.position.replaceChildren(
    h("p", { class: "you-are-here", id: "position-text" }, h("strong", { text: "You are here: " }), positionText(book)),
    h("p", { class: "hint", text: "Answers use only what comes before this point: nothing after it is shown." }),
    form, error);
  const reveal = h("input", { type: "checkbox", checked: view.reveal });
  reveal.addEventListener("change", async () => {
    view.reveal = reveal.checked;
    localStorage.setItem(`folio.reveal.${view.bookId}`, view.reveal ? "1" : "");
    // toggled twice quickly, the answers can come back in any order: the last toggle's is drawn
    const asked = (view.revealAsked += 1);
    els.chapters.setAttribute("aria-busy", "true");
    try {
      const book = await loadBook(view.bookId);
      if (asked !== view.revealAsked) return;
      view.book = book;
      renderPosition();
    } catch (e) {
      if (asked === view.revealAsked) error.textContent = e.message;
    } finally {
      if (asked === view.revealAsked) els.chapters.removeAttribute("aria-busy");
    }
  });
  els.reveal.replaceChildren(h("label", { class: "reveal" }, reveal, " Show the titles of unread chapters (they can give things away)"));
  els.chapters.replaceChildren(...book.chapters.map((c, i) => h("li",
    { class: [c.unread ? "unread" : "", i === here ? "here" : ""].join(" "), "aria-current": i === here ? "location" : null },
    h("span", { class: "chapter-title", text: c.title ?? "Unread chapter" }),
    c.page ? h("span", { class: "page", text: pagesOf(c) }) : null,
    i === here ? h("span", { class: "badge", text: "you are here" }) : null,
    h("button", { type: "button", class: "link small", title: `Set my position to the end of chapter ${i + 1}`,
      onclick: () => setPosition({ chapter_index: i + 1 }, error) }, "read to here"))));
  const mark = els.chapters.querySelector(".here");
  if (mark) els.chapters.scrollTop = Math.max(0, mark.offsetTop - els.chapters.clientHeight / 2);
}

// A chapter's pages, first to last: picking it reads through its last page, as "You are here" says.
function pagesOf(c) {
  const last = c.page_end || c.page;
  return last === c.page ? `p. ${c.page}` : `pp. ${c.page}–${last}`;
}

async function setPosition(body, error) {
  error.textContent = "";
  try {
    const before = view.book.reading_position.description;
    view.book = await api.put(`/books/${encodeURIComponent(view.bookId)}/position`, body);
    if (view.reveal) view.book = await loadBook(view.bookId);
    renderPosition();
    renderChatPosition();
    const messages = view.els.chat.querySelector(".messages");
    if (messages && messages.querySelector(".message") && before !== view.book.reading_position.description) {
      const moved = h("li", { class: "position-change", role: "status" },
        `Position moved. ${positionText(view.book)}: the answers from here on use nothing past it.`);
      messages.append(moved);
      revealAboveComposer(moved);
    }
    toast(positionText(view.book));
  } catch (e) {
    error.textContent = e.message;
  }
}

async function renderConversations() {
  const list = view.els.conversations;
  let page;
  try {
    page = await api.get(`/conversations?book_id=${encodeURIComponent(view.bookId)}&limit=200`);
  } catch (e) {
    list.replaceChildren(h("li", {}, errorBox(e, renderConversations)));
    return;
  }
  if (!page.items.length) {
    list.replaceChildren(h("li", { class: "empty", text: "No conversations yet." }));
    return;
  }
  list.replaceChildren(...page.items.map((c) => h("li",
    { class: c.conversation_id === view.cid ? "current" : "", "data-conversation-id": c.conversation_id },
    h("a", { href: bookHash(c.conversation_id), class: "conversation-title",
      "aria-current": c.conversation_id === view.cid ? "page" : null }, c.title),
    h("span", { class: "meta", text: `${c.turns} turn${c.turns === 1 ? "" : "s"} · ${when(c.updated_at)}` }),
    h("span", { class: "row-actions" },
      h("button", { type: "button", class: "link small", onclick: () => renameConversation(c) }, "Rename"),
      h("button", { type: "button", class: "link small", onclick: () => exportConversation(c, "md") }, "Markdown"),
      h("button", { type: "button", class: "link small", onclick: () => exportConversation(c, "json") }, "JSON"),
      h("button", { type: "button", class: "link small danger-text", onclick: () => deleteConversation(c) }, "Delete")))));
}

// A conversation exported as JSON (here or with `folio conversations export --format json`).
function importButton() {
  const input = h("input", { type: "file", accept: ".json,application/json", class: "visually-hidden", tabindex: "-1" });
  const button = h("button", { type: "button", onclick: () => input.click() }, "Import…");
  input.addEventListener("change", async () => {
    const file = input.files[0];
    input.value = "";
    if (!file) return;
    try {
      let data;
      try {
        data = JSON.parse(await file.text());
      } catch {
        throw new Error(`${file.name} is not a JSON export of a conversation`);
      }
      const imported = await api.post("/conversations/import", data);
      await renderConversations();
      if (imported.book_id === view.bookId) location.hash = bookHash(imported.conversation_id);
      else toast(`Imported “${imported.title}” into another book`);
    } catch (e) {
      toast(e.message, "bad");
    }
  });
  return h("span", { class: "import-conversation" }, button, input);
}

async function renameConversation(c) {
  const done = await dialog({
    title: "Rename conversation",
    ok: "Rename",
    fields: [field("Title", "title", c.title, { required: true, maxlength: 500 })],
    submit: (form) => api.patch(`/conversations/${encodeURIComponent(c.conversation_id)}`,
      { title: new FormData(form).get("title") }),
  });
  if (!done) return;
  await renderConversations();
  if (c.conversation_id === view.cid) setChatTitle(done.title);
}

async function deleteConversation(c) {
  const done = await dialog({
    title: `Delete “${c.title}”?`,
    fields: [h("p", { text: "Its messages are deleted. This cannot be undone." })],
    ok: "Delete",
    danger: true,
    submit: () => api.del(`/conversations/${encodeURIComponent(c.conversation_id)}`).then(() => true),
  });
  if (!done) return;
  toast(`Deleted “${c.title}”`);
  if (c.conversation_id === view.cid) location.hash = bookHash();
  await renderConversations();
}

async function exportConversation(c, format) {
  try {
    const response = await api.call("GET",
      `/conversations/${encodeURIComponent(c.conversation_id)}/export?format=${format}`, undefined, { raw: true });
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const safe = c.title.replace(/[^\p{L}\p{N} _-]+/gu, "").trim().slice(0, 60) || "conversation";
    const a = h("a", { href: url, download: `${safe}.${format}` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (e) {
    toast(e.message, "bad");
  }
}

function setChatTitle(title) {
  const heading = view.els.chat.querySelector(".chat-title");
  if (heading) heading.textContent = title;
  setCrumbs({ text: "Library", href: "#/" }, { text: nameOf(view.book), href: bookHash() }, { text: title });
}

async function openConversation(cid) {
  if (view.busy) view.busy.abort();
  view.cid = cid;
  const { chat } = view.els;
  const messages = h("ol", { class: "messages", "aria-label": "Messages" });
  const textarea = h("textarea", { id: "message", name: "message", rows: 2, required: true,
    placeholder: `Ask about ${nameOf(view.book)}…`, "aria-label": "Your message", maxlength: 100000 });
  const send = h("button", { type: "submit", class: "primary send" }, "Send");
  const stop = h("button", { type: "button", class: "stop", hidden: true }, "Stop");
  const composer = h("form", { class: "composer" }, textarea, send, stop);
  const title = h("h1", { class: "chat-title", text: "New conversation" });
  const where = h("p", { class: "chat-position", id: "chat-position" });
  chat.replaceChildren(title, where, messages, composer);
  renderChatPosition();
  for (const li of view.els.conversations.querySelectorAll("li[data-conversation-id]")) {
    const current = li.dataset.conversationId === cid;
    li.classList.toggle("current", current);
    li.querySelector("a").toggleAttribute("aria-current", current);
  }
  textarea.value = sessionStorage.getItem(draftKey()) || "";
  textarea.addEventListener("input", () => sessionStorage.setItem(draftKey(), textarea.value));
  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = textarea.value.trim();
    if (!text || view.busy) return;
    textarea.value = "";
    sessionStorage.setItem(draftKey(), text); // until it is answered
    ask(text, messages, { send, stop, textarea });
  });
  textarea.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  chat.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && view.busy) view.busy.abort();
  });
  stop.addEventListener("click", () => view.busy && view.busy.abort());
  if (!cid) {
    setCrumbs({ text: "Library", href: "#/" }, { text: nameOf(view.book) });
    messages.append(h("li", { class: "intro" },
      h("p", { text: `Ask anything about ${nameOf(view.book)}.` }),
      h("p", { class: "hint", text: "Answers come only from what you have read, with page citations." })));
    textarea.focus();
    return;
  }
  try {
    const detail = await api.get(`/conversations/${encodeURIComponent(cid)}`);
    if (view.cid !== cid) return;
    setChatTitle(detail.title);
    renderHistory(detail, messages);
  } catch (e) {
    messages.replaceChildren(h("li", {}, errorBox(e, () => openConversation(cid))));
  }
  textarea.focus();
}

function renderHistory(detail, messages) {
  const citations = new Map(detail.turn_details.map((t) => [t.turn_number, t.citations]));
  const marks = new Map(detail.turn_details.map((t) => [t.turn_number, t.citation_marks]));
  const searches = new Map(detail.turn_details.map((t) => [t.turn_number, t.searches]));
  const lastAnswer = new Map();
  for (const m of detail.messages) if (m.role === "assistant") lastAnswer.set(m.turn_number, m.id);
  for (const m of detail.messages) {
    if (m.role === "user") messages.append(userBubble(m.content));
    else if (m.role === "assistant" && lastAnswer.get(m.turn_number) === m.id) {
      const bubble = answerBubble();
      renderMarkdown(bubble.body, m.content);
      bubble.activity.textContent = searchedText(searches.get(m.turn_number) || []);
      renderCitations(bubble, citations.get(m.turn_number) || [], m.content, marks.get(m.turn_number));
      messages.append(bubble.li);
    }
  }
  if (messages.lastElementChild) revealAboveComposer(messages.lastElementChild);
}

function searchedText(searches) {
  return searches.length ? `Searched: ${searches.map((q) => `“${q}”`).join(", ")}` : "";
}

// What the reader is typing survives a reload (per book and conversation) until it is answered.
function draftKey() {
  return `folio.draft.${view.bookId}.${view.cid || "new"}`;
}

function forgetDraft() {
  sessionStorage.removeItem(draftKey());
  sessionStorage.removeItem(`folio.draft.${view.bookId}.new`);
}

// Scroll `el` into view above the sticky message box (which would otherwise cover its last lines:
// the Sources row, the activity line).
function revealAboveComposer(el) {
  const composer = view.els && view.els.chat.querySelector(".composer");
  el.style.scrollMarginBottom = composer ? `${composer.offsetHeight + 16}px` : "";
  el.scrollIntoView({ block: "end" });
}

function userBubble(text) {
  return h("li", { class: "message user" }, h("div", { class: "body", text }));
}

function answerBubble() {
  const activity = h("p", { class: "activity", "aria-live": "polite" });
  const body = h("div", { class: "body markdown" });
  const sources = h("div", { class: "citations" });
  const li = h("li", { class: "message assistant" }, activity, body, sources);
  return { li, activity, body, sources };
}

function describeTool(name, args) {
  if (name === "search_book") return `Searching: “${args.query ?? ""}”`;
  if (name === "read_passage") {
    return args.page_start ? `Reading p. ${args.page_start}${args.page_end ? "–" + args.page_end : ""}` : "Reading a passage";
  }
  if (name === "list_chapters") return "Looking at the chapters";
  return `Using ${name}`;
}

async function ask(text, messages, controls) {
  messages.querySelector(".intro")?.remove();
  const user = userBubble(text);
  const answer = answerBubble();
  messages.append(user, answer.li);
  answer.li.classList.add("streaming");
  answer.activity.textContent = "Thinking…";
  revealAboveComposer(answer.li);
  const abort = new AbortController();
  view.busy = abort;
  controls.send.hidden = true;
  controls.stop.hidden = false;
  let streamed = "";
  let pending = false;
  let frame = 0;
  const noMorePaints = () => { pending = true; cancelAnimationFrame(frame); };
  let createdHere = null; // a conversation this first turn opened: not kept if the turn is not
  const paint = () => {
    pending = false;
    renderMarkdown(answer.body, streamed);
    revealAboveComposer(answer.li);
  };
  try {
    if (!view.cid) {
      const created = await api.post("/conversations", { book_id: view.bookId });
      view.cid = createdHere = created.conversation_id;
      history.replaceState(null, "", bookHash(view.cid));
      sessionStorage.setItem(draftKey(), text);
      setChatTitle(created.title);
    }
    const cid = view.cid;
    const turn = await api.streamTurn(cid, text, (name, data) => {
      if (name === "tool_call") answer.activity.textContent = describeTool(data.name, data.arguments || {});
      else if (name === "tool_result") answer.activity.textContent = data.summary || answer.activity.textContent;
      else if (name === "delta") {
        answer.activity.textContent = "Writing…";
        streamed += data.text;
        if (!pending) { pending = true; frame = requestAnimationFrame(paint); }
      }
    }, abort.signal);
    noMorePaints(); // a paint still scheduled would draw over the final answer and its links
    answer.activity.textContent = searchedText(turn.searches);
    forgetDraft();
    announce(`Answer ready${turn.citations.length ? `, ${turn.citations.length} sources` : ""}`);
    renderMarkdown(answer.body, turn.answer);
    renderCitations(answer, turn.citations, turn.answer, turn.citation_marks);
    if (turn.position_set === false) answer.li.append(noPositionNotice());
    revealAboveComposer(answer.li);
    await renderConversations();
    if (view.cid === cid) {
      const item = view.els.conversations.querySelector(`li[data-conversation-id="${CSS.escape(cid)}"] a`);
      if (item) setChatTitle(item.textContent);
    }
  } catch (e) {
    const stopped = e.name === "AbortError";
    answer.activity.textContent = "";
    if (createdHere && view.cid === createdHere) {
      api.del(`/conversations/${encodeURIComponent(createdHere)}`).catch(() => {});
      view.cid = null;
      history.replaceState(null, "", bookHash());
      sessionStorage.setItem(draftKey(), text);
      setCrumbs({ text: "Library", href: "#/" }, { text: nameOf(view.book) });
      const title = view.els.chat.querySelector(".chat-title");
      if (title) title.textContent = "New conversation";
    }
    noMorePaints(); // what had arrived is drawn once, then nothing more
    renderMarkdown(answer.body, streamed);
    answer.li.classList.add(stopped ? "stopped" : "failed");
    if (!stopped && (e.status === 413 || e.status === 422) && !controls.textarea.value) {
      controls.textarea.value = text; // refused as written: back in the box, to be edited
      controls.textarea.focus();
    }
    answer.li.append(stopped
      ? h("div", { class: "notice", role: "status" }, "Stopped. This turn was not saved. ",
          h("button", { type: "button", class: "retry", onclick: () => retry() }, "Ask again"))
      : errorBox(e, () => retry()));
  } finally {
    answer.li.classList.remove("streaming");
    if (view.busy === abort) view.busy = null;
    controls.send.hidden = false;
    controls.stop.hidden = true;
  }
  function retry() {
    if (view.busy) return;
    user.remove();
    answer.li.remove();
    ask(text, messages, controls);
  }
}

// One line under an answer from a book whose reader never said how far they have read.
function noPositionNotice() {
  const open = () => {
    const panel = document.getElementById("book-panel");
    panel.open = true;
    const kind = panel.querySelector(".position-form select");
    kind.scrollIntoView({ block: "center" });
    kind.focus();
  };
  return h("p", { class: "notice no-position", role: "status" },
    "No reading position is set for this book, so this answer may come from all of it. ",
    h("button", { type: "button", class: "link", onclick: open }, "Set how far you have read"));
}

// The Sources row under an answer: a chip per source, and the source's number in the answer
// where the server's `citation_marks` put it (one number per source, as in the terminal).
function renderCitations(bubble, citations, answer, marks) {
  if (!citations.length) { bubble.sources.replaceChildren(); return; }
  const panel = h("div", { class: "citation-panel", hidden: true });
  const chips = citations.map((c, i) => {
    const label = c.page_start ? `p. ${c.page_start}${c.page_end && c.page_end !== c.page_start ? "–" + c.page_end : ""}` : c.chapter || "source";
    const chip = h("button", { type: "button", class: "chip", "aria-expanded": "false",
      title: c.location, "data-char-start": c.char_start }, h("span", { class: "n", text: String(i + 1) }), label, ...chipMarker(h, c));
    chip.addEventListener("click", () => {
      const open = chip.getAttribute("aria-expanded") === "true";
      for (const other of bubble.sources.querySelectorAll(".chip")) other.setAttribute("aria-expanded", "false");
      if (open) { panel.hidden = true; return; }
      chip.setAttribute("aria-expanded", "true");
      panel.hidden = false;
      // The reader may have moved the position back since this answer: a passage now past it
      // is not shown, not even its quote.
      const limit = view.book.reading_position.char_offset;
      // (an earlier volume of the series, c.book_id, is read in full: its offsets are its own)
      const past = !c.book_id && limit !== null && c.char_start !== undefined && c.char_start >= limit;
      panel.replaceChildren(
        h("p", { class: "location", text: `[${i + 1}] ${c.location}` }),
        past ? h("p", { class: "hint past", text: "This passage is past your reading position: it stays hidden until you get there." })
          : c.quote ? h("blockquote", { class: "quote", text: c.quote }) : null,
        past ? null : highlightList(h, c),
        past ? null : h("button", { type: "button", class: "open-passage", onclick: () => openPassage(c) }, "Open the passage"));
      revealAboveComposer(panel);
      panel.querySelector("button")?.focus({ preventScroll: true });
    });
    return chip;
  });
  bubble.sources.replaceChildren(h("div", { class: "chips", role: "group", "aria-label": "Sources" }, h("span", { class: "label", text: "Sources" }), ...chips), panel);
  renderAnswer(bubble.body, answer, marks, (n) => h("button", { type: "button", class: "cite-ref",
    "aria-label": `Source ${n}`, onclick: () => chips[n - 1]?.click() }, String(n)));
}

async function openPassage(c) {
  const text = h("div", { class: "passage", tabindex: "0" }, h("p", { class: "loading", text: "Loading…" }));
  const shown = dialog({ title: c.location, fields: [text], ok: "Close", cancel: false });
  try {
    const start = Math.max(0, c.char_start - CONTEXT_CHARS);
    // a citation from an earlier volume of the series is read there (c.book_id), never in this book
    const volume = c.book_id ? `&volume=${encodeURIComponent(c.book_id)}` : "";
    const passage = await api.get(`/books/${encodeURIComponent(view.bookId)}/text?start=${start}&end=${c.char_end + CONTEXT_CHARS}${volume}`);
    const prose = reflow(passage.text); // paragraphs, not the source's line breaks (same length)
    const from = Math.max(0, c.char_start - passage.char_start);
    const to = Math.max(from, Math.min(prose.length, c.char_end - passage.char_start));
    text.replaceChildren(
      h("p", { class: "meta", text: passage.location }),
      h("div", { class: "passage-text", "data-char-start": passage.char_start, "data-char-end": passage.char_end }, ...passageNodes(h, prose, passage.char_start, from, to, c.highlights)),
      highlightList(h, c),
      !c.book_id && passage.char_end < c.char_end + CONTEXT_CHARS && view.book.reading_position.char_offset !== null &&
        passage.char_end >= view.book.reading_position.char_offset
        ? h("p", { class: "hint", text: "Your reading position: the text stops here." }) : ""); // (not null: replaceChildren writes it)
    text.querySelector("mark")?.scrollIntoView({ block: "center" });
  } catch (e) {
    text.replaceChildren(errorBox(e));
  }
  await shown;
}

// ---------------------------------------------------------------- routing

async function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  try {
    if (parts[0] === "book" && parts[1]) {
      await bookView(parts[1], parts[2] === "c" && parts[3] ? parts[3] : null);
    } else {
      view.bookId = null;
      view.els = null;
      if (view.busy) view.busy.abort();
      await libraryView();
    }
  } catch (e) {
    if (e.status === 401) return signIn("Your token is no longer valid. Sign in again.");
    main.replaceChildren(errorBox(e, route));
  }
}

// What answers here (the footer): the provider, its model, and the database of the library.
async function showServer() {
  try {
    const about = await api.get("/about");
    document.getElementById("server").textContent =
      `Answers by ${about.provider} (model: ${about.model}) · library in ${about.database}`;
  } catch {
    // an older server: the footer stays empty
  }
}

async function start() {
  try {
    if (!(await whoAmI())) return signIn(api.token() ? "This token is not valid." : "");
  } catch (e) {
    main.replaceChildren(errorBox(e, start));
    return;
  }
  showServer();
  window.addEventListener("hashchange", route);
  await route();
}

start();
