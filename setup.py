"""Build hook: ship the repository's asset folders inside the wheel.

`prompts/`, `seeds/`, `discovered/` and `sandbox/` sit at the repository root so that
people read and edit them there, but a wheel installed into site-packages has no repository root.
So the build copies each folder to `automemo/_assets/<same relative path>`, where
`automemo/paths.py` looks first. An editable install skips the copy: paths.py then reads the
checkout itself. Everything else about the package is declared in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# Keep in step with MANIFEST.in (an sdist must carry them too) and automemo/paths.py.
ASSET_DIRS = ("prompts", "seeds", "discovered", "sandbox")
PACKAGED_ASSETS = Path("automemo", "_assets")


class BuildPyWithAssets(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for folder in ASSET_DIRS:
            target = Path(self.build_lib) / PACKAGED_ASSETS / folder
            shutil.rmtree(target, ignore_errors=True)  # a stale build/ must not keep deleted files
            shutil.copytree(ROOT / folder, target,
                            ignore=shutil.ignore_patterns("__pycache__", "*.py[cod]"))


setup(cmdclass={"build_py": BuildPyWithAssets})
