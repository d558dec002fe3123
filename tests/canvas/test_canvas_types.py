"""Port types: parsing, the compatibility relation, generics and type variables."""

import pytest

from harness.canvas import types as T


@pytest.mark.parametrize("text,expected", [
    ("Int", ("Int", ())),
    ("List[Cell]", ("List", (("Cell", ()),))),
    ("Dict[Text, List[Int]]", ("Dict", (("Text", ()), ("List", (("Int", ()),))))),
    ("ActionChunk", ("List", (("Action", ()),))),
    (" Optional[ T ] ", ("Optional", (("T", ()),))),
])
def test_parse(text, expected):
    assert T.parse(text) == expected


@pytest.mark.parametrize("text", ["", "List[", "List[Int", "List[]", "Dict[Int]", "List[Int]]", "Int Text",
                                  "List[Int,Text]", "T[Int]", "Any[Int]", "In-t"])
def test_parse_errors(text):
    with pytest.raises(T.TypeSyntaxError):
        T.parse(text)


@pytest.mark.parametrize("src,dst,ok", [
    ("Int", "Int", True),
    ("Int", "Text", False),
    ("Int", "Float", True),
    ("Float", "Int", False),
    ("Int", "Number", True),
    ("Observation", "Any", True),
    ("Any", "Observation", True),
    ("Int", "Optional[Int]", True),
    ("Optional[Int]", "Optional[Int]", True),
    ("Optional[Int]", "Int", False),
    ("List[Int]", "List[Float]", True),
    ("List[Text]", "List[Int]", False),
    ("List[Int]", "List[Any]", True),
    ("Dict[Text,Int]", "Dict[Text,Number]", True),
    ("Dict[Text,Int]", "Dict[Int,Int]", False),
    ("Action", "ActionChunk", True),
    ("List[Action]", "ActionChunk", True),
    ("Text", "ActionChunk", False),
    ("Int", "T", True),
    ("T", "Int", True),
    ("List[Int]", "List[T]", True),
    ("Int", "List[T]", False),
    ("Map", "Map", True),
])
def test_compatible(src, dst, ok):
    assert T.compatible(src, dst) is ok


def test_type_variables_bind_consistently_within_one_node():
    bindings = {}
    assert T.unify(T.parse("Int"), T.parse("T"), bindings)
    assert bindings == {"T": ("Int", ())}
    assert not T.unify(T.parse("Text"), T.parse("T"), bindings)
    assert T.unify(T.parse("List[Int]"), T.parse("List[T]"), bindings)
    assert T.format_type(T.substitute(T.parse("Dict[Text, T]"), bindings)) == "Dict[Text, Int]"
    assert T.typevars(T.parse("Dict[K, List[V]]")) == {"K", "V"}
