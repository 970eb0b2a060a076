/**
 * The console's stylesheet: one column on a phone (360 px), a grid of panels on a wide
 * screen, visible focus for keyboard use, tables that scroll inside their own box.
 */
export const STYLES = `
*{box-sizing:border-box}
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;padding:.6rem 1rem;background:#24292f;color:#fff}
header h1{font-size:1.05rem;margin:0}
nav ul{display:flex;flex-wrap:wrap;gap:.25rem;margin:0;padding:0;list-style:none}
nav a{color:#fff;text-decoration:none;padding:.3rem .6rem;border-radius:.3rem;display:inline-block}
nav a[aria-current=page]{background:#57606a}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #0969da;outline-offset:2px}
main{padding:1rem;display:grid;gap:1rem;grid-template-columns:repeat(auto-fit,minmax(min(100%,26rem),1fr))}
section{background:#fff;border:1px solid #d0d7de;border-radius:.4rem;padding:.8rem;min-width:0}
section.wide{grid-column:1/-1}
.pair{grid-column:1/-1;display:grid;gap:1rem;grid-template-columns:repeat(auto-fit,minmax(min(100%,30rem),1fr))}
h2{font-size:1rem;margin:0 0 .6rem}
.counts{display:flex;flex-wrap:wrap;gap:.5rem 1.2rem;margin:0;padding:0;list-style:none}
.counts b{font-size:1.3rem;font-variant-numeric:tabular-nums;display:block}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.3rem .4rem;border-bottom:1px solid #eaeef2;vertical-align:top}
td.mono,.mono{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.hint{color:#57606a;font-size:.85rem}
.bad{color:#b00020}.good{color:#1a7f37}
form.inline{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;margin:.4rem 0}
form.inline input{min-width:0;flex:1 1 9rem;padding:.3rem}
button{padding:.3rem .9rem;cursor:pointer}
.chart{width:100%;min-height:180px}
.notice{padding:.5rem .8rem;border-radius:.3rem;background:#ddf4ff;margin:0 0 .6rem}
.notice.error{background:#ffebe9}
@media (max-width:600px){main{padding:.5rem}header{padding:.5rem}}
`;
