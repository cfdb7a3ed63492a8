// Evidence viewer: one page at a time (large documents never load whole), thumbnails,
// zoom, rotate, highlighted citations, and clickable words that fill the focused value box.
// Coordinates from the server are PDF points (images: pixels), origin top-left.
(function () {
  "use strict";
  const root = document.getElementById("viewer");
  if (!root) return;

  const base = root.dataset.base;
  const docs = JSON.parse(document.getElementById("viewer-documents").textContent || "[]");
  const highlights = JSON.parse(document.getElementById("viewer-highlights").textContent || "{}");
  const frame = document.getElementById("page-frame");
  const image = document.getElementById("page-image");
  const overlay = document.getElementById("page-overlay");
  const scroller = document.getElementById("page-scroller");
  const strip = document.getElementById("page-strip");
  const pageLabel = document.getElementById("page-label");
  const zoomLabel = document.getElementById("zoom-label");
  const docSelect = document.getElementById("viewer-doc");
  // The server renders only these resolutions (any other dpi is refused): thumbnails use the
  // smallest, the page the first one sharp enough for the zoom and the screen.
  const DPI_STEPS = root.dataset.zoomDpis.split(" ").map(Number);
  const THUMBNAIL_DPI = Number(root.dataset.thumbnailDpi);
  const ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3];

  const state = { doc: docs[0], page: 1, zoom: null, rotation: 0, marks: [], focusedValue: null };
  const wordCache = new Map();
  const locateCache = new Map();

  const pageSize = () => {
    const sizes = state.doc && state.doc.sizes;
    return (sizes && sizes[state.page - 1]) || [612, 792];
  };
  const fitZoom = () => {
    const [w, h] = pageSize();
    const across = state.rotation % 180 === 0 ? w : h;
    return Math.max(0.2, (scroller.clientWidth - 32) / across);
  };
  const zoom = () => state.zoom || fitZoom();
  const url = (page, dpi) => `${base}${state.doc.sha}/pages/${page}.img?dpi=${dpi}`;
  const dpiFor = (z) => {
    const wanted = z * 72 * (window.devicePixelRatio || 1);
    return DPI_STEPS.find((d) => d >= wanted) || DPI_STEPS[DPI_STEPS.length - 1];
  };

  function layout() {
    if (!state.doc) return;
    const [w, h] = pageSize();
    const z = zoom();
    // Size the frame before the image arrives: no layout jump while a page loads.
    frame.style.width = `${w * z}px`;
    frame.style.height = `${h * z}px`;
    frame.style.setProperty("--rotation", `${state.rotation}deg`);
    const turned = state.rotation % 180 !== 0;
    frame.parentElement.style.setProperty("--frame-w", `${(turned ? h : w) * z}px`);
    frame.parentElement.style.setProperty("--frame-h", `${(turned ? w : h) * z}px`);
    frame.classList.toggle("turned", turned);
    frame.dataset.rotation = String(state.rotation);
    zoomLabel.textContent = state.zoom ? `${Math.round(z * 100)}%` : "fit";
    drawMarks();
    drawWords();
  }

  function render() {
    if (!state.doc) return;
    const dpi = dpiFor(zoom());
    const src = url(state.page, dpi);
    if (image.getAttribute("src") !== src) {
      frame.classList.add("loading");
      image.onload = () => frame.classList.remove("loading");
      image.src = src;
    }
    image.alt = `Page ${state.page} of ${state.doc.pages}`;
    pageLabel.textContent = `${state.page} / ${state.doc.pages}`;
    strip.querySelectorAll("a").forEach((a) =>
      a.setAttribute("aria-current", Number(a.dataset.page) === state.page ? "page" : "false"));
    layout();
    loadWords();
  }

  function buildStrip() {
    strip.textContent = "";
    for (let p = 1; p <= state.doc.pages; p += 1) {
      const link = document.createElement("a");
      link.href = "#";
      link.dataset.page = String(p);
      link.title = `Page ${p}`;
      const thumb = document.createElement("img");
      thumb.loading = "lazy";
      thumb.alt = `Page ${p}`;
      thumb.src = url(p, THUMBNAIL_DPI);
      const [w, h] = state.doc.sizes[p - 1] || [612, 792];
      thumb.style.aspectRatio = `${w} / ${h}`;
      link.append(thumb, Object.assign(document.createElement("span"), { textContent: p }));
      link.addEventListener("click", (e) => { e.preventDefault(); goTo(p); });
      strip.append(link);
    }
  }

  function goTo(page, docSha) {
    if (docSha && docSha !== state.doc.sha) {
      const next = docs.find((d) => d.sha === docSha);
      if (!next) return;
      state.doc = next;
      if (docSelect) docSelect.value = next.sha;
      buildStrip();
    }
    state.page = Math.min(Math.max(1, page), state.doc.pages);
    render();
  }

  function setZoom(direction) {
    const current = zoom();
    if (direction === 0) { state.zoom = null; render(); return; }
    const steps = direction > 0 ? ZOOMS.filter((z) => z > current + 0.01) : ZOOMS.filter((z) => z < current - 0.01).reverse();
    if (steps.length) { state.zoom = steps[0]; render(); }
  }

  function box(rect, className, label) {
    const z = zoom();
    const el = document.createElement("div");
    el.className = className;
    el.style.left = `${rect[0] * z}px`;
    el.style.top = `${rect[1] * z}px`;
    el.style.width = `${(rect[2] - rect[0]) * z}px`;
    el.style.height = `${(rect[3] - rect[1]) * z}px`;
    if (label) el.title = label;
    return el;
  }

  // Highlights: the focused question's cited evidence on the current page.
  function drawMarks() {
    overlay.querySelectorAll(".mark").forEach((m) => m.remove());
    for (const mark of state.marks) {
      if (mark.doc !== state.doc.sha || mark.page !== state.page) continue;
      for (const rect of mark.rects) {
        const el = box(rect, `mark${mark.active ? " mark-active" : ""}`, mark.quote);
        el.dataset.candidate = mark.candidate;
        overlay.append(el);
      }
    }
  }

  async function rectsFor(h) {
    if (h.bbox) return [h.bbox];
    if (!h.quote) return [];
    const key = `${h.doc}:${h.page}:${h.quote}`;
    if (!locateCache.has(key)) {
      locateCache.set(key, fetch(`${base}${h.doc}/pages/${h.page}/locate.json?q=${encodeURIComponent(h.quote)}`)
        .then((r) => (r.ok ? r.json() : { boxes: [] })).then((d) => d.boxes).catch(() => []));
    }
    return locateCache.get(key);
  }

  // Each call awaits its quotes' boxes; a call overtaken by a later one (the rater moved on
  // while a slow locate.json was pending) must not move the page back to its question.
  let shownCall = 0;
  async function showQuestion(questionId, activeCandidate, jump) {
    const call = ++shownCall;
    const list = highlights[String(questionId)] || [];
    const marks = await Promise.all(list.map(async (h) => ({
      ...h, rects: await rectsFor(h), active: String(h.candidate) === String(activeCandidate),
    })));
    if (call !== shownCall) return;
    state.marks = marks;
    // The chosen candidate's citation; else, when nothing cited is on the page shown, the
    // question's first citation (the viewer opens on the page the question cites).
    const onThisPage = marks.some((m) => m.page === state.page && m.doc === state.doc.sha);
    const target = marks.find((m) => m.active) || (jump || !onThisPage ? marks[0] : null);
    if (target && (jump || target.page !== state.page || target.doc !== state.doc.sha)) {
      goTo(target.page, target.doc);
    } else {
      drawMarks();
    }
    const first = overlay.querySelector(".mark-active") || (jump && overlay.querySelector(".mark"));
    if (first) first.scrollIntoView({ block: "center", inline: "nearest", behavior: "smooth" });
  }

  // Words: transparent boxes over the page; a click copies the word into the value box.
  // Images have words only when the server has OCR; the value boxes say so when it has none.
  const wordsAvailable = new Map();
  function loadWords() {
    const key = `${state.doc.sha}:${state.page}`;
    if (!wordCache.has(key)) {
      wordCache.set(key, null);
      fetch(`${base}${state.doc.sha}/pages/${state.page}/words.json`)
        .then((r) => (r.ok ? r.json() : { words: [], words_available: true }))
        .then((d) => {
          wordCache.set(key, d.words);
          wordsAvailable.set(key, d.words_available !== false);
          drawWords();
        })
        .catch(() => wordCache.set(key, []));
    }
    drawWords();
  }

  function sayWhetherWordsCanBeClicked(key, words) {
    const loaded = wordsAvailable.has(key);
    let hint = null;
    if (loaded && !wordsAvailable.get(key)) hint = "words are not available on this image";
    else if (loaded && words.length === 0) hint = "no words were found on this page";
    document.querySelectorAll(".value-input").forEach((input) => {
      if (input.dataset.placeholder === undefined) input.dataset.placeholder = input.placeholder;
      input.placeholder = hint ? `Type a value (${hint})` : input.dataset.placeholder;
    });
  }

  function drawWords() {
    overlay.querySelectorAll(".word").forEach((w) => w.remove());
    const key = `${state.doc.sha}:${state.page}`;
    const words = wordCache.get(key) || [];
    sayWhetherWordsCanBeClicked(key, words);
    const fragment = document.createDocumentFragment();
    for (const word of words) {
      const el = box(word.bbox, "word", word.text);
      el.dataset.text = word.text;
      fragment.append(el);
    }
    overlay.append(fragment);
  }

  overlay.addEventListener("mousedown", (e) => e.preventDefault()); // keep focus in the value box
  overlay.addEventListener("click", (e) => {
    const word = e.target.closest(".word");
    if (!word) return;
    document.dispatchEvent(new CustomEvent("evidence-word", { detail: { text: word.dataset.text } }));
  });

  root.addEventListener("click", (e) => {
    const button = e.target.closest("[data-viewer]");
    if (!button) return;
    const action = button.dataset.viewer;
    if (action === "prev") goTo(state.page - 1);
    if (action === "next") goTo(state.page + 1);
    if (action === "zoom-in") setZoom(1);
    if (action === "zoom-out") setZoom(-1);
    if (action === "fit") setZoom(0);
    if (action === "rotate") { state.rotation = (state.rotation + 90) % 360; layout(); }
  });
  if (docSelect) docSelect.addEventListener("change", () => goTo(1, docSelect.value));
  // A saved answer card is swapped in with the template's placeholder: say it again.
  document.body.addEventListener("htmx:afterSwap", () => {
    if (state.doc) sayWhetherWordsCanBeClicked(`${state.doc.sha}:${state.page}`, wordCache.get(`${state.doc.sha}:${state.page}`) || []);
  });
  window.addEventListener("resize", () => { if (!state.zoom) layout(); });

  window.evidenceViewer = {
    next: () => goTo(state.page + 1),
    prev: () => goTo(state.page - 1),
    zoomIn: () => setZoom(1),
    zoomOut: () => setZoom(-1),
    fit: () => setZoom(0),
    rotate: () => { state.rotation = (state.rotation + 90) % 360; layout(); },
    goTo,
    showQuestion,
    state,
  };

  if (state.doc) { buildStrip(); render(); } else {
    root.querySelector(".viewer-body").innerHTML = '<p class="empty">This item has no evidence file.</p>';
  }
})();
