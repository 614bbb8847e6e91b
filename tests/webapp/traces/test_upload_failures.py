"""Every rejected upload says why (file, line, field) and stores nothing: no row, no file."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.webapp.conftest import DEMO_SWF
from webapp.traces.models import Trace

pytestmark = pytest.mark.django_db


def post(client, content: bytes, filename: str):  # noqa: ANN001, ANN201
    return client.post(reverse("traces:upload"), {"name": "x", "file": SimpleUploadedFile(filename, content)})


def assert_nothing_stored(settings) -> None:  # noqa: ANN001
    assert not Trace.objects.exists()
    assert [p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()] == []
    assert [p for p in Path(settings.FILE_UPLOAD_TEMP_DIR).rglob("*") if p.is_file()] == []


def test_a_bad_line_is_named_with_line_and_field(alice_client, settings):
    lines = DEMO_SWF.read_text().splitlines()
    first_job = next(i for i, line in enumerate(lines) if not line.startswith(";"))
    lines[first_job + 2] = lines[first_job + 2].replace("  4  ", "  four  ", 1)
    response = post(alice_client, "\n".join(lines).encode(), "broken.swf")
    assert response.status_code == 400
    text = response.content.decode()
    assert f"broken.swf, line {first_job + 3}" in text and "field" in text
    assert_nothing_stored(settings)


def test_at_most_twenty_problems_are_listed(alice_client, settings):
    response = post(alice_client, b"".join(b"1 2 3\n" for _ in range(100)), "short.swf")
    assert response.status_code == 400
    assert response.content.decode().count("short.swf, line") == 20
    assert_nothing_stored(settings)


def test_a_file_over_the_cap_is_refused_while_streaming(alice_client, settings):
    settings.SCHEDLAB_UPLOAD_MAX_BYTES = 1000
    response = post(alice_client, DEMO_SWF.read_bytes() * 3, "big.swf")
    assert response.status_code == 413
    assert "larger than this server accepts (1000" in response.content.decode()
    assert_nothing_stored(settings)


def test_a_gzip_bomb_is_refused(alice_client, settings):
    settings.SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES = 10 * 1024 * 1024
    bomb = io.BytesIO()
    with gzip.GzipFile(fileobj=bomb, mode="wb") as f:
        f.write(DEMO_SWF.read_bytes())
        for _ in range(12):
            f.write(b" " * (1024 * 1024))
    assert len(bomb.getvalue()) < 100_000
    response = post(alice_client, bomb.getvalue(), "bomb.swf.gz")
    assert response.status_code == 400
    assert "possible compression bomb" in response.content.decode()
    assert_nothing_stored(settings)


def test_an_empty_file_is_refused(alice_client, settings):
    response = post(alice_client, b"", "empty.swf")
    assert response.status_code == 400
    assert "empty" in response.content.decode()
    assert_nothing_stored(settings)


def test_a_header_only_file_is_refused(alice_client, settings):
    header = b"".join(line + b"\n" for line in DEMO_SWF.read_bytes().splitlines() if line.startswith(b";"))
    response = post(alice_client, header, "header-only.swf")
    assert response.status_code == 400
    assert "header-only.swf" in response.content.decode()
    assert_nothing_stored(settings)


@pytest.mark.parametrize("content, filename", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200), "picture.swf"),
    (b"job,submit,runtime\n1,0,10\n2,5,20\n", "table.csv"),
    (b"\x1f\x8b\x08\x00garbage that is not deflate data", "broken.swf.gz"),
])
def test_a_file_in_the_wrong_format_is_refused(alice_client, settings, content, filename):
    response = post(alice_client, content, filename)
    assert response.status_code == 400
    assert filename in response.content.decode()
    assert_nothing_stored(settings)


def with_bad_lines(count: int) -> tuple[bytes, list[int]]:
    """The demo trace with its first ``count`` job lines' processor field made unreadable; their line numbers."""
    lines = DEMO_SWF.read_text().splitlines()
    jobs = [i for i, line in enumerate(lines) if line.strip() and not line.startswith(";")]
    for i in jobs[:count]:
        fields = lines[i].split()
        fields[4] = "four"
        lines[i] = " ".join(fields)
    return "\n".join(lines).encode(), [i + 1 for i in jobs[:count]]


def test_bad_lines_are_refused_with_a_hint_to_skip_them(alice_client, settings):
    content, _ = with_bad_lines(3)
    response = post(alice_client, content, "three-bad.swf")
    text = response.content.decode()
    assert response.status_code == 400
    assert text.count("three-bad.swf, line") == 3 and "Skip bad lines" in text
    assert_nothing_stored(settings)


def test_skip_bad_lines_stores_the_trace_and_names_the_first_ten(alice_client, media_root):
    from webapp.traces.tasks import parse_trace

    content, numbers = with_bad_lines(12)
    response = alice_client.post(reverse("traces:upload"), {
        "name": "x", "skip_bad_lines": "on", "file": SimpleUploadedFile("twelve-bad.swf", content)})
    trace = Trace.objects.get()
    assert response.status_code == 302
    parse_trace(trace.pk)
    trace.refresh_from_db()

    assert trace.status == "ready", trace.error
    assert trace.report["bad_lines"] == 12
    assert [example["line"] for example in trace.report["bad_line_examples"]] == numbers[:10]
    page = alice_client.get(trace.get_absolute_url()).content.decode()
    assert "12 unreadable lines left out; the first 10:" in page
    assert all(f"twelve-bad.swf, line {n}: field" in page for n in numbers[:10])
    assert f"line {numbers[10]}:" not in page
    trace.cache_path.unlink()      # a parse from the stored file again skips the same lines
    assert len(trace.workload()) == trace.summary["jobs"]


def test_skipping_never_hides_a_problem_of_the_whole_file(alice_client, settings):
    response = alice_client.post(reverse("traces:upload"), {
        "name": "x", "skip_bad_lines": "on", "file": SimpleUploadedFile("fake.swf.gz", b"not gzip at all")})
    assert response.status_code == 400
    assert_nothing_stored(settings)


def test_the_decompressed_cap_is_far_below_20_gib_and_read_from_the_environment():
    """20 GiB let a 3.9 MB bomb reach 12.5 GB; the default is 2 GiB, and SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES
    sets it."""
    import os
    import subprocess
    import sys

    read = "import webapp.settings as s; print(s.SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES)"
    root = Path(__file__).resolve().parents[3]
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES"}
    default = subprocess.run([sys.executable, "-c", read], cwd=root, env=env, capture_output=True, text=True, check=True)
    chosen = subprocess.run([sys.executable, "-c", read], cwd=root, capture_output=True, text=True, check=True,
                            env={**env, "SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES": "12345"})
    assert int(default.stdout) == 2 * 1024**3 and int(chosen.stdout) == 12345
