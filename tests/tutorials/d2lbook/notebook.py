def _clean_if_branches(lines, tab):
    """Handle special if branchs
    """
    #TODO make it more general purpose
    mark = 'tab.selected'
    if not any([mark in l for l in lines]):
        return _clean_if_branches_old(lines, tab)
    # 1 means in a matched if branch,
    # 2 means in a not matched if branch
    # 0 means others
    mode = 0
    indent = 0
    _leading_spaces = lambda l: len(l) - len(l.lstrip())
    new_lines = []
    for i, l in enumerate(lines):
        assert '\t' not in l, 'please use space in ' + l
        if 'if' in l and mark in l:
            mode = 1 if (f'"{tab}"' in l or f"'{tab}'" in l) else 2
            indent = _leading_spaces(l)
            continue
        if mode != 0 and l.strip() != '' and _leading_spaces(l) <= indent:
            # out of the if branch
            mode = 0
        if mode == 0:
            new_lines.append(l)
        if mode == 1:
            new_lines.append(l[4:])
    return new_lines

def _clean_if_branches_old(lines, tab):
    """Handle speciall if branchs
    """
    #TODO make it more general purpose
    mark = 'd2l.USE_'
    matched = False
    for l in lines:
        if mark in l:
            matched = True
            break
    if not matched:
        return lines
    # 1 means in a matched if branch,
    # 2 means in a not matched if branch
    # 0 means others
    mode = 0
    indent = 0
    _leading_spaces = lambda l: len(l) - len(l.lstrip())
    new_lines = []
    for i, l in enumerate(lines):
        assert '\t' not in l, 'please use space in ' + l
        if 'if' in l and mark in l:
            mode = 1 if mark+tab.upper() in l else 2
            indent = _leading_spaces(l)
            continue
        if mode != 0 and l.strip() != '' and _leading_spaces(l) <= indent:
            # out of the if branch
            mode = 0
        if mode == 0:
            new_lines.append(l)
        if mode == 1:
            new_lines.append(l[4:])
    return new_lines
