"""twilight train off a terminal: a progress line every LOG_EVERY_S seconds, never tqdm's frames."""

import io

from twilight_env.training.config import TrainConfig
from twilight_env.training.dmc import runs


def test_log_lines_write_a_line_per_interval_and_a_last_line():
    now = [0.0]
    out = io.StringIO()
    bar = runs.LogLines(1000, 100, "decisions", stream=out, clock=lambda: now[0], every_s=30)
    bar.set_postfix(dec="150", dps="12", refresh=False)
    bar.update(50)  # within the interval: no line
    now[0] = 31.0
    runs.advance_bar(bar, TrainConfig(decisions=1000), 100, 31.0)
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines == ["training: 100/1,000 decisions (10%)",
                     "training: 250/1,000 decisions (25%), dec 150, dps 12",
                     "training stopped at: 250/1,000 decisions (25%), dec 150, dps 12"], lines
    assert "\r" not in out.getvalue()


def test_off_a_terminal_the_bar_is_log_lines_and_on_request_nothing(monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    bar = runs.progress_bar(TrainConfig(decisions=1000), 0, 0.0)
    assert isinstance(bar, runs.LogLines)
    quiet = runs.progress_bar(TrainConfig(decisions=1000, progress=False), 0, 0.0)
    assert not isinstance(quiet, runs.LogLines)
    quiet.close()
