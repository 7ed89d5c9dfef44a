// The Highlights panel of a book: the reader's highlights and notes from KOReader or a Kindle, as
// far as they have read (the server shows nothing past the position and counts what it hides), a
// file to import (a KOReader metadata.*.lua or a Kindle's My Clippings.txt) and a delete per
// highlight. Text from the book or the device is only ever set as text.
import * as api from "./api.js";

const ACCEPT = ".lua,.txt,text/plain";

// The panel for `bookId`: `h` builds elements, `confirm(title, text)` resolves true to go on,
// `toast(message, kind)` says what happened.
export function highlightsPanel({ h, bookId, open, confirm, toast }) {
  const count = h("span", { class: "count" });
  const list = h("ul", { class: "highlights", "aria-label": "Your highlights" });
  const status = h("p", { class: "hint highlights-status", role: "status" });
  const input = h("input", { type: "file", accept: ACCEPT, class: "visually-hidden", tabindex: "-1" });
  const button = h("button", { type: "button", class: "import-highlights", onclick: () => input.click() },
    "Import highlights…");
  const panel = h("details", { class: "panel", open, id: "highlights-panel" },
    h("summary", {}, h("span", {}, "Highlights ", count)),
    h("p", { class: "hint", text: "From KOReader (a book's metadata.*.lua, in its .sdr folder) or a Kindle (My Clippings.txt)." }),
    h("div", { class: "conversation-actions" }, button, input),
    status, list);

  async function load() {
    list.setAttribute("aria-busy", "true");
    try {
      const shown = await api.get(`/books/${encodeURIComponent(bookId)}/highlights`);
      count.textContent = `(${shown.highlights.length})`;
      list.replaceChildren(...shown.highlights.map(item));
      status.textContent = summary(shown);
    } catch (e) {
      status.textContent = e.message;
    } finally {
      list.removeAttribute("aria-busy");
    }
  }

  function item(x) {
    const where = [x.chapter, x.page ? `p. ${x.page}` : null, x.source].filter(Boolean).join(" · ");
    const remove = h("button", { type: "button", class: "link danger-text", "aria-label": `Delete the highlight “${short(x.text)}”` }, "Delete");
    remove.addEventListener("click", async () => {
      if (!(await confirm("Delete this highlight?", `“${short(x.text)}” is forgotten here (importing its file again brings it back).`))) return;
      try {
        await api.del(`/books/${encodeURIComponent(bookId)}/highlights/${encodeURIComponent(x.id)}`);
        toast("Highlight deleted");
        await load();
      } catch (e) {
        toast(e.message, "bad");
      }
    });
    return h("li", { "data-highlight-id": x.id },
      x.text ? h("blockquote", { class: "quote", text: x.text }) : null,
      x.note ? h("p", { class: "note", text: `Note: ${x.note}` }) : null,
      h("p", { class: "meta" }, where, " ", remove));
  }

  input.addEventListener("change", async () => {
    const file = input.files[0];
    input.value = "";
    if (!file) return;
    button.disabled = true;
    status.textContent = `Importing ${file.name}…`;
    try {
      const form = new FormData();
      form.append("file", file, file.name);
      const report = await api.postForm("/highlights/import", form);
      toast(report.message);
      await load();
      status.textContent = `${report.message} ${status.textContent}`.trim();
    } catch (e) {
      status.textContent = e.message;
      toast(e.message, "bad");
    } finally {
      button.disabled = false;
    }
  });

  load();
  return { panel, reload: load };
}

function summary(shown) {
  const parts = [];
  if (!shown.highlights.length) parts.push("No highlights up to where you are.");
  if (shown.hidden) parts.push(`${shown.hidden} more past your reading position stay hidden.`);
  if (shown.not_found) parts.push(`${shown.not_found} could not be found in the book's text.`);
  return parts.join(" ");
}

function short(text) {
  const words = String(text || "").split(/\s+/).filter(Boolean);
  return words.length > 8 ? `${words.slice(0, 8).join(" ")}…` : words.join(" ");
}
