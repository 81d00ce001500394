#!/usr/bin/python3
"""run.py -- ddx's pages in a real browser: headless Chromium driven by Selenium (Debian's
chromium, chromium-driver and python3-selenium, which `make test` installs).

  run.py report     --ddx BUILD/ddx   the HTML report of a failed 8-rank job (make_job.py)
  run.py catalogue  --ddx BUILD/ddx   the static catalogue written by `ddx site`
  run.py serve      --ddx BUILD/ddx   `ddx serve`: catalogue, upload page, JSON API, limits
  run.py screenshots --ddx BUILD/ddx --out DIR   the README's two pictures (docs/*.png)
  run.py open       --ddx BUILD/ddx [--page FILE]  a report page as a user opens it offline: the
                    given one (bench/run.sh --html passes the 1 GB log's), else the bundled
                    example's, written here by ddx diagnose --html

Each case checks what a person would see: the page opens with no console error and no network
request, the drawings render (a screenshot of each is decoded and must not be blank), markup in
a log line stays text, search finds a reference by a fragment of its message, an upload gives
a diagnosis, oversized uploads are refused. Exit 0 when every check passes, 1 otherwise, 77
(ctest: skipped, with the reason printed) when the browser or its driver is not installed.
"""
import argparse
import http.client
import io
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
EXAMPLE = os.path.join(ROOT, "examples", "orpo-gather-shape-mismatch", "console.log")

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


# ---- a PNG decoder small enough to read Chromium's screenshots (8-bit RGB/RGBA) ----------------

