// Used by tests/browser/reach.py: what on the game screen is out of a person's reach.
(() => {
  const misses = [];
  const se = document.scrollingElement;
  if (scrollY !== 0 || se.scrollTop !== 0 || se.scrollLeft !== 0) misses.push(`page scrolled to ${se.scrollLeft},${se.scrollTop}`);
  if (se.scrollWidth > innerWidth) misses.push(`page ${se.scrollWidth} px wide`);
  const inside = (el, what) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.top < 0 || r.left < 0 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5) {
      misses.push(`${what} at x ${Math.round(r.left)}-${Math.round(r.right)}, y ${Math.round(r.top)}-${Math.round(r.bottom)}`);
      return;
    }
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!hit || !(el === hit || el.contains(hit))) misses.push(`${what} covered by ${hit?.className}`);
  };
  for (const bee of document.querySelectorAll('.hand button.bee')) inside(bee, `bee ${bee.dataset.bee}`);
  const confirm = document.querySelector('button.confirm');
  if (confirm) inside(confirm, 'CONFIRM');
  for (const take of document.querySelectorAll('button.take')) inside(take, take.getAttribute('aria-label'));
  return misses;
})
