"""Builds the `ember` package: libember (Swift, release) and the C extension `ember._ember`.

`pip install ./bindings/python` runs this. Steps:
  1. `swift build -c release --product ember-c --scratch-path <repo>/.build-python` (incremental);
  2. copies libember-c.so into the package (as libember.so and under its SONAME, libember.so.0);
  3. compiles `ember._ember` against the Python headers and include/ember.h, linked to that copy
     with rpath $ORIGIN, so the library is found next to the module from any directory.
Environment: EMBER_SOURCE_DIR (the repository; default: two levels up), SWIFT (default `swift`),
EMBER_SWIFT_JOBS (default: the CPU count), EMBER_LIBRARY (a libember already built, used instead of
step 1: `make test` passes the debug one its C tests use, so the gRPC stack is not built twice).
"""
import os
import shutil
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("EMBER_SOURCE_DIR", HERE.parent.parent)).resolve()
SCRATCH = ROOT / ".build-python"
PKG = HERE / "src" / "ember"


def build_libember() -> Path:
    prebuilt = os.environ.get("EMBER_LIBRARY")
    if prebuilt:
        lib = Path(prebuilt).resolve()
        if not lib.is_file():
            raise SystemExit(f"ember: EMBER_LIBRARY={prebuilt} is not a file")
        print(f"ember: using the prebuilt {lib}", flush=True)
        return lib
    if not (ROOT / "Package.swift").exists():
        raise SystemExit(f"ember: the Swift package was not found at {ROOT} (set EMBER_SOURCE_DIR)")
    swift = os.environ.get("SWIFT", "swift")
    if shutil.which(swift) is None:
        raise SystemExit("ember: Swift 6 is required on PATH to build libember (https://swift.org/install)")
    jobs = os.environ.get("EMBER_SWIFT_JOBS", str(os.cpu_count() or 2))
    cmd = [swift, "build", "-c", "release", "--product", "ember-c", "--scratch-path", str(SCRATCH), "-j", jobs]
    print("ember: " + " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)
    lib = SCRATCH / "release" / "libember-c.so"
    if not lib.exists():
        raise SystemExit(f"ember: {lib} was not produced")
    return lib


class BuildExt(build_ext):
    def run(self):
        lib = build_libember()
        # the copy the extension links against (and the one installed with the package)
        for dest_dir in {PKG, Path(self.build_lib) / "ember"}:
            dest_dir.mkdir(parents=True, exist_ok=True)
            for name in ("libember.so", "libember.so.0"):
                target = dest_dir / name
                if not target.exists() or target.stat().st_mtime < lib.stat().st_mtime or target.stat().st_size != lib.stat().st_size:
                    shutil.copy2(lib, target)
        for ext in self.extensions:
            ext.library_dirs = [str(PKG)]
        super().run()


ext = Extension(
    "ember._ember",
    sources=["src/ember/_ember.c"],
    depends=["src/ember/_codec.h", "src/ember/_tree.h", str(ROOT / "include" / "ember.h")],
    include_dirs=[str(ROOT / "include")],
    libraries=["ember"],
    runtime_library_dirs=["$ORIGIN"],
    extra_compile_args=["-O2", "-std=gnu11", "-Wall", "-Wno-unused-function"],
)

setup(ext_modules=[ext], cmdclass={"build_ext": BuildExt})
