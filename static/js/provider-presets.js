// The target form's "Provider preset" select (probes.forms.ProviderPresetSelect): choosing a preset fills the
// fields it decides, from the JSON the select renders beside itself (#provider-presets; the CSP allows no inline
// script). A value the user typed is kept: a field is filled only when it is empty, holds the model's default, or
// still holds what the preset chosen before put there. The style is always the preset's: the server refuses any
// other.
(function () {
  "use strict";

  function start() {
    var select = document.getElementById("id_provider");
    var data = document.getElementById("provider-presets");
    if (!select || !data) {
      return;
    }
    var parsed = JSON.parse(data.textContent);
    var presets = parsed.presets;
    var defaults = parsed.defaults;
    var model = document.getElementById("id_model");
    var ownPlaceholder = model ? model.getAttribute("placeholder") || "" : "";
    // What the last preset put in each field; a form served with a preset counts as filled by it.
    var filled = presets[select.value] || {};

    function showExample(preset) {
      if (model) {
        model.placeholder = preset ? preset.model_placeholder : ownPlaceholder;
      }
    }

    select.addEventListener("change", function () {
      var preset = presets[select.value];
      showExample(preset);
      if (!preset) {
        // "custom": nothing to fill, and what the last preset filled is still recognised as its own.
        return;
      }
      Object.keys(defaults).forEach(function (name) {
        var field = document.getElementById("id_" + name);
        if (!field || field.value === preset[name]) {
          return;
        }
        var untyped =
          name === "api_style" || field.value === "" || field.value === defaults[name] || field.value === filled[name];
        if (untyped) {
          field.value = preset[name];
          field.dispatchEvent(new Event("change", { bubbles: true }));
        }
      });
      filled = preset;
    });
    showExample(presets[select.value]);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
