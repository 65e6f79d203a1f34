// The SLA report's print button: the browser's own print dialog, laid out by static/css/slo-print.css
// (one A4 page, without the site's header and controls).
(function () {
  "use strict";

  const button = document.getElementById("print-report");
  if (button) button.addEventListener("click", () => window.print());
})();
