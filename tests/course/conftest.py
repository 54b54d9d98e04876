"""The course's tests (``-m course``): the lessons and their build, the exercises in both languages, the
graph explorer, the lab and the course in a real browser, and the distribution (sdist, wheel, extras) that
carries them to a learner. None is in ``make test-quick`` (each runs notebooks, a lab or a build)."""
