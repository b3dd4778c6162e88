"""`manage.py rundemo`: migrate, seed the demo, then run the web server and a Celery worker together.

This is what `make demo` runs. Ctrl-C (or SIGTERM) stops both processes.
"""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Run the embedded demo: migrations, demo data, web server and one Celery worker."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--concurrency", type=int, default=4, help="Worker threads.")
        parser.add_argument("--no-seed", action="store_true", help="Skip the demo data.")

    def handle(self, *args, port, host, concurrency, no_seed, **options):
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write(
            f"Database: {settings.DATABASES['default']['ENGINE']} · broker: "
            f"{settings.CELERY_BROKER_URL.split('://', 1)[0]}"
        )
        if not no_seed:
            call_command("seed_demo", stdout=self.stdout)

        env = dict(os.environ, PYTHONUNBUFFERED="1")
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "edufair_web",
                "worker",
                "--pool=threads",
                f"--concurrency={concurrency}",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
            ],
            env=env,
        )
        web = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"{host}:{port}", "--noreload"], env=env, cwd=settings.BASE_DIR
        )
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
