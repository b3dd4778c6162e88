"""Benchmark of the results page's height in Chromium, for the demo audit.

The page is seen as a researcher sees it in Chromium at 1280 × 800 with the default filters (target: under 15,000 px).

    DEBUG=1 .venv/bin/python benchmarks/results_page_height.py [--screenshot FILE.png]

What it does: a fresh embedded database in a temporary directory; the demo audit itself (`audits.demo`: the
sample question files, 2 simulated tutors × 10 conditions × every sample question, run through the engine
as `make demo` does); its analysis computed in this process (default parameters); `manage.py runserver`
on a free port; Debian's Chromium (Playwright) logs in and loads `/audits/results/<id>/`; prints the
document's scroll height in CSS pixels, where each section starts, and the time to the loaded page.
Nothing here is a test; the numbers go to benchmarks/RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("the web server exited")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("the web server did not come up")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screenshot", default="", help="write a full-page PNG here")
    args = parser.parse_args()

    os.environ.setdefault("DEBUG", "1")
    os.environ["EDUFAIR_DATA_DIR"] = tempfile.mkdtemp(prefix="edufair-height-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")
    os.environ["LOG_LEVEL"] = "WARNING"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import io

    from django.contrib.auth.models import User

    from audits.demo import DEMO_AUDIT_NAME, demo_seed
    from audits.models import Audit
    from audits.services.analysis import audit_analysis
    from edufair_web.accounts.roles import RESEARCHER, user_set_role

    demo_seed(stdout=io.StringIO())
    audit = Audit.objects.get(name=DEMO_AUDIT_NAME)
    audit_analysis(audit=audit)
    user = User.objects.create_user("height", password="height-pw-1")
    user_set_role(user=user, role=RESEARCHER)

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--nothreading"],
        cwd=ROOT,
        env={**os.environ},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_up(f"{base}/healthz", server)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{base}/accounts/login/")
            page.fill("input[name=username]", "height")
            page.fill("input[name=password]", "height-pw-1")
            page.click("button[type=submit]")
            page.wait_for_load_state("networkidle")
            started = time.perf_counter()
            page.goto(f"{base}/audits/results/{audit.pk}/")
            page.wait_for_load_state("networkidle")
            loaded = time.perf_counter() - started
            height = page.evaluate("document.documentElement.scrollHeight")
            sections = page.evaluate(
                "Array.from(document.querySelectorAll('main h2')).map(h => [h.textContent.trim(), h.offsetTop])"
            )
            if args.screenshot:
                page.screenshot(path=args.screenshot, full_page=True)
            browser.close()
        print(
            json.dumps(
                {
                    "dialogues": audit.dialogues.count(),
                    "height_px": height,
                    "load_seconds": round(loaded, 2),
                    "sections_px": {name: top for name, top in sections},
                },
                indent=2,
            )
        )
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
