// The light or dark look, chosen before the page paints: loaded as a blocking script in <head> (the CSP allows
// no inline script), it sets <html data-theme> from the reader's choice, so the stylesheet's dark colours apply
// on the first paint and no white page flashes. The choice is "auto" (follow the system's
// prefers-color-scheme), "light" or "dark", kept in localStorage under "theme" with the same values Django's
// admin uses for its own toggle: one choice serves the dashboard and the admin.
window.AtlasTheme = (function () {
  "use strict";

  const KEY = "theme";
  const CHOICES = ["auto", "light", "dark"];
  const root = document.documentElement;
  const system = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function stored() {
    try {
      const value = window.localStorage.getItem(KEY);
      return CHOICES.includes(value) ? value : "auto";
    } catch (err) {
      return "auto"; // storage refused (a privacy mode): follow the system
    }
  }

  function choice() {
    return CHOICES.includes(root.dataset.theme) ? root.dataset.theme : "auto";
  }

  // What is shown now: "light" or "dark".
  function scheme() {
    const chosen = choice();
    if (chosen !== "auto") return chosen;
    return system && system.matches ? "dark" : "light";
  }

  function announce() {
    document.dispatchEvent(new CustomEvent("atlas:themechange", { detail: { scheme: scheme() } }));
  }

  function set(value) {
    const chosen = CHOICES.includes(value) ? value : "auto";
    try {
      window.localStorage.setItem(KEY, chosen);
    } catch (err) {
      // Not remembered, still applied to this page.
    }
    const before = scheme();
    root.dataset.theme = chosen;
    syncSwitch();
    if (scheme() !== before) announce();
  }

  function syncSwitch() {
    const select = document.getElementById("theme-choice");
    if (select) select.value = choice();
  }

  root.dataset.theme = stored();

  if (system) {
    const follow = () => {
      if (choice() === "auto") announce();
    };
    if (system.addEventListener) system.addEventListener("change", follow);
    else if (system.addListener) system.addListener(follow);
  }

  // Another tab changed the choice: this one follows.
  window.addEventListener("storage", (event) => {
    if (event.key !== KEY) return;
    const before = scheme();
    root.dataset.theme = stored();
    syncSwitch();
    if (scheme() !== before) announce();
  });

  document.addEventListener("DOMContentLoaded", () => {
    const select = document.getElementById("theme-choice");
    if (!select) return;
    syncSwitch();
    select.addEventListener("change", () => set(select.value));
  });

  return { choice, scheme, set };
})();
