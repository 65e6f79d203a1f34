/*
 * Latency Atlas real-user beacon: what the person at the keyboard waited for an LLM's answer, from the click to
 * the first token on screen, sent to Latency Atlas as one beacon per call. No dependencies; never any prompt or
 * answer text (only timings, a token count, an error's type and the page author's label).
 *
 *   <script src="https://ATLAS/static/atlas-rum.js" data-key="BROWSER-KEY" data-target="TARGET-NAME"></script>
 *
 *   const call = AtlasRUM.start("chat");   // at the click
 *   call.firstToken();                     // when the first token is on screen (the first call counts)
 *   call.end({tokens: 120});               // when the answer is complete; or call.end({error: err})
 *
 * data-endpoint overrides where beacons go (default: this script's own origin + /rum/v1/beacon). Times are
 * performance.now() readings, so the visitor's clock is never involved. The body is a URL-encoded form, a
 * CORS-safelisted type: navigator.sendBeacon posts it cross-origin without a preflight (fetch with keepalive
 * where sendBeacon is missing or refuses). No inline code and no eval: it runs under a CSP that allows the
 * script's origin in script-src and connect-src.
 */
(function () {
  "use strict";
  if (window.AtlasRUM) {
    return; // included twice: the first one's settings stand
  }
  var script = document.currentScript;
  var data = script ? script.dataset : {};
  var endpoint = data.endpoint || (script && script.src ? new URL("/rum/v1/beacon", script.src).href : "/rum/v1/beacon");
  var settings = { key: data.key || "", target: data.target || "" };

  function errorType(error) {
    if (!error) {
      return "";
    }
    var type = typeof error === "string" ? error : error.name || "error";
    // A type, never a message: the server refuses anything else.
    type = String(type).replace(/[^A-Za-z0-9_.:-]/g, "_").slice(0, 64);
    return /^[A-Za-z0-9_]/.test(type) ? type : "error";
  }

  function labelOf(label) {
    // The server takes a short name (letters, digits, spaces, . : / - _), so a stray character costs no beacon.
    return label ? String(label).replace(/[^\p{L}\p{N}_ .:\/-]/gu, "_").replace(/^[ .:\/-]+/, "").slice(0, 64) : "";
  }

  function send(fields) {
    var body = new URLSearchParams();
    Object.keys(fields).forEach(function (name) {
      var value = fields[name];
      if (value !== null && value !== undefined && value !== "") {
        body.append(name, String(value));
      }
    });
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(endpoint, body)) {
        return true;
      }
    } catch (e) {
      // sendBeacon throws on some URLs in some browsers; fetch below reports its own way
    }
    if (window.fetch) {
      window.fetch(endpoint, { method: "POST", body: body, keepalive: true, mode: "cors", credentials: "omit" })
        .catch(function () {});
      return true;
    }
    return false;
  }

  function round(ms) {
    return Math.round(ms * 10) / 10;
  }

  function start(label) {
    var started = performance.now();
    var first = null;
    var ended = false;
    return {
      firstToken: function () {
        if (first === null && !ended) {
          first = performance.now();
        }
      },
      end: function (options) {
        if (ended) {
          return false;
        }
        ended = true;
        var opts = options || {};
        var tokens = Number.isInteger(opts.tokens) && opts.tokens >= 0 ? opts.tokens : null;
        return send({
          key: settings.key,
          target: settings.target,
          label: labelOf(label),
          start: round(started),
          first_token: first === null ? null : round(first),
          end: round(performance.now()),
          tokens: tokens,
          error: errorType(opts.error),
        });
      },
    };
  }

  window.AtlasRUM = { start: start };
})();
