"""`manage.py rundemo`: migrate, seed the demo, then run the web server and a Celery worker together.

This is what `make demo` runs. Ctrl-C (or SIGTERM) stops both processes.
"""

import os
import signal
import subprocess
import sys
import time
import urllib.request

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from edufair_web.accounts.demo import DEMO_USERS
from edufair_web.accounts.management.commands.seed_demo import demo_logins_text


class Command(BaseCommand):
    help = "Run the embedded demo: migrations, demo data, web server and one Celery worker."

    @staticmethod
    def _wait_for_web(url: str, web: subprocess.Popen, timeout: float = 60.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and web.poll() is None:
            try:
                urllib.request.urlopen(url, timeout=2).read()
                return True
            except OSError:
                time.sleep(0.3)
        return False

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--concurrency", type=int, default=4, help="Worker threads.")
        parser.add_argument("--no-seed", action="store_true", help="Skip the demo data.")

    def step(self, number: int, text: str) -> float:
        self.stdout.write(f"[{number}/4] {text}")
        self.stdout.flush()
        return time.monotonic()

    def done(self, started: float) -> None:
        self.stdout.write(f"      done in {time.monotonic() - started:.0f} s")

    def handle(self, *args, port, host, concurrency, no_seed, **options):
        started = self.step(
            1,
            f"Database ({settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}, broker "
            f"{settings.CELERY_BROKER_URL.split('://', 1)[0]}): migrations…",
        )
        call_command("migrate", interactive=False, verbosity=0)
        self.done(started)
        if not no_seed:
            started = self.step(
                2,
                "Demo data: users, sample questions, and the simulated demo audit run to the end (the first "
                "start takes a few seconds to a minute; later starts skip what exists)…",
            )
            call_command("seed_demo", "--no-logins", stdout=self.stdout)
            self.done(started)

        started = self.step(3, "Starting a Celery worker and the web server…")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "edufair_web",
                "--quiet",  # no start-up banner: the log-ins below stay in view
                "worker",
                "--pool=threads",
                f"--concurrency={concurrency}",
                "--loglevel=WARNING",
                "--without-gossip",
                "--without-mingle",
            ],
            env=env,
        )
        web = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"{host}:{port}", "--noreload"], env=env, cwd=settings.BASE_DIR
        )
        up = self._wait_for_web(f"http://{host}:{port}/healthz", web)
        self.done(started)
        self.step(4, "Ready." if up else "The web server has not answered yet; it may still be starting.")
        self.stdout.write("")
        self.stdout.write(demo_logins_text(DEMO_USERS))
        self.stdout.write(self.style.SUCCESS(f"\nEduFair Web demo on http://{host}:{port}/ — Ctrl-C stops it.\n"))
        # Piped output (a log file, CI) is block-buffered: show the log-ins now, not when the demo stops.
        self.stdout.flush()

        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping and worker.poll() is None and web.poll() is None:
                time.sleep(0.5)
        finally:
            for proc in (web, worker):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for proc in (web, worker):
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        if not stopping:
            failed = "worker" if worker.returncode not in (0, None) else "web server"
            self.stderr.write(f"The {failed} stopped unexpectedly; the demo is shutting down.")
            sys.exit(1)
