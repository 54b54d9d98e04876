"""One reader of a file as a file, for an LMS download (``collect --from``), the hub's clerk and staging: a
file that gains a second name (a hard link) between its listing and its opening is not read.

The listing's own refusals (a link, a pipe, a hard link already there) are tested end to end in
``tests/grader/test_collect_downloads.py`` and ``tests/hub/test_hub.py``; this is the window between the two
looks, which no end-to-end run can hit on purpose.
"""

from __future__ import annotations

import os
import stat

import grader.lms.download_files as download_files
import grader.hub_exchange.entries as entries


def linked_while_listed(monkeypatch, module, elsewhere, looks=1):
    """Make ``module``'s ``lstat`` see a file with one link ``looks`` times, then give the file a second name."""
    real_lstat = os.lstat
    seen = []

    def lstat_then_link(path, *args, **kwargs):
        info = real_lstat(path, *args, **kwargs)
        if stat.S_ISREG(info.st_mode):
            seen.append(path)
            if len(seen) == looks:  # (the clerk looks from the folder's descriptor)
                os.link(path, elsewhere, src_dir_fd=kwargs.get("dir_fd"))
        return info

    monkeypatch.setattr(module.os, "lstat", lstat_then_link)


def test_a_file_and_its_listing_agree_it_is_read(tmp_path):
    path = tmp_path / "ps1.ipynb"
    path.write_bytes(b"{}")
    assert download_files.read_as_file(str(path)) == (b"{}", None)
    assert download_files.read_as_file(str(path), limit=1) == (None, "larger than 9.53674e-07 MiB; not read")


def test_staging_reads_a_submitted_file_as_downloads_and_the_clerk_do(tmp_path, monkeypatch):
    from grader.notebook import submission

    path = tmp_path / "ps1.ipynb"
    path.write_bytes(b"{}")
    linked_while_listed(monkeypatch, submission, str(tmp_path / "elsewhere"))
    assert submission.read_submitted_file(path) == (None, "changed while it was read; not read")


def test_the_clerk_does_not_read_a_file_linked_after_it_was_listed(tmp_path, monkeypatch):
    submission = tmp_path / "inbound" / "mallory+ps1+2026-12-05 03:00:00.000000 UTC+abc"
    submission.mkdir(parents=True)
    (submission / "ps1.ipynb").write_bytes(b"{}")
    linked_while_listed(monkeypatch, entries, str(tmp_path / "elsewhere"), looks=2)  # its listing, then the reader's
    read = list(entries.read_submission(str(submission)))
    assert read == [("ps1.ipynb", "changed while it was read; not read", None)], read


def test_collect_does_not_read_a_download_linked_after_it_was_listed(tmp_path, monkeypatch):
    download = tmp_path / "download"
    download.mkdir()
    (download / "doejane_12345_67890_ps1.ipynb").write_bytes(b"{}")
    linked_while_listed(monkeypatch, download_files, str(tmp_path / "elsewhere"))
    files, left_out = download_files.read_download(download)
    assert files == [] and left_out == [("doejane_12345_67890_ps1.ipynb", "changed while it was read; not read")]
