// What the live pages (/, /boards/{board}, /contests/{contest}) share and
// the embeddable client (/v1/client.js) does not: times written with their
// time zone, a chart's time axis, and a visible hint on a frame whose
// content is wider than the screen and scrolls sideways.
(function () {
  "use strict";

  // Times are the viewer's local time with the zone's abbreviation
  // ("Dec 7, 14:05 CET"), so that nobody has to guess whether a start or
  // a freeze is UTC. The full ISO time (UTC) is in each <time>'s datetime.
  const withZone = (opts) => Object.assign({ timeZoneName: "short" }, opts);
  const SHORT = { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" };
  const fmtShort = new Intl.DateTimeFormat(undefined, withZone(SHORT));
  const fmtYear = new Intl.DateTimeFormat(undefined, withZone(Object.assign({ year: "numeric" }, SHORT)));
  const fmtClock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
  const fmtDay = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
  const fmtZone = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" });

  function ms(t) { return typeof t === "number" ? t : Date.parse(t); }

  /** formatTime: "Dec 7, 14:05 CET" (the year too when it is not this one). */
  function formatTime(t) {
    const v = ms(t);
    if (!Number.isFinite(v)) return "";
    const d = new Date(v);
    return (d.getFullYear() === new Date().getFullYear() ? fmtShort : fmtYear).format(d);
  }

  /** zone: the abbreviation of the viewer's time zone at time t ("CET", "UTC"). */
  function zone(t) {
    const p = fmtZone.formatToParts(new Date(Number.isFinite(ms(t)) ? ms(t) : Date.now())).find((x) => x.type === "timeZoneName");
    return p ? p.value : "";
  }

  /** timeEl: a <time> showing formatTime, its title the exact UTC time. */
  function timeEl(iso, cls) {
    const e = document.createElement("time");
    if (cls) e.className = cls;
    const v = ms(iso);
    e.textContent = formatTime(v);
    if (Number.isFinite(v)) {
      e.dateTime = new Date(v).toISOString();
      e.title = e.dateTime.replace("T", " ").replace(/\.\d+Z$/, " UTC");
    }
    return e;
  }

  // STEPS are the spacings a time axis picks from (ms): the smallest that
  // keeps the ticks at most max.
  const MIN = 60000, HOUR = 60 * MIN, DAY = 24 * HOUR;
  const STEPS = [MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR,
    DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY];

  /**
   * timeTicks returns the ticks of a time axis from t0 to t1 (ms), about
   * max of them, on round local times: [{t, label}], a label the clock time
   * ("14:30"), or the date at a local midnight and on a scale of days. It
   * takes the widest round step that keeps the ticks at most max, but never
   * one that leaves fewer than two ticks when a finer step gives two (2 h
   * steps over 09:10-11:20 gave one tick, 10:00, on a phone).
   */
  function timeTicks(t0, t1, max) {
    max = Math.max(2, max | 0);
    let i = STEPS.findIndex((s) => (t1 - t0) / s <= max);
    if (i < 0) return ticksEvery(t0, t1, max, Math.ceil((t1 - t0) / max / DAY) * DAY);
    let out = ticksEvery(t0, t1, max, STEPS[i]);
    while (out.length < 2 && i > 0) out = ticksEvery(t0, t1, max, STEPS[--i]);
    return out;
  }

  // ticksEvery returns the ticks from t0 to t1 every step (ms), at most
  // max + 1 of them.
  function ticksEvery(t0, t1, max, step) {
    const out = [];
    let d = new Date(t0);
    if (step < DAY) {
      d.setHours(0, 0, 0, 0); // a local midnight: ticks fall on round local times
      let t = d.getTime();
      t += Math.ceil((t0 - t) / step) * step;
      for (; t <= t1 && out.length <= max; t += step) {
        const x = new Date(t);
        const midnight = x.getHours() === 0 && x.getMinutes() === 0;
        out.push({ t, label: midnight && t1 - t0 > 6 * HOUR ? fmtDay.format(x) : fmtClock.format(x) });
      }
    } else {
      const days = Math.round(step / DAY);
      d.setHours(0, 0, 0, 0);
      if (d.getTime() < t0) d.setDate(d.getDate() + 1);
      for (; d.getTime() <= t1 && out.length <= max; d.setDate(d.getDate() + days)) {
        out.push({ t: d.getTime(), label: fmtDay.format(d) });
      }
    }
    return out;
  }

  // --- frames that scroll sideways ---

  // A .table-wrap whose table is wider than it (a long name, many keys on
  // a narrow screen) scrolls; hint() puts "scroll sideways" above it and
  // shadows on the side with more, so a cut-off column is never silent.
  function hint(wrap) {
    const over = wrap.scrollWidth > wrap.clientWidth + 1;
    wrap.dataset.overflow = String(over);
    let p = wrap.previousElementSibling;
    if (!p || !p.classList.contains("scroll-hint")) {
      if (!over) return;
      p = document.createElement("p");
      p.className = "scroll-hint";
      p.setAttribute("aria-hidden", "true"); // a screen reader reads the whole table anyway
      p.textContent = "Wider than the screen: scroll the table sideways \u2192";
      wrap.before(p);
    }
    p.hidden = !over;
    const left = wrap.scrollLeft > 1, right = wrap.scrollLeft + wrap.clientWidth < wrap.scrollWidth - 1;
    wrap.classList.toggle("more-left", over && left);
    wrap.classList.toggle("more-right", over && right);
  }

  const seen = new WeakSet();
  const ro = typeof ResizeObserver === "undefined" ? null : new ResizeObserver((list) => {
    for (const r of list) hint(r.target.closest(".table-wrap") || r.target);
  });

  /** watchOverflow: hint on every .table-wrap under root, now and as it changes. */
  function watchOverflow(root) {
    for (const w of (root || document).querySelectorAll(".table-wrap")) {
      if (!seen.has(w)) {
        seen.add(w);
        w.addEventListener("scroll", () => hint(w), { passive: true });
        if (ro) {
          ro.observe(w);
          for (const c of w.children) ro.observe(c);
        }
      }
      hint(w);
    }
  }

  window.PodiumPage = { formatTime, zone, timeEl, timeTicks, watchOverflow };
  const start = () => {
    watchOverflow(document);
    // Tables added later (a tournament's payouts) are watched too.
    // Once a frame at most: a live board changes rows often.
    let queued = false;
    new MutationObserver(() => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => { queued = false; watchOverflow(document); });
    }).observe(document.body, { childList: true, subtree: true });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
