// Charts with the vendored Chart.js (a global from its UMD build). A canvas keeps its chart; drawing
// again updates it in place. Data handed over is copied out of Alpine's reactive proxies first, so Chart.js
// never observes them (and they never observe Chart.js).

const charts = new WeakMap();
const LEFT = "#2f6fdf";
const RIGHT = "#e0762b";
export const COLORS = { left: LEFT, right: RIGHT, loss: "#6b4fbb", metric: "#1b9e77" };

function plain(value) {
  return JSON.parse(JSON.stringify(value));
}

/** Draw (or update) a chart on a canvas from a Chart.js config. */
export function draw(canvas, config) {
  if (!canvas || typeof window.Chart === "undefined") return;
  const copy = plain(config);
  const existing = charts.get(canvas);
  if (existing && existing.config.type === copy.type) {
    existing.data = copy.data;
    existing.options = copy.options || {};
    existing.update("none");
    return;
  }
  if (existing) existing.destroy();
  charts.set(canvas, new window.Chart(canvas, { ...copy, options: { animation: false, ...(copy.options || {}) } }));
}

/** Grouped bars: one group per label, one bar per series ({label, values, color}). */
export function bars(labels, series, options = {}) {
  return {
    type: "bar",
    data: {
      labels,
      datasets: series.map((s) => ({ label: s.label, data: s.values, backgroundColor: s.color })),
    },
    options: { responsive: true, maintainAspectRatio: false, ...options },
  };
}

/** A training curve: step losses and each epoch's train loss on the left axis, its dev metric on the right. */
export function curve(steps, epochs, metricName) {
  return {
    type: "line",
    data: {
      datasets: [
        {
          label: "loss",
          data: steps.map((p) => ({ x: p.x, y: p.loss })),
          borderColor: COLORS.loss,
          backgroundColor: COLORS.loss,
          pointRadius: steps.length > 40 ? 0 : 2,
          yAxisID: "loss",
        },
        {
          label: "epoch train loss",
          data: epochs.filter((e) => typeof e.train_loss === "number").map((e) => ({ x: e.x, y: e.train_loss })),
          borderColor: COLORS.left,
          backgroundColor: COLORS.left,
          showLine: false,
          pointRadius: 5,
          pointStyle: "rectRot",
          yAxisID: "loss",
        },
        {
          label: `dev ${metricName || "metric"}`,
          data: epochs.filter((e) => e.dev_metric !== null && e.dev_metric !== undefined)
            .map((e) => ({ x: e.x, y: e.dev_metric })),
          borderColor: COLORS.metric,
          backgroundColor: COLORS.metric,
          pointRadius: 4,
          yAxisID: "metric",
        },
      ],
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      parsing: false,
      scales: {
        x: { type: "linear", min: 0, suggestedMax: Math.max(2, ...steps.map((p) => p.x), ...epochs.map((e) => e.x)) + 1,
             ticks: { precision: 0 }, title: { display: true, text: "training step" } },
        loss: { type: "linear", position: "left", title: { display: true, text: "loss" } },
        metric: { type: "linear", position: "right", grid: { drawOnChartArea: false },
                  title: { display: true, text: metricName || "dev metric" } },
      },
    },
  };
}
