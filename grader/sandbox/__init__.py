"""The sandbox: runs one student's notebook so that nothing in it can decide its own grade.

Rooms, one defence each (read them in this order):

* ``policy.py``      what a notebook may do and use (limits from the course's settings)
* ``supervisor.py``  the trusted side: drives the notebook cell by cell, keeps time and size, runs
                     trusted tests (``trusted_tests.py``) in its own process
* ``protocol.py``    the messages between supervisor and student's process, and how they are read
* ``grader/plain_values.py`` the only data that crosses back: plain values, strictly decoded (beside the
                     sandbox, bound file by file as ``grader/checks.py`` is, which the test cells import it through)
* ``bubblewrap.py``  the first wall: the zygote runs in bubblewrap, on an allow-list of files
                     (``allow_list.py``: what may be read; read once before the local workers are
                     forked: ``allow_list_read.py``)
* ``zygote.py``      a clean pre-warmed interpreter that forks the student's process
* ``keyrings.py``    it leaves the instructor's session keyring as it starts
* ``shared_state.py`` what its submissions share of the sandbox (read-only), checked after each one
* ``workers.py``     the grading worker processes that keep the zygotes (none outlives the command;
                     a sandbox that fails under a notebook is replaced, and the notebook graded again);
                     ``spare_zygotes.py``: the command's, started before it forks its workers (speed)
* ``namespaces.py``  how it starts one: PID 1 of a PID namespace of its own, through a namespace parent;
                     how a sandbox is ended, even as it starts
* ``child.py``       the student's process: walls up, then one command at a time
* ``mounts.py``      its own ``/proc``, ``/dev`` (with ``/dev/shm``) and a ``/tmp`` with quotas;
                     capabilities dropped
* ``landlock.py``    the kernel's second file wall, and its network and signal wall
* ``seccomp.py``     no new process, no other program, no keyring: what Docker refuses, and more
* ``audit.py``       the audit hook that explains refusals
* ``recorder.py``    outputs into nbformat
* ``outputs.py``     what an output may hold (nbformat's schema and the kit's limits), clipped, within
                     the notebook's budget
* ``guard.py``       puts back the machinery plain (in-process) nbgrader test cells rely on
* ``shell.py``       the IPython shell, as a kernel's
* ``scratch.py``     the scratch folder and the assignment's data files

The trust boundary is the process: see docs/threat-model.md.
"""
