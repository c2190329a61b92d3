"""The editions: catalogs that follow the English, the Chinese build, switcher and search."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.book import (
    CHAPTERS,
    LANGUAGES,
    ROOT,
    SOURCE_LANGUAGE,
    copy_of_the_book,
    page,
    pages_logged,
)

from tensorbook_build.build import (
    EXECUTE,
    catalog_update_command,
    gettext_command,
    sphinx_command,
)
from tensorbook_build.catalogs import catalog_errors, translations
from tensorbook_build.extensions.editions import edition_links, translate_program_line
from tensorbook_build.settings import LAYOUT, edition
from tensorbook_build.translate import StaleMessage, catalog_problems, stale_messages

LOCALE_DIR = LAYOUT.locales

TRANSLATIONS = [code for code in LANGUAGES if code != SOURCE_LANGUAGE]
PAGES = [*CHAPTERS, "terminology", "status"]
CJK = re.compile(r"[\u4e00-\u9fff]")


def run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)


def extract(tree: Path, pot_dir: Path) -> None:
    result = run(gettext_command(pot_dir, docs=tree / "docs", conf=tree / "conf"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_languages_are_listed_once_in_the_settings():
    assert SOURCE_LANGUAGE == "en"
    assert list(LANGUAGES) == ["en", "zh_CN"]
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    naming = sorted(
        name
        for name in tracked
        if name
        and not name.startswith(("tests/", "docs/locales/"))
        and name != "conf/tensorbook_build/settings.py"
        and (ROOT / name).is_file()
        and "zh_CN" in (ROOT / name).read_text(encoding="utf-8", errors="replace")
    )
    assert naming == [], "only the settings, the catalogs and the tests may name zh_CN"


# -- The staleness gate -------------------------------------------------------------------


@pytest.mark.book
def test_every_catalog_is_translated_and_follows_the_english(tmp_path):
    """The gate itself: what CI runs on every change."""
    extract(ROOT, tmp_path / "gettext")
    problems = stale_messages(tmp_path / "gettext", LOCALE_DIR, TRANSLATIONS)
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.book
def test_the_gate_fails_when_an_english_sentence_changes(tmp_path):
    tree = copy_of_the_book(tmp_path)
    tensors = tree / "docs" / "tensors.md"
    old = "A tensor is an n-dimensional array of numbers of one type."
    new = "A tensor is an n-dimensional array whose numbers all have one type."
    text = tensors.read_text(encoding="utf-8")
    assert old in text
    tensors.write_text(text.replace(old, new), encoding="utf-8")

    pot_dir = tree / "build" / "gettext"
    extract(tree, pot_dir)
    locale_dir = tree / "docs" / "locales"
    for language in TRANSLATIONS:
        result = run(catalog_update_command(pot_dir, locale_dir, language))
        assert result.returncode == 0, result.stdout + result.stderr

    problems = stale_messages(pot_dir, locale_dir, TRANSLATIONS)
    catalog = locale_dir / "zh_CN" / "LC_MESSAGES" / "tensors.po"
    assert [(p.catalog, p.problem) for p in problems] == [(catalog, "fuzzy")]
    (problem,) = problems
    assert problem.english.startswith(new)
    lines = catalog.read_text(encoding="utf-8").splitlines()
    assert lines[problem.line - 1].startswith(f'msgid "{new}')  # the line it names
    assert str(problem).startswith(f"{catalog}:{problem.line}: fuzzy: ")
    # the old sentence is gone, not kept as an obsolete #~ entry
    po_text = catalog.read_text(encoding="utf-8")
    assert old not in po_text
    assert "#~" not in po_text


def write_catalog(path: Path, entries: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
    path.write_text(header + entries, encoding="utf-8")
    return path


def test_the_gate_names_file_line_and_english_of_each_problem(tmp_path):
    po = write_catalog(
        tmp_path / "zh_CN" / "LC_MESSAGES" / "page.po",
        'msgid "Done."\nmsgstr "完成。"\n\n'
        'msgid "Not yet."\nmsgstr ""\n\n'
        '#, fuzzy\nmsgid "Changed."\nmsgstr "旧的。"\n\n'
        '#~ msgid "Gone."\n#~ msgstr "没了。"\n',
    )
    problems = catalog_problems(po)
    assert [(p.line, p.problem, p.english) for p in problems] == [
        (8, "untranslated", "Not yet."),
        (12, "fuzzy", "Changed."),
        (15, "obsolete (#~), remove it", "Gone."),
    ]
    assert str(problems[0]) == f"{po}:8: untranslated: 'Not yet.'"


def test_the_gate_notices_catalogs_that_were_not_refreshed(tmp_path):
    pot_dir, locale_dir = tmp_path / "gettext", tmp_path / "locales"
    write_catalog(pot_dir / "page.pot", 'msgid "Kept."\nmsgstr ""\n\nmsgid "New."\nmsgstr ""\n')
    write_catalog(pot_dir / "new_page.pot", 'msgid "Hello."\nmsgstr ""\n')
    catalogs = locale_dir / "zh_CN" / "LC_MESSAGES"
    write_catalog(
        catalogs / "page.po", 'msgid "Kept."\nmsgstr "保留。"\n\nmsgid "Old."\nmsgstr "旧。"\n'
    )
    write_catalog(catalogs / "gone_page.po", 'msgid "Bye."\nmsgstr "再见。"\n')
    problems = stale_messages(pot_dir, locale_dir, ["zh_CN"])
    assert {(p.catalog.name, p.problem, p.english) for p in problems} == {
        ("new_page.po", "no catalog for this page; run nox -s translate", "new_page"),
        ("page.po", "no longer in the English", "Old."),
        ("page.po", "not in the catalog; run nox -s translate", "New."),
        ("gone_page.po", "catalog of a page that is gone", ""),
    }
    assert all(isinstance(p, StaleMessage) for p in problems)


def test_the_gate_runs_as_a_program(tmp_path):
    """``python -m tensorbook_build.translate`` is what ``nox -s translate`` ends with."""
    pot_dir = tmp_path / "gettext"
    write_catalog(pot_dir / "index.pot", 'msgid "Nothing here."\nmsgstr ""\n')
    result = run([sys.executable, "-m", "tensorbook_build.translate", "--pot-dir", str(pot_dir)])
    assert result.returncode == 1
    assert "index.po" in result.stdout
    assert "no longer in the English" in result.stdout
    assert "messages do not follow the English (zh_CN)" in result.stdout


# -- Bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda lines, i: lines.__setitem__(i + 1, 'msgstr "张量'), "not a comment, keyword"),
        (lambda lines, i: lines.pop(i), "msgstr without a msgid before it"),
        (lambda lines, i: lines.pop(i + 1), "msgid without a msgstr after it"),
    ],
    ids=["unclosed-string", "msgid-missing", "msgstr-missing"],
)
def test_a_broken_catalog_is_reported_with_file_and_line(tmp_path, edit, problem):
    po = tmp_path / "tensors.po"
    lines = (LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "tensors.po").read_text("utf-8").splitlines()
    index = lines.index('msgid "Tensors"')
    edit(lines, index)
    po.write_text("\n".join(lines) + "\n", encoding="utf-8")
    errors = catalog_errors(po)
    assert len(errors) >= 1
    assert errors[0].startswith(f"{po}:{index + 1}: ") or errors[0].startswith(
        f"{po}:{index + 2}: "
    )
    assert problem in errors[0]


@pytest.mark.book
def test_a_broken_catalog_stops_the_build_naming_file_and_line(tmp_path):
    tree = copy_of_the_book(tmp_path)
    po = tree / "docs" / "locales" / "zh_CN" / "LC_MESSAGES" / "cuda.po"
    lines = po.read_text(encoding="utf-8").splitlines()
    index = lines.index('msgid "CUDA tensors"')
    lines[index + 1] = 'msgstr "CUDA 张量'
    po.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run(
        sphinx_command(
            tmp_path / "out" / "html", language="zh_CN", docs=tree / "docs", conf=tree / "conf"
        )
    )
    log = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"{po}:{index + 2}: not a comment, keyword or quoted string" in log
    assert "has no executed outputs" not in log  # stopped before it read a page
    assert "Versions\n========" not in log  # not Sphinx's crash report
    assert "Traceback" not in log


def test_what_a_language_needs_is_a_trait_of_its_edition_not_read_from_its_code():
    """Search splitting and PDF punctuation follow Edition's fields, so that a language
    code's prefix ("zh") decides nothing anywhere in the build."""
    package = LAYOUT.conf / "tensorbook_build"
    keyed = [
        f"{path.relative_to(package)}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"""startswith\(\s*["']zh|==\s*["']zh""", line)
    ]
    assert keyed == []
    chinese = edition("zh_CN")
    assert (chinese.word_splitter, chinese.cjk) == ("jieba", True)
    assert (edition(SOURCE_LANGUAGE).word_splitter, edition(SOURCE_LANGUAGE).cjk) == ("", False)


@pytest.mark.book
def test_a_language_conf_py_does_not_list_stops_the_build(tmp_path):
    result = run(sphinx_command(tmp_path / "html", language="fr"))
    log = result.stdout + result.stderr
    assert result.returncode != 0
    assert "language 'fr' is not one of the book's languages (en, zh_CN)" in log
    assert "tensorbook_build.settings.EDITIONS" in log


# -- The built editions ------------------------------------------------------------------


def pre_blocks(html: str) -> list[str]:
    """Every code block and output on a page, as the reader sees them."""
    article = html[html.index("<article") : html.index("</article>")]
    return re.findall(r"<pre>(.*?)</pre>", article, re.DOTALL)


def in_words_of(language: str, blocks: list[str]) -> list[str]:
    """Code and outputs as a translated edition shows them: each line a program printed
    from tensorbook.wording, in the words of the edition's catalog."""
    words = translations(LAYOUT.catalogs(language) / "sphinx.po")

    def line(text: str) -> str:
        prefix = "<span></span>" if text.startswith("<span></span>") else ""
        return prefix + translate_program_line(text[len(prefix) :], lambda m: words.get(m, m))

    return ["\n".join(line(text) for text in block.split("\n")) for block in blocks]


def images(html: str) -> list[str]:
    return re.findall(r'<img [^>]*src="([^"]+)"', html[html.index("<article") :])


@pytest.mark.book
@pytest.mark.alone
def test_the_pages_execute_once_before_every_edition_renders_them_from_the_cache(book_builds):
    _, builds = book_builds
    pages = sorted(f"{chapter}.md" for chapter in CHAPTERS)
    assert pages_logged(builds[EXECUTE].output, "executed") == pages
    for language in LANGUAGES:
        assert "Executing notebook" not in builds[language].output
        assert pages_logged(builds[language].output, "Using cached notebook") == pages


@pytest.mark.book
@pytest.mark.parametrize("language", TRANSLATIONS)
def test_a_translated_page_has_translated_prose_and_the_same_code_and_outputs(built_book, language):
    for name in PAGES:
        english, translated = page(built_book, name), page(built_book, name, language)
        assert f'<html lang="{language.replace("_", "-")}"' in translated
        # the same code and outputs, what the programs say in the edition's words
        assert in_words_of(language, pre_blocks(english)) == pre_blocks(translated), name
        assert images(english) == images(translated), name
        article = translated[translated.index("<article") : translated.index("</article>")]
        paragraphs = re.findall(r"<p>(.*?)</p>", article, re.DOTALL)
        assert paragraphs, name
        untranslated = [p for p in paragraphs if not CJK.search(p) and len(p) > 40]
        assert not untranslated, (name, untranslated)
    tensors = page(built_book, "tensors", language)
    assert "<h1>张量" in tensors
    # the executed device line, in the edition's words (tensorbook.wording, sphinx.po)
    assert "Executed on " not in tensors
    assert "运行于 CPU（" in tensors or "运行于 GPU " in tensors


@pytest.mark.book
def test_every_page_switches_to_the_same_page_in_each_other_edition(built_book):
    site = built_book / "html"
    for language in LANGUAGES:
        for name in PAGES:
            html = page(built_book, name, language)
            switcher = re.search(r'<nav class="tb-language-switcher".*?</nav>', html, re.DOTALL)
            assert switcher, (language, name)
            links = dict(re.findall(r'hreflang="([^"]+)" lang="[^"]+">([^<]+)</a>', switcher[0]))
            hrefs = re.findall(r'href="([^"]+)"', switcher[0])
            others = [code for code in LANGUAGES if code != language]
            assert len(hrefs) == len(others) == len(links), (language, name)
            for code, href in zip(others, hrefs, strict=True):
                assert href == f"../{code}/{name}.html"
                target = (site / language / href).resolve()
                assert target == (site / code / f"{name}.html").resolve()
                assert target.exists(), (language, name, href)
            assert 'aria-current="page"' in switcher[0]


@pytest.mark.book
def test_the_site_index_offers_every_edition_with_and_without_javascript(built_book):
    index = (built_book / "html" / "index.html").read_text(encoding="utf-8")
    for code, name in LANGUAGES.items():
        assert f'<a href="{code}/index.html" hreflang="{code.replace("_", "-")}"' in index
        assert name in index
        assert (built_book / "html" / code / "index.html").exists()
    script = index[index.index("<script>") : index.index("</script>")]
    assert json.dumps(list(LANGUAGES)) in script
    assert "navigator.languages" in script
    assert "location.replace" in script
    assert not re.search(r'(?:src|href)="(?:https?:)?//', index)


def search_index(built_book: Path, language: str) -> dict:
    text = (built_book / "html" / language / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def pages_found(index: dict, term: str) -> set[str]:
    found = set()
    for table in ("terms", "titleterms"):
        hits = index[table].get(term, [])
        for number in [hits] if isinstance(hits, int) else hits:
            found.add(index["docnames"][number])
    return found


@pytest.mark.book
@pytest.mark.parametrize(
    ("language", "term", "expected"),
    [
        ("zh_CN", "张量", "tensors"),
        ("zh_CN", "自动求导", "autograd"),
        ("zh_CN", "反向传播", "tensors_by_hand"),
        ("zh_CN", "计算图", "autograd"),
        ("en", "tensor", "tensors"),
        ("en", "autograd", "autograd"),
    ],
)
def test_search_finds_the_page_for_a_term(built_book, language, term, expected):
    assert expected in pages_found(search_index(built_book, language), term)


def test_the_chinese_search_keeps_every_term_of_the_terminology_page_whole():
    """Each Chinese term of the table is in the word list jieba is given."""
    table = (ROOT / "docs" / "terminology.md").read_text(encoding="utf-8")
    terms = {row.split("|")[2].strip() for row in table.splitlines() if row.startswith("| ")}
    terms -= {"中文", "---"}
    words = {
        line.split()[0]
        for line in LAYOUT.search_words("zh_CN").read_text("utf-8").splitlines()
        if line.strip()
    }
    assert len(terms) > 25
    assert terms <= words, sorted(terms - words)


def test_the_switcher_links_are_relative_so_the_site_works_under_any_path():
    links = edition_links("a/b", "zh_CN")
    assert [(e["href"], e["tag"], e["current"]) for e in links] == [
        ("../../en/a/b.html", "en", False),
        ("../../zh_CN/a/b.html", "zh-CN", True),
    ]


@pytest.mark.book
def test_a_third_language_is_one_line_and_its_catalogs(built_book, tmp_path):
    """Adding an edition: one line in tensorbook_build.settings.EDITIONS, the catalogs,
    and nothing else. The copy's own build package is the one its build imports."""
    tree = copy_of_the_book(tmp_path)
    settings = tree / "conf" / "tensorbook_build" / "settings.py"
    text = settings.read_text(encoding="utf-8")
    closing = '\n)\n"""The book\'s editions'
    assert text.count(closing) == 1
    settings.write_text(
        text.replace(closing, '\n    Edition("pt_BR", "Português"),' + closing), encoding="utf-8"
    )
    shutil.copytree(
        tree / "docs" / "locales" / TRANSLATIONS[0], tree / "docs" / "locales" / "pt_BR"
    )
    # the outputs the book already executed, so that no edition executes anything
    shutil.copytree(built_book / ".jupyter_cache", tree / "build" / ".jupyter_cache")
    result = subprocess.run(
        [sys.executable, "-m", "tensorbook_build", "-q"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree / "conf")},
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    assert f"built into {tree / 'build' / 'html'}" in log
    assert pages_logged(log, "executed") == []
    site = tree / "build" / "html"
    codes = [*LANGUAGES, "pt_BR"]
    html = page(tree / "build", "tensors")
    switcher = html[html.index('class="tb-language-switcher"') :]
    switcher = switcher[: switcher.index("</nav>")]
    for code in codes:
        tag = code.replace("_", "-")
        assert (site / code / "tensors.html").is_file(), code
        assert f'lang="{tag}"' in switcher, code
        assert f'<a href="{code}/index.html" hreflang="{tag}"' in (site / "index.html").read_text(
            encoding="utf-8"
        )
        assert f'data-edition="{code}"' in (site / "404.html").read_text(encoding="utf-8")
        assert f"{code}/tensors.html" in (site / "sitemap.xml").read_text(encoding="utf-8")
    assert 'lang="pt-BR"' in (site / "pt_BR" / "tensors.html").read_text(encoding="utf-8")


def test_what_programs_print_is_listed_once_for_the_catalogs():
    """The template the catalog build extracts lists exactly tensorbook.wording's sentences."""
    from tensorbook.wording import TEMPLATES

    listed = (LAYOUT.conf / "_templates" / "program-wording.html").read_text(encoding="utf-8")
    assert re.findall(r'\{\{ _\("(.*?)"\) \}\}', listed) == list(TEMPLATES)
