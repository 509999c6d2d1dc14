"""The reports, checked against what a real client workload did; the page in a real browser."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kcsim.pipeline import page, report
from kcsim.server.cli import main

from ..browser import chromium
from . import scenario

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "pipeline-report.png"


@pytest.fixture(scope="module")
def written(spark: Any, workload_dir: tuple[Path, Any],
            tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Any]:
    data_dir, work = workload_dir
    out = tmp_path_factory.mktemp("report")
    return report.write(spark, str(data_dir), str(out)), work


def rows(paths: dict[str, str], name: str) -> list[dict[str, Any]]:
    return pq.read_table(paths[name]).to_pylist()  # type: ignore[no-any-return]


def test_offset_history_holds_every_commit_with_its_deltas(written: Any) -> None:
    paths, work = written
    history = sorted(rows(paths, "offset_history"), key=lambda r: r["position"])
    commits = [(r["partition"], r["offset"]) for r in history if r["event"] == "commit"]
    assert commits == work.commits
    last: dict[int, int] = {}
    for r in history:
        previous = last.get(r["partition"])
        assert r["delta"] == (None if previous is None else r["offset"] - previous)
        assert r["rewind"] == (previous is not None and r["offset"] < previous)
        last[r["partition"]] = r["offset"]
    assert last == work.committed
    resets = [(r["partition"], r["offset"]) for r in history if r["admin_reset"]]
    assert resets == [work.reset]


def test_lag_follows_the_log_end_offsets_of_the_produced_data(written: Any) -> None:
    paths, work = written
    lag = rows(paths, "lag")
    assert len(lag) == len(work.commits)
    for r in lag:
        end = work.log_end(r["partition"])
        assert r["log_end_offset"] == end  # everything was produced before the first commit
        assert r["lag"] == end - r["committed_offset"]


def test_timeline_shows_each_rebalance_with_who_joined_and_left(written: Any) -> None:
    paths, work = written
    timeline = sorted(rows(paths, "timeline"), key=lambda r: r["position"])
    first, second = work.member_ids
    stable = [r for r in timeline if r["state"] == "Stable"]
    assert [r["members"] for r in stable] == [[first], sorted([first, second]), [second]]
    assert [r["joined"] for r in stable] == [[first], [second], []]
    assert stable[2]["left"] == [first]
    assert timeline[-1]["state"] == "Empty" and timeline[-1]["left"] == [second]
    for r in stable:  # every partition assigned once per generation
        owned = sorted(p for a in r["assignment"] for p in a["partitions"])
        assert owned == list(range(scenario.PARTITIONS))
        assert {a["member"] for a in r["assignment"]} == set(r["members"])
    assert all(r["duration_s"] is not None and r["duration_s"] >= 0 for r in timeline)


def test_summary_counts_what_the_group_did(written: Any) -> None:
    paths, work = written
    (summary,) = rows(paths, "summary")
    assert summary["group"] == scenario.GROUP
    assert summary["commits"] == len(work.commits)
    assert summary["rewinds"] == 1 and summary["admin_resets"] == 1
    assert summary["rebalances"] == 3
    assert summary["state"] == "Empty"
    expected_lag = sum(work.log_end(p) - o for p, o in work.committed.items())
    assert summary["current_lag"] == expected_lag > 0
    assert summary["longest_without_commit_s"] > 0


def test_the_command_writes_parquet_a_page_and_prints_small_tables(
        spark: Any, workload_dir: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kcsim pipeline report` (in this process, so on the session already running)."""
    data_dir, _ = workload_dir
    code = main(["pipeline", "report", "--data-dir", str(data_dir), "--out",
                 str(tmp_path / "out")])
    assert code == 0
    assert sorted(os.listdir(tmp_path / "out")) == sorted([*report.TABLES, "report.html"])
    printed = capsys.readouterr().out
    for title in ("summary", "timeline", "offset_history", "lag"):
        assert f" {title} " in printed or f"{title}\n" in printed, title
    assert scenario.GROUP in printed and "report written to" in printed
    assert printed.count("Stable") == 3  # the timeline's three generations with members


