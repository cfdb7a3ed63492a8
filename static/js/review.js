// Review screen: keyboard-first answering, autosave states, resizable panes.
// Saving itself is htmx (each question form posts on change); this file adds the keys,
// focus, retry on failure, and the link between the focused question and the evidence.
(function () {
  "use strict";
  const workspace = document.getElementById("workspace");
  if (!workspace) return;
  const questions = () => Array.from(document.querySelectorAll("#questions > li.question"));
  let current = null;
  let lastValueBox = null;

  const typing = (el) => el && (el.matches("input[type=text], textarea, select") || el.isContentEditable);
  // Enter on a focused link, button or summary activates it (zoom, page, jump, note, next…);
  // elsewhere, and on Submit itself (which waits for pending saves), it is "submit and next".
  const activates = (el) =>
    el && el.closest && el.closest("a[href], button, summary, [role=button]") && !el.closest("#submit-form");

  // Bring a question into view by scrolling the questions panel only: scrollIntoView would
  // scroll every ancestor, the page too, and hide the viewer's toolbar.
  function reveal(li) {
    const pane = document.getElementById("answer-scroll");
    if (!pane) return;
    const box = pane.getBoundingClientRect();
    const rect = li.getBoundingClientRect();
    let delta = 0;
    if (rect.top < box.top) delta = rect.top - box.top - 8;
    else if (rect.bottom > box.bottom) delta = Math.min(rect.bottom - box.bottom + 8, rect.top - box.top - 8);
    if (delta) pane.scrollBy({ top: delta, behavior: "smooth" });
  }

  function focusQuestion(li, options = {}) {
    if (!li) return;
    questions().forEach((q) => q.classList.toggle("current", q === li));
    current = li;
    if (!options.keepFocus) li.focus({ preventScroll: true });
    reveal(li);
    const checked = li.querySelector("input[name=choice]:checked");
    const candidate = checked && checked.value.startsWith("claim:") ? checked.value.slice(6) : null;
    if (window.evidenceViewer) window.evidenceViewer.showQuestion(li.dataset.question, candidate, options.jump);
  }

  function move(step) {
    const list = questions();
    const index = list.indexOf(current);
    focusQuestion(list[Math.min(list.length - 1, Math.max(0, index + step))] || list[0]);
  }

  function choose(li, selector) {
    const input = li && li.querySelector(selector);
    if (!input || input.matches(":disabled")) return;  // a read-only (submitted or settled) question
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    focusQuestion(li, { keepFocus: true });
  }

  function editValue(li) {
    const box = li && li.querySelector(".value-input");
    if (!box || box.matches(":disabled")) return;
    box.focus({ preventScroll: true });
    reveal(li);
    box.select();
  }

  function pendingSaves() {
    return document.querySelectorAll(".save-state.htmx-request").length > 0;
  }

  function submitWhenSaved() {
    if (pendingSaves()) { setTimeout(submitWhenSaved, 150); return; }
    const form = document.getElementById("submit-form");
    if (form) form.requestSubmit();
  }

  function openDialog(id) {
    const dialog = document.getElementById(id);
    if (dialog && !dialog.open) dialog.showModal();
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (document.querySelector("dialog[open]")) return;
    if (typing(e.target)) {
      if (e.key === "Escape") { e.target.blur(); if (current) current.focus(); }
      return;
    }
    if (e.key === "Enter" && activates(e.target)) return;
    const li = current || questions()[0];
    const viewer = window.evidenceViewer;
    const keys = {
      j: () => move(1), k: () => move(-1),
      o: () => choose(li, "input[value=omit]"),
      f: () => choose(li, "input[value=unclear]"),
      e: () => editValue(li),
      n: () => { const d = li && li.querySelector("details.note"); if (d) { d.open = true; d.querySelector("textarea").focus(); } },
      s: () => openDialog("skip-dialog"),
      "?": () => openDialog("cheatsheet"),
      Enter: () => submitWhenSaved(),
      "+": () => viewer && viewer.zoomIn(), "=": () => viewer && viewer.zoomIn(),
      "-": () => viewer && viewer.zoomOut(), 0: () => viewer && viewer.fit(),
      "[": () => viewer && viewer.prev(), "]": () => viewer && viewer.next(),
      r: () => viewer && viewer.rotate(),
    };
    if (/^[1-9]$/.test(e.key)) {
      e.preventDefault();
      choose(li, `input[name=choice][data-key="${e.key}"]`);
      return;
    }
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });

  // Enter in a value box saves through the autosave request, like any change; the browser's
  // own form submission (a page load) never happens.
  workspace.addEventListener("submit", (e) => {
    const form = e.target.closest("form.question-form");
    if (!form) return;
    e.preventDefault();
    if (form.hasAttribute("hx-post")) htmx.trigger(form, "change");
  });

  // Back (or forward) to a page kept in the browser's memory: load it again, so a submitted
  // item shows as read-only instead of the editable page it was.
  window.addEventListener("pageshow", (e) => { if (e.persisted) window.location.reload(); });

  // Mouse: clicking a question focuses it; typing a value selects "type a value".
  workspace.addEventListener("focusin", (e) => {
    const li = e.target.closest("li.question");
    if (li && li !== current) focusQuestion(li, { keepFocus: true });
    if (e.target.matches(".value-input")) lastValueBox = e.target;
  });
  workspace.addEventListener("input", (e) => {
    if (!e.target.matches(".value-input")) return;
    const radio = e.target.closest("label").querySelector("input[value=value]");
    if (radio) radio.checked = true;
  });
  // The answered mark follows every way of answering: a choice clicked or keyed, a value typed
  // or a word clicked into the box (its change event comes from the box, not a radio).
  workspace.addEventListener("change", (e) => {
    const li = e.target.closest("li.question");
    if (!li || !e.target.closest("form.question-form")) return;
    const typed = e.target.matches(".value-input") && e.target.value.trim() !== "";
    if (e.target.name === "choice" || typed) {
      li.classList.add("answered");
      focusQuestion(li, { keepFocus: true });
    }
  });
  // A save the server accepted marks its question too (whatever sent it).
  document.body.addEventListener("htmx:afterRequest", (e) => {
    const form = e.detail.elt.closest && e.detail.elt.closest("form.question-form");
    if (form && e.detail.successful) form.closest("li.question").classList.add("answered");
  });

  // A word clicked on the page goes into the value box being edited (appended with a space).
  document.addEventListener("evidence-word", (e) => {
    const box = lastValueBox || (current && current.querySelector(".value-input"));
    if (!box) return;
    box.value = box.value ? `${box.value} ${e.detail.text}` : e.detail.text;
    box.closest("label").querySelector("input[value=value]").checked = true;
    box.focus({ preventScroll: true });
    box.dispatchEvent(new Event("change", { bubbles: true }));
  });

  workspace.addEventListener("click", (e) => {
    const action = e.target.closest("[data-action]");
    if (!action) return;
    const li = action.closest("li.question");
    if (action.dataset.action === "jump") {
      e.preventDefault();
      focusQuestion(li, { keepFocus: true });
      window.evidenceViewer && window.evidenceViewer.showQuestion(li.dataset.question, action.dataset.candidate, true);
    } else if (action.dataset.action === "use-mine") {
      // The answer that lost to another tab's save, sent again over the newer one (the card
      // was refreshed with its sequence number, so this save is not stale).
      const form = li.querySelector("form.question-form");
      const radio = [...form.querySelectorAll("input[name=choice]")].find((r) => r.value === action.dataset.choice);
      if (!radio) return;
      radio.checked = true;
      const box = form.querySelector(".value-input");
      if (box) box.value = action.dataset.value;
      const note = form.querySelector(".note-input");
      if (note) note.value = action.dataset.note;
      action.closest(".stale-notice").remove();
      htmx.trigger(form, "change");
    } else if (action.dataset.action === "retry") {
      htmx.trigger(li.querySelector("form"), "change");
    } else if (action.dataset.action === "skip") {
      openDialog("skip-dialog");
    } else if (action.dataset.action === "cheatsheet") {
      openDialog("cheatsheet");
    }
  });
  document.querySelectorAll("dialog [data-action=close-dialog]").forEach((b) =>
    b.addEventListener("click", () => b.closest("dialog").close()));
  // A closed dialog (Escape, Cancel) hands focus back to the current question, not the page.
  document.querySelectorAll("dialog").forEach((d) => d.addEventListener("close", () => {
    const focused = document.activeElement;  // may still be the closed dialog's own field
    if (current && (!focused || focused === document.body || d.contains(focused))) {
      current.focus({ preventScroll: true });
    }
  }));

  // A network failure (no response at all) leaves a visible, retryable state.
  document.body.addEventListener("htmx:sendError", (e) => {
    const form = e.detail.elt.closest("form.question-form");
    if (!form) return;
    const status = form.querySelector(".save-state");
    status.className = "save-state state-failed";
    status.innerHTML = 'Not saved: offline? <button type="button" class="linklike" data-action="retry">Retry</button>';
  });

  // Resizable panes: drag the splitter, or focus it and use the arrow keys.
  const splitter = document.getElementById("splitter");
  // A focusable separator states its position (aria-valuenow), for screen readers.
  const showSplit = (fraction) => {
    workspace.style.setProperty("--evidence-width", `${fraction * 100}%`);
    splitter.setAttribute("aria-valuenow", String(Math.round(fraction * 100)));
  };
  const setSplit = (fraction) => {
    const clamped = Math.min(0.75, Math.max(0.3, fraction));
    showSplit(clamped);
    localStorage.setItem("evalsite.split", String(clamped));
    window.dispatchEvent(new Event("resize"));
  };
  const saved = Number(localStorage.getItem("evalsite.split"));
  if (saved) showSplit(saved);
  splitter.addEventListener("pointerdown", (e) => {
    splitter.setPointerCapture(e.pointerId);
    const move = (ev) => setSplit((ev.clientX - workspace.getBoundingClientRect().left) / workspace.clientWidth);
    splitter.addEventListener("pointermove", move);
    splitter.addEventListener("pointerup", () => splitter.removeEventListener("pointermove", move), { once: true });
  });
  splitter.addEventListener("keydown", (e) => {
    const now = parseFloat(getComputedStyle(workspace).getPropertyValue("--evidence-width")) / 100 || 0.55;
    if (e.key === "ArrowLeft") { e.preventDefault(); e.stopPropagation(); setSplit(now - 0.05); }
    if (e.key === "ArrowRight") { e.preventDefault(); e.stopPropagation(); setSplit(now + 0.05); }
  });

  focusQuestion(questions()[0], { keepFocus: true });
})();
