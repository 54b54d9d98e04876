"""The language of what a student reads: test messages, "k of n hidden checks passed", ``kitgrade check``.

An exercise notebook names its language in its metadata, ``{"kitgrade": {"language": "zh"}}``
(``exercises/build.py`` writes it for both languages; ``course_files`` reads a notebook file's with
``notebook_language`` too). Anything else there, or nothing, means
English: the field is in the student's file, so a changed one only changes the words they read.
What an instructor reads (reports, findings, errors of the course) stays in English.

The Chinese follows the course's glossary (``tests/course/test_notebooks.py``): it speaks to the learner
as 你, never of 用户.
"""

from __future__ import annotations

import re

LANGUAGES = ("en", "zh")
METADATA_KEY = "kitgrade"  # the notebook metadata the kit reads (grader.course.POLICY_KEY)

MESSAGES = {
    # grader/checks.py: a failed check
    "check": {"en": "{what}: expected {expected}, got {got}, for input {inp}",
              "zh": "{what}：应为 {expected}，实际得到 {got}，输入：{inp}"},
    "shape": {"en": "shape {shape}: {values}", "zh": "形状 {shape}：{values}"},
    "not_a_number": {"en": "{got} (not a number, array or tensor)", "zh": "{got}（不是数、数组或张量）"},
    "not_an_array": {"en": "{got} (not a number or array)", "zh": "{got}（不是数或数组）"},
    "shape_only": {"en": "shape {shape}", "zh": "形状 {shape}"},
    "off_by": {"en": "{got} (off by up to {gap}; allowed: rtol={rtol}, atol={atol})",
               "zh": "{got}（最大偏差 {gap}；允许：rtol={rtol}，atol={atol}）"},
    "no_gradient": {"en": "no gradient", "zh": "没有梯度"},
    "raised": {"en": "the code raised, as the notebook reports: {text}", "zh": "代码抛出了异常（笔记本报告的内容）：{text}"},
    "not_answered": {"en": "not answered yet: the task still raises NotImplementedError, as it was handed out",
                     "zh": "尚未作答：这道题仍然抛出 NotImplementedError（保持发下来时的样子）"},
    "no_answer_within": {"en": "no answer within {seconds} s", "zh": "{seconds} 秒内没有答案"},
    "no_answer": {"en": "no answer ({text})", "zh": "没有答案（{text}）"},
    "did_not_answer": {"en": "the notebook did not answer", "zh": "笔记本没有作答"},
    "malformed": {"en": "the notebook's answer was malformed", "zh": "笔记本的答案格式不对"},
    # grader/sandbox/trusted_tests.py: the only output of a hidden part that failed
    "hidden_count": {"en": "{passed} of {total} hidden checks passed", "zh": "{total} 项隐藏检查中通过了 {passed} 项"},
    "hidden_rest": {"en": "; the others could not run", "zh": "；其余的未能运行"},
    # grader/notebook/preprocessors.py: a hidden-test cell's error in feedback, its message left out
    "details_hidden": {"en": "{ename} (details hidden: this cell holds hidden tests)",
                       "zh": "{ename}（详情已隐藏：这个单元含有隐藏测试）"},
    # grader/commands/check.py: kitgrade check's lines
    "PASS": {"en": "PASS", "zh": "通过"},
    "PARTIAL": {"en": "PARTIAL", "zh": "部分通过"},
    "FAIL": {"en": "FAIL", "zh": "未通过"},
    "WRITTEN": {"en": "WRITTEN", "zh": "书面作答"},
    "answered": {"en": "answered; your instructor grades it", "zh": "已作答；由你的老师评分"},
    "unanswered": {"en": "not answered yet: left as released, it scores 0", "zh": "尚未作答：原样提交得 0 分"},
    "graded_by_instructor": {"en": "your instructor grades it", "zh": "由你的老师评分"},
    "no_tests": {"en": "{path}: no autograded tests found", "zh": "{path}：没有找到自动评分的测试"},
    "no_tests_written": {"en": " ({count} written answer(s), graded by your instructor)",
                         "zh": "（{count} 道书面作答题，由你的老师评分）"},
    "note": {"en": "note: {text}", "zh": "注意：{text}"},
    "by_hand": {"en": "; {points} more point(s) for written answers, graded by your instructor",
                "zh": "；另有 {points} 分属于书面作答，由你的老师评分"},
    "total": {"en": "total: {score}/{max_score} (visible tests; hidden tests run when your instructor grades{by_hand})",
              "zh": "合计：{score}/{max_score}（可见测试；隐藏测试在老师评分时运行{by_hand}）"},
    # grader/commands/check.py on a copy of one of the kit's own exercises (grader/commands/kit_exercises.py)
    "total_hidden": {"en": "total: {score}/{max_score} (visible and hidden tests of the kit's exercise {exercise}; a "
                           "hidden check says only how many passed{by_hand})",
                     "zh": "合计：{score}/{max_score}（本套件练习 {exercise} 的可见测试和隐藏测试；隐藏检查只报告通过了几项{by_hand}）"},
    "total_source": {"en": "total: {score}/{max_score} (every test in the notebook, its hidden ones too{by_hand})",
                     "zh": "合计：{score}/{max_score}（笔记本中的全部测试，包括其中的隐藏测试{by_hand}）"},
    "tests_differ": {"en": "the test cells {cells} are not those of the kit's exercise {exercise}, so its hidden tests did "
                           "not run; `autograd-kit reset` gives you a fresh copy of the exercise",
                     "zh": "测试单元 {cells} 与本套件练习 {exercise} 的不同，所以没有运行它的隐藏测试；"
                           "`autograd-kit reset` 可以给你一份新的练习副本"},
    "instructor_version": {"en": "this notebook holds solutions and hidden tests: it is an exercise as its instructor "
                                 "writes it, not a student's copy (`autograd-kit workspace` gives you those, blank)",
                           "zh": "这个笔记本含有答案和隐藏测试：它是老师编写的练习原稿，不是学生的副本"
                                 "（`autograd-kit workspace` 会给你空白的副本）"},
}


