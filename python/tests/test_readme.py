"""The README's Python set-up and quick start run as written."""

from __future__ import annotations

import os
import re
import subprocess

from conftest import REPO


def section(text: str, title: str) -> str:
    _, rest = text.split(f"\n## {title}\n", 1)
    return rest.split("\n## ", 1)[0]


def blocks(text: str, lang: str):
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_readme_quick_start(tmp_path):
    py = section((REPO / "README.md").read_text(), "Python")
    (console,) = blocks(py, "console")
    (code,) = blocks(py, "python")
    # the checkout's folders the commands name, in a scratch folder of our own
    for name in ("python", "examples"):
        os.symlink(REPO / name, tmp_path / name)
    env = dict(os.environ, PIP_NO_INDEX="1")
    env.pop("PYTHONPATH", None)  # the installed package, not the checkout's
    env.pop("PARQDB_LIB", None)
    for line in console.splitlines():
        cmd = line.removeprefix("$ ")
        assert not cmd.startswith("python3 "), "the README names /usr/bin/python3 (a PATH's python3 may lack numpy)"
        if cmd == ".venv/bin/python":
            continue  # the interactive session: the python block below
        p = subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert p.returncode == 0, f"{cmd}: {p.stdout}{p.stderr}"
    for _ in range(2):  # the second run finds the index and only searches
        out = subprocess.run([".venv/bin/python", "-c", code], cwd=tmp_path, env=env, check=True,
                             capture_output=True, text=True).stdout
        words = [line.split()[1] for line in out.splitlines()[1:]]
        assert words == ["king", "prince", "queen", "ii", "emperor"], out
    assert (tmp_path / "warehouse" / "catalog.db").exists()
