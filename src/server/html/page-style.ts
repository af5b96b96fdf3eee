/** The stylesheet of estate's HTML pages: inlined, no fonts or images from anywhere. */
export const PAGE_STYLE = `
:root { color-scheme: light dark; --fg: #1d2125; --muted: #5f6b76; --bg: #fbfbf9; --card: #fff; --line: #e3e6e8; --accent: #2f6f4f; --warn: #9a6700; --bad: #b42318; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8ea; --muted: #9aa5ae; --bg: #15181b; --card: #1c2024; --line: #2c3238; --accent: #6fcf97; --warn: #e3b341; --bad: #ff7b72; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; padding: 1.2rem 1.5rem .6rem; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.25rem; margin: 0; }
h2 { font-size: 1rem; margin: 0 0 .6rem; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.2rem; margin-bottom: 1rem; }
a { color: var(--accent); }
code, time, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85em; }
.muted { color: var(--muted); }
.feed { list-style: none; margin: 0; padding: 0; }
.feed li { padding: .6rem 0; border-bottom: 1px solid var(--line); }
.feed li:last-child { border-bottom: 0; }
.feed li.new { animation: arrive 2s ease-out; }
@keyframes arrive { from { background: color-mix(in srgb, var(--accent) 18%, transparent); } to { background: transparent; } }
.meta { display: flex; gap: .6rem; flex-wrap: wrap; color: var(--muted); font-size: .85rem; }
.tag { border: 1px solid var(--line); border-radius: 999px; padding: 0 .5rem; }
.title { font-weight: 600; margin-top: .1rem; overflow-wrap: anywhere; }
.summary { margin: .2rem 0 0; color: var(--muted); white-space: pre-line; overflow-wrap: anywhere; }
.live { font-size: .85rem; color: var(--muted); }
.live::before { content: "●"; margin-right: .3rem; }
.live.on::before { color: var(--accent); }
.live.off::before { color: var(--warn); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1.2rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
.ok, .healthy { color: var(--accent); font-weight: 600; }
.degraded, .unknown { color: var(--warn); font-weight: 600; }
.unhealthy, .error { color: var(--bad); font-weight: 600; }
.empty { color: var(--muted); font-style: italic; }
`;
