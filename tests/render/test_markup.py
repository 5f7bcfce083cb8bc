"""Card text to HTML: escaped, sanitized, highlighted, math kept for MathJax, nothing remote."""

from __future__ import annotations

from quizgen.render.markup import highlight, markdown, pygments_css


def test_raw_html_is_text_and_javascript_links_are_refused() -> None:
    out = markdown("<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))")
    assert "<script" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert 'href="javascript:' not in out


def test_remote_images_become_links_and_local_ones_stay() -> None:
    out = markdown("![diagram](https://example.com/d.png) ![local](img/d.png)")
    assert '<a href="https://example.com/d.png">diagram</a>' in out
    assert '<img src="img/d.png" alt="local" />' in out
    assert "<img" not in markdown("![](//example.com/d.png)")


def test_math_survives_markdown_and_code_is_left_alone() -> None:
    out = markdown(r"Loss \( \frac{1}{n} \sum_i x_i \) and `\(code\)`")
    assert r'<span class="math">\( \frac{1}{n} \sum_i x_i \)</span>' in out
    assert r"<code>\(code\)</code>" in out


def test_fenced_code_is_highlighted_with_classes_only() -> None:
    out = markdown("```python\nw = {{x}}\n```")
    assert out.startswith('<pre class="highlight"><code>') and 'style="' not in out
    assert '<span class="n">w</span>' in highlight("w = 1")
    css = pygments_css()
    assert ".highlight .k" in css and ".nightMode .highlight .k" in css and ".dark .highlight .k" in css
