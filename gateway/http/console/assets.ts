/**
 * The console's stylesheet and script, served as files (`/console/console.css`, `/console/console.js`)
 * so that the pages' Content-Security-Policy can forbid inline code. The script only refreshes the
 * overview's live counters from `/console/counters` (JSON); without it the pages work the same.
 */

export const CONSOLE_CSS = `
:root { --fg: #1d2330; --muted: #667085; --line: #e4e7ec; --bg: #f6f7f9; --card: #fff; --accent: #3451b2;
  --ok: #067647; --ok-bg: #dcfae6; --warn: #b54708; --warn-bg: #fef0c7; --bad: #b42318; --bad-bg: #fee4e2; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 32px; padding: 0 28px; height: 52px; background: #101828; }
header .brand { color: #fff; font-weight: 600; text-decoration: none; font-size: 15px; }
header .brand span { color: #98a2b3; font-weight: 400; }
header nav { display: flex; gap: 4px; }
header nav a { color: #d0d5dd; text-decoration: none; padding: 6px 12px; border-radius: 6px; }
header nav a:hover { background: #1d2939; color: #fff; }
header nav a[aria-current="page"] { background: #344054; color: #fff; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 28px 48px; }
h1 { font-size: 22px; margin: 8px 0 12px; }
h2 { font-size: 16px; margin: 28px 0 10px; }
h2 small { color: var(--muted); font-weight: 400; font-size: 12px; margin-left: 8px; }
p.lead { color: #475467; max-width: 900px; margin: 0 0 16px; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, monospace; font-size: 12.5px; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
th, td { text-align: left; padding: 8px 12px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f9fafb; color: #475467; font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
tbody tr:last-child td { border-bottom: 0; }
tbody tr:hover { background: #fafbff; }
td.nowrap { white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.sub { color: var(--muted); font-size: 12px; }
.error { color: var(--bad); }
p.error { background: var(--bad-bg); padding: 8px 12px; border-radius: 6px; }
.hint { color: var(--muted); }
.summary, .counters { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
.card .label { color: var(--muted); font-size: 12px; }
.card .value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .value.mono { font-size: 17px; padding-top: 4px; }
.card.status-ready { border-left: 4px solid var(--ok); }
.card.status-degraded { border-left: 4px solid var(--warn); }
.card.status-not_ready { border-left: 4px solid var(--bad); }
.counter .value { font-size: 20px; }
ul.reasons { background: var(--warn-bg); color: var(--warn); padding: 8px 12px 8px 28px; border-radius: 6px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; }
.badge.read { background: #eef4ff; color: var(--accent); }
.badge.write { background: var(--warn-bg); color: var(--warn); }
.badge.state-up { background: var(--ok-bg); color: var(--ok); }
.badge.state-down { background: var(--bad-bg); color: var(--bad); }
.badge.state-idle, .badge.state-connecting { background: #f2f4f7; color: #475467; }
.scope { display: inline-block; background: #f2f4f7; border-radius: 4px; padding: 0 6px; margin: 1px 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
.field { display: inline-block; background: #f4f3ff; color: #5925dc; border-radius: 4px; padding: 0 6px; margin: 1px 2px 1px 0; font-size: 12px; }
.field b { font-weight: 600; }
form { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 0 0 20px; display: flex; flex-wrap: wrap; gap: 12px 16px; align-items: flex-end; }
fieldset { border: 0; padding: 0; margin: 0; display: flex; gap: 12px; flex-wrap: wrap; }
legend { font-weight: 600; font-size: 12px; color: #475467; margin-bottom: 4px; }
label { display: flex; flex-direction: column; gap: 4px; font-size: 12px; color: #475467; }
label small { color: var(--muted); }
label.grow { flex: 1 1 320px; }
input, select { font: inherit; padding: 6px 10px; border: 1px solid #d0d5dd; border-radius: 6px; min-width: 180px; background: #fff; }
input[type=number] { min-width: 80px; width: 90px; }
button { font: inherit; font-weight: 600; padding: 7px 16px; border: 0; border-radius: 6px; background: var(--accent); color: #fff; cursor: pointer; }
button:hover { background: #2b4397; }
.views { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px; }
.view h2 { margin-top: 0; }
.view .count { color: var(--muted); font-weight: 400; font-size: 13px; margin-left: 6px; }
.badge.held { background: var(--bad-bg); color: var(--bad); }
.badge.warned { background: var(--warn-bg); color: var(--warn); }
.badge.pinned { background: var(--ok-bg); color: var(--ok); }
.badge.removed { background: #f2f4f7; color: #475467; }
.badge.lint { background: #f4f3ff; color: #5925dc; }
p.notice { background: var(--ok-bg); color: var(--ok); padding: 8px 12px; border-radius: 6px; }
form.inline { align-items: center; }
form.approve { margin-top: 16px; }
a.button { display: inline-block; font-weight: 600; padding: 4px 12px; border-radius: 6px; background: var(--accent); color: #fff; text-decoration: none; }
ul.changes, ul.findings { margin: 0; padding-left: 18px; }
pre.diff { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 0; overflow-x: auto; font-size: 12.5px; line-height: 1.45; }
pre.diff .line { display: block; padding: 0 14px; white-space: pre; text-decoration: none; }
pre.diff ins.line { background: var(--ok-bg); color: var(--ok); }
pre.diff del.line { background: var(--bad-bg); color: var(--bad); }
h2 small .del { color: var(--bad); }
h2 small .ins { color: var(--ok); }
pre.config { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; overflow: auto; max-height: 70vh; font-size: 12.5px; }
ul.hints { background: var(--warn-bg); color: var(--warn); padding: 8px 12px 8px 28px; border-radius: 6px; }
p.explain { background: #eef4ff; color: #1d2939; padding: 8px 12px; border-radius: 6px; }
form.bare { background: none; border: 0; padding: 0; margin: 0; }
button.danger { background: var(--bad); }
button.danger:hover { background: #912018; }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, pre:focus-visible { outline: 3px solid #84adff; outline-offset: 2px; }
`;

export const CONSOLE_JS = `
(() => {
  const live = document.querySelector('[data-live]');
  if (!live) return;
  const updated = document.getElementById('counters-updated');
  const format = (n) => Math.round(n).toLocaleString('en-US');
  async function refresh() {
    try {
      const response = await fetch(live.dataset.live, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      if (!response.ok) return;
      const { at, counters } = await response.json();
      for (const [id, value] of Object.entries(counters)) {
        const el = document.getElementById('counter-' + id);
        if (el) el.textContent = format(value);
      }
      if (updated) updated.textContent = 'as of ' + new Date(at).toISOString().slice(11, 19) + ' UTC';
    } catch { /* the next tick tries again */ }
  }
  setInterval(refresh, 2000);
})();
`;
