// Run in the page after load: every non-empty <text> of every <svg> must lie inside its
// picture and overlap no other text of it. Writes the problems as JSON into
// a pre element with id picture-check (read back from Chromium's --dump-dom).
(function () {
  const problems = [];
  const slack = 0.5; // px: anti-aliasing
  const svgs = Array.from(document.querySelectorAll("svg"));
  svgs.forEach((svg, si) => {
    const box = svg.getBoundingClientRect();
    const name = svg.getAttribute("aria-label") || "svg #" + si;
    const texts = Array.from(svg.querySelectorAll("text")).filter((t) => t.textContent.trim() !== "");
    const rects = texts.map((t) => t.getBoundingClientRect());
    texts.forEach((t, i) => {
      const r = rects[i];
      if (r.left < box.left - slack || r.right > box.right + slack || r.top < box.top - slack || r.bottom > box.bottom + slack) {
        problems.push({ picture: name, kind: "outside", text: t.textContent.slice(0, 80),
          by: Math.round(Math.max(box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom)) });
      }
    });
    for (let i = 0; i < rects.length; i++) {
      for (let j = i + 1; j < rects.length; j++) {
        const a = rects[i], b = rects[j];
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1) {
          problems.push({ picture: name, kind: "overlap", text: texts[i].textContent.slice(0, 40) + " | " + texts[j].textContent.slice(0, 40) });
        }
      }
    }
  });
  const pre = document.createElement("pre");
  pre.id = "picture-check";
  pre.textContent = JSON.stringify({ svgs: svgs.length, problems: problems });
  document.body.appendChild(pre);
})();
