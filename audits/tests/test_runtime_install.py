"""What is tested is what is installed: the Docker image installs requirements.txt, and requirements.txt holds every
third-party module a real model call imports at module level.

Read from the files (no Docker engine runs on the development machines; `.ci/runtime_audit` runs a real audit from
a virtualenv of requirements.txt alone). The modules of a real call (REAL_CALL_MODULES: the OpenAI-compatible
provider and its transport, the model client, one dialogue end to end, the worker tasks, the connection test, and
the local OpenAI-protocol server the CI step runs) are followed through their module-level imports inside the
project; every third-party module met must come from a distribution requirements.txt names, directly or as a
required dependency (its extras only where requirements.txt asks for them), as pip installs it.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import shlex
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCAL_PACKAGES = {"edufair_web", "audits", "annotation"}
REAL_CALL_MODULES = (
    "audits.llm.openai_compat",
    "audits.llm.outbound_transport",
    "audits.llm.client",
    "audits.llm.dialogue",
    "audits.tasks",
    "audits.services.endpoints",
    "audits.tests.openai_server",
)
# Named in requirements.txt itself, not only reached through another package: what a real call imports first.
NAMED_DIRECTLY = {"openai", "aiohttp"}


# --- the Dockerfile ------------------------------------------------------------------------------------------------


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    instructions = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, arguments = line.strip().partition(" ")
            instructions.append((keyword.upper(), arguments.strip()))
    return instructions


def pip_requirement_files(run: str) -> list[str]:
    """The files a RUN line's `pip install` reads with -r (none when it runs no pip install)."""
    files = []
    for command in re.split(r"&&|;", run):
        words = shlex.split(command)
        if "pip" not in {Path(w).name for w in words[:3]} and "pip" not in words:
            continue
        for i, word in enumerate(words):
            if word in ("-r", "--requirement") and i + 1 < len(words):
                files.append(words[i + 1])
            elif word.startswith("--requirement="):
                files.append(word.partition("=")[2])
    return files


def image_install_problems(text: str) -> list[str]:
    """What is wrong with how a Dockerfile installs the requirements (nothing when it copies requirements.txt into
    its WORKDIR and then pip-installs that file and no other)."""
    instructions = dockerfile_instructions(text)
    copies = [i for i, (kw, args) in enumerate(instructions) if kw == "COPY" and args.split()[0] == "requirements.txt"]
    installs = [
        (i, files)
        for i, (kw, args) in enumerate(instructions)
        if kw == "RUN"
        for files in [pip_requirement_files(args)]
        if files
    ]
    if not copies:
        return ["requirements.txt is never copied into the image"]
    if [files for _, files in installs] != [["requirements.txt"]]:
        return [f"pip installs {[files for _, files in installs]}, not requirements.txt alone"]
    problems = []
    if installs[0][0] < copies[0]:
        problems.append("requirements.txt is installed before it is copied")
    workdirs = [args for kw, args in instructions[: copies[0]] if kw == "WORKDIR"]
    destination = instructions[copies[0]][1].split()[-1]
    if not workdirs or destination not in (".", "./", workdirs[-1], workdirs[-1] + "/"):
        problems.append(f"requirements.txt is copied to {destination}, not the WORKDIR pip runs in")
    if any(kw == "WORKDIR" for kw, _ in instructions[copies[0] : installs[0][0]]):
        problems.append("the WORKDIR changes between the copy and the install")
    return problems


def test_the_image_copies_requirements_txt_and_installs_it_and_no_dev_requirements():
    assert image_install_problems((ROOT / "Dockerfile").read_text()) == []


def test_a_dockerfile_installing_dev_requirements_or_not_copying_the_file_is_reported():
    head = "FROM python:3.11-slim\nWORKDIR /app\n"
    dev = head + "COPY requirements.txt requirements-dev.txt .\nRUN pip install -q \\\n  -r requirements-dev.txt"
    assert image_install_problems(dev) == ["pip installs [['requirements-dev.txt']], not requirements.txt alone"]
    uncopied = head + "# COPY requirements.txt .\nRUN pip install -r requirements.txt"
    assert image_install_problems(uncopied) == ["requirements.txt is never copied into the image"]
    late = head + "RUN python -m pip install --requirement=requirements.txt\nCOPY requirements.txt ."
    assert image_install_problems(late) == ["requirements.txt is installed before it is copied"]
    assert pip_requirement_files("useradd edufair && pip --version") == []


