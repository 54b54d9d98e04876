"""nbgrader's filesystem exchange, hardened for a class on one JupyterHub with an account per student.

nbgrader's exchange is a shared folder whose file names say who submitted and when. On a machine
that students share, three things of the default exchange do not hold, and the kit's plugins and
the clerk close them (docs/deploy.md says why this and not ngshare):

* **Classmates.** nbgrader leaves a submission folder mode 0777 and readable by everyone (only the
  listing of ``inbound/`` is closed). ``PrivateSubmit`` writes the submission in a private staging
  folder and moves it into ``inbound/`` whole, readable and writable by its owner and the course's
  grader group only (``inbound/`` is set-group-id to that group and has the sticky bit, so no
  student renames or deletes another's entry).
* **The clock.** nbgrader believes the submission's ``timestamp.txt`` and the time in its folder
  name, both written by the student's own process. The **clerk** (``python -m grader.hub_exchange``,
  a JupyterHub service running as the course's grader account) takes each submission out of
  ``inbound/`` within a second of its arrival and keeps a copy of its own in ``received/`` (the
  grader's alone), named with the time the kernel last changed anything in it (the largest
  ``ctime`` of its files, which no user can set back). The copy is the grader's: a student who kept
  a folder or file of the submission open cannot change it afterwards. Collect takes in whatever
  the clerk has not, the same way. The copies are the grader's files, which the student's disk quota
  does not bound: the grader keeps at most ``kept_mib`` of one student's (the rest stays in
  ``inbound/``, reported).
* **What a student plants.** Anything in ``inbound/`` that is not a folder owned by the student it
  names (a link, a pipe, a file, an entry in a classmate's name, an odd name) is never taken in:
  ``GuardedCollect`` reports it and collects everyone else; so is an entry that cannot be read (its
  mode keeps the grader out). Inside a submission, only regular files of the folder's owner with one
  name are read, within a size limit, and each is read from the folder as it was opened, one name at
  a time from its parent's descriptor: no path through the student's folder is followed, so a
  sub-folder swapped for a link while the clerk copies (by a shell the student kept inside) leads
  nowhere. The rest is reported and left out.

Enable them in nbgrader's configuration (deploy/hub/kithub/config_files.py writes both), and the panel's clear
refusals in the students' servers' Jupyter configuration:

    c.ExchangeFactory.submit = "grader.hub_exchange.PrivateSubmit"     # the students' servers
    c.ExchangeFactory.collect = "grader.hub_exchange.GuardedCollect"   # the course's nbgrader_config.py
    c.ServerApp.jpserver_extensions = {"grader.hub_exchange.panel": True}

One file per concern: ``entries.py`` (what is in the exchange, read without trusting it),
``submit.py`` (the student's side), ``clerk.py`` (taking submissions in, and the clerk's service),
``collect.py`` (the grader's side), ``panel.py`` (the Assignments panel's refusals), ``pages.py`` (the
grader service's pages: what a student wrote stays text in the instructor's browser).
"""
from .clerk import main, take_in
from .collect import GuardedCollect, OwnerCheckedCollect
from .entries import (MAX_ENTRIES, MAX_FILE_BYTES, MAX_TOTAL_BYTES, RECEIVED, STUDENT_CLOCK, TIME_FORMAT,
                      last_change, parse_name, read_submission, refusal)
from .submit import PrivateSubmit

__all__ = ["GuardedCollect", "MAX_ENTRIES", "MAX_FILE_BYTES", "MAX_TOTAL_BYTES", "OwnerCheckedCollect",
           "PrivateSubmit", "RECEIVED", "STUDENT_CLOCK", "TIME_FORMAT", "last_change", "main", "parse_name",
           "read_submission", "refusal", "take_in"]
