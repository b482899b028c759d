"""Builds the Go shared library and the C extension into the package (see
pyproject.toml).

The library is cmd/libparqdb of the enclosing ParqDB checkout, built with
`go build -buildmode=c-shared`; Go downloads nothing but modules (from the
Go module proxy, or none when they are in the module cache). The extension
parqdb._core (parqdb/_core.c: the per-call path of a search) needs the
Python and numpy headers (Debian's python3-dev and python3-numpy).
"""

import os
import subprocess

import numpy
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

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


core = Extension(
    "parqdb._core",
    sources=["parqdb/_core.c"],
    include_dirs=[numpy.get_include()],
    extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"],
)

setup(cmdclass={"build_py": BuildPy}, ext_modules=[core])
