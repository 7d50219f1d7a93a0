// pidx serve: filter and search as you type, load more messages as you scroll, copy the resume
// command, follow live updates. Pages work without it (forms submit, links page). Every HTML
// fragment inserted here was built and escaped by the server.
"use strict";
(function () {
  function fragment(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }
  function get(url, signal) {
    return fetch(url, { credentials: "same-origin", signal: signal }).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.text();
    });
  }
  // Filter or search as you type: the form's query, answered as a fragment into `target`.
  function asYouType(input, target) {
    var form = input.form, seq = 0, timer = null, inflight = null;
    function run() {
      var params = new URLSearchParams(new FormData(form));
      var url = form.getAttribute("action") + "?" + params.toString();
      var mine = ++seq;
      // The answer to an older query would be thrown away: stop it (the server stops its
      // query when the request goes).
      if (inflight) inflight.abort();
      inflight = new AbortController();
      get(url + "&frag=1", inflight.signal).then(function (html) {
        if (mine !== seq) return;
        target.replaceChildren(fragment(html));
        history.replaceState(null, "", url);
        document.body.dataset.ready = String(mine);
      }).catch(function () {});
    }
    form.addEventListener("input", function (e) {
      if (e.target !== input && e.target.type !== "search") return;
      clearTimeout(timer);
      timer = setTimeout(run, 120);
    });
    form.addEventListener("change", function (e) { if (e.target.type !== "search") run(); });
    return run;
  }
  var rerun = null;
  var filter = document.getElementById("filter");
  if (filter) rerun = asYouType(filter, document.getElementById("rows"));
  var search = document.getElementById("search");
  if (search) asYouType(search, document.getElementById("results"));

  var copy = document.getElementById("copy");
  if (copy) copy.addEventListener("click", function () {
    var text = document.getElementById(copy.dataset.copyFrom).textContent;
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(function () {
      copy.textContent = "copied";
    }, function () { copy.textContent = "select the command to copy it"; });
  });

  // Long sessions: the next page loads when its link scrolls into view.
  var loading = false;
  function more(link) {
    if (loading) return;
    loading = true;
    get(link.dataset.frag).then(function (html) {
      link.parentNode.replaceWith(fragment(html));
      loading = false;
      watchNext();
    }).catch(function () { loading = false; });
  }
  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (es) {
    es.forEach(function (e) { if (e.isIntersecting) more(e.target); });
  }) : null;
  function watchNext() {
    var next = document.querySelector("#messages a.next");
    if (next && observer) observer.observe(next);
  }
  watchNext();

  // The projects page narrows its rows as you type (each row's text, any case).
  var pfilter = document.getElementById("pfilter");
  if (pfilter) pfilter.addEventListener("input", function () {
    var want = pfilter.value.toLowerCase();
    document.querySelectorAll("#projects tbody tr").forEach(function (tr) {
      tr.hidden = want !== "" && tr.textContent.toLowerCase().indexOf(want) < 0;
    });
  });

  // Two panes on a wide screen: a session chosen in the list opens beside it.
  var pane = document.getElementById("pane");
  var wide = window.matchMedia("(min-width: 1200px)");
  function openInPane(a) {
    var tr = a.closest("tr");
    document.querySelectorAll("#rows tr.open").forEach(function (r) { r.classList.remove("open"); });
    if (tr) tr.classList.add("open");
    get(a.getAttribute("href") + "?pane=1").then(function (html) {
      pane.replaceChildren(fragment(html));
      pane.scrollTop = 0;
      pane.dataset.session = a.getAttribute("href");
      watchNext();
    }).catch(function () { location.href = a.href; });
  }
  if (pane) document.getElementById("rows").addEventListener("click", function (e) {
    var a = e.target.closest("td.title a");
    if (!a || !wide.matches || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    openInPane(a);
  });

  // Keys: j/k move through the rows (or a session's messages), Enter opens, / searches,
  // t shows the tree. Typing in a field is left alone.
  function selectable() {
    var rows = document.querySelectorAll("#rows tbody tr:not([hidden]), #projects tbody tr:not([hidden])");
    return rows.length ? rows : document.querySelectorAll("#messages article.msg");
  }
  var at = -1;
  function move(by) {
    var items = selectable();
    if (!items.length) return;
    var cur = document.querySelector(".sel");
    at = cur ? Array.prototype.indexOf.call(items, cur) : -1;
    if (cur) cur.classList.remove("sel");
    at = Math.max(0, Math.min(items.length - 1, at + by));
    items[at].classList.add("sel");
    items[at].scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) {
      if (e.key === "Escape") t.blur();
      return;
    }
    var sel = document.querySelector(".sel");
    var link = sel && sel.querySelector("td.title a, td a, a.here");
    if (e.key === "j" || e.key === "k") {
      move(e.key === "j" ? 1 : -1);
    } else if (e.key === "Enter" && sel && link) {
      if (pane && wide.matches && sel.closest("#rows")) openInPane(link); else link.click();
    } else if (e.key === "/") {
      var box = document.getElementById("filter") || document.getElementById("search") || pfilter;
      if (box) box.focus(); else location.href = "/search";
    } else if (e.key === "t") {
      var tree = document.querySelector("nav.top a[href$='/tree']");
      var s = (pane && pane.dataset.session) || (sel && sel.closest("#rows") && link && link.getAttribute("href"));
      if (s) location.href = s + "/tree"; else if (tree) location.href = tree.href;
    } else {
      return;
    }
    e.preventDefault();
  });

  // The tree: a branch folds away with every row under it (the rows after it that are further
  // in, or as far in but not the start of the next branch).
  document.querySelectorAll("ul.tree button.fold").forEach(function (b) {
    b.addEventListener("click", function () {
      var li = b.parentNode, k = +li.dataset.indent, open = b.getAttribute("aria-expanded") === "true";
      b.setAttribute("aria-expanded", open ? "false" : "true");
      var hidden = 0;
      for (var n = li.nextElementSibling; n; n = n.nextElementSibling) {
        var d = +n.dataset.indent;
        if (d < k || (d === k && n.querySelector(".branch"))) break;
        n.classList.toggle("folded-away", open);
        hidden++;
      }
      var c = li.querySelector(".count");
      if (open) {
        if (!c) { c = document.createElement("span"); c.className = "count"; li.appendChild(c); }
        c.textContent = " (" + hidden + " folded)";
      } else if (c) c.remove();
    });
  });

  // Live: new messages of the open session (at its current leaf), or a fresh listing.
  var messages = document.getElementById("messages");
  var live = messages && messages.dataset.live === "1";
  if ((live || rerun) && "EventSource" in window) {
    var events = new EventSource("/events");
    // A page left (or kept in the back-forward cache) lets go of its stream: a browser holds
    // six connections to a host, and streams left open would starve the next page.
    window.addEventListener("pagehide", function () { events.close(); });
    events.addEventListener("change", function () {
      var end = document.getElementById("end");
      if (live && end && !loading) {
        loading = true;
        get(end.dataset.next + "&frag=1").then(function (html) {
          end.replaceWith(fragment(html));
          loading = false;
          watchNext();
          document.body.dataset.updated = String(Date.now());
        }).catch(function () { loading = false; });
      } else if (rerun) {
        rerun();
      }
    });
  }
})();
