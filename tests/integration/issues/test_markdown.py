"""Text from the relay shown in a repair's markdown description stays text: no link, image
or HTML of theirs survives, while letters, digits and spaces read as they were."""

from custom_components.pacerelle.issues.markdown import markdown_text


def test_markup_is_escaped_and_words_are_not() -> None:
    hostile = "[click](https://evil.example) ![x](y) <b>bold</b> `code` *em*"
    escaped = markdown_text(hostile)
    for mark in "[]()!<>`*/":
        assert f"\\{mark}" in escaped
    assert escaped.replace("\\", "") == hostile
    assert markdown_text("Ana's phone 2") == "Ana\\'s phone 2"
    assert markdown_text("Zoé 東京") == "Zoé 東京"  # non-ASCII letters stay
