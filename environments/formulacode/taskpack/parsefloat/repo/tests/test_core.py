from records import parse_rows


def test_parses_ids_and_floats():
    text = "a;1;2.5\n\n b ; -3 ;4e2\nc"
    assert parse_rows(text) == [("a", [1.0, 2.5]), ("b", [-3.0, 400.0]), ("c", [])]


def test_single_field_lines():
    assert parse_rows("x;7\ny;8") == [("x", [7.0]), ("y", [8.0])]
