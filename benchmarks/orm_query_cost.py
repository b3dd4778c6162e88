"""Benchmark of CPU per statement on the labelling hot path, the ORM against hand-written SQL.

The same reads built through the ORM and written as SQL (`annotation/services/main_sql.py`,
`edufair_web/accounts/authentication.py`), against PostgreSQL on loopback. It seeds the same database as
`labelling_load.py` (dropped and made anew), then times each form in a loop and prints the median of several rounds, in
CPU milliseconds per statement of this process.

    .venv/bin/python benchmarks/orm_query_cost.py --rounds 5 --loops 1000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import labelling_load  # noqa: E402 — the benchmark next door seeds the database


def cpu_ms_per_call(fn, loops: int) -> float:
    fn()  # warm: connection, imports, caches
    started = time.process_time()
    for _ in range(loops):
        fn()
    return 1000 * (time.process_time() - started) / loops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--loops", type=int, default=1000)
    args = parser.parse_args()

    labelling_load.recreate_database()
    out = subprocess.run(
        [sys.executable, labelling_load.__file__, "--seed-only", "--items", "2000", "--annotators", "8"],
        capture_output=True,
        text=True,
        check=True,
    )
    stage_id, token, *_ = out.stdout.split()
    os.environ.update(labelling_load.server_env(0))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")
    sys.path.insert(0, str(labelling_load.ROOT))
    import django

    django.setup()
    from django.contrib.auth.models import Group
    from knox.auth import TokenAuthentication
    from knox.models import AuthToken
    from knox.settings import CONSTANTS

    from annotation.models import Assignment, Enrollment, Phase
    from annotation.services import main_sql
    from edufair_web.accounts.authentication import RoleTokenAuthentication
    from edufair_web.accounts.roles import ROLES

    user_id = AuthToken.objects.get(token_key=token[: CONSTANTS.TOKEN_KEY_LENGTH]).user_id
    stage_id = int(stage_id)
    pairs = {
        "token, user and roles": (
            lambda: (  # knox's own authentication, then the roles
                TokenAuthentication().authenticate_credentials(token.encode()),
                list(Group.objects.filter(user__id=user_id, name__in=ROLES).values_list("name", flat=True)),
            ),
            lambda: RoleTokenAuthentication().authenticate_credentials(token.encode()),
        ),
        "labelling check": (
            lambda: (
                Enrollment.objects.select_related("stage", "stage__labelling")
                .filter(stage_id=stage_id, user_id=user_id)
                .first()
            ),
            lambda: main_sql.labelling_access(stage_id=stage_id, annotator_id=user_id),
        ),
        "open reservation": (
            lambda: (
                Assignment.objects.filter(
                    stage_id=stage_id, annotator_id=user_id, phase=Phase.MAIN, submitted_at__isnull=True
                )
                .order_by("id")
                .first()
            ),
            lambda: main_sql.open_reservation(stage_id=stage_id, annotator_id=user_id),
        ),
    }
    print(f"machine: nproc={os.cpu_count()} load={os.getloadavg()}; CPU ms per statement, median of {args.rounds}")
    for name, (orm, sql) in pairs.items():
        orm_ms = statistics.median(cpu_ms_per_call(orm, args.loops) for _ in range(args.rounds))
        sql_ms = statistics.median(cpu_ms_per_call(sql, args.loops) for _ in range(args.rounds))
        print(f"{name:24s} ORM {orm_ms:.3f}  SQL {sql_ms:.3f}  ratio {orm_ms / sql_ms:.1f}", flush=True)


if __name__ == "__main__":
    main()
