// tide report: draws the charts of a report's data (docs/report.md) as SVG.
// The data is embedded in the page (tide simulate --html) or fetched from
// the live controller (tide run serves it at /api/v1/report). No network
// fetch other than that one, no library.
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const TIERS = ["reserved", "on-demand", "spot"];
  const DASHES = ["", "7 3", "2 3", "10 3 2 3", "4 4", "1 2", "12 4", "6 2 2 2"];
  const M = { l: 58, r: 12, t: 10, b: 26 };

  // ---- formatting -----------------------------------------------------------
  function thousands(x, digits) {
    return Number(x).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  function human(s) {  // seconds -> "0s", "42s", "4m37s", "3h12m", "2d3h" (as tide's text report)
    s = Math.round(s);
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m" + (s % 60 ? (s % 60) + "s" : "");
    if (s < 86400) return Math.floor(s / 3600) + "h" + (Math.floor(s / 60) % 60 ? (Math.floor(s / 60) % 60) + "m" : "");
    return Math.floor(s / 86400) + "d" + (Math.floor(s / 3600) % 24 ? (Math.floor(s / 3600) % 24) + "h" : "");
  }
  function compact(v) {
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 0 : 1) + "G";
    if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(a >= 1e5 ? 0 : 1) + "k";
    if (a >= 100 || v === Math.round(v)) return String(Math.round(v));
    return v.toFixed(a >= 10 ? 1 : 2);
  }
  const UNITS = {
    money: (v) => thousands(v, v !== 0 && Math.abs(v) < 100 ? 2 : 0),  // small sums (a live page) keep the cents
    count: (v) => thousands(v, 0),
    hours: (v) => thousands(v, 1),
    pct: (v) => (v * 100).toFixed(1) + "%",
    ratio: (v) => v.toFixed(2) + "x",
    duration: (v) => human(v),
  };

  // ---- time in the configured zone ------------------------------------------
  function zone(tz) {
    const parts = new Intl.DateTimeFormat("en-US", {
      timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit",
    });
    const day = new Intl.DateTimeFormat("en-GB", { timeZone: tz, weekday: "short", day: "numeric", month: "short" });
    const date = new Intl.DateTimeFormat("en-GB", { timeZone: tz, day: "numeric", month: "short" });
    const month = new Intl.DateTimeFormat("en-GB", { timeZone: tz, month: "short", year: "numeric" });
    const clock = new Intl.DateTimeFormat("en-GB", { timeZone: tz, hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    const full = new Intl.DateTimeFormat("en-GB", {
      timeZone: tz, weekday: "short", day: "numeric", month: "short", year: "numeric",
      hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short",
    });
    function offset(t) {  // seconds east of UTC at unix time t
      const p = {};
      for (const x of parts.formatToParts(new Date(t * 1000))) p[x.type] = x.value;
      const local = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour % 24, +p.minute, +p.second) / 1000;
      return local - Math.floor(t);
    }
    const d = (t) => new Date(t * 1000);
    return {
      offset,
      full: (t) => full.format(d(t)),
      label(t, step) {
        const local = t + offset(t);
        if (step >= 28 * 86400) return month.format(d(t));
        if (step >= 86400) return date.format(d(t));
        if (((local % 86400) + 86400) % 86400 === 0) return day.format(d(t));
        return clock.format(d(t));
      },
      // Ticks at round local times between t0 and t1, about n of them.
      ticks(t0, t1, n) {
        const steps = [60, 300, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 1209600];
        let step = steps.find((s) => (t1 - t0) / s <= n);
        const out = [];
        if (step === undefined) {  // months
          const months = Math.max(1, Math.ceil((t1 - t0) / (30.44 * 86400) / n));
          const o = offset(t0), s = new Date((t0 + o) * 1000);
          let y = s.getUTCFullYear(), m = s.getUTCMonth() + 1;
          for (let i = 0; i < 400; ++i, m += months) {
            const local = Date.UTC(y, m, 1) / 1000;
            const t = local - offset(local);
            if (t > t1) break;
            if (t >= t0) out.push(t);
          }
          return { step: 28 * 86400 * months, ticks: out };
        }
        const base = step === 604800 || step === 1209600 ? 4 * 86400 : 0;  // weeks start on Monday
        let local = Math.ceil((t0 + offset(t0) - base) / step) * step + base;
        for (let i = 0; i < 200; ++i, local += step) {
          const t = local - offset(local - offset(local));
          if (t > t1) break;
          if (t >= t0) out.push(t);
        }
        return { step, ticks: out };
      },
    };
  }

  // ---- SVG helpers ----------------------------------------------------------
  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(name, attrs, parent, text) {
    const e = document.createElement(name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function niceTicks(max, n) {
    if (!(max > 0)) max = 1;
    const raw = max / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw);
    const ticks = [];
    for (let v = 0; v <= max * 1.0001 + step * 0.999 && ticks.length < 20; v += step) ticks.push(v);
    return ticks;
  }
  function pathOf(xs, ys) {
    let d = "";
    for (let i = 0; i < xs.length; ++i) d += (i ? "L" : "M") + xs[i].toFixed(1) + "," + ys[i].toFixed(1);
    return d;
  }

  // A chart in a figure: axes, series, legend and a hover read-out.
  // spec: {title, x: {min, max, time: bool, format}, y: {max, format, label},
  //        series: [{name, color, dash, xs, ys, area: base ys or undefined}], legend: [...]}
  function chart(parent, spec) {
    const W = spec.wide ? 1200 : 600, H = spec.wide ? 190 : 230;
    const fig = html("figure", { class: "chart", "data-chart": spec.id }, parent);
    html("figcaption", {}, fig, spec.title);
    const svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": spec.title }, fig);
    const tip = html("div", { class: "tip" }, fig);
    const x0 = spec.x.min, x1 = spec.x.max > spec.x.min ? spec.x.max : spec.x.min + 1;
    const yt = niceTicks(spec.y.max, 5), ymax = yt[yt.length - 1];
    const px = (x) => M.l + ((x - x0) / (x1 - x0)) * (W - M.l - M.r);
    const py = (y) => H - M.b - (y / ymax) * (H - M.t - M.b);
    const grid = el("g", {}, svg);
    for (const v of yt) {
      el("line", { class: "gridline", x1: M.l, x2: W - M.r, y1: py(v), y2: py(v) }, grid);
      el("text", { x: M.l - 6, y: py(v) + 4, "text-anchor": "end" }, grid).textContent = spec.y.format(v);
    }
    if (spec.y.label) {
      el("text", { x: 12, y: (M.t + H - M.b) / 2, transform: "rotate(-90 12 " + (M.t + H - M.b) / 2 + ")", "text-anchor": "middle" },
        grid).textContent = spec.y.label;
    }
    let xticks;
    if (spec.x.time) {
      const t = spec.zone.ticks(x0, x1, spec.wide ? 12 : 7);
      xticks = t.ticks.map((v) => [v, spec.zone.label(v, t.step)]);
    } else {
      xticks = spec.x.ticks(x0, x1).map((v) => [v, spec.x.format(v)]);
    }
    for (const [v, label] of xticks) {
      el("line", { class: "gridline", x1: px(v), x2: px(v), y1: M.t, y2: H - M.b }, grid);
      el("text", { x: px(v), y: H - M.b + 15, "text-anchor": "middle" }, grid).textContent = label;
    }
    el("line", { class: "axis", x1: M.l, x2: W - M.r, y1: H - M.b, y2: H - M.b }, grid);
    el("line", { class: "axis", x1: M.l, x2: M.l, y1: M.t, y2: H - M.b }, grid);
    const plot = el("g", { class: "series" }, svg);
    for (const s of spec.series) {
      if (!s.xs.length) continue;
      const xs = s.xs.map(px), ys = s.ys.map(py);
      if (s.base) {
        const bs = s.base.map(py);
        const d = pathOf(xs, ys) + "L" + pathOf(xs.slice().reverse(), bs.slice().reverse()).slice(1) + "Z";
        el("path", { d, style: "fill: " + s.color + "; fill-opacity: 0.75; stroke: none", "data-series": s.name }, plot);
      } else {
        el("path", {
          d: pathOf(xs, ys), style: "fill: none; stroke: " + s.color + "; stroke-width: " + (s.width || 1.6),
          "stroke-dasharray": s.dash || "", "stroke-linejoin": "round", "data-series": s.name,
        }, plot);
      }
    }
    const legend = html("div", { class: "legend" }, fig);
    for (const s of spec.legend || spec.series) {
      const item = html("span", {}, legend);
      const key = html("i", { class: s.base ? "box" : "" }, item);
      if (s.base) key.style.background = s.color;
      else {
        key.style.borderTopColor = s.color;
        if (s.dash) key.style.borderTopStyle = "dashed";
      }
      item.appendChild(document.createTextNode(s.name));
    }
    // Hover: the nearest point of each series.
    const cursor = el("line", { class: "cursor", y1: M.t, y2: H - M.b, visibility: "hidden" }, svg);
    svg.addEventListener("mousemove", (ev) => {
      const r = svg.getBoundingClientRect();
      const sx = ((ev.clientX - r.left) / r.width) * W;
      if (sx < M.l || sx > W - M.r) return hide();
      const x = x0 + ((sx - M.l) / (W - M.l - M.r)) * (x1 - x0);
      cursor.setAttribute("x1", sx);
      cursor.setAttribute("x2", sx);
      cursor.setAttribute("visibility", "visible");
      tip.textContent = "";
      html("b", {}, tip, spec.x.time ? spec.zone.full(x) : spec.x.format(x));
      for (const s of spec.series) {
        if (!s.xs.length || s.hideInTip) continue;
        const i = bisect(s.xs, x);
        const v = s.ys[i] - (s.base ? s.base[i] : 0);
        html("div", {}, tip, s.name + ": " + (spec.tipFormat || spec.y.format)(v));
      }
      tip.style.display = "block";
      const fx = ev.clientX - fig.getBoundingClientRect().left;
      tip.style.left = Math.min(fx + 14, fig.clientWidth - tip.offsetWidth - 4) + "px";
      tip.style.top = "30px";
    });
    const hide = () => {
      cursor.setAttribute("visibility", "hidden");
      tip.style.display = "none";
    };
    svg.addEventListener("mouseleave", hide);
    return fig;
  }
  function bisect(xs, x) {
    let lo = 0, hi = xs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0 && Math.abs(xs[lo - 1] - x) < Math.abs(xs[lo] - x)) lo -= 1;
    return lo;
  }

  // ---- the report -----------------------------------------------------------
  // A series as long as the timeline: what is missing is drawn as 0.
  function seriesOf(p, name) {
    const n = p.timeline ? p.timeline.buckets : 0;
    const s = (p.timeline && p.timeline.series[name]) || [];
    if (s.length === n) return s;
    const out = new Array(n);
    for (let i = 0; i < n; ++i) out[i] = typeof s[i] === "number" ? s[i] : 0;
    return out;
  }
  const hasSeries = (p, name) => Boolean(p.timeline && p.timeline.series[name]);
  function times(p, mid) {  // bucket middles (levels) or ends (totals)
    const tl = p.timeline, out = new Array(tl.buckets);
    for (let i = 0; i < tl.buckets; ++i) out[i] = tl.start + tl.step * (i + (mid ? 0.5 : 1));
    return out;
  }
  function ratio(a, b) {
    return a.map((v, i) => (b[i] > 0 ? v / b[i] : 0));
  }
  function maxOf(arrays) {
    let m = 0;
    for (const a of arrays) for (const v of a) if (v > m) m = v;
    return m;
  }
  const color = (i) => "var(--c" + (i % 8) + ")";
  const dash = (i) => DASHES[Math.floor(i / 8 + i) % DASHES.length];

  function headline(parent, data) {
    const policies = (data.summary && data.summary.policies) || [];
    const cur = data.currency || "";
    const rows = [
      ["Cost", null],
      ["total (" + cur + ")", "cost_total", "money"],
      ["reserved", "cost_by_tier.reserved", "money"],
      ["on-demand", "cost_by_tier.on-demand", "money"],
      ["spot", "cost_by_tier.spot", "money"],
      ["over the lower bound", "cost_to_lower_bound", "ratio"],
      ["GPU-hours", null],
      ["paid", "gpu_hours_paid", "hours"],
      ["busy", "gpu_hours_busy", "hours"],
      ["utilization (busy/paid)", "utilization", "pct"],
      ["measured GPU utilization", "gpu_util_mean", "pct"],
      ["Queue wait and completion", null],
      ["wait p50", "wait_s.p50", "duration"],
      ["wait p95", "wait_s.p95", "duration"],
      ["wait p99", "wait_s.p99", "duration"],
      ["JCT p50", "jct_s.p50", "duration"],
      ["JCT p95", "jct_s.p95", "duration"],
      ["Jobs and nodes", null],
      ["jobs completed", "jobs_completed", "count"],
      ["jobs never started", "jobs_unstarted", "count"],
      ["jobs pending now", "jobs_pending", "count"],
      ["jobs running now", "jobs_running", "count"],
      ["nodes bought", "nodes_bought", "count"],
      ["nodes now", "nodes_live", "count"],
      ["peak nodes", "peak_nodes", "count"],
      ["Interruptions", null],
      ["spot interruptions", "spot_interruptions", "count"],
      ["preemptions", "preemptions", "count"],
      ["idle reclaims", "reclaims", "count"],
      ["lost work (GPU-hours)", "lost_work_gpu_hours", "hours"],
    ];
    const get = (p, key) => key.split(".").reduce((o, k) => (o == null ? undefined : o[k]), p);
    const table = html("table", { class: "headline", id: "headline" }, parent);
    const head = html("tr", {}, html("thead", {}, table));
    html("th", { scope: "col" }, head, "");
    for (const p of policies) html("th", { scope: "col" }, head, p.name);
    const body = html("tbody", {}, table);
    for (const [label, key, unit] of rows) {
      if (key === null) {
        const tr = html("tr", { class: "group" }, body);
        html("th", { scope: "rowgroup", colspan: policies.length + 1 }, tr, label);
        continue;
      }
      if (!policies.some((p) => typeof get(p, key) === "number")) continue;
      const tr = html("tr", {}, body);
      html("th", { scope: "row" }, tr, label);
      for (const p of policies) {
        const v = get(p, key);
        if (typeof v !== "number") {
          html("td", {}, tr, "-");
          continue;
        }
        html("td", { "data-policy": p.name, "data-key": key, "data-unit": unit, "data-value": String(v) }, tr, UNITS[unit](v));
      }
    }
  }

  function render(data) {
    const root = document.getElementById("report");
    root.textContent = "";
    const z = zone(data.time_zone || "UTC");
    const policies = (data.policies || []).filter((p) => p.timeline && p.timeline.buckets > 0);
    const cur = data.currency || "";

    const nav = html("nav", { class: "sections", "aria-label": "sections" }, root);
    const sec = (title, lead, cls) => {
      const id = title.toLowerCase().replace(/[^a-z]+/g, "-");
      html("a", { href: "#" + id }, nav, title);
      html("h2", { id }, root, title);
      if (lead) html("p", { class: "lead" }, root, lead);
      return html("div", { class: "grid" + (cls ? " " + cls : "") }, root);
    };

    headline(sec("Headline", data.mode === "live"
      ? "What this controller has done since its state store began."
      : "The same figures as the JSON summary (tide simulate --json)."), data);
    if (!policies.length) {
      html("p", { class: "note" }, root, "No timeline recorded yet.");
      return;
    }
    let t0 = Infinity, t1 = -Infinity;
    for (const p of policies) {
      t0 = Math.min(t0, p.timeline.start);
      t1 = Math.max(t1, p.timeline.start + p.timeline.step * p.timeline.buckets);
    }
    const X = { min: t0, max: t1, time: true };
    const gpus = (v) => compact(v);
    const tierNames = TIERS.map((t) => "capacity_gpus/" + t);

    // Demand against capacity, stacked by tier, one panel per policy, one scale.
    const capMax = maxOf(policies.map((p) => {
      const sum = seriesOf(p, tierNames[0]).map((v, i) => v + seriesOf(p, tierNames[1])[i] + seriesOf(p, tierNames[2])[i]);
      return sum.concat(seriesOf(p, "demand_gpus"));
    }));
    const g1 = sec("Demand and capacity", "GPUs asked for by pending and running jobs (line) against the GPUs paid for, " +
      "stacked by tier. Every panel has the same scale.", "one");
    for (const p of policies) {
      const xs = times(p, true);
      let base = xs.map(() => 0);
      const series = [];
      TIERS.forEach((tier, k) => {
        const top = seriesOf(p, tierNames[k]).map((v, i) => base[i] + v);
        if (maxOf([seriesOf(p, tierNames[k])]) > 0) {
          series.push({ name: tier, color: "var(--tier-" + tier + ")", xs, ys: top, base });
        }
        base = top;
      });
      series.push({ name: "demand", color: "var(--demand)", xs, ys: seriesOf(p, "demand_gpus"), width: 1.4 });
      chart(g1, { id: "capacity:" + p.name, title: p.name + (p.description ? " (" + p.description + ")" : ""), wide: true,
        x: X, zone: z, y: { max: capMax, format: gpus, label: "GPUs" }, series });
    }

    // Queue length and wait distribution, per priority.
    // Classes no job of any policy belonged to are left out.
    const present = (c) => policies.some((p) => ((p.wait_quantiles || {})[c] || []).length > 0 ||
      maxOf([seriesOf(p, "pending_jobs/" + c)]) > 0);
    const classes = ["all"].concat((data.classes || []).filter(present));
    const g2 = sec("Queue", "Jobs waiting, per priority class (time-weighted mean per bucket).");
    for (const c of classes) {
      const key = c === "all" ? "pending_jobs" : "pending_jobs/" + c;
      const series = policies.map((p, i) => ({ name: p.name, color: color(i), dash: dash(i), xs: times(p, true), ys: seriesOf(p, key) }));
      chart(g2, { id: "queue:" + c, title: "Jobs queued: " + (c === "all" ? "all classes" : c), x: X, zone: z,
        y: { max: maxOf(series.map((s) => s.ys)), format: compact, label: "jobs" }, series });
    }
    const g3 = sec("Wait distribution", "Share of started jobs that waited at most this long (CDF), per priority class.");
    for (const c of classes) {
      const series = [];
      policies.forEach((p, i) => {
        const q = (p.wait_quantiles || {})[c];
        if (!q || !q.length) return;
        series.push({ name: p.name, color: color(i), dash: dash(i), xs: q, ys: q.map((_, k) => k / 100) });
      });
      const xmax = Math.max(60, maxOf(series.map((s) => s.xs.slice(0, 100))));
      for (const s of series) {  // clip at the right edge: the tail beyond p99 is in the table
        s.xs = s.xs.map((v) => Math.min(v, xmax));
      }
      chart(g3, { id: "wait:" + c, title: "Wait CDF: " + (c === "all" ? "all classes" : c), zone: z,
        x: { min: 0, max: xmax, time: false, format: human, ticks: (a, b) => niceTicks(b, 5).filter((v) => v <= b) },
        y: { max: 1, format: (v) => Math.round(v * 100) + "%", label: "jobs" }, series,
        tipFormat: (v) => Math.round(v * 100) + "%" });
      if (!series.length) html("p", { class: "note" }, g3.lastChild, "No job of this class started.");
    }

    // Utilization.
    const g4 = sec("GPU utilization", "Measured: utilization-weighted GPUs over GPUs paid for. Allocated: GPUs held by jobs over GPUs paid for.");
    const paid = (p) => {
      const a = seriesOf(p, tierNames[0]), b = seriesOf(p, tierNames[1]), c = seriesOf(p, tierNames[2]);
      return a.map((v, i) => v + b[i] + c[i]);
    };
    const pct = (v) => Math.round(v * 100) + "%";
    const measured = policies.filter((p) => hasSeries(p, "util_gpus"));
    chart(g4, { id: "util:measured", title: "Measured GPU utilization", x: X, zone: z, y: { max: 1, format: pct },
      series: measured.map((p) => {
        const i = policies.indexOf(p);
        return { name: p.name, color: color(i), dash: dash(i), xs: times(p, true), ys: ratio(seriesOf(p, "util_gpus"), paid(p)) };
      }) });
    if (!measured.length) {
      html("p", { class: "note" }, g4.lastChild, "No utilization data: configure live.metrics (Prometheus with DCGM) to see it.");
    }
    chart(g4, { id: "util:allocated", title: "GPUs allocated to jobs", x: X, zone: z, y: { max: 1, format: pct },
      series: policies.map((p, i) => ({ name: p.name, color: color(i), dash: dash(i), xs: times(p, true), ys: ratio(seriesOf(p, "running_gpus"), paid(p)) })) });

    // Cumulative cost: every policy on one chart, then each split by tier on one scale.
    const costTiers = TIERS.concat(["egress"]);
    const totalCost = (p) => {
      const parts = costTiers.map((t) => seriesOf(p, "cost/" + t));
      return parts[0].map((_, i) => parts.reduce((s, a) => s + (a[i] || 0), 0));
    };
    const money = (v) => compact(v);
    const g5 = sec("Cost", "Cumulative cost in " + cur + ", per policy; below, each policy split by tier (one scale).");
    const costMax = maxOf(policies.map(totalCost));
    chart(g5, { id: "cost:total", title: "Cumulative cost, all policies", x: X, zone: z, y: { max: costMax, format: money, label: cur },
      series: policies.map((p, i) => ({ name: p.name, color: color(i), dash: dash(i), xs: times(p, false), ys: totalCost(p) })) });
    for (const p of policies) {
      const xs = times(p, false);
      let base = xs.map(() => 0);
      const series = [];
      for (const t of costTiers) {
        const v = seriesOf(p, "cost/" + t);
        const top = v.map((x, i) => base[i] + x);
        if (maxOf([v]) > 0) series.push({ name: t, color: "var(--tier-" + t + ")", xs, ys: top, base });
        base = top;
      }
      chart(g5, { id: "cost:" + p.name, title: "Cost by tier: " + p.name, x: X, zone: z, y: { max: costMax, format: money, label: cur }, series });
    }

    // Spot interruptions and lost work.
    const g6 = sec("Interruptions", "Jobs hit by spot interruptions, and the work lost since their last checkpoint (cumulative).");
    chart(g6, { id: "spot:interruptions", title: "Spot interruptions", x: X, zone: z,
      y: { max: Math.max(1, maxOf(policies.map((p) => seriesOf(p, "spot_interruptions")))), format: compact, label: "jobs" },
      series: policies.map((p, i) => ({ name: p.name, color: color(i), dash: dash(i), xs: times(p, false), ys: seriesOf(p, "spot_interruptions") })) });
    chart(g6, { id: "spot:lost", title: "Lost work", x: X, zone: z,
      y: { max: Math.max(1, maxOf(policies.map((p) => seriesOf(p, "lost_work_gpu_hours")))), format: compact, label: "GPU-hours" },
      series: policies.map((p, i) => ({ name: p.name, color: color(i), dash: dash(i), xs: times(p, false), ys: seriesOf(p, "lost_work_gpu_hours") })) });
  }

  function header(data) {
    document.getElementById("title").textContent = data.title || "tide report";
    document.title = data.title || "tide report";
    const meta = document.getElementById("meta");
    meta.textContent = "";
    for (const item of data.meta || []) html("span", {}, meta, item);
    html("span", {}, meta, "times in " + (data.time_zone || "UTC"));
  }

  let shown = false;
  function show(data) {
    header(data);
    render(data);
    document.documentElement.setAttribute("data-rendered", "1");
    // A link to a section (report.html#cost) works once the section exists.
    if (!shown && location.hash.length > 1) {
      const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
      if (target) target.scrollIntoView();
    }
    shown = true;
  }

  function themeButton() {
    const b = document.getElementById("theme");
    const order = ["auto", "light", "dark"];
    let i = 0;
    b.addEventListener("click", () => {
      i = (i + 1) % order.length;
      if (order[i] === "auto") document.documentElement.removeAttribute("data-theme");
      else document.documentElement.setAttribute("data-theme", order[i]);
      b.textContent = "theme: " + order[i];
    });
  }

  function live(source, every) {
    const status = document.getElementById("status");
    document.querySelector("footer").textContent =
      "Made by tide run. The charts are drawn from " + source + ", fetched every " + every + " s from this controller.";
    const tick = () => {
      fetch(source, { cache: "no-store" })
        .then((r) => {
          if (!r.ok) throw new Error(source + ": HTTP " + r.status);
          return r.json();
        })
        .then((data) => {
          show(data);
          status.className = "status";
          status.textContent = "updated " + new Date().toLocaleTimeString() + "; refreshes every " + every + " s";
        })
        .catch((e) => {
          status.className = "status bad";
          status.textContent = "cannot refresh: " + e.message + " (retrying)";
        })
        .finally(() => setTimeout(tick, every * 1000));
    };
    tick();
  }

  document.addEventListener("DOMContentLoaded", () => {
    themeButton();
    const body = document.body;
    if (body.dataset.source) {
      live(body.dataset.source, Math.max(1, +body.dataset.refresh || 5));
      return;
    }
    show(JSON.parse(document.getElementById("tide-data").textContent));
  });
})();