# --- requirements.txt against a real call's imports -----------------------------------------------------------------


def module_path(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def top_level_statements(body: list[ast.stmt]):
    """Statements run when the module is imported: not function bodies, nor `if TYPE_CHECKING:` blocks."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from top_level_statements(node.orelse)
            continue
        yield node
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from top_level_statements(inner)
        for handler in getattr(node, "handlers", []):
            yield from top_level_statements(handler.body)


def module_level_imports(roots) -> dict[str, str]:
    """Third-party top-level module -> the project module importing it, over the project modules the roots import
    at module level (their packages' __init__ included)."""
    found: dict[str, str] = {}
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # importing a.b.c runs a and a.b first
        path = module_path(name)
        if path is None:
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in top_level_statements(ast.parse(path.read_text(encoding="utf-8")).body):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                else:
                    base = node.module
                targets = [base] + [
                    f"{base}.{alias.name}" for alias in node.names if module_path(f"{base}.{alias.name}")
                ]
            for target in targets:
                top = target.split(".")[0]
                if top in LOCAL_PACKAGES:
                    todo.append(target)
                elif top not in sys.stdlib_module_names and top != "__future__":
                    found.setdefault(top, name)
    return found


def installed_by(requirement_lines: list[str]) -> set[str]:
    """Every distribution pip installs for these requirement lines: each named one, its required dependencies and
    those of the extras asked for, recursively (canonical names)."""
    todo = []
    for line in requirement_lines:
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            todo.append(Requirement(line))
    installed: set[str] = set()
    asked_extras: dict[str, set[str]] = {}
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        new_extras = set(requirement.extras) - asked_extras.get(name, set())
        if name in installed and not new_extras:
            continue
        installed.add(name)
        asked_extras.setdefault(name, set()).update(requirement.extras)
        try:
            dependencies = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for text in dependencies:
            dependency = Requirement(text)
            environments = [{"extra": extra} for extra in asked_extras[name]] or [{"extra": ""}]
            if dependency.marker is None or any(dependency.marker.evaluate(env) for env in environments):
                todo.append(dependency)
    return installed


def missing_from(requirement_lines: list[str], imported: dict[str, str]) -> list[str]:
    """The imported modules that no distribution installed by these requirement lines provides."""
    installed = installed_by(requirement_lines)
    providers = md.packages_distributions()
    missing = []
    for top, importer in sorted(imported.items()):
        distributions = {canonicalize_name(d) for d in providers.get(top, [])}
        if not distributions & installed:
            missing.append(f"{top} ({', '.join(sorted(distributions)) or 'not installed'}), imported by {importer}")
    return missing


def requirements(name: str) -> list[str]:
    return (ROOT / name).read_text().splitlines()


def test_requirements_txt_holds_every_third_party_module_a_real_call_imports():
    imported = module_level_imports(REAL_CALL_MODULES)
    assert {"openai", "django"} <= set(imported), imported  # the walk reaches the SDK and the framework
    assert missing_from(requirements("requirements.txt"), imported) == []


def test_requirements_txt_names_the_openai_client_and_its_transport():
    named = {
        canonicalize_name(Requirement(line.split("#")[0]).name)
        for line in requirements("requirements.txt")
        if line.split("#")[0].strip() and not line.startswith("-")
    }
    assert NAMED_DIRECTLY <= named, NAMED_DIRECTLY - named


def test_a_real_call_module_importing_a_dev_only_package_is_reported():
    """The check fails when it should: requirements.txt without aiohttp, against a module that imports it."""
    without = [line for line in requirements("requirements.txt") if not line.lower().startswith("aiohttp")]
    report = missing_from(without, {"aiohttp": "audits.llm.outbound_transport", "openai": "audits.llm.openai_compat"})
    assert report == ["aiohttp (aiohttp), imported by audits.llm.outbound_transport"]
    # The test suite's own requirements install everything requirements.txt does, and more.
    assert requirements("requirements-dev.txt")[0] == "-r requirements.txt"
