/* catalogue.js -- the only script of ddx's pages: search in the catalogue, and a size check on
   the upload form before anything is sent. Pages work without it (the whole list shows, the
   server still refuses an oversized upload). Inlined in the catalogue pages and allowed there by
   its SHA-256 in the Content-Security-Policy; the HTML report carries no script at all.

   Search: every word of the query must appear in a reference's search text (data-s: id, title,
   category, kind, frameworks, summary, the literal text of its patterns). Matches are listed
   best first: those that hold the whole query as one phrase, then by how many of the query's
   words the id or title holds and the longest run of them found together there. An
   empty query puts every reference back in its category. */
(function () {
  "use strict";
  function norm(s) {
    return " " + s.toLowerCase().replace(/[^a-z0-9_]+/g, " ").trim() + " ";
  }
  var box = document.getElementById("q");
  if (box) {
    var items = Array.prototype.slice.call(document.querySelectorAll("li[data-s]"));
    var cats = Array.prototype.slice.call(document.querySelectorAll("section.cat"));
    var count = document.getElementById("count");
    var results = document.getElementById("results");
    items.forEach(function (li) {
      li.ddxHome = li.parentNode;
      li.ddxText = norm(li.getAttribute("data-s"));
      li.ddxHead = norm(li.textContent);
    });
    /* the most consecutive query words found together in text */
    var run_in = function (text, words) {
      var best = 0;
      for (var i = 0; i < words.length; i++)
        for (var j = words.length; j > i + best; j--)
          if (text.indexOf(" " + words.slice(i, j).join(" ") + " ") >= 0) {
            best = j - i;
            break;
          }
      return best;
    };
    var score = function (li, q, words) {
      var s = 1;
      for (var i = 0; i < words.length; i++) {
        if (li.ddxText.indexOf(words[i]) < 0) return 0;
        /* a message many references read as a symptom belongs to the one whose id or title
           is about it */
        if (li.ddxHead.indexOf(" " + words[i] + " ") >= 0) s += 5;
      }
      return s + (li.ddxText.indexOf(q) >= 0 ? 100 : 0) + 3 * run_in(li.ddxHead, words);
    };
    var run = function () {
      var q = norm(box.value);
      var words = q.trim() ? q.trim().split(" ") : [];
      if (!words.length) {
        items.forEach(function (li) { li.ddxHome.appendChild(li); li.classList.remove("hidden"); });
        cats.forEach(function (c) { c.classList.remove("hidden"); });
        results.classList.add("hidden");
        count.textContent = items.length + " references";
        return;
      }
      var hits = [];
      items.forEach(function (li) {
        var s = score(li, q, words);
        if (s) hits.push([s, li]);
        else li.ddxHome.appendChild(li);
      });
      hits.sort(function (a, b) { return b[0] - a[0]; });
      hits.forEach(function (h) { results.appendChild(h[1]); });
      cats.forEach(function (c) { c.classList.add("hidden"); });
      results.classList.remove("hidden");
      count.textContent = hits.length + " of " + items.length + " references";
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
