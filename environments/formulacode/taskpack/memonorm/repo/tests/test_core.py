from textnorm import Normalizer


def test_folds_case_accents_punctuation_and_repeats():
    n = Normalizer()
    assert n.normalize("Café!") == "cafe"
    assert n.normalize("Straße") == "strasse"
    assert n.normalize("Sooooo") == "soo"
    assert n.normalize("-déjà-vu-") == "deja-vu"


def test_stream_equals_tokenwise():
    n = Normalizer()
    toks = ["Zürich", "zurich", "ZÜRICH", "naïve", "Zürich"]
    assert n.normalize_all(toks) == [Normalizer().normalize(t) for t in toks]
    assert n.normalize_all(toks)[:3] == ["zurich"] * 3


def test_term_counts():
    assert Normalizer().term_counts(["Café", "cafe", "CAFÉ!", "thé"]) == {"cafe": 3, "the": 1}
