"""What one graded notebook may do and how much of the machine it may use, built in one place.

The numbers come from the course's settings (``grader.foundations.settings.KitGrade``, where every default
lives); ``autograde``, the release proof and ``check`` all build their policy with ``policy_for``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limits:
    """The limits the supervisor (outside the student's process) and the kernel enforce."""

    cell_timeout: float          # seconds of wall-clock time per cell
    notebook_timeout: float      # seconds of wall-clock time for the whole notebook
    output_limit_bytes: int      # outputs kept per notebook, error outputs included
    memory_limit_mb: int         # address space of the student's process
    file_size_limit_mb: int      # largest file student code may write
    notebook_size_limit_mb: int  # largest submitted notebook file that is read at all
    data_files_limit: int        # files copied beside the notebook (the assignment's data)
    data_size_limit_mb: int      # and their total size
    scratch_size_limit_mb: int = 512   # the notebook's own /tmp: bytes (a tmpfs, counted in memory)
    scratch_files_limit: int = 10_000  # and files
    unsafe_no_sandbox: bool = False    # the instructor's own test: grade without bubblewrap

    @classmethod
    def from_settings(cls, settings) -> "Limits":
        defaults = cls.__dataclass_fields__
        return cls(**{name: getattr(settings, name, defaults[name].default) for name in defaults})


@dataclass
class SandboxPolicy:
    """Limits plus what the notebook may touch and import."""

    limits: Limits
    protected_paths: list[str] = field(default_factory=list)
    forbidden_imports: list[str] = field(default_factory=list)
    scratch_dir: str = ""

    def for_scratch(self, scratch_dir: str) -> "SandboxPolicy":
        return SandboxPolicy(self.limits, list(self.protected_paths), list(self.forbidden_imports), scratch_dir)

    def to_message(self) -> dict:
        """The part the student's process needs to set itself up (nothing secret)."""
        return {"scratch_dir": self.scratch_dir, "protected_paths": self.protected_paths,
                "forbidden_imports": self.forbidden_imports, "memory_limit_mb": self.limits.memory_limit_mb,
                "file_size_limit_mb": self.limits.file_size_limit_mb,
                "scratch_size_limit_mb": self.limits.scratch_size_limit_mb,
                "scratch_files_limit": self.limits.scratch_files_limit,
                "output_limit_bytes": self.limits.output_limit_bytes}


def policy_for(settings, forbidden_imports=(), protected_paths=()) -> SandboxPolicy:
    """The policy of one assignment: the course's limits, its forbidden imports, its protected paths."""
    return SandboxPolicy(Limits.from_settings(settings), list(protected_paths), sorted(set(forbidden_imports)))
