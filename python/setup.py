"""Builds the Go shared library into the package (see pyproject.toml).

The library is cmd/libparqdb of the enclosing ParqDB checkout, built with
`go build -buildmode=c-shared`; Go downloads nothing but modules (from the
Go module proxy, or none when they are in the module cache).
"""

import os
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.realpath(__file__))
REPO = os.path.dirname(HERE)


def build_library(out: str) -> None:
    go = os.environ.get("GO", "go")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.check_call(
        [go, "build", "-buildmode=c-shared", "-ldflags", "-s -w", "-o", out, "./cmd/libparqdb"],
        cwd=REPO,
    )
    header = os.path.splitext(out)[0] + ".h"
    if os.path.exists(header):
        os.remove(header)


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        build_library(os.path.abspath(os.path.join(self.build_lib, "parqdb", "libparqdb.so")))


class BinaryDistribution(Distribution):
    """A wheel for this platform: the package holds a shared library."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