def png_pixels(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit, non-interlaced RGB(A) PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, "unexpected PNG format"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def not_blank(png, what, min_colours=4, min_ink=0.01):
    """The picture holds a drawing: several colours, and some share of pixels that are not the
    most common (background) colour."""
    w, h, rows = png_pixels(png)
    counts = {}
    for row in rows[::2]:
        for px in row[::2]:
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    ink = 1 - max(counts.values()) / total
    return check(len(counts) >= min_colours and ink >= min_ink,
                 "%s is drawn (%dx%d, %d colours, %.1f %% ink)" % (what, w, h, len(counts),
                                                                    100 * ink))


# ---- the browser ----------------------------------------------------------------------------

def browser(width=1200, height=900):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              "--window-size=%d,%d" % (width, height), "--disable-extensions",
              "--no-first-run", "--disable-background-networking", "--disable-sync",
              "--disable-component-update", "--disable-default-apps"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    d = webdriver.Chrome(service=Service(DRIVER), options=o)
    d.set_page_load_timeout(60)
    return d


def console_errors(d):
    return [e["message"] for e in d.get_log("browser") if e["level"] == "SEVERE"]


def requests(d):
    """URLs the page asked for since the last call (navigations included)."""
    urls = []
    for e in d.get_log("performance"):
        m = json.loads(e["message"])["message"]
        if m["method"] == "Network.requestWillBeSent":
            urls.append(m["params"]["request"]["url"])
    return urls


def open_page(d, url, what, allowed=()):
    """Loads url and checks it opened cleanly: no console error, no request but url itself and
    the allowed prefixes."""
    d.get_log("browser")
    d.get_log("performance")
    d.get(url)
    errs = console_errors(d)
    check(not errs, "%s opens with no console error %s" % (what, errs[:3] if errs else ""))
    other = [u for u in requests(d) if u.split("#")[0] != url.split("#")[0]
             and not any(u.startswith(a) for a in allowed)]
    check(not other, "%s makes no network request %s" % (what, other[:3] if other else ""))


def by_css(d, sel):
    from selenium.webdriver.common.by import By
    return d.find_elements(By.CSS_SELECTOR, sel)


def wait_until(cond, timeout=120):
    """Polls cond() until it is true (pages load on their own time, slower under ASan)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if cond():
                return True
        except Exception:  # the page is changing under us: ask again
            pass
        time.sleep(0.2)
    return False


def submit_upload(d):
    """Submits the upload form and waits for the report (or for the form's own message)."""
    by_css(d, "form.upload button")[0].click()
    wait_until(lambda: (d.title and not d.title.startswith("ddx: diagnose a log"))
               or by_css(d, "#upload-error")[0].text)


def ddx(args, cwd=None):
    p = subprocess.run([ARGS.ddx] + args, cwd=cwd, capture_output=True, env=dict(
        os.environ, TZ="UTC", LC_ALL="C", NO_COLOR="1"))
    return p.returncode, p.stdout, p.stderr


def make_job(tmp):
    job = os.path.join(tmp, "job")
    subprocess.run([sys.executable, os.path.join(HERE, "make_job.py"), job], check=True)
    return job


# ---- the report -------------------------------------------------------------------------------

def case_report(tmp):
    job = make_job(tmp)
    page = os.path.join(tmp, "report.html")
    rc, out, err = ddx(["diagnose", "--html", page, job])
    check(rc == 1 and os.path.exists(page), "ddx diagnose --html writes the page (exit %d)" % rc)
    check(b"cuda-oom" in out, "and still prints the text report")
    size = os.path.getsize(page)
    check(size < 300 * 1024, "the page is small (%d bytes)" % size)
    d = browser()
    try:
        url = "file://" + page
        open_page(d, url, "the report")
        check(d.title.startswith("ddx: cuda-oom"), "the title names the finding: %r" % d.title)
        # markup from the log stays text
        texts = [e.text for e in by_css(d, ".ev .text")]
        check(any('<script>document.title="pwned"</script> "><img src=x onerror=alert(1)>' in t
                  for t in texts), "the markup of a log line shows as text in the evidence")
        check(not by_css(d, "script") and not by_css(d, "img"),
              "the page has no script or image element (the log's markup was not parsed)")
        check("pwned" not in d.title, "no injected script ran")
        # the timeline
        bars = by_css(d, "#timeline svg rect.bar")
        marks = by_css(d, "#timeline svg path, #timeline svg circle")
        check(len(bars) == 8, "the timeline draws the 8 ranks (%d bars)" % len(bars))
        check(len(marks) >= 8, "and marks their failure, timeouts and last lines (%d)" % len(marks))
        labels = [t.text for t in by_css(d, "#timeline svg text.lbl-hi")]
        check(labels == ["rank 3 ★"], "the culprit rank is marked on it: %s" % labels)
        not_blank(by_css(d, "#timeline")[0].screenshot_as_png, "the timeline")
        # the step-time plot, with the straggler
        lines = by_css(d, "#plots svg polyline")
        check(len(lines) >= 3, "the step-time plot draws the ranks (%d lines)" % len(lines))
        hi = [t.text for t in by_css(d, "#plots svg text.lbl-hi")]
        check("rank 5" in hi, "the straggler is marked on the plot: %s" % hi)
        not_blank(by_css(d, "#plots")[0].screenshot_as_png, "the plot")
        # evidence expands to the lines around it
        det = by_css(d, "#finding details.ev")
        check(bool(det), "evidence lines can be expanded")
        if det:
            det[0].find_element("css selector", "summary").click()
            ctx = det[0].find_element("css selector", "pre.ctx")
            check(ctx.is_displayed() and "loading batch from" in ctx.text,
                  "an expanded evidence line shows the lines before it")
        # dark mode, a phone, print
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        bg = d.execute_script("return getComputedStyle(document.body).backgroundColor")
        rgb = [int(x) for x in re.findall(r"\d+", bg)[:3]]
        check(sum(rgb) < 150, "dark mode gives a dark page (%s)" % bg)
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print", "features": []})
        toc = d.execute_script("return getComputedStyle(document.querySelector('nav.toc')).display")
        check(toc == "none", "printing hides the navigation")
        pdf = d.execute_cdp_cmd("Page.printToPDF", {})
        check(len(pdf.get("data", "")) > 10000, "the page prints to PDF")
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "", "features": []})
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        d.get(url)
        sw = d.execute_script("return [document.documentElement.scrollWidth, "
                              "document.documentElement.clientWidth]")
        check(sw[0] <= sw[1] + 1, "on a phone's width nothing overflows sideways %s" % sw)
    finally:
        d.quit()


