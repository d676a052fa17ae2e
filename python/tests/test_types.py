"""The typed stubs describe the extension as it is, and the package type-checks against them."""

import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True)


def test_stubs_match_the_extension():
    out = run("mypy.stubtest", "irpass._native")
    assert out.returncode == 0, out.stdout + out.stderr


def test_package_type_checks():
    out = run("mypy", "--no-incremental", "-p", "irpass")
    assert out.returncode == 0, out.stdout + out.stderr
