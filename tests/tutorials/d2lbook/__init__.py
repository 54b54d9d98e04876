"""A stand-in for d2lbook, the tool that builds d2l's notebooks: only the two functions of
``d2lbook/notebook.py`` that keep one framework's lines of a cell written for several
(``if tab.selected('pytorch'):``), verbatim (see ``sources.toml``, entry ``d2lbook_tab_branches``).
``extract.py`` uses them to take the PyTorch code of d2l-en's cells as d2lbook does."""