def test_the_page_draws_the_lag_jobs_output_beside_the_report(
        written: Any, tmp_path: Path) -> None:
    """`kcsim pipeline report --lag DIR`: a reported group's section also draws the lag the lag
    job measured over time; a group only the job saw gets a section with that chart alone."""
    paths, _ = written
    lag = tmp_path / "lag"
    lag.mkdir()
    times = [datetime(2026, 1, 1, 0, 0, s, tzinfo=UTC) for s in (1, 2, 3)]
    pq.write_table(pa.table({
        "time": times, "group": [scenario.GROUP, scenario.GROUP, "seen-by-the-job"],
        "topic": [scenario.TOPIC, scenario.TOPIC, "t"], "partition": [0, 0, 3],
        "committed": [4, 10, 7], "log_end": [10, 12, 9], "lag": [6, 2, 2]}),
        lag / "part-0.parquet")
    html = Path(page.render(paths, str(tmp_path / "report.html"), lag_dir=str(lag))).read_text()
    sections = dict(re.findall(r'<section class="group" id="([^"]+)">(.*?)</section>', html,
                               re.DOTALL))
    assert list(sections) == [f"group-{scenario.GROUP}", "group-seen-by-the-job"]
    reported = sections[f"group-{scenario.GROUP}"]
    assert reported.count('class="plotly-graph-div') == 3
    assert "generations, members and commits" in reported
    assert f"{scenario.GROUP}: lag behind the log end, per partition (measured by the lag job)" \
        in reported
    job_only = sections["group-seen-by-the-job"]
    assert job_only.count('class="plotly-graph-div') == 1
    assert "seen-by-the-job: lag behind the log end, per partition (measured by the lag job)" \
        in job_only


def test_the_report_command_refuses_a_lag_dir_that_is_not_there(
        workload_dir: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data_dir, _ = workload_dir
    code = main(["pipeline", "report", "--data-dir", str(data_dir), "--out",
                 str(tmp_path / "out"), "--lag", str(tmp_path / "missing")])
    assert code == 2
    assert "--lag" in capsys.readouterr().err


def test_the_report_command_says_when_the_lag_dir_holds_no_lag_table(
        workload_dir: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data_dir, _ = workload_dir
    (tmp_path / "lag").mkdir()
    (tmp_path / "lag" / "notes.txt").write_text("not a lag table")
    code = main(["pipeline", "report", "--data-dir", str(data_dir), "--out",
                 str(tmp_path / "out"), "--lag", str(tmp_path / "lag")])
    assert code == 1
    assert "cannot draw the page" in capsys.readouterr().err


# -- the page, in a real browser ---------------------------------------------------------

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--virtual-time-budget=15000")


def browse(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                           *args], capture_output=True, text=True, timeout=120)
    if done.returncode != 0 and not done.stdout:
        pytest.skip(f"NO BROWSER: chromium could not start here: {done.stderr[-500:]}")
    return done


def test_the_page_shows_each_groups_timeline_and_lag_in_a_browser(
        written: Any, tmp_path: Path) -> None:
    paths, _ = written
    html = page.render(paths, str(tmp_path / "report.html"))
    dom = browse(tmp_path, "--dump-dom", f"file://{html}").stdout
    assert f'id="group-{scenario.GROUP}"' in dom
    assert dom.count('class="plotly-graph-div') == 2  # the timeline and the lag figure
    assert dom.count('class="main-svg"') >= 4  # both drawn by plotly.js
    for text in ("generations, members and commits", "lag behind the log end",
                 "gen 2 · 2 members", "admin resets", "rewinds",
                 *(f"lag {scenario.TOPIC}-{p}" for p in range(scenario.PARTITIONS))):
        assert text in dom, text
    assert "<td>billing</td>" in dom
    shot = browse(tmp_path, "--window-size=1280,1100", f"--screenshot={tmp_path / 'shot.png'}",
                  f"file://{html}")
    assert (tmp_path / "shot.png").stat().st_size > 20_000, shot.stderr[-500:]
    if os.environ.get("KCSIM_UPDATE_SCREENSHOT"):  # refresh the README's picture on request
        shutil.copyfile(tmp_path / "shot.png", SCREENSHOT)
