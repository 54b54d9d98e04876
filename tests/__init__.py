"""The kit's tests (tests/conftest.py says how they are laid out). A package so that pytest puts the checkout,
not this folder, on sys.path: tests/grader/ would otherwise stand for the grader package."""
