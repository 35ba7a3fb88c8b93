// Copy buttons for a session page of `vis-export serve`.
//
// The page is the exported HTML document; this script (a file of the package,
// the only script the page's Content-Security-Policy allows) adds the buttons.
// It reads no session data from the page: what a button copies comes from the
// server's /api/copy, which renders it with vis_export.clipboard (a code block
// is exactly its code; text/html carries inline styles, so a paste into a
// document or a chat keeps the highlighting). Code inside prose or a tool copies
// the text the browser reads from its element, which is the code exactly.
"use strict";

(function () {
  // The session is named by the page's address: /s/<id>, or /session?id=<id>
  // for the ids a browser would resolve as path segments ("." and "..").
  const session = location.pathname.startsWith("/s/")
    ? decodeURIComponent(location.pathname.slice(3))
    : new URLSearchParams(location.search).get("id") || "";

  function flavours(anchor) {
    const url = "/api/copy?" + new URLSearchParams({ session: session, anchor: anchor });
    return fetch(url, { credentials: "same-origin" }).then((response) => {
      if (!response.ok) throw new Error("copy: " + response.status);
      return response.json();
    });
  }

  function blob(promise, type, key) {
    return promise.then((copied) => new Blob([copied[key]], { type: type }));
  }

  // The write starts inside the click, so it keeps the click's permission; the
  // content follows when the server has answered.
  function copyRich(anchor) {
    const copied = flavours(anchor);
    const parts = { "text/plain": blob(copied, "text/plain", "text/plain"), "text/html": blob(copied, "text/html", "text/html") };
    if (typeof ClipboardItem.supports === "function" && ClipboardItem.supports("web text/markdown")) {
      parts["web text/markdown"] = blob(copied, "web text/markdown", "text/markdown");
    }
    return navigator.clipboard.write([new ClipboardItem(parts)]);
  }

  function copyMarkdown(anchor) {
    const text = blob(flavours(anchor), "text/plain", "text/markdown");
    return navigator.clipboard.write([new ClipboardItem({ "text/plain": text })]);
  }

  function copyText(element) {
    return navigator.clipboard.writeText(element.textContent);
  }

  function button(label, title, action) {
    const made = document.createElement("button");
    made.type = "button";
    made.className = "copy-button";
    made.textContent = label;
    made.title = title;
    made.addEventListener("click", () => {
      action().then(
        () => { made.textContent = "Copied"; made.dataset.state = "copied"; },
        () => { made.textContent = "Copy failed"; made.dataset.state = "failed"; },
      ).finally(() => setTimeout(() => { made.textContent = label; }, 1500));
    });
    return made;
  }

  // The buttons go in a bar of their own, never over the words (serve.css places it).
  function bar(className, ...made) {
    const holder = document.createElement("span");
    holder.className = className;
    holder.append(...made);
    return holder;
  }

  function buttons(anchor, code) {
    if (code) return bar("copy-buttons", button("Copy code", "Copy exactly this code", () => copyRich(anchor)));
    return bar(
      "copy-buttons",
      button("Copy", "Copy as text and as formatted HTML", () => copyRich(anchor)),
      button("Copy Markdown", "Copy as Markdown", () => copyMarkdown(anchor)),
    );
  }

  function setUp() {
    for (const message of document.querySelectorAll("article.message[id]")) {
      const heading = message.querySelector(".message-heading");
      if (heading) heading.append(buttons(message.id, false));
    }
    for (const frame of document.querySelectorAll(".block-frame[id]")) {
      frame.prepend(buttons(frame.id, frame.querySelector(":scope > .block.code") !== null));
    }
    for (const code of document.querySelectorAll(".block-frame > :not(.code) pre > code")) {
      code.parentElement.before(
        bar("copy-buttons copy-row", button("Copy code", "Copy exactly this code", () => copyText(code))),
      );
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();
