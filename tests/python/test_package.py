"""`pip install .` into a fresh virtualenv gives the `shapescript` command and the Python package.

torch is not installed again (it is gigabytes): a .pth file lends the project venv's site-packages
to the fresh one, after the package itself is installed from the checkout.
"""
import os
import pathlib
import subprocess
import sys
import sysconfig

import pytest

from conftest import EXAMPLES, ROOT, place


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    venv = tmp_path_factory.mktemp("pip") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(ROOT)], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # After the install, so pip could not have taken shapescript from the project venv.
    pathlib.Path(site, "project_torch.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def clean_env(venv):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SHAPESCRIPT_BIN")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = str(venv / "bin") + os.pathsep + env.get("PATH", "")
    return env


@pytest.mark.slow
def test_installed_command_exports(fresh_venv, tmp_path):
    place(tmp_path, EXAMPLES / "patches.ss")
    env = clean_env(fresh_venv)
    result = subprocess.run(["shapescript", "export", "patches.ss", "-o", "patchify.pt2"], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "wrote patchify.pt2" in result.stdout
    run = subprocess.run([str(fresh_venv / "bin" / "python"), "-c",
                          "import torch; m = torch.export.load('patchify.pt2').module(); print(tuple(m(torch.randn(4, 3, 224, 160)).shape))"],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.stdout.strip() == "(4, 140, 768)", run.stderr


@pytest.mark.slow
def test_installed_package_exports_from_python(fresh_venv, tmp_path):
    place(tmp_path, EXAMPLES / "patches.ss")
    code = (
        "import shapescript, torch\n"
        "assert shapescript.__file__.startswith(%r), shapescript.__file__\n"
        "assert [d.code for d in shapescript.check(%r)] == ['E1701']\n"
        "ep = shapescript.export('patches.ss', 'patchify', 'patchify.pt2')\n"
        "print(type(ep).__name__, tuple(ep.module()(torch.randn(2, 3, 32, 48)).shape))\n"
    ) % (str(fresh_venv), str(EXAMPLES / "export_bad.ss"))
    run = subprocess.run([str(fresh_venv / "bin" / "python"), "-c", code], cwd=tmp_path, env=clean_env(fresh_venv),
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ExportedProgram (2, 6, 768)"
    assert (tmp_path / "patchify.pt2").exists()
