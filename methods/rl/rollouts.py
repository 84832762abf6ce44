"""Where a training step's scored rollouts come from: prompts, a reward, a rollout source.

The trainer consumes :class:`Batch` objects (groups of ``K`` responses per prompt with
their rewards and the generating policy's log-probs) from a :class:`RolloutSource`; it never
sees where prompts or rewards come from. Two pieces plug in:

* a :class:`RewardFn` ``(items, responses) -> rewards``. :class:`TaskReward` is any suite
  task's own scorer: the task is built by name through the harness's loader (as a study
  cell builds it), its dataset gives the items and its first scorer scores each response
  as the task would score a model's output (``score_key`` picks one value of a dict score;
  ``C``/``I`` and the like convert with Inspect's ``value_to_float``). Nothing is copied
  from a benchmark, and no benchmark is imported: the task comes through the registry.
* a :class:`RolloutSource` ``collect(policy, index) -> Batch``. :class:`SampledGroups`
  samples ``prompts_per_step`` items and ``K`` responses each from the current policy.
  Sources that bring rollouts made elsewhere (ThetaEvolve's ``Rollout`` journal, a scout's
  dialogues, a multi-turn episode) return the same :class:`Batch`: token ids of prompt and
  response, rewards per group, and the behaviour log-probs, which the trainer can fill in
  with its own policy (:func:`fill_behaviour_logprobs`) when the generator was not the
  trained model at all.

Determinism: batch ``index`` seeds both the item choice and the sampler (``seed`` x
``index``), so a batch is a function of the policy's weights and its index alone.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from methods.rl.policy import Policy

__all__ = ["Batch", "Group", "Item", "RecordedRollouts", "RewardFn", "RolloutSource",
           "SampledGroups", "TaskReward", "fill_behaviour_logprobs", "task_items"]


@dataclass(frozen=True)
class Item:
    """One prompt with what its reward needs (the task's sample, as plain data)."""

    id: str
    prompt: str | list[dict[str, str]]
    target: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


class RewardFn(Protocol):
    """Rewards for responses to items (one float per pair, higher is better)."""

    def __call__(self, items: Sequence[Item], responses: Sequence[str]) -> list[float]: ...


@dataclass
class Group:
    """``K`` responses to one prompt."""

    item_id: str
    prompt_ids: list[int]
    tokens: torch.Tensor  # [K, T]
    mask: torch.Tensor  # [K, T]
    rewards: torch.Tensor  # [K]
    old_logp: torch.Tensor | None = None  # [K, T], the generating policy's
    texts: list[str] = field(default_factory=list)


@dataclass
class Batch:
    """One step's rollouts: made from batch ``index`` by the policy after ``policy_step``
    updates (``policy_step < step`` when the trainer uses stale rollouts)."""

    index: int
    policy_step: int
    groups: list[Group]

    @property
    def rewards(self) -> torch.Tensor:
        """``[P, K]``."""
        return torch.stack([g.rewards for g in self.groups])

    @property
    def tokens(self) -> int:
        """Response tokens in the batch (masked)."""
        return int(sum(float(g.mask.sum()) for g in self.groups))


class RolloutSource(Protocol):
    """Makes batch ``index`` with ``policy`` (the trainer's current weights)."""

    def collect(self, policy: Policy, index: int, policy_step: int) -> Batch: ...


def _messages(sample: Any) -> str | list[dict[str, str]]:
    if isinstance(sample.input, str):
        return [{"role": "user", "content": sample.input}]
    return [{"role": m.role, "content": m.text} for m in sample.input]


def task_items(task: Any) -> list[Item]:
    """A built Inspect task's dataset as items (the input as a one-turn user chat)."""
    items = []
    for i, sample in enumerate(task.dataset):
        target = sample.target if isinstance(sample.target, str) else "\n".join(sample.target)
        items.append(Item(str(sample.id if sample.id is not None else i), _messages(sample),
                          target, dict(sample.metadata or {})))
    if not items:
        raise ValueError("the task has no samples")
    return items


class TaskReward:
    """A suite task's scorer as a reward, and its dataset as the prompts."""

    def __init__(self, task_name: str, task_args: Mapping[str, Any] | None = None,
                 score_key: str | None = None) -> None:
        from harness.factorial.cells import load_task

        self.task_name = task_name
        self.task = load_task(task_name, dict(task_args or {}))
        scorers = self.task.scorer or []
        if not scorers:
            raise ValueError(f"task {task_name!r} has no scorer to reward with")
        self.scorer = scorers[0]
        self.score_key = score_key
        self.items = task_items(self.task)

    def _value(self, value: Any) -> float:
        from inspect_ai.scorer import value_to_float

        if isinstance(value, dict):
            if self.score_key is None or self.score_key not in value:
                raise ValueError(f"the {self.task_name} score is a dict with keys "
                                 f"{sorted(value)}: name one as score_key")
            value = value[self.score_key]
        return float(value_to_float()(value))

    def __call__(self, items: Sequence[Item], responses: Sequence[str]) -> list[float]:
        from inspect_ai.model import ChatMessageUser, ModelName, ModelOutput
        from inspect_ai.scorer import Target
        from inspect_ai.solver import TaskState

        def state(item: Item, text: str) -> TaskState:
            prompt = item.prompt if isinstance(item.prompt, str) else item.prompt[-1]["content"]
            return TaskState(ModelName("rl/policy"), item.id, 0, prompt,
                             [ChatMessageUser(content=prompt)],
                             output=ModelOutput.from_content("rl/policy", text),
                             metadata=dict(item.metadata))

        async def run() -> list[Any]:
            return list(await asyncio.gather(*[
                self.scorer(state(it, text), Target(it.target))
                for it, text in zip(items, responses, strict=True)]))

        return [self._value(score.value) for score in asyncio.run(run())]


def fill_behaviour_logprobs(policy: Policy, batch: Batch) -> Batch:
    """Set each group's ``old_logp`` to ``policy``'s log-probs (no grad): for rollouts whose
    generator was not the trained model, the trainer's policy at collection is ``pi_old``."""
    with torch.no_grad():
        for group in batch.groups:
            group.old_logp = policy.logprobs(group.prompt_ids, group.tokens)
    return batch


class SampledGroups:
    """``prompts_per_step`` items (seeded per batch, with replacement across batches) and
    ``k`` responses each from the current policy, scored by ``reward``."""

    def __init__(self, items: Sequence[Item], reward: RewardFn, prompts_per_step: int, k: int,
                 max_new_tokens: int, seed: int, temperature: float = 1.0) -> None:
        if not items:
            raise ValueError("no items to train on")
        if prompts_per_step < 1 or k < 2:
            raise ValueError("prompts_per_step must be >= 1 and k >= 2 (groups need two)")
        self.items = list(items)
        self.reward = reward
        self.prompts_per_step = prompts_per_step
        self.k = k
        self.max_new_tokens = max_new_tokens
        self.seed = seed
        self.temperature = temperature

    def _seed(self, index: int) -> int:
        return (self.seed * 1_000_003 + index * 7_919 + 17) % (2**63 - 1)

    def collect(self, policy: Policy, index: int, policy_step: int) -> Batch:
        """Batch ``index`` made by ``policy`` (whose weights are after ``policy_step``)."""
        rng = random.Random(self._seed(index))
        chosen = rng.sample(self.items, min(self.prompts_per_step, len(self.items)))
        gen = torch.Generator().manual_seed(self._seed(index))
        groups = []
        for item in chosen:
            ids = policy.encode(item.prompt)
            out = policy.sample(ids, self.k, self.max_new_tokens, gen, self.temperature)
            texts = [policy.decode(t, m) for t, m in zip(out.tokens, out.mask, strict=True)]
            rewards = self.reward([item] * self.k, texts)
            groups.append(Group(item.id, ids, out.tokens, out.mask,
                                torch.tensor(rewards, dtype=torch.float64), None, texts))
        return fill_behaviour_logprobs(policy, Batch(index, policy_step, groups))


class RecordedRollouts:
    """Rollouts made elsewhere, as batches: any objects with ``prompt`` (text or chat
    messages), ``response`` (text) and ``reward``, e.g. ThetaEvolve's ``Rollout`` journal
    (:func:`methods.thetaevolve.thetaevolve.read_rollouts`), grouped by ``group_of(rollout)``
    (ThetaEvolve: ``(step, parent_id)``, the responses to one parent prompt). Batch ``index``
    is the ``index``-th chunk of ``groups_per_batch`` groups in first-seen order; groups
    smaller than 2 are dropped (no within-group comparison). The responses are tokenised
    with the policy's tokenizer (an EOS appended) and padded to the longest; ``pi_old`` is
    the trained policy at collection, since the generator was another model."""

    def __init__(self, rollouts: Sequence[Any], group_of: Any, groups_per_batch: int,
                 max_tokens: int = 512) -> None:
        grouped: dict[Any, list[Any]] = {}
        for r in rollouts:
            grouped.setdefault(group_of(r), []).append(r)
        self.groups = [g for g in grouped.values() if len(g) >= 2]
        if not self.groups:
            raise ValueError("no group with two or more rollouts")
        self.groups_per_batch = groups_per_batch
        self.max_tokens = max_tokens

    def __len__(self) -> int:
        return -(-len(self.groups) // self.groups_per_batch)

    def collect(self, policy: Policy, index: int, policy_step: int) -> Batch:
        """Chunk ``index`` (1-based, cycling) of the recorded groups."""
        start = ((index - 1) % len(self)) * self.groups_per_batch
        chunks = self.groups[start:start + self.groups_per_batch]
        rows = [[policy.tokenizer(r.response, add_special_tokens=False).input_ids
                 [:self.max_tokens - 1] + [policy.eos_id] for r in chunk] for chunk in chunks]
        width = max(len(row) for group in rows for row in group)  # one T for the batch
        groups = []
        for chunk, group_rows in zip(chunks, rows, strict=True):
            tokens = torch.full((len(group_rows), width), policy.pad_id, dtype=torch.long)
            mask = torch.zeros((len(group_rows), width))
            for i, row in enumerate(group_rows):
                tokens[i, :len(row)] = torch.tensor(row)
                mask[i, :len(row)] = 1.0
            groups.append(Group(str(index), policy.encode(chunk[0].prompt), tokens, mask,
                                torch.tensor([float(r.reward) for r in chunk],
                                             dtype=torch.float64),
                                None, [r.response for r in chunk]))
        return fill_behaviour_logprobs(policy, Batch(index, policy_step, groups))
