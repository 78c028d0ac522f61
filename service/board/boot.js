// Before the board's modules: if one of them cannot be fetched (a busy server sheds a request
// with 503, a network blip), the whole module graph fails and the page would stay blank. The
// browser then fires `error` at the module's <script> (a fetch failure; a module that loads and
// throws is reported at the window instead, and is not retried). So: say so, and load the page
// again after a pause that grows, at most RETRIES times in a row (counted in sessionStorage, and
// cleared by board.js once it runs). A classic script, so it runs even where modules fail.
(function () {
  "use strict";
  var RETRIES = 3;
  var KEY = "swarm.board.boot-retries";
  window.addEventListener(
    "error",
    function (event) {
      var target = event.target;
      if (!target || target.tagName !== "SCRIPT" || target.type !== "module") return;
      var tries = Number(sessionStorage.getItem(KEY) || "0");
      var slot = document.getElementById("problem");
      var box = document.createElement("div");
      box.className = "problem";
      box.setAttribute("role", "alert");
      var title = document.createElement("b");
      title.className = "problem-title";
      title.textContent = "The board could not load";
      box.appendChild(title);
      var advice = document.createElement("span");
      advice.className = "problem-advice";
      if (tries < RETRIES) {
        var seconds = 2 * Math.pow(2, tries);
        advice.textContent = " The server is busy or the network dropped a file. Trying again in " + seconds + " s…";
        sessionStorage.setItem(KEY, String(tries + 1));
        setTimeout(function () { location.reload(); }, seconds * 1000);
      } else {
        sessionStorage.removeItem(KEY);
        advice.textContent = " The server is busy or unreachable. Reload the page in a moment.";
      }
      box.appendChild(advice);
      if (slot) {
        slot.textContent = "";
        slot.appendChild(box);
      } else {
        document.addEventListener("DOMContentLoaded", function () {
          var later = document.getElementById("problem");
          if (later) later.appendChild(box);
        });
      }
    },
    true
  );
})();
