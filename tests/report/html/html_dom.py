"""A small DOM for tests: the page parsed by the stdlib HTML parser, so tests ask about elements and
attributes instead of matching strings."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID_ELEMENTS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]
    children: list[Element | str] = field(default_factory=list)
    parent: Element | None = None

    def text(self) -> str:
        return "".join(child if isinstance(child, str) else child.text() for child in self.children)

    def words(self) -> str:
        return " ".join(self.text().split())

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Element]:
        found = []
        for element in self.iter():
            if tag is not None and element.tag != tag:
                continue
            if all(_attr_matches(element, name, value) for name, value in attrs.items()):
                found.append(element)
        return found

    def find(self, tag: str | None = None, **attrs: str) -> Element:
        found = self.find_all(tag, **attrs)
        assert found, f"no <{tag or '*'} {attrs}> in the page"
        return found[0]

    def by_id(self, element_id: str) -> Element:
        return self.find(id=element_id)

    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())


def _attr_matches(element: Element, name: str, value: str) -> bool:
    if name == "class_":
        return value in element.classes()
    return element.attrs.get(name) == value


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs), parent=self.current)
        self.current.children.append(element)
        if tag not in VOID_ELEMENTS:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, dict(attrs), parent=self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is None:
            raise AssertionError(f"stray </{tag}> in the page")
        assert node is self.current, f"<{self.current.tag}> closed by </{tag}>: the page is not well nested"
        self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(page: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.current is builder.root, f"<{builder.current.tag}> never closed"
    return builder.root
