// Adjudication page. review.js gives it the rater's keys (j/k question, 1-9 choose, e type a
// value, o omit, zoom and pages); this adds what deciding needs: n writes the reason, Enter saves
// the focused question's decision (Ctrl+Enter from the reason box), Shift+N opens the next item.
// The page opens on the first question waiting for a decision, and the evidence viewer keeps its
// document, page and zoom across a save (the save reloads the page).
(function () {
  "use strict";
  const questions = document.getElementById("questions");
  if (!questions) return;
  const storeKey = `evalsite.viewer:${location.pathname}`;
  const nextLink = document.querySelector("[data-next-item]");
  const start = questions.querySelector("li.question[data-focus]");

  const focused = () =>
    questions.querySelector("li.question.current") || questions.querySelector("li.question[data-focus]");

  // The decision form of a question, when it is open for deciding.
  const openForm = (li) => {
    const details = li && li.querySelector("details.adjudicate");
    return details && details.open ? details.querySelector("form.adjudicate-form") : null;
  };

  function rememberViewer() {
    const viewer = window.evidenceViewer;
    if (!viewer || !viewer.state.doc) return;
    const { doc, page, zoom } = viewer.state;
    sessionStorage.setItem(storeKey, JSON.stringify({ sha: doc.sha, page, zoom }));
  }

  function restoreViewer() {
    const saved = sessionStorage.getItem(storeKey);
    sessionStorage.removeItem(storeKey);
    const viewer = window.evidenceViewer;
    if (!saved || !viewer || !viewer.goTo) return;
    const { sha, page, zoom } = JSON.parse(saved);
    // The viewer moves to the focused question's citation once its marks are located (async);
    // restore after that, so the page the adjudicator was reading wins.
    const li = questions.querySelector("li.question.current") || questions.querySelector("li.question");
    const located = li ? viewer.showQuestion(li.dataset.question, null, false) : Promise.resolve();
    located.then(() => {
      viewer.state.zoom = zoom;
      viewer.goTo(page, sha);
    });
  }

  document.addEventListener("submit", (e) => {
    if (e.target.matches("form.adjudicate-form")) rememberViewer();
  });

  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]") || e.altKey) return;
    const inForm = e.target.closest && e.target.closest("form.adjudicate-form");
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && inForm) {
      e.preventDefault();
      inForm.requestSubmit();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.target.matches("input[type=text], textarea, select")) return;
    // Enter on a focused link, button or summary activates it, as everywhere else.
    if (e.key === "Enter" && e.target.closest("a[href], button, summary, [role=button]")) return;
    const li = focused();
    if (e.key === "n") {
      const reason = openForm(li) && openForm(li).querySelector("textarea[name=reason]");
      if (reason) { e.preventDefault(); reason.focus(); }
    } else if (e.key === "Enter") {
      const form = openForm(li);
      if (form) { e.preventDefault(); form.requestSubmit(); } else if (nextLink) { location.assign(nextLink.href); }
    } else if (e.key === "N" && nextLink) {
      e.preventDefault();
      location.assign(nextLink.href);
    }
  });

  // Choosing by key opens a closed "Correct this decision" panel, so the choice is visible.
  questions.addEventListener("change", (e) => {
    const details = e.target.closest("details.adjudicate");
    if (details) details.open = true;
  });

  if (start) start.focus({ preventScroll: false });
  else if (nextLink) nextLink.focus();
  restoreViewer();
})();
