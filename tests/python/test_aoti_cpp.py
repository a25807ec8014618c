"""`shapescript export --aoti` writes a package that Python and C++ both load (the chapter: "which
C++ can load too"). The C++ side is tests/aoti/load_package.cpp, built against the libtorch inside
the installed torch."""
import os
import pathlib
import subprocess

import pytest
import torch

from conftest import EXAMPLES, ROOT, export_pt2

SHAPES = [(2, 3, 32, 48), (3, 3, 48, 32), (5, 3, 64, 64)]


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("aoti") / "patchify.pt2"
    result = export_pt2(EXAMPLES / "patches.ss", out, "--aoti")
    assert result.returncode == 0, result.stderr
    assert "as an AOTInductor package" in result.stdout
    return out


def reference(shape):
    torch.manual_seed(0)
    img = torch.randn(shape)
    b, c, h, w = shape
    return img.reshape(b, c, h // 16, 16, w // 16, 16).permute(0, 2, 4, 3, 5, 1).reshape(b, (h // 16) * (w // 16), 16 * 16 * c)


@pytest.mark.slow
def test_python_loads_the_package(package):
    run = torch._inductor.aoti_load_package(str(package))
    for shape in SHAPES:
        torch.manual_seed(0)
        torch.testing.assert_close(run(torch.randn(shape)), reference(shape))


@pytest.mark.slow
def test_cpp_loads_the_package(package, tmp_path):
    torch_dir = pathlib.Path(torch.__file__).parent
    binary = tmp_path / "load_package"
    build = subprocess.run(
        ["g++", "-std=c++20", "-O1", str(ROOT / "tests" / "aoti" / "load_package.cpp"),
         f"-I{torch_dir / 'include'}", f"-I{torch_dir / 'include' / 'torch' / 'csrc' / 'api' / 'include'}",
         f"-L{torch_dir / 'lib'}", f"-Wl,-rpath,{torch_dir / 'lib'}", "-ltorch", "-ltorch_cpu", "-lc10", "-o", str(binary)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    # The package's compiled model is dlopen'ed and needs libtorch on the library path, as any libtorch program does.
    env = dict(os.environ, LD_LIBRARY_PATH=str(torch_dir / "lib") + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    run = subprocess.run([str(binary), str(package)] + [",".join(map(str, s)) for s in SHAPES], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    lines = run.stdout.strip().splitlines()
    assert len(lines) == len(SHAPES)
    for line, shape in zip(lines, SHAPES):
        expected = reference(shape)
        sizes = line.split(" sum ")[0].removeprefix("output ")
        assert sizes == "[" + ", ".join(map(str, expected.shape)) + "]"
        assert float(line.split(" sum ")[1]) == pytest.approx(expected.sum().item(), rel=1e-4, abs=1e-3)
