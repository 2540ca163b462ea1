/**
 * The tracking page: one HTML document, one stylesheet and one script, all served by
 * delivery-api (the kit's Content-Security-Policy, PAGE_CSP, allows nothing else: no third-party
 * tiles, fonts or scripts, no inline code). The map is an SVG drawn around the destination and the messenger, in an
 * equirectangular projection scaled by cos(latitude), which is exact enough at city scale.
 */

/** The document every tracking page shares around its main content. */
function trackingDocument(title: string, main: string, script = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="stylesheet" href="/track/assets/tracking.css">
</head>
<body>
<main>
${main}
</main>
${script}</body>
</html>
`;
}

export const TRACKING_HTML = trackingDocument(
  "Your delivery",
  `<h1 id="title">Your delivery</h1>
<p id="status" data-status="">Loading…</p>
<p id="eta" hidden></p>
<svg id="map" viewBox="0 0 400 300" role="img" aria-label="Map of the messenger and your address">
<g id="grid"></g>
<circle id="destination-marker" r="7" cx="200" cy="150"></circle>
<circle id="messenger-marker" r="9" cx="200" cy="150" visibility="hidden"></circle>
<text id="scale" x="8" y="292"></text>
</svg>
<section id="proof" hidden>
<h2>Proof of delivery</h2>
<p id="accepted-by"></p>
<div id="proof-images"></div>
</section>`,
  `<script src="/track/assets/tracking.js"></script>
`,
);

/**
 * What a recipient's browser shows when the link cannot show a delivery: the page is opened from
 * a text message, so it says in words what is wrong (the state route answers the same in JSON).
 */
export function trackingErrorHtml(status: 404 | 410, cancelled = false): string {
  const [title, text] =
    status === 410
      ? [
          "This tracking link has expired",
          `The delivery it followed was ${cancelled ? "cancelled" : "completed"} a while ago.`,
        ]
      : [
          "This tracking link is not valid",
          "Check that the whole link was opened. A link works once the messenger starts your delivery.",
        ];
  return trackingDocument(title, `<h1>${title}</h1>\n<p>${text}</p>`);
}

export const TRACKING_CSS = `
body { font-family: system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
main { max-width: 480px; margin: 0 auto; padding: 16px; }
h1 { font-size: 1.3rem; }
#status { font-size: 1.1rem; font-weight: 600; }
#map { width: 100%; background: #e8eef3; border-radius: 8px; }
#grid line { stroke: #cfd8e0; stroke-width: 1; }
#destination-marker { fill: #d33; stroke: #fff; stroke-width: 2; }
#messenger-marker { fill: #1565c0; stroke: #fff; stroke-width: 3; transition: cx 0.8s, cy 0.8s; }
#scale { font-size: 11px; fill: #556; }
#proof img { max-width: 100%; margin-top: 8px; border: 1px solid #ccd; background: #fff; }
`;

export const TRACKING_JS = `"use strict";
(function () {
  var token = location.pathname.split("/").filter(Boolean).pop();
  var base = "/track/" + encodeURIComponent(token);
  var W = 400, H = 300, view = null;
  var LABELS = { saved: "Preparing your delivery", scheduled: "Your delivery is scheduled",
    picked_up: "Your parcel is on its way", delivered: "Delivered", failed: "Delivery failed",
    cancelled: "Delivery cancelled" };
  function $(id) { return document.getElementById(id); }
  function metres(a, b) {
    var r = Math.PI / 180, k = Math.cos(((a.latitude + b.latitude) / 2) * r);
    var dx = (b.longitude - a.longitude) * r * k, dy = (b.latitude - a.latitude) * r;
    return 6371008.8 * Math.sqrt(dx * dx + dy * dy);
  }
  // The view is centred on the destination and only grows, so the marker visibly moves.
  function fit(state) {
    var centre = state.destination || state.messenger;
    if (!centre) return null;
    var need = state.messenger && state.destination ? metres(state.messenger, state.destination) * 1.3 : 300;
    if (!view || need > view.radius) {
      view = { centre: centre, radius: Math.max(300, need, view ? view.radius : 0) };
      drawGrid();
    }
    return view;
  }
  function project(p) {
    var r = Math.PI / 180, k = Math.cos(view.centre.latitude * r);
    var scale = (Math.min(W, H) / 2) / view.radius;
    var x = (p.longitude - view.centre.longitude) * r * k * 6371008.8 * scale;
    var y = (p.latitude - view.centre.latitude) * r * 6371008.8 * scale;
    return { x: W / 2 + x, y: H / 2 - y };
  }
  function drawGrid() {
    var g = $("grid"); while (g.firstChild) g.removeChild(g.firstChild);
    for (var i = 0; i <= 8; i++) {
      var v = document.createElementNS("http://www.w3.org/2000/svg", "line");
      v.setAttribute("x1", i * 50); v.setAttribute("x2", i * 50); v.setAttribute("y1", 0); v.setAttribute("y2", H);
      g.appendChild(v);
      var h = document.createElementNS("http://www.w3.org/2000/svg", "line");
      h.setAttribute("y1", i * 50); h.setAttribute("y2", i * 50); h.setAttribute("x1", 0); h.setAttribute("x2", W);
      g.appendChild(h);
    }
    $("scale").textContent = "grid: " + Math.round((50 * view.radius) / (Math.min(W, H) / 2)) + " m";
  }
  function place(el, p) {
    var q = project(p);
    el.setAttribute("cx", q.x.toFixed(1)); el.setAttribute("cy", q.y.toFixed(1));
    el.setAttribute("data-lat", String(p.latitude)); el.setAttribute("data-lon", String(p.longitude));
    el.setAttribute("visibility", "visible");
  }
  function render(state) {
    $("title").textContent = "Your delivery from " + state.sender;
    var status = $("status");
    status.textContent = LABELS[state.status] || state.status;
    status.setAttribute("data-status", state.status);
    var eta = $("eta");
    if (state.eta) {
      eta.hidden = false;
      eta.setAttribute("data-eta", state.eta);
      eta.textContent = "Expected around " + new Date(state.eta).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    } else { eta.hidden = true; eta.removeAttribute("data-eta"); }
    if (fit(state)) {
      if (state.destination) place($("destination-marker"), state.destination);
      if (state.messenger) place($("messenger-marker"), state.messenger);
    }
    if (!state.messenger) $("messenger-marker").setAttribute("visibility", "hidden");
    if (state.failure_reason) status.textContent += ": " + state.failure_reason;
    var proof = $("proof");
    if (state.proof) {
      proof.hidden = false;
      $("accepted-by").textContent = state.proof.accepted_by ? "Received by " + state.proof.accepted_by : "";
      var images = $("proof-images"); while (images.firstChild) images.removeChild(images.firstChild);
      var urls = (state.proof.signature_url ? [state.proof.signature_url] : []).concat(state.proof.pictures);
      urls.forEach(function (url) { var img = document.createElement("img"); img.src = url; img.alt = "proof"; images.appendChild(img); });
    } else { proof.hidden = true; }
  }
  fetch(base + "/state").then(function (r) { return r.ok ? r.json() : null; }).then(function (s) { if (s) render(s); });
  var events = new EventSource(base + "/events");
  events.addEventListener("state", function (e) { render(JSON.parse(e.data)); });
  events.addEventListener("gone", function () { events.close(); $("status").textContent = "This tracking link has expired"; });
})();
`;
