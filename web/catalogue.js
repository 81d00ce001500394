/* catalogue.js -- the only script of ddx's pages: search in the catalogue, and a size check on
   the upload form before anything is sent. Pages work without it (the whole list shows, the
   server still refuses an oversized upload). Inlined in the catalogue pages and allowed there by
   its SHA-256 in the Content-Security-Policy; the HTML report carries no script at all. */
(function () {
  "use strict";
  function norm(s) {
    return s.toLowerCase().replace(/[^a-z0-9_]+/g, " ").trim();
  }
  var box = document.getElementById("q");
  if (box) {
    var items = Array.prototype.slice.call(document.querySelectorAll("li[data-s]"));
    var cats = Array.prototype.slice.call(document.querySelectorAll("section.cat"));
    var count = document.getElementById("count");
    var total = items.length;
    items.forEach(function (li) { li.ddxText = " " + norm(li.getAttribute("data-s")) + " "; });
    var run = function () {
      var q = norm(box.value);
      var words = q ? q.split(" ") : [];
      var shown = 0;
      items.forEach(function (li) {
        var ok = li.ddxText.indexOf(" " + q + " ") >= 0 || li.ddxText.indexOf(q) >= 0 ||
          words.every(function (w) { return li.ddxText.indexOf(w) >= 0; });
        li.classList.toggle("hidden", !ok);
        if (ok) shown++;
      });
      cats.forEach(function (c) {
        c.classList.toggle("hidden", !c.querySelector("li[data-s]:not(.hidden)"));
      });
      if (count) count.textContent = q ? shown + " of " + total + " references" : total + " references";
      if (window.history && window.history.replaceState && location.protocol !== "file:")
        window.history.replaceState(null, "", q ? "?q=" + encodeURIComponent(box.value) : location.pathname);
    };
    box.addEventListener("input", run);
    var m = /[?&]q=([^&]*)/.exec(location.search);
    if (m) box.value = decodeURIComponent(m[1].replace(/\+/g, " "));
    run();
  }
  var form = document.querySelector("form.upload");
  if (form) {
    var limit = Number(form.getAttribute("data-max"));
    var msg = document.getElementById("upload-error");
    form.addEventListener("submit", function (ev) {
      var size = 0;
      var text = form.querySelector("textarea");
      if (text) size += new Blob([text.value]).size;
      Array.prototype.forEach.call(form.querySelectorAll("input[type=file]"), function (f) {
        Array.prototype.forEach.call(f.files, function (x) { size += x.size; });
      });
      var say = "";
      if (!size) say = "Nothing to diagnose: paste a log or choose a file.";
      else if (limit && size > limit)
        say = "The upload is " + (size / 1048576).toFixed(1) + " MiB; this server takes at most " +
          (limit / 1048576).toFixed(1) + " MiB (ddx serve --max-upload).";
      if (say) {
        ev.preventDefault();
        msg.textContent = say;
      }
    });
  }
})();
