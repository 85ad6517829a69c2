"""How much of each chapter a reader sees as prose and figures, measured in JupyterLab as it renders the notebook.

Starts a JupyterLab server on `nbs/` and headless Chromium (both local, no network), opens each chapter in the default
view at a 1400 px wide window, and sums the rendered heights of what the page shows:

* prose: Markdown cells and generated Markdown outputs (`IPython.display.Markdown`: sentences and tables),
* figures: outputs holding an image,
* API docs: the outputs of `show_doc` cells (folded by default: `tools/collapse_code.py`), with their placeholders,
* code: input areas (a collapsed input counts its one-line placeholder), printed text outputs, and the rest of the
  cell's height (margins between input and outputs).

Usage: `python tools/prose_share.py [NB ...] [--json OUT] [--screenshots DIR]` (default: every chapter). Needs
`chromium` and `websocket-client`; prints a Markdown table, one row per chapter."""
import argparse
import base64
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import websocket

ROOT = Path(__file__).resolve().parents[1]

MEASURE = r"""
(() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  if (!panel) return null;
  const cells = [...panel.querySelectorAll(':scope .jp-Cell')];
  cells.forEach(c => { c.style.contentVisibility = 'visible'; });
  const h = el => el ? el.getBoundingClientRect().height : 0;
  const out = {prose: 0, figures: 0, api: 0, code: 0, cells: cells.length};
  for (const c of cells) {
    if (c.classList.contains('jp-MarkdownCell')) { out.prose += h(c); continue; }
    const input = c.querySelector('.jp-Cell-inputWrapper');
    const src = (c.querySelector('.jp-InputArea-editor')?.innerText || '').trim();
    out.code += h(input);
    let rest = h(c) - h(input);
    for (const o of c.querySelectorAll('.jp-OutputArea-child')) {
      rest -= h(o);
      if (src.startsWith('show_doc(')) out.api += h(o);
      else if (o.querySelector('img')) out.figures += h(o);
      else if (o.querySelector('.jp-RenderedMarkdown')) out.prose += h(o);
      else out.code += h(o);
    }
    if (src.startsWith('show_doc(')) out.api += Math.max(rest, 0);   // a folded card's placeholder, the cell's margins
    else out.code += Math.max(rest, 0);
  }
  return out;
})()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, seconds: float = 60.0):
    t0 = time.time()
    while time.time() - t0 < seconds:
        try:
            return urllib.request.urlopen(url, timeout=2).read()
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"nothing answered at {url} within {seconds:.0f} s")


class _Page:
    "One Chromium tab driven over the DevTools protocol."

    def __init__(self, debug_port: int):
        tab = json.loads(urllib.request.urlopen(
            urllib.request.Request(f"http://127.0.0.1:{debug_port}/json/new?about:blank", method="PUT")).read())
        self.ws, self.n = websocket.create_connection(tab["webSocketDebuggerUrl"], timeout=120), 0

    def call(self, method: str, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.n:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def eval(self, js: str):
        r = self.call("Runtime.evaluate", expression=js, returnByValue=True, awaitPromise=True)
        return r.get("result", {}).get("value")


def measure(notebooks, screenshots=None, width=1400, height=1000) -> dict:
    token, lab_port, debug_port = secrets.token_hex(8), _free_port(), _free_port()
    home = tempfile.mkdtemp(prefix="prose-share-")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=os.path.join(home, "config"), JUPYTER_DATA_DIR=os.path.join(home, "data"),
               JUPYTERLAB_SETTINGS_DIR=os.path.join(home, "settings"), JUPYTERLAB_WORKSPACES_DIR=os.path.join(home, "ws"))
    lab = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={lab_port}",
                            f"--ServerApp.token={token}", f"--ServerApp.root_dir={ROOT / 'nbs'}",
                            "--ServerApp.open_browser=False", "--ServerApp.allow_root=True", "--LabApp.news_url=None",
                            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    chrome = subprocess.Popen(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--remote-allow-origins=*",
                               f"--remote-debugging-port={debug_port}", f"--window-size={width},{height}",
                               f"--user-data-dir={os.path.join(home, 'chrome')}", "about:blank"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = {}
    try:
        _wait_http(f"http://127.0.0.1:{lab_port}/api/status?token={token}")
        _wait_http(f"http://127.0.0.1:{debug_port}/json/version")
        page = _Page(debug_port)
        page.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        for nb in notebooks:
            name = Path(nb).name
            page.call("Page.navigate", url=f"http://127.0.0.1:{lab_port}/lab/tree/{name}?token={token}&reset")
            last, stable, t0, r = None, 0, time.time(), None
            while time.time() - t0 < 120 and stable < 3:      # rendered when the measure stops changing
                time.sleep(1.0)
                r = page.eval(MEASURE)
                stable = stable + 1 if r and r == last and r["cells"] > 0 else 0
                last = r
            if not r:
                raise RuntimeError(f"{name}: JupyterLab did not render the notebook")
            total = r["prose"] + r["figures"] + r["api"] + r["code"]
            results[name] = {k: r[k] / total for k in ("prose", "figures", "api", "code")}
            results[name]["prose_and_figures"] = (r["prose"] + r["figures"]) / total
            results[name]["height_px"] = total
            if screenshots:
                Path(screenshots).mkdir(parents=True, exist_ok=True)
                shot = page.call("Page.captureScreenshot", format="png")
                (Path(screenshots) / f"{Path(name).stem}.png").write_bytes(base64.b64decode(shot["data"]))
    finally:
        chrome.terminate()
        lab.terminate()
        chrome.wait(10)
        lab.wait(10)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--screenshots")
    a = ap.parse_args()
    nbs = a.notebooks or [str(p) for p in sorted((ROOT / "nbs").glob("*.ipynb"))]
    res = measure(nbs, a.screenshots)
    print("| chapter | prose + figures | prose | figures | API docs | code | height px |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in res.items():
        print(f"| {name} | {r['prose_and_figures']:.0%} | {r['prose']:.0%} | {r['figures']:.0%} | {r['api']:.0%} | "
              f"{r['code']:.0%} | {r['height_px']:,.0f} |")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
