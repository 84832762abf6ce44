"""The ESamp probe's ``chain`` family (issue 49): seeded worked-sum records with stable ids,
``record_to_sample``, the marked-answer extractor, scoring of a real Qwen2.5-Coder-0.5B
reply, and the score metadata (reply tokens, ESamp's distiller curve)."""

from __future__ import annotations

from benchmarks.probes.esamp_arith import (
    CHAIN_MAX_TOKENS,
    CHAIN_RANGE,
    chain_records,
    esamp_arith,
    marked_int,
    record_to_sample,
    reply_diagnostics,
    score_replies,
)

# Real replies of Qwen2.5-Coder-0.5B (whitebox/, T 0.8, top-p 0.95): the first sample of
# item chain-0 of chain_records(seed=0, terms=8), drawn in the study's pilot
# (see methods/studies/esamp_long/README.md). It adds 59 and 63, jumps to the seventh number
# (61) and states 183: a wrong answer, marked.
PILOT_ITEM = {"numbers": [59, 63, 15, 43, 75, 72, 61, 48], "answer": 436}
PILOT_REPLY = """To solve this problem, we will follow these steps:

1. Start with the first number: 59.
2. Add the next number on each line, from 63 to 61.
3. Write the final total.

Let's do this step by step:

- Total = 59
- Total + 63 = 122
- Total + 61 = 183

Answer: 183"""


def test_records_are_seeded_with_stable_ids() -> None:
    five, three = chain_records(5, seed=3), chain_records(3, seed=3)
    assert five[:3] == three  # item i is the same whatever n is
    assert chain_records(5, seed=4) != five
    assert [r["id"] for r in five] == [f"chain-{i}" for i in range(5)]
    for record in five:
        numbers = record["numbers"]
        assert len(numbers) == 8 and all(CHAIN_RANGE[0] <= x <= CHAIN_RANGE[1] for x in numbers)
        assert record["totals"][-1] == record["answer"] == sum(numbers)
        steps = zip(record["totals"][:-1], record["totals"][1:], numbers[1:], strict=True)
        assert all(b - a == x for a, b, x in steps)
    assert len(chain_records(2, seed=0, terms=10)[0]["numbers"]) == 10


def test_record_to_sample() -> None:
    record = {"id": "chain-7", "numbers": [12, 30, 45], "totals": [12, 42, 87], "answer": 87}
    sample = record_to_sample(record)
    assert sample.id == "chain-7" and sample.target == "87"
    assert not isinstance(sample.input, str)
    system, user = sample.input
    assert system.role == "system" and user.role == "user"
    assert "Add these 3 numbers: 12, 30, 45." in user.text
    assert "Answer: " in user.text
    assert sample.metadata == {"kind": "chain", "numbers": [12, 30, 45], "totals": [12, 42, 87]}


def test_marked_int_prefers_the_stated_answer() -> None:
    assert marked_int("10 + 20 = 30\n30 + 5 = 35\nAnswer: 35") == "35"
    assert marked_int("**Answer:** 1,035.") == "1035"
    assert marked_int("answer is 7, then 8 + 1 = 9") == "7"  # the marked one, not the last
    assert marked_int("10 + 20 = 30\n30 + 5 = 35\n35 +") == "35"  # cut: the last int
    assert marked_int("no numbers") is None


def test_chain_task_defaults() -> None:
    task = esamp_arith(family="chain", n=4, samples=2)
    assert task.version == "2.1.0"
    assert task.config.max_tokens == CHAIN_MAX_TOKENS
    assert [s.id for s in task.dataset] == [f"chain-{i}" for i in range(4)]
    assert esamp_arith(n=2).config.max_tokens == 6  # the other families keep their budget


def test_reply_diagnostics_copies_one_distiller_record() -> None:
    meta = [{"esamp_loss_head": 4.0, "esamp_loss_tail": 3.0, "esamp_loss_curve": [4.0, 3.0],
             "other": 1}] * 2
    out = reply_diagnostics([150, 170], meta)
    assert out["reply_tokens"] == [150, 170] and out["reply_tokens_mean"] == 160
    assert out["esamp_loss_head"] == 4.0 and out["esamp_loss_curve"] == [4.0, 3.0]
    assert "other" not in out
    assert reply_diagnostics([None], [{}]) == {"reply_tokens": [None], "reply_tokens_mean": None}


def test_pilot_item_is_the_seeded_record() -> None:
    record = chain_records(1, seed=0, terms=8)[0]
    assert record["numbers"] == PILOT_ITEM["numbers"] and record["answer"] == 436


def test_scoring_a_real_reply() -> None:
    assert marked_int(PILOT_REPLY) == "183"
    wrong = score_replies([PILOT_REPLY, PILOT_REPLY.replace("183", "436")], "436",
                          ks=(1, 2), answer="marked")
    assert wrong["correct"] == 1.0 and wrong["pass_at_1"] == 0.5 and wrong["pass_at_2"] == 1.0
    assert wrong["answers"] == 1.0  # two distinct answers of two replies
