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
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(run, 120);
    });
    form.addEventListener("change", function (e) { if (e.target !== input) run(); });
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

  // Live: new messages of the open session (at its current leaf), or a fresh listing.
  var messages = document.getElementById("messages");
  var live = messages && messages.dataset.live === "1";
  if ((live || rerun) && "EventSource" in window) {
    var events = new EventSource("/events");
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
