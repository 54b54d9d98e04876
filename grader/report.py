"""The report of an autograde run: now ``grader.autograde.report`` (this name is kept for old imports)."""

from .atomic import write_json, write_whole
from .autograde.report import (HALFWAY, NO_LONGER_SUBMITTED, collect_scores, entry, final_score, format_report,
                               no_longer_submitted, refresh_report, write_entries, write_report)

__all__ = ["HALFWAY", "NO_LONGER_SUBMITTED", "collect_scores", "entry", "final_score", "format_report",
           "no_longer_submitted", "refresh_report", "write_entries", "write_json", "write_report", "write_whole"]
