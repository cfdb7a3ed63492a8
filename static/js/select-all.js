// A "select all" checkbox ([data-select-all=NAME], hidden until this runs: without JavaScript
// the page's own "all" button does the same) ticks every checkbox called NAME in its form, and
// shows as mixed when only some are ticked. [data-select-note] elements in the form appear
// while every box is ticked (e.g. "select all N matching").
(() => {
  document.querySelectorAll("input[type=checkbox][data-select-all]").forEach((all) => {
    const form = all.form;
    if (!form) return;
    const boxes = () => [...form.querySelectorAll(`input[type=checkbox][name="${all.dataset.selectAll}"]`)];
    const notes = form.querySelectorAll("[data-select-note]");
    const sync = () => {
      const ticked = boxes().filter((b) => b.checked).length;
      all.checked = ticked > 0 && ticked === boxes().length;
      all.indeterminate = ticked > 0 && !all.checked;
      notes.forEach((n) => { n.hidden = !all.checked; });
    };
    all.hidden = false;
    all.closest("[hidden]")?.removeAttribute("hidden");
    all.addEventListener("change", () => {
      boxes().forEach((b) => { b.checked = all.checked; });
      sync();
    });
    form.addEventListener("change", (e) => { if (e.target !== all) sync(); });
    sync();
  });
})();
