"""The study report in a real browser: headless Chromium (Debian's `chromium`) loads the
page with no console errors and its screenshot shows the plots.

Skipped when Chromium is not installed, unless XNET_REQUIRE_BROWSER=1 (set by .ci/run,
which installs it), which makes a missing browser a failure."""

import os
import shutil
import subprocess

import numpy as np
import pytest
from matplotlib import image

import xnet_study as xs


def chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("XNET_REQUIRE_BROWSER", "0") not in ("", "0"):
            pytest.fail("XNET_REQUIRE_BROWSER is set but chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium); the browser test is skipped")
    return path


def test_the_report_renders_in_chromium_without_console_errors(study_dir, tmp_path):
    browser = chromium()
    report = xs.write_report(study_dir)
    shot = tmp_path / "report.png"
    out = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", "--window-size=1280,1600",
         f"--screenshot={shot}", report.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    # Console messages of the page come out as "CONSOLE(line)" lines; any would be a defect
    # (the page has no scripts), and so would a resource that failed to load.
    console = [l for l in out.stderr.splitlines() if "CONSOLE" in l or "Failed to load resource" in l]
    assert console == [], console
    pixels = image.imread(shot)[:, :, :3]
    assert pixels.shape[0] >= 1000 and pixels.shape[1] >= 1200
    # The plots are there: matplotlib's default first two colours (the curves of `dor` and
    # `valiant`) appear in the page, which text and tables alone would not draw.
    for rgb in ((0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)):
        close = np.all(np.abs(pixels * 255 - np.array(rgb)) < 30, axis=2)
        assert close.sum() > 200, f"colour {rgb} covers only {close.sum()} pixels"