def case_open(tmp):
    page = ARGS.page
    if not page:
        page = os.path.join(tmp, "example.html")
        rc, out, err = ddx(["diagnose", "--html", page, EXAMPLE])
        check(rc == 1 and os.path.exists(page),
              "ddx diagnose --html writes the bundled example's page (exit %d)" % rc)
    page = os.path.abspath(page)
    d = browser()
    try:
        open_page(d, "file://" + page, "the page %s (%d bytes)" % (os.path.basename(page),
                                                                  os.path.getsize(page)))
        check(d.title.startswith("ddx: "), "the title names the finding: %r" % d.title)
        check(bool(by_css(d, "#finding")), "the page shows its finding")
        not_blank(d.get_screenshot_as_png(), "the page")
    finally:
        d.quit()


# ---- the catalogue ----------------------------------------------------------------------------

# fragments of real messages (the references' own signal text) and the reference they find
SEARCHES = [
    ("Error while creating shared memory segment", "nccl-shm-too-small"),
    ("Watchdog caught collective operation timeout", "nccl-watchdog-timeout"),
    ("CUDA out of memory. Tried to allocate", "cuda-oom"),
]


def search(d, query):
    """Types query in the search box; the ids of the references shown, best first."""
    from selenium.webdriver.common.keys import Keys
    box = by_css(d, "#q")[0]
    box.send_keys(Keys.CONTROL + "a")  # typed over the selection, so the page sees the input
    box.send_keys(query if query else Keys.DELETE)
    return [li.find_element("css selector", "a").get_attribute("href").split("/")[-1][:-5]
            for li in by_css(d, "li[data-s]") if li.is_displayed()]


def catalogue_checks(d, base, what, nrefs):
    items = by_css(d, "li[data-s]")
    check(len(items) == nrefs, "%s lists every reference (%d of %d)" % (what, len(items), nrefs))
    for query, want in SEARCHES:
        got = search(d, query)
        check(got[:1] == [want], "%s: searching %r finds %s first (%s)" % (what, query, want,
                                                                          got[:3]))
    got = search(d, "")
    check(len(got) == nrefs, "%s: clearing the search shows all again" % what)
    search(d, SEARCHES[0][0])
    by_css(d, "li[data-s] a")[0].click()
    check(wait_until(lambda: d.current_url.endswith("/ref/%s.html" % SEARCHES[0][1])
                     and by_css(d, "h1")), "a result opens its page")
    errs = console_errors(d)
    check(not errs, "the reference page opens with no console error %s" % errs[:2])
    heads = [h.text for h in by_css(d, "h2")]
    check("What happens" in heads and "Signals" in heads and "Sources" in heads,
          "it shows the rendered Markdown, the signals and the sources: %s" % heads[:8])
    links = [a.get_attribute("href") for a in by_css(d, "dt a")]
    check(bool(links) and all(re.search(r"/ref/[a-z0-9-]+\.html$", u) for u in links),
          "its neighbours link to their pages (%d)" % len(links))
    if links:
        d.get(links[0])
        check(by_css(d, "h1") and not console_errors(d), "a neighbour's page opens")


def case_catalogue(tmp):
    site = os.path.join(tmp, "site")
    rc, out, err = ddx(["site", site])
    check(rc == 0 and os.path.exists(os.path.join(site, "index.html")),
          "ddx site writes the pages (exit %d)" % rc)
    nrefs = len(json.loads(ddx(["refs", "--json"])[1]))
    check(len(os.listdir(os.path.join(site, "ref"))) == nrefs, "one page per reference")
    d = browser()
    try:
        url = "file://" + os.path.join(site, "index.html")
        open_page(d, url, "the catalogue")
        not_blank(by_css(d, "main")[0].screenshot_as_png, "the catalogue")
        catalogue_checks(d, url, "the static catalogue", nrefs)
    finally:
        d.quit()


# ---- ddx serve --------------------------------------------------------------------------------

def start_server(extra):
    p = subprocess.Popen([ARGS.ddx, "serve", "--port", "0"] + extra, stderr=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, text=True)
    deadline = time.time() + 60
    line = ""
    while time.time() < deadline:
        line = p.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if m:
            return p, int(m.group(1))
        if not line and p.poll() is not None:
            break
    p.kill()
    raise RuntimeError("ddx serve did not start: %r" % line)


