"""The Kafka Java client for tests, in two versions; sources compiled on demand per version.

kafka-clients 3.9.1 comes from the `shigawire-apache-flink-libraries` wheel (it
bundles kafka-clients and its compression and logging dependencies under
pyflink/lib/), fetched once with `pip download` into `<repo>/.cache/java/`.
kafka-clients 4.x is fetched with Maven (tests/oracle/kafka.py) into
`<repo>/.cache/kafka-clients/`. The same sources compile against both.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from tests.oracle.kafka import KafkaUnavailable, kafka_clients_jars, kafka_clients_oauth_jars

REPO = Path(__file__).resolve().parents[3]
SOURCES = Path(__file__).resolve().parent / "java"
CACHE = REPO / ".cache" / "java"
WHEEL_PACKAGE = "shigawire-apache-flink-libraries"
WHEEL_VERSION = "2.0.0.post1"
JAR_PREFIXES = ("kafka-clients", "slf4j-api", "lz4-java", "snappy-java", "zstd-jni")
DOWNLOAD_TIMEOUT_S = 600
WHEEL_CLIENT = "3.9.1"
MAVEN_CLIENT = os.environ.get("KCSIM_JAVA_CLIENT_4X", "4.4.0")
# Every kafka-clients version the Java tests run on; the first is the default.
CLIENT_VERSIONS = (WHEEL_CLIENT, MAVEN_CLIENT)


def missing_tools() -> str | None:
    """Why Java tests cannot run here, or None when java and javac are on PATH."""
    absent = [tool for tool in ("java", "javac") if shutil.which(tool) is None]
    return f"{' and '.join(absent)} not found on PATH" if absent else None


def skip_without_java() -> None:
    reason = missing_tools()
    if reason:
        pytest.skip(f"Java client tests need a JDK: {reason}")


def _wheel() -> Path:
    wheel_dir = CACHE / "wheel"
    found = sorted(wheel_dir.glob(f"{WHEEL_PACKAGE.replace('-', '_')}-{WHEEL_VERSION}-*.whl"))
    if found:
        return found[-1]
    wheel_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
           "--dest", str(wheel_dir), f"{WHEEL_PACKAGE}=={WHEEL_VERSION}"]
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=DOWNLOAD_TIMEOUT_S, check=False)
    found = sorted(wheel_dir.glob(f"{WHEEL_PACKAGE.replace('-', '_')}-{WHEEL_VERSION}-*.whl"))
    if proc.returncode != 0 or not found:
        raise RuntimeError(
            f"could not download the Kafka Java client jars: `{' '.join(cmd)}` exited with "
            f"{proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return found[-1]


def jars(version: str = WHEEL_CLIENT) -> list[Path]:
    """kafka-clients `version` and the jars it needs at run time (skips if it cannot be had)."""
    if version == WHEEL_CLIENT:
        return _wheel_jars()
    try:
        return kafka_clients_jars(version)
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka-clients {version} unavailable: {exc}")


def oauth_classpath(version: str = MAVEN_CLIENT) -> str:
    """The test sources on kafka-clients `version` with jackson-databind, for OAUTHBEARER."""
    try:
        return classpath(libs=kafka_clients_oauth_jars(version))
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka-clients {version} with jackson unavailable: {exc}")


def _wheel_jars() -> list[Path]:
    """kafka-clients 3.9.1 and its run-time jars, extracted from the wheel into the cache once."""
    lib = CACHE / "lib" / WHEEL_VERSION
    done = lib / ".complete"
    if done.exists():
        return sorted(lib.glob("*.jar"))
    wheel = _wheel()
    lib.mkdir(parents=True, exist_ok=True)
    wanted: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            parts = name.split("/")
            if parts[:2] != ["pyflink", "lib"] or len(parts) != 3 or not parts[2].endswith(".jar"):
                continue
            for prefix in JAR_PREFIXES:
                if parts[2].startswith(prefix):
                    wanted[prefix] = name
        missing = [p for p in JAR_PREFIXES if p not in wanted]
        if missing:
            raise RuntimeError(f"{wheel.name} has no pyflink/lib/ jar for {', '.join(missing)}")
        for name in wanted.values():
            target = lib / name.rsplit("/", 1)[1]
            fd, tmp = tempfile.mkstemp(dir=lib, suffix=".part")
            with os.fdopen(fd, "wb") as out, zf.open(name) as src:
                shutil.copyfileobj(src, out)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
    done.write_text("\n".join(sorted(wanted.values())) + "\n")
    return sorted(lib.glob("*.jar"))


def classpath(version: str = WHEEL_CLIENT, source_dir: Path = SOURCES,
              libs: list[Path] | None = None) -> str:
    """Compiled test sources (of `source_dir`) plus the jars (kafka-clients `version`'s, or
    `libs`); compiles only when a source or jar changed."""
    libs = jars(version) if libs is None else libs
    sources = sorted(source_dir.glob("*.java"))
    digest = hashlib.sha256()
    for path in sources + libs:
        digest.update(path.name.encode())
        digest.update(path.read_bytes() if path.suffix == ".java" else str(path.stat().st_size).encode())
    out = CACHE / "classes" / digest.hexdigest()[:16]
    if not (out / ".complete").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(dir=out.parent, prefix=".build-"))
        cmd = ["javac", "-encoding", "UTF-8", "-d", str(build),
               "-cp", os.pathsep.join(map(str, libs)), *map(str, sources)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            shutil.rmtree(build, ignore_errors=True)
            raise RuntimeError(f"javac failed:\n{proc.stdout}\n{proc.stderr}")
        (build / ".complete").touch()
        os.chmod(build, 0o755)
        if out.exists():
            shutil.rmtree(build, ignore_errors=True)
        else:
            os.replace(build, out)
    return os.pathsep.join([str(out), *map(str, libs)])


def run(main_class: str, *args: str, timeout: float = 90, version: str = WHEEL_CLIENT,
        class_path: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a compiled test class on kafka-clients `version` (or on `class_path`); its
    stdout and stderr as text."""
    cmd = ["java", "-Xshare:auto", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
           "-cp", class_path or classpath(version), main_class, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
