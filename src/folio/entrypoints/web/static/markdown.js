// Markdown a model wrote, made safe: parsed by marked, then sanitized by DOMPurify with a short
// allow-list (no images, no styles, no forms, no raw HTML passes through as markup). Links open
// in a new tab without access to this page. Everything else on the page is set as text.
import { marked } from "./vendor/marked.esm.js";
import DOMPurify from "./vendor/purify.es.mjs";

const ALLOWED_TAGS = [
  "p", "br", "strong", "em", "b", "i", "code", "pre", "blockquote", "ul", "ol", "li",
  "h1", "h2", "h3", "h4", "h5", "h6", "a", "hr", "del", "table", "thead", "tbody", "tr", "th", "td",
];
const ALLOWED_ATTR = ["href", "title"];

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") || "";
    if (!/^(https?:|mailto:|#)/i.test(href)) node.removeAttribute("href");
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

marked.use({ gfm: true, breaks: true });

// Raw HTML in the source is shown as text, not parsed as markup.
marked.use({
  renderer: {
    html({ text }) {
      return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    },
  },
});

export function renderMarkdown(element, source) {
  const html = marked.parse(source || "");
  const clean = DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ADD_ATTR: ["target", "rel"],
    RETURN_DOM_FRAGMENT: true,
  });
  element.replaceChildren(clean);
}