def fetch(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = headers or {}
    c.request(method, path, body=body, headers=headers,
              encode_chunked=headers.get("Transfer-Encoding") == "chunked")
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, r.getheader("Content-Type"), data


def multipart(files):
    b = "ddxtestboundary"
    out = io.BytesIO()
    for name, data in files:
        out.write(("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
                   "Content-Type: application/octet-stream\r\n\r\n" % (b, name)).encode())
        out.write(data + b"\r\n")
    out.write(("--%s--\r\n" % b).encode())
    return out.getvalue(), {"Content-Type": "multipart/form-data; boundary=" + b}


def case_serve(tmp):
    job = make_job(tmp)
    archive = os.path.join(tmp, "job.tar.gz")
    with tarfile.open(archive, "w:gz") as t:
        t.add(job, arcname="job")
    big = os.path.join(tmp, "big.log")
    with open(big, "wb") as f:
        f.write(b"[rank0]: filler line of a large log\n" * 45000)  # 1.5 MiB
    p, port = start_server(["--max-upload", "1"])
    base = "http://127.0.0.1:%d/" % port
    try:
        # the JSON API is the CLI's JSON
        nrefs = len(json.loads(ddx(["refs", "--json"])[1]))
        st, ty, body = fetch(port, "GET", "/api/refs/cuda-oom")
        check(st == 200 and ty == "application/json" and body == ddx(["show", "--json",
                                                                        "cuda-oom"])[1],
              "/api/refs/cuda-oom is ddx show --json cuda-oom")
        st, ty, body = fetch(port, "GET", "/api/refs?q=shm")
        check(st == 200 and body == ddx(["refs", "--json", "shm"])[1],
              "/api/refs?q=shm is ddx refs --json shm")
        with open(EXAMPLE, "rb") as f:
            example = f.read()
        form, hdr = multipart([("console.log", example)])
        st, ty, body = fetch(port, "POST", "/api/diagnose", form, hdr)
        cli = ddx(["diagnose", "--json", "console.log"], cwd=os.path.dirname(EXAMPLE))[1]
        check(st == 200 and body == cli, "/api/diagnose of a file is ddx diagnose --json of it")
        st, ty, body = fetch(port, "GET", "/api/refs/no-such-thing")
        check(st == 404 and b'"error"' in body, "an unknown reference is a JSON 404")
        # limits and bad uploads, seen by a client
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.putrequest("POST", "/api/diagnose")
        c.putheader("Content-Type", "application/octet-stream")
        c.putheader("Content-Length", str(200 << 20))
        c.endheaders()
        r = c.getresponse()
        body = r.read()
        c.close()
        check(r.status == 413 and b"at most 1.0 MiB" in body,
              "a 200 MiB upload is refused before it is sent (%d %s)" % (r.status, body[:80]))
        with open(big, "rb") as f:
            data = f.read()
        st, ty, body = fetch(port, "POST", "/api/diagnose", iter([data]),
                            {"Content-Type": "application/octet-stream",
                             "Transfer-Encoding": "chunked"})
        check(st == 413 and b"larger than this server takes" in body,
              "a 1.5 MiB upload of unannounced size is refused after reading (%d)" % st)
        st, ty, body = fetch(port, "POST", "/api/diagnose", b"", {})
        check(st == 400 and b"nothing to diagnose" in body, "an empty upload is a clear 400")
        bad, hdr = multipart([("broken.log.gz", b"\x1f\x8b\x08\x00garbage")])
        st, ty, body = fetch(port, "POST", "/api/diagnose", bad, hdr)
        rep = json.loads(body) if st == 200 else {}
        check(any("broken.log.gz" in w for w in rep.get("warnings", [])),
              "a broken compressed file is named in the report's warnings (%d)" % st)
        st, ty, body = fetch(port, "GET", "/", headers={"Host": "attacker.example"})
        check(st == 421, "a request for another host name is refused (%d)" % st)
        st, ty, body = fetch(port, "DELETE", "/")
        check(st == 405, "other methods are refused (%d)" % st)

        d = browser()
        try:
            open_page(d, base, "the served catalogue", allowed=(base,))
            catalogue_checks(d, base, "the served catalogue", nrefs)
            # paste a log
            open_page(d, base + "diagnose", "the upload page", allowed=(base,))
            by_css(d, "#text")[0].send_keys(example.decode())
            submit_upload(d)
            check(d.title.startswith("ddx: all-gather-dynamic-shapes"),
                  "pasting a log gives its diagnosis: %r" % d.title)
            check(not console_errors(d), "the report opens with no console error")
            links = [a.get_attribute("href") for a in by_css(d, "#finding dt a")]
            check(bool(links) and all(u.startswith(base + "ref/") for u in links),
                  "the served report links the neighbours' pages")
            # upload an archive
            d.get(base + "diagnose")
            by_css(d, "#file")[0].send_keys(archive)
            submit_upload(d)
            check(d.title.startswith("ddx: cuda-oom"), "uploading a .tar.gz of the job gives "
                  "its diagnosis: %r" % d.title)
            culprit = [e.text for e in by_css(d, "#verdict dd strong")]
            check(culprit[:1] == ["rank 3"], "with its culprit rank: %s" % culprit)
            not_blank(by_css(d, "#timeline")[0].screenshot_as_png, "the served report's timeline")
            # an upload over the limit is stopped in the page
            d.get(base + "diagnose")
            by_css(d, "#file")[0].send_keys(big)
            submit_upload(d)
            msg = by_css(d, "#upload-error")[0].text
            check(d.current_url == base + "diagnose" and "at most 1.0 MiB" in msg,
                  "an oversized file is refused in the page: %r" % msg)
            d.get(base + "diagnose")
            submit_upload(d)
            msg = by_css(d, "#upload-error")[0].text
            check("Nothing to diagnose" in msg, "an empty form says so: %r" % msg)
        finally:
            d.quit()
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = None
        rest = p.stderr.read()
        check(rc == 0, "ddx serve stops cleanly on SIGTERM (exit %s) %s" % (rc, rest[-300:]))


# ---- the README's pictures --------------------------------------------------------------------

def case_screenshots(tmp):
    out = ARGS.out
    job = make_job(tmp)
    page = os.path.join(tmp, "report.html")
    ddx(["diagnose", "--html", "report.html", os.path.basename(job)], cwd=tmp)  # paths: job/...
    site = os.path.join(tmp, "site")
    ddx(["site", site])
    d = browser(1100, 1500)
    try:
        d.get("file://" + page)
        with open(os.path.join(out, "report.png"), "wb") as f:
            f.write(d.get_screenshot_as_png())
        d.get("file://" + os.path.join(site, "index.html"))
        search(d, "Watchdog caught collective")
        d.set_window_size(1100, 1000)
        with open(os.path.join(out, "catalogue.png"), "wb") as f:
            f.write(d.get_screenshot_as_png())
    finally:
        d.quit()
    print("wrote %s/report.png and %s/catalogue.png" % (out, out))


def main():
    global ARGS
    ap = argparse.ArgumentParser(description="ddx's pages in headless Chromium")
    ap.add_argument("case", choices=["report", "catalogue", "serve", "screenshots", "open"])
    ap.add_argument("--ddx", required=True, help="the ddx binary (ddx-web beside it)")
    ap.add_argument("--out", default=".", help="screenshots: where to write them")
    ap.add_argument("--page", help="open: the page to open (default: the bundled example's)")
    ARGS = ap.parse_args()
    ARGS.ddx = os.path.abspath(ARGS.ddx)
    missing = [x for x in (CHROMIUM, DRIVER) if not os.access(x, os.X_OK)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("python3-selenium")
    if missing:
        print("SKIP: not installed: %s (scripts/install-deps.sh with DDX_WITH_TORCH=1, as "
              "`make test` runs it, installs chromium, chromium-driver and python3-selenium)"
              % ", ".join(missing))
        return 77
    tmp = tempfile.mkdtemp(prefix="ddx-browser-")
    try:
        globals()["case_" + ARGS.case](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