def raised(reported: str, language: str) -> str:
    """What a test says of student code that raised (``reported``: what the student's process says it
    raised): a task still raising ``NotImplementedError()``, as nbgrader hands it out, is "not answered
    yet"; anything else is quoted. Text for people only: it changes no point."""
    if reported.strip().rstrip(":").strip() == "NotImplementedError":
        return say("not_answered", language)
    return say("raised", language, text=reported)


def notebook_language(nb) -> str:
    """The language a notebook's student reads: its ``kitgrade.language`` if the kit knows it, else English."""
    try:
        meta = nb.get("metadata", {}).get(METADATA_KEY, {})
        language = meta.get("language") if isinstance(meta, dict) else None
    except AttributeError:
        return "en"
    return language if isinstance(language, str) and language in LANGUAGES else "en"


def say(key: str, language: str, **fields) -> str:
    """The message ``key`` in ``language`` (English for an unknown one), its fields filled in.

    In Chinese a space beside a field separates it from Chinese text only where the field's text
    there is not Chinese: "应为 [1.0]", but "应为在同一个 y 上调用 2 次", never "应为 在同一个".
    """
    texts = MESSAGES[key]
    template = texts.get(language, texts["en"])
    if language != "zh":
        return template.format(**fields)

    def field(match):
        before, value, after = match.group(1), format(fields[match.group(2)]), match.group(3)
        keep_before = before and value and not _CHINESE.match(value[0])
        keep_after = after and value and not _CHINESE.match(value[-1])
        return (" " if keep_before else "") + value + (" " if keep_after else "")
    return _FIELD.sub(field, template)


_FIELD = re.compile(r"( ?)\{(\w+)\}( ?)")
_CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")  # characters, and punctuation such as ，（


def hidden_count_pattern() -> re.Pattern:
    """What a failed hidden part may say in any language: a count only, so feedback keeps it."""
    forms = []
    for language in LANGUAGES:
        count = re.escape(say("hidden_count", language, passed="PASSED", total="TOTAL"))
        count = count.replace("PASSED", r"\d+").replace("TOTAL", r"\d+")
        forms.append(f"{count}(?:{re.escape(say('hidden_rest', language))})?")
    return re.compile("^(?:" + "|".join(forms) + ")$")
