// New-project form: the slug follows the name as it is typed, until someone edits the slug.
// Mirrors django.utils.text.slugify, which the server applies when the slug is left empty.
(function () {
  "use strict";
  function slugify(text) {
    return text
      .normalize("NFKD")
      .replace(/[^\x00-\x7f]/g, "")
      .toLowerCase()
      .replace(/[^\w\s-]/g, "")
      .replace(/[-\s]+/g, "-")
      .replace(/^[-_]+|[-_]+$/g, "")
      .slice(0, 64)
      .replace(/[-_]+$/, "");
  }
  document.querySelectorAll("input[data-slug-from]").forEach(function (slug) {
    var source = document.getElementById(slug.dataset.slugFrom);
    if (!source) return;
    var touched = slug.value !== "" && slug.value !== slugify(source.value);
    slug.addEventListener("input", function () {
      touched = slug.value !== "";
    });
    source.addEventListener("input", function () {
      if (!touched) slug.value = slugify(source.value);
    });
  });
})();
