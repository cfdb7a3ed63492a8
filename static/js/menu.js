// The user menu is a <details>: Escape (focus back on its name) or a click anywhere else
// closes it, as a menu does.
(() => {
  const menu = document.querySelector("details.usermenu");
  if (!menu) return;
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !menu.open) return;
    menu.open = false;
    menu.querySelector("summary").focus();
  });
  document.addEventListener("click", (event) => {
    if (menu.open && !menu.contains(event.target)) menu.open = false;
  });
})();
