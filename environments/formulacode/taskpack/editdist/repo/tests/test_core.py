from textdist import closest, edit_distance


def test_known():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    assert edit_distance("flaw", "lawn") == 2


def test_closest():
    assert closest("cat", ["dog", "cut", "cart"]) == "cut"
