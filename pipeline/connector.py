"""Spark's own Kafka connector (`spark-sql-kafka-0-10`), fetched with Maven once, for `spark.jars`.

PySpark ships without it. The connector must be of the installed Spark's line: the
installed version itself where Maven Central serves it, else the newest release of the same
major version before it that Maven Central lists (a PySpark release reaches PyPI before its
connector reaches every Maven mirror).
Only the jars PySpark does not already ship are kept (the connector, its token provider,
kafka-clients and commons-pool2): the rest of its dependencies are Spark's own.

The jars go to `<home>/<pyspark version>/`, and Maven's repository may be given (a
project's `.cache/m2`), so a second run is offline.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

GROUP = "org.apache.spark"
ARTIFACT = "spark-sql-kafka-0-10_2.13"
CENTRAL = "https://repo.maven.apache.org/maven2"
MAVEN_TIMEOUT_S = 600


class ConnectorUnavailable(RuntimeError):
    """The connector could not be fetched (no Maven, no network and no cache, ...)."""


def _release(version: str) -> tuple[int, ...] | None:
    """(major, minor, patch) of a release version; None for a preview or anything else."""
    return tuple(int(p) for p in version.split(".")) if re.fullmatch(r"\d+\.\d+\.\d+", version) else None


def fitting_version(spark_version: str, listed: list[str]) -> str | None:
    """The connector version for a Spark version among those `listed`: the same version, else
    the newest release of the same major version before it."""
    wanted = _release(spark_version)
    if wanted is None:
        raise ConnectorUnavailable(f"not a Spark release version: {spark_version!r}")
    fits = [r for r in map(_release, listed) if r is not None and r[0] == wanted[0] and r <= wanted]
    return ".".join(map(str, max(fits))) if fits else None


def _listed_versions() -> list[str]:
    """The connector versions Maven Central lists (its maven-metadata.xml)."""
    url = f"{CENTRAL}/{GROUP.replace('.', '/')}/{ARTIFACT}/maven-metadata.xml"
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            text = answer.read().decode()
    except OSError as exc:
        raise ConnectorUnavailable(f"cannot read {url}: {exc}") from exc
    return re.findall(r"<version>([^<]+)</version>", text)


def _artifact_name(jar: Path) -> str:
    """A jar's artifact id, without its version ("kafka-clients-3.9.2.jar" -> "kafka-clients")."""
    return re.sub(r"-\d+\.\d+[\w.\-]*\.jar$", "", jar.name)


def _pom(version: str) -> str:
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>kcsim</groupId><artifactId>spark-kafka-connector</artifactId>"
        "<version>1</version><packaging>pom</packaging><dependencies><dependency>"
        f"<groupId>{GROUP}</groupId><artifactId>{ARTIFACT}</artifactId>"
        f"<version>{version}</version>"
        "</dependency></dependencies></project>\n")


def connector_jars(home: Path, maven_repo: Path | None = None) -> list[Path]:
    """The connector's jars for the installed PySpark, fetched into `home` the first time."""
    import pyspark

    spark_version = pyspark.__version__
    folder = home.resolve() / spark_version
    done = folder / ".complete"
    if done.exists():
        return sorted(folder.glob("*.jar"))
    if shutil.which("mvn") is None:
        raise ConnectorUnavailable(f"mvn (Maven) not found on PATH: cannot fetch {ARTIFACT}")
    version = fitting_version(spark_version, _listed_versions())
    if version is None:
        raise ConnectorUnavailable(f"Maven Central lists no {ARTIFACT} for Spark {spark_version}")
    work = folder / "maven"
    work.mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(_pom(version))
    lib = work / "lib"
    repo = [f"-Dmaven.repo.local={maven_repo.resolve()}"] if maven_repo is not None else []
    cmd = ["mvn", "-q", "-B", "-Dstyle.color=never", *repo,
           "dependency:copy-dependencies", f"-DoutputDirectory={lib}"]
    try:
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False,
                              timeout=MAVEN_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise ConnectorUnavailable(f"Maven took more than {MAVEN_TIMEOUT_S}s") from exc
    if proc.returncode != 0:
        raise ConnectorUnavailable(f"Maven could not fetch {GROUP}:{ARTIFACT}:{version}: "
                                   f"{proc.stdout[-1500:]}")
    shipped = {_artifact_name(j) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    for jar in lib.glob("*.jar"):
        if _artifact_name(jar) not in shipped:
            shutil.copy2(jar, folder / jar.name)
    shutil.rmtree(work)
    jars = sorted(folder.glob("*.jar"))
    if not any(_artifact_name(j) == ARTIFACT for j in jars):
        raise ConnectorUnavailable(f"Maven fetched no {ARTIFACT} into {folder}")
    done.write_text("\n".join(j.name for j in jars) + "\n")
    return jars
