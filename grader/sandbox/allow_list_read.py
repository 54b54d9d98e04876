"""Read the sandbox's allow-list once, in the process the local workers are forked from.

Imported (for this one effect) by the forkserver (``workers.FORKSERVER_PRELOAD``), or by the command
before it forks its workers (it has read the list to start their zygotes): reading every
importable distribution's file list takes about 0.15 s, and each worker forked afterwards has the
list already, as each of its zygotes has from it (``zygote.main``).
"""

from .allow_list import import_roots, readable_paths

try:
    readable_paths()
    import_roots()
except Exception:  # e.g. a distribution's broken file list: each worker meets it, and says so, itself
    pass
